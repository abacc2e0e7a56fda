package netcdf

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

func TestEncodeRoundTrip(t *testing.T) {
	dims := []Dim{{Name: "y", Len: 2}, {Name: "x", Len: 3}, {Name: "s", Len: 1}}
	gattrs := []Attr{{Name: "title", Type: Char, Text: "round trip"}, {Name: "n", Type: Int, Values: []float64{-7, 42}}}
	data := map[Type][]float64{
		Byte:   {-128, -1, 0, 1, 2, 127},
		Char:   {65, 66, 67, 0, 255, 1},
		Short:  {-32768, -2, 0, 3, 300, 32767},
		Int:    {math.MinInt32, -5, 0, 7, 1e6, math.MaxInt32},
		Float:  {-1.5, 0.25, 3, 1e-3, -2e30, 9999},
		Double: {math.Pi, -math.E, 0, 1e-300, 1e300, -0.1},
	}
	var vars []VarSpec
	for _, ty := range []Type{Byte, Char, Short, Int, Float, Double} {
		vars = append(vars, VarSpec{Name: "v" + string(rune('0'+ty)), Dims: []string{"y", "x"}, Type: ty, Data: data[ty],
			Attrs: []Attr{{Name: "units", Type: Char, Text: "u"}, {Name: "a", Type: ty, Values: data[ty][:3]}}})
	}
	vars = append(vars, VarSpec{Name: "scalar", Type: Double, Data: []float64{2.5}}, VarSpec{Name: "one", Dims: []string{"s"}, Type: Short, Data: []float64{9}})
	for _, off64 := range []bool{false, true} {
		b, err := Encode(dims, gattrs, vars, off64)
		if err != nil {
			t.Fatal(err)
		}
		if wantV := byte(1 + btoi(off64)); b[3] != wantV {
			t.Fatalf("version byte %d, want %d", b[3], wantV)
		}
		f, err := Parse(b)
		if err != nil {
			t.Fatalf("offset64=%v: %v", off64, err)
		}
		if len(f.Dims) != 3 || f.Dims[1] != dims[1] || f.Attrs[0].Text != "round trip" || f.Attrs[1].Values[1] != 42 {
			t.Fatalf("header: %+v %+v", f.Dims, f.Attrs)
		}
		for _, spec := range vars {
			got, err := f.Read(spec.Name)
			if err != nil {
				t.Fatal(err)
			}
			want := spec.Data
			if spec.Type == Float {
				want = append([]float64(nil), want...)
				for i := range want {
					want[i] = float64(float32(want[i]))
				}
			}
			for i := range want {
				if got[i] != want[i] {
					t.Errorf("offset64=%v %s[%d] = %v, want %v", off64, spec.Name, i, got[i], want[i])
				}
			}
			v, _ := f.Var(spec.Name)
			if v.Type != spec.Type {
				t.Errorf("%s type %d, want %d", spec.Name, v.Type, spec.Type)
			}
			if len(spec.Attrs) > 0 && spec.Type != Char { // char attributes are text
				if a, ok := v.Attr("a"); !ok || a.Values[2] != want[2] {
					t.Errorf("%s attribute a = %+v", spec.Name, a)
				}
			}
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestEncodeErrors(t *testing.T) {
	dims := []Dim{{Name: "x", Len: 2}}
	for _, tc := range []struct {
		name string
		dims []Dim
		vars []VarSpec
		want string
	}{
		{"record dim", []Dim{{Name: "t", Unlimited: true}}, nil, "fixed dimensions"},
		{"dup dim", []Dim{{Name: "x", Len: 1}, {Name: "x", Len: 2}}, nil, "duplicate"},
		{"unknown dim", dims, []VarSpec{{Name: "v", Dims: []string{"z"}, Type: Int, Data: []float64{1}}}, "unknown dimension"},
		{"length", dims, []VarSpec{{Name: "v", Dims: []string{"x"}, Type: Int, Data: []float64{1}}}, "1 values for shape of 2"},
		{"short range", dims, []VarSpec{{Name: "v", Dims: []string{"x"}, Type: Short, Data: []float64{1, 40000}}}, "does not fit"},
		{"fraction", dims, []VarSpec{{Name: "v", Dims: []string{"x"}, Type: Int, Data: []float64{1, 0.5}}}, "does not fit"},
		{"byte range", dims, []VarSpec{{Name: "v", Dims: []string{"x"}, Type: Byte, Data: []float64{1, 128}}}, "does not fit"},
		{"float overflow", dims, []VarSpec{{Name: "v", Dims: []string{"x"}, Type: Float, Data: []float64{1, 1e300}}}, "overflows"},
		{"bad type", dims, []VarSpec{{Name: "v", Dims: []string{"x"}, Type: 9, Data: []float64{1, 2}}}, "unknown data type"},
	} {
		if _, err := Encode(tc.dims, nil, tc.vars, false); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestEncodeMatchesHandBuilt checks the encoder byte for byte against the
// hand-assembled file of netcdf_test.go.
func TestEncodeMatchesHandBuilt(t *testing.T) {
	b, err := Encode([]Dim{{Name: "y", Len: 2}, {Name: "x", Len: 3}}, []Attr{{Name: "title", Type: Char, Text: "hi"}},
		[]VarSpec{{Name: "v", Dims: []string{"y", "x"}, Type: Float, Attrs: []Attr{{Name: "missing_value", Type: Float, Values: []float64{9999}}},
			Data: []float64{0.5, 1.5, 2.5, 3.5, 4.5, 5.5}}}, false)
	if err != nil {
		t.Fatal(err)
	}
	if want := build(t); !bytes.Equal(b, want) {
		t.Fatalf("encoded %d bytes differ from the hand-built %d-byte file", len(b), len(want))
	}
}

func TestReadMasked(t *testing.T) {
	fl := func(name string, v ...float64) Attr { return Attr{Name: name, Type: Float, Values: v} }
	nan := math.NaN()
	for _, tc := range []struct {
		name  string
		ty    Type
		attrs []Attr
		data  []float64
		want  []float64 // NaN = masked
	}{
		{"fill", Float, []Attr{fl("_FillValue", -10000)}, []float64{-10000, 0, 1.5, -20000, nan}, []float64{nan, 0, 1.5, nan, nan}},
		{"positive fill bounds above", Float, []Attr{fl("_FillValue", 1e20)}, []float64{1e20, 2e20, 3}, []float64{nan, nan, 3}},
		{"default fill", Float, nil, []float64{DefaultFill[Float], 1, -0x1p120, 1e37}, []float64{nan, 1, -0x1p120, nan}},
		{"missing values", Double, []Attr{{Name: "missing_value", Type: Double, Values: []float64{-1, -2}}}, []float64{-1, -2, -3, 4}, []float64{nan, nan, -3, 4}},
		{"valid range", Double, []Attr{{Name: "valid_range", Type: Double, Values: []float64{0, 10}}, {Name: "_FillValue", Type: Double, Values: []float64{-5}}},
			[]float64{-1, 0, 10, 11, -5}, []float64{nan, 0, 10, nan, nan}},
		{"valid min max", Double, []Attr{{Name: "valid_min", Type: Double, Values: []float64{1}}, {Name: "valid_max", Type: Double, Values: []float64{2}}},
			[]float64{0.5, 1, 2, 2.5}, []float64{nan, 1, 2, nan}},
		{"scale offset", Short, []Attr{{Name: "scale_factor", Type: Float, Values: []float64{0.5}}, {Name: "add_offset", Type: Float, Values: []float64{10}},
			{Name: "_FillValue", Type: Short, Values: []float64{-999}}}, []float64{-999, 0, 4, -1000}, []float64{nan, 10, 12, nan}},
		{"byte no default fill", Byte, nil, []float64{-127, 5}, []float64{-127, 5}},
	} {
		b, err := Encode([]Dim{{Name: "x", Len: len(tc.data)}}, nil, []VarSpec{{Name: "v", Dims: []string{"x"}, Type: tc.ty, Attrs: tc.attrs, Data: tc.data}}, false)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		f, err := Parse(b)
		if err != nil {
			t.Fatal(err)
		}
		got, valid, err := f.ReadMasked("v")
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		for i, w := range tc.want {
			if math.IsNaN(w) != !valid[i] || (!math.IsNaN(w) && got[i] != w) || (math.IsNaN(w) && !math.IsNaN(got[i])) {
				t.Errorf("%s: [%d] = %v valid=%v, want %v", tc.name, i, got[i], valid[i], w)
			}
		}
	}
	b, _ := Encode([]Dim{{Name: "x", Len: 1}}, nil, []VarSpec{{Name: "v", Dims: []string{"x"}, Type: Float, Data: []float64{1},
		Attrs: []Attr{{Name: "valid_range", Type: Float, Values: []float64{1}}}}}, false)
	f, _ := Parse(b)
	if _, _, err := f.ReadMasked("v"); err == nil || !strings.Contains(err.Error(), "valid_range") {
		t.Errorf("bad valid_range: %v", err)
	}
	if _, _, err := f.ReadMasked("w"); err == nil {
		t.Error("unknown variable: no error")
	}
}
