package datasets

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"sgplab/datasets/netcdf"
)

// HRAP grid projection of the NWS precipitation files, as the IFF code
// passes it to pyproj: +proj=stere +lat_0=90 +lat_ts=60 +lon_0=-105
// +x_0=0 +y_0=0 +a=6371200 +b=6371200 +units=m (north-polar
// stereographic on a sphere, true at 60°N).
const (
	hrapRadius = 6371200.0
	hrapLatTS  = 60.0
	hrapLon0   = -105.0
	inchToMM   = 25.4
)

// hrapLonLat inverts the spherical north-polar stereographic projection
// (Snyder 1987, eqs. 21-1, 20-14, 20-16 with the pole as origin): the
// distance from the pole is rho = R (1 + sin lat_ts) tan(pi/4 - lat/2).
func hrapLonLat(x, y float64) (lon, lat float64) {
	rho := math.Hypot(x, y)
	scale := hrapRadius * (1 + math.Sin(hrapLatTS*math.Pi/180))
	lat = 90 - 2*math.Atan(rho/scale)*180/math.Pi
	lon = hrapLon0 + math.Atan2(x, -y)*180/math.Pi
	// pyproj returns longitudes in [-180, 180].
	for lon > 180 {
		lon -= 360
	}
	for lon < -180 {
		lon += 360
	}
	return lon, lat
}

// loadPrecipitation follows load_precipitation_data of the IFF code:
// normal[::4, ::4] * 25.4 (inches to mm) on the grid x[::4] by
// y[::-1][::4] (so data row r gets y[len(y)-1-r]), projected to
// (lon, lat) degrees; masked cells dropped.
func loadPrecipitation(src *source) (*table, error) {
	dir, e, t, params := src.dir, src.e, src.t, src.params
	stride, ok, err := intParam(params, "stride")
	if err != nil {
		return nil, err
	}
	if !ok {
		stride = 4
	}
	if stride < 1 {
		return nil, fmt.Errorf("datasets: precipitation: stride = %d, need >= 1", stride)
	}
	f := fileByName(e, "nws_precip_mtd_20210101_conus.nc")
	b, p, err := readVerified(dir, e, f, &t.files)
	if err != nil {
		return nil, err
	}
	nc, err := netcdf.Parse(b)
	if err != nil {
		return nil, fmt.Errorf("datasets: %s: %w (a netCDF-4 file can be converted with `nccopy -k classic in.nc out.nc`)", p, err)
	}
	v, ok := nc.Var("normal")
	if !ok {
		return nil, fmt.Errorf("datasets: %s: no variable `normal`", p)
	}
	xs, err := nc.Read("x")
	if err != nil {
		return nil, fmt.Errorf("datasets: %s: %w", p, err)
	}
	ys, err := nc.Read("y")
	if err != nil {
		return nil, fmt.Errorf("datasets: %s: %w", p, err)
	}
	if len(v.Shape) != 2 || v.Shape[0] != len(ys) || v.Shape[1] != len(xs) {
		return nil, fmt.Errorf("datasets: %s: normal has shape %v, expected (y, x) = (%d, %d)", p, v.Shape, len(ys), len(xs))
	}
	vals, valid, err := nc.ReadMasked("normal")
	if err != nil {
		return nil, fmt.Errorf("datasets: %s: %w", p, err)
	}
	ny, nx := len(ys), len(xs)
	var in, out []float64
	negative := 0
	for r := 0; r < ny; r += stride {
		for c := 0; c < nx; c += stride {
			i := r*nx + c
			if !valid[i] {
				continue
			}
			lon, lat := hrapLonLat(xs[c], ys[ny-1-r])
			in = append(in, lon, lat)
			out = append(out, inchToMM*vals[i])
			if vals[i] < 0 {
				negative++
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("datasets: %s: every cell of `normal` is masked", p)
	}
	t.x, t.y = mat.NewDense(len(out), 2, in), out
	units := "?"
	if a, ok := v.Attr("units"); ok {
		units = a.Text
	}
	t.notes = append(t.notes, fmt.Sprintf("every %d-th HRAP row/column of `normal` (units %q) x 25.4 -> mm; rows paired with y reversed as in the IFF code; %d valid cells", stride, units, len(out)))
	if negative > 0 {
		t.notes = append(t.notes, fmt.Sprintf("%d unmasked cells are negative (kept, as the IFF code does)", negative))
	}
	return t, nil
}
