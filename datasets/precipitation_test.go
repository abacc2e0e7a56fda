package datasets

import (
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"sgplab/datasets/netcdf"
)

// stereForward is Snyder's (1987) polar stereographic forward map written
// with the scale factor k0 = (1 + sin lat_ts)/2 at the pole, an
// independent form of the inverse under test.
func stereForward(lon, lat float64) (x, y float64) {
	k0 := (1 + math.Sin(hrapLatTS*math.Pi/180)) / 2
	rho := 2 * hrapRadius * k0 * math.Tan(math.Pi/4-lat*math.Pi/360)
	dl := (lon - hrapLon0) * math.Pi / 180
	return rho * math.Sin(dl), -rho * math.Cos(dl)
}

func TestHRAPProjection(t *testing.T) {
	for _, p := range [][2]float64{{-105, 40}, {-124.7, 48.4}, {-67, 44.8}, {-80.2, 25.8}, {-119.04, 23.1}, {-60, 45.6}, {-105, 89.9}} {
		x, y := stereForward(p[0], p[1])
		lon, lat := hrapLonLat(x, y)
		if math.Abs(lon-p[0]) > 1e-9 || math.Abs(lat-p[1]) > 1e-9 {
			t.Errorf("round trip %v -> (%v, %v) -> (%v, %v)", p, x, y, lon, lat)
		}
	}
	// True scale at 60°N: along the central meridian a 1 m step in
	// projected distance is a 1 m step on the sphere.
	x0, y0 := stereForward(-105, 60)
	const h = 10.0
	_, latA := hrapLonLat(x0, y0-h)
	_, latB := hrapLonLat(x0, y0+h)
	if k := 2 * h / (hrapRadius * math.Abs(latA-latB) * math.Pi / 180); math.Abs(k-1) > 1e-7 {
		t.Errorf("scale factor at 60N = %v, want 1", k)
	}
	if _, lat := hrapLonLat(0, 0); lat != 90 { // longitude is arbitrary at the pole
		t.Errorf("pole -> lat %v", lat)
	}
	if lon, _ := hrapLonLat(1e6, 0); math.Abs(lon-(-15)) > 1e-12 {
		t.Errorf("+x axis lon %v, want -15 (90° east of -105)", lon)
	}
	if lon, _ := hrapLonLat(-1e6, 1e-9); math.Abs(lon-165) > 1e-6 {
		t.Errorf("lon not wrapped into [-180, 180]: %v", lon)
	}
}

