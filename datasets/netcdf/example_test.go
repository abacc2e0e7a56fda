package netcdf_test

import (
	"fmt"
	"log"

	"sgplab/datasets/netcdf"
)

// Example writes a small packed, masked field with Encode and reads it back
// the way CF-aware readers do: the fill value is masked, the rest unpacked
// with scale_factor and add_offset.
func Example() {
	dims := []netcdf.Dim{{Name: "lat", Len: 2}, {Name: "lon", Len: 2}}
	precip := netcdf.VarSpec{
		Name: "precip", Dims: []string{"lat", "lon"}, Type: netcdf.Short,
		Attrs: []netcdf.Attr{
			{Name: "units", Type: netcdf.Char, Text: "mm"},
			{Name: "scale_factor", Type: netcdf.Float, Values: []float64{0.5}},
			{Name: "add_offset", Type: netcdf.Float, Values: []float64{10}},
			{Name: "_FillValue", Type: netcdf.Short, Values: []float64{-999}},
		},
		Data: []float64{0, 2, -999, 8},
	}
	b, err := netcdf.Encode(dims, nil, []netcdf.VarSpec{precip}, false)
	if err != nil {
		log.Fatal(err)
	}
	f, err := netcdf.Parse(b)
	if err != nil {
		log.Fatal(err)
	}
	v, _ := f.Var("precip")
	units, _ := v.Attr("units")
	vals, valid, err := f.ReadMasked("precip")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("shape", v.Shape, "units", units.Text)
	fmt.Println(vals, valid)
	// Output:
	// shape [2 2] units mm
	// [10 11 NaN 14] [true true false true]
}
