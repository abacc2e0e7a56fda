package netcdf

import (
	"testing"
)

// FuzzParse feeds arbitrary bytes to the netCDF-3 reader, seeded with
// CDF-1 and CDF-2 files the encoder produces: no panic, and every variable
// that reads returns as many values as its shape holds, as does ReadMasked.
func FuzzParse(f *testing.F) {
	dims := []Dim{{Name: "y", Len: 2}, {Name: "x", Len: 3}}
	vars := []VarSpec{
		{Name: "t", Dims: []string{"y", "x"}, Type: Float, Data: []float64{1, 2, -9, 4, 5, 6},
			Attrs: []Attr{{Name: "missing_value", Type: Float, Values: []float64{-9}}, {Name: "units", Type: Char, Text: "K"}}},
		{Name: "x", Dims: []string{"x"}, Type: Double, Data: []float64{0.5, 1.5, 2.5}},
		{Name: "s", Type: Short, Data: []float64{7}},
	}
	for _, off64 := range []bool{false, true} {
		b, err := Encode(dims, []Attr{{Name: "title", Type: Char, Text: "fuzz"}}, vars, off64)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("CDF\x01"))
	f.Add([]byte("CDF\x02\x00\x00\x00\x00\x00\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		file, err := Parse(b)
		if err != nil {
			return
		}
		for _, v := range file.Vars {
			n := 1
			for _, s := range v.Shape {
				n *= s
			}
			if vals, err := file.Read(v.Name); err == nil && len(vals) != n {
				t.Fatalf("variable %s of shape %v: Read gave %d values", v.Name, v.Shape, len(vals))
			}
			if vals, valid, err := file.ReadMasked(v.Name); err == nil && (len(vals) != n || len(valid) != n) {
				t.Fatalf("variable %s of shape %v: ReadMasked gave %d values, %d flags", v.Name, v.Shape, len(vals), len(valid))
			}
		}
	})
}