// writePrecipFixture writes a 9×11 (y, x) NWS-like grid: normal in inches
// with _FillValue -10000, plus an observation variable the loader must
// ignore. Cell (r, c) holds 0.01*(100r + c) inches, or fill.
func writePrecipFixture(t *testing.T, dir string, fill func(r, c int) bool) (xs, ys []float64) {
	t.Helper()
	const ny, nx = 9, 11
	for c := 0; c < nx; c++ {
		xs = append(xs, -1.9e6+4762.5*float64(c))
	}
	for r := 0; r < ny; r++ {
		ys = append(ys, -7.6e6+4762.5*float64(r)) // ascending
	}
	normal := make([]float64, ny*nx)
	obs := make([]float64, ny*nx)
	for r := 0; r < ny; r++ {
		for c := 0; c < nx; c++ {
			normal[r*nx+c] = 0.01 * float64(100*r+c)
			if fill(r, c) {
				normal[r*nx+c] = -10000
			}
			obs[r*nx+c] = 99
		}
	}
	b, err := netcdf.Encode([]netcdf.Dim{{Name: "y", Len: ny}, {Name: "x", Len: nx}},
		[]netcdf.Attr{{Name: "title", Type: netcdf.Char, Text: "fixture"}},
		[]netcdf.VarSpec{
			{Name: "x", Dims: []string{"x"}, Type: netcdf.Double, Data: xs},
			{Name: "y", Dims: []string{"y"}, Type: netcdf.Double, Data: ys},
			{Name: "observation", Dims: []string{"y", "x"}, Type: netcdf.Float, Data: obs},
			{Name: "normal", Dims: []string{"y", "x"}, Type: netcdf.Float, Data: normal,
				Attrs: []netcdf.Attr{{Name: "units", Type: netcdf.Char, Text: "in"}, {Name: "_FillValue", Type: netcdf.Float, Values: []float64{-10000}}}},
		}, false)
	if err != nil {
		t.Fatal(err)
	}
	folder := filepath.Join(dir, "iff-precipitation")
	os.MkdirAll(folder, 0o755)
	if err := os.WriteFile(filepath.Join(folder, "nws_precip_mtd_20210101_conus.nc"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return xs, ys
}

func TestPrecipitationLoader(t *testing.T) {
	dir := t.TempDir()
	masked := func(r, c int) bool { return r == 4 && c == 8 || r == 1 }
	xs, ys := writePrecipFixture(t, dir, masked)
	e := registry["precipitation"]
	if !e.present(dir) {
		t.Fatal("reported absent with the file in place")
	}
	tb, err := load(dir, e, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Rows 0, 4, 8 and columns 0, 4, 8; row r is paired with y[8-r]
	// (y[::-1][::4]); cell (4, 8) is masked. Written out by hand:
	want := []struct {
		r, c int
		y    float64
	}{{0, 0, ys[8]}, {0, 4, ys[8]}, {0, 8, ys[8]}, {4, 0, ys[4]}, {4, 4, ys[4]}, {8, 0, ys[0]}, {8, 4, ys[0]}, {8, 8, ys[0]}}
	if len(tb.y) != len(want) {
		t.Fatalf("%d cells, want %d", len(tb.y), len(want))
	}
	for i, w := range want {
		lon, lat := hrapLonLat(xs[w.c], w.y)
		mm := 25.4 * float64(float32(0.01*float64(100*w.r+w.c)))
		if tb.x.At(i, 0) != lon || tb.x.At(i, 1) != lat || math.Abs(tb.y[i]-mm) > 1e-12 {
			t.Errorf("cell %d: (%v, %v) %v, want (%v, %v) %v", i, tb.x.At(i, 0), tb.x.At(i, 1), tb.y[i], lon, lat, mm)
		}
	}
	if lat := tb.x.At(0, 1); lat < tb.x.At(len(want)-1, 1) {
		t.Errorf("first data row should be the northernmost (y reversed): lat %v vs %v", lat, tb.x.At(len(want)-1, 1))
	}
	// stride 2 (the paper text's "by 2 in each dimension" reading).
	tb2, err := load(dir, e, map[string]any{"stride": int64(2)})
	if err != nil {
		t.Fatal(err)
	}
	if len(tb2.y) != 5*6-1 { // rows 0,2,4,6,8 × cols 0,2,...,10, minus (4, 8)
		t.Errorf("stride 2: %d cells, want 29", len(tb2.y))
	}
	// Through Prepare: IFF protocol ceil(0.8 N) and full-data standardisation.
	p, err := Prepare(Request{Name: "precipitation", DataDir: dir, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if p.Train.N() != 7 || p.Test.N() != 1 || p.Provenance.Files[0].Pinned || len(p.Provenance.Files[0].SHA256) != 64 {
		t.Errorf("prepared %d/%d files %+v", p.Train.N(), p.Test.N(), p.Provenance.Files)
	}
	if _, err := Prepare(Request{Name: "precipitation", DataDir: dir, Params: map[string]any{"stride": 0}}); err == nil || !strings.Contains(err.Error(), "stride") {
		t.Errorf("stride 0: %v", err)
	}
}

func TestPrecipitationBadFiles(t *testing.T) {
	empty := t.TempDir()
	_, err := Prepare(Request{Name: "precipitation", DataDir: empty})
	if err == nil || !strings.Contains(err.Error(), "iff-precipitation/nws_precip_mtd_20210101_conus.nc") ||
		!strings.Contains(err.Error(), "cannot be fetched automatically") || !strings.Contains(err.Error(), "nccopy") {
		t.Errorf("absent: %v", err)
	}
	e := registry["precipitation"]
	for _, tc := range []struct {
		name string
		b    func() []byte
		want string
	}{
		{"hdf5", func() []byte { return []byte("\x89HDF\r\n\x1a\n0000000000") }, "nccopy -k classic"},
		{"no normal", func() []byte {
			b, _ := netcdf.Encode([]netcdf.Dim{{Name: "x", Len: 1}}, nil, []netcdf.VarSpec{{Name: "x", Dims: []string{"x"}, Type: netcdf.Double, Data: []float64{0}}}, false)
			return b
		}, "no variable `normal`"},
		{"shape", func() []byte {
			b, _ := netcdf.Encode([]netcdf.Dim{{Name: "y", Len: 2}, {Name: "x", Len: 3}}, nil, []netcdf.VarSpec{
				{Name: "x", Dims: []string{"x"}, Type: netcdf.Double, Data: []float64{0, 1, 2}},
				{Name: "y", Dims: []string{"y"}, Type: netcdf.Double, Data: []float64{0, 1}},
				{Name: "normal", Dims: []string{"x", "y"}, Type: netcdf.Float, Data: make([]float64, 6)}}, false)
			return b
		}, "expected (y, x)"},
	} {
		dir := t.TempDir()
		os.MkdirAll(filepath.Join(dir, e.folder), 0o755)
		os.WriteFile(filepath.Join(dir, e.folder, "nws_precip_mtd_20210101_conus.nc"), tc.b(), 0o644)
		if _, err := load(dir, e, nil); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.name, err, tc.want)
		}
	}
	dir := t.TempDir()
	writePrecipFixture(t, dir, func(int, int) bool { return true })
	if _, err := load(dir, e, nil); err == nil || !strings.Contains(err.Error(), "every cell") {
		t.Errorf("all masked: %v", err)
	}
}

// TestHousePricesLoader runs the house-price loader on a generated CSV.
func TestHousePricesLoader(t *testing.T) {
	e := registry["house-prices"]
	write := func(dir, text string) {
		os.MkdirAll(filepath.Join(dir, e.folder), 0o755)
		os.WriteFile(filepath.Join(dir, e.folder, "england_wales_house_prices.csv"), []byte(text), 0o644)
	}
	dir := t.TempDir()
	rows := [][3]float64{{-0.1276, 51.5072, 500000}, {-2.2426, 53.4808, 180000}, {-1.8904, 52.4862, 210000}, {-3.1791, 51.4816, 160000}, {-1.5491, 53.8008, 1}}
	text := "longitude,latitude,price\n"
	for _, r := range rows {
		text += strings.TrimSpace(strings.Join([]string{ftoa(r[0]), ftoa(r[1]), ftoa(r[2])}, ",")) + "\n"
	}
	write(dir, text)
	tb, err := load(dir, e, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range rows {
		if tb.x.At(i, 0) != r[0] || tb.x.At(i, 1) != r[1] || math.Abs(tb.y[i]-math.Log(r[2])) > 1e-15 {
			t.Errorf("row %d: (%v, %v) %v, want (%v, %v) log %v", i, tb.x.At(i, 0), tb.x.At(i, 1), tb.y[i], r[0], r[1], r[2])
		}
	}
	p, err := Prepare(Request{Name: "house-prices", DataDir: dir, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	if p.Train.N() != 4 || p.Test.N() != 1 || p.Provenance.Scaling != ScaleStdFull {
		t.Errorf("prepared %d/%d %s", p.Train.N(), p.Test.N(), p.Provenance.Scaling)
	}
	for _, tc := range []struct{ name, text, want string }{
		{"columns", "longitude,latitude\n1,2\n", "expected longitude,latitude,price"},
		{"price", "longitude,latitude,price\n1,2,0\n", "non-positive price"},
		{"text", "longitude,latitude,price\n1,2,abc\n", "non-numeric"},
	} {
		d := t.TempDir()
		write(d, tc.text)
		if _, err := load(d, e, nil); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.name, err, tc.want)
		}
	}
}

func ftoa(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
