package netcdf

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// build writes a tiny CDF-1 file: dims y=2, x=3; a global text attribute;
// a float variable v(y, x) with a missing_value attribute.
func build(t *testing.T) []byte {
	t.Helper()
	var h bytes.Buffer
	w := func(v any) { binary.Write(&h, binary.BigEndian, v) }
	name := func(s string) {
		w(uint32(len(s)))
		h.WriteString(s)
		for h.Len()%4 != 0 {
			h.WriteByte(0)
		}
	}
	h.WriteString("CDF\x01")
	w(uint32(0))
	w(uint32(tagDim))
	w(uint32(2))
	name("y")
	w(uint32(2))
	name("x")
	w(uint32(3))
	w(uint32(tagAttr))
	w(uint32(1))
	name("title")
	w(uint32(Char))
	w(uint32(2))
	h.WriteString("hi\x00\x00")
	w(uint32(tagVar))
	w(uint32(1))
	name("v")
	w(uint32(2))
	w(uint32(0))
	w(uint32(1))
	w(uint32(tagAttr))
	w(uint32(1))
	name("missing_value")
	w(uint32(Float))
	w(uint32(1))
	w(float32(9999))
	w(uint32(Float))
	w(uint32(24))
	begin := h.Len() + 4
	w(uint32(begin))
	for i := 0; i < 6; i++ {
		w(float32(i) + 0.5)
	}
	return h.Bytes()
}

func TestParseSynthetic(t *testing.T) {
	f, err := Parse(build(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Dims) != 2 || f.Dims[1].Len != 3 || f.Attrs[0].Text != "hi" {
		t.Fatalf("header: %+v %+v", f.Dims, f.Attrs)
	}
	v, _ := f.Var("v")
	if a, ok := v.Attr("missing_value"); !ok || a.Values[0] != 9999 {
		t.Fatalf("missing_value: %+v", a)
	}
	got, err := f.Read("v")
	if err != nil {
		t.Fatal(err)
	}
	for i, g := range got {
		if g != float64(i)+0.5 {
			t.Fatalf("v[%d] = %v", i, g)
		}
	}
}

func TestBadInput(t *testing.T) {
	good := build(t)
	for _, tc := range []struct {
		name string
		b    []byte
	}{
		{"empty", nil},
		{"hdf5", []byte("\x89HDF\r\n\x1a\n")},
		{"version", []byte("CDF\x05\x00\x00\x00\x00")},
		{"truncated", good[:40]},
	} {
		if _, err := Parse(tc.b); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
	// Data offset beyond the end of the file.
	f, err := Parse(good[:len(good)-8])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Read("v"); err == nil {
		t.Error("short data: no error")
	}
	if _, err := f.Read("nope"); err == nil {
		t.Error("unknown variable: no error")
	}
	// Dimensions of 2³¹−1 each: 4 bytes times their product overflowed and the end
	// offset wrapped below the start, a panic (FuzzParse/7bc316c86f36b701).
	huge := bytes.Clone(good)
	binary.BigEndian.PutUint32(huge[24:], math.MaxInt32) // y
	binary.BigEndian.PutUint32(huge[36:], math.MaxInt32) // x
	if f, err = Parse(huge); err != nil {
		t.Fatal(err)
	}
	if vals, err := f.Read("v"); err == nil || !strings.Contains(err.Error(), "needs more than the 24 bytes of the file") {
		t.Errorf("shape %v: Read gave %d values, error %v", f.Vars[0].Shape, len(vals), err)
	}
}

// TestGISTEMP reads the staged IFF temperature grid when it is available.
func TestGISTEMP(t *testing.T) {
	dir := os.Getenv("SGPLAB_DATA")
	if dir == "" {
		t.Skip("SGPLAB_DATA not set: skipping the staged netCDF file")
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join("..", "..", dir)
	}
	f, err := Open(filepath.Join(dir, "iff-temperature", "trends_feb_2020_2021.nc"))
	if os.IsNotExist(err) {
		t.Skip("staged file absent")
	}
	if err != nil {
		t.Fatal(err)
	}
	temp, err := f.Read("TEMPTREND")
	if err != nil {
		t.Fatal(err)
	}
	lat, _ := f.Read("lat")
	lon, _ := f.Read("lon")
	valid, lo, hi := 0, math.Inf(1), math.Inf(-1)
	for _, v := range temp {
		if v != 9999 {
			valid++
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	if len(lat) != 90 || len(lon) != 180 || lat[0] != -89 || lon[179] != 179 || valid != 16183 {
		t.Fatalf("lat %d lon %d valid %d", len(lat), len(lon), valid)
	}
	if math.Abs(lo+15.861) > 1e-3 || math.Abs(hi-7.493) > 1e-3 {
		t.Fatalf("range [%v, %v], want [-15.861, 7.493]", lo, hi)
	}
}
