package results

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"testing"
)

// readNPY parses an NPY 1.0 file of little-endian float64 in C order, the
// subset WriteNPY writes, checking every rule of the format it relies on.
func readNPY(b []byte) (rows, cols int, data []float64, err error) {
	if len(b) < 10 || string(b[:6]) != npyMagic || b[6] != 1 || b[7] != 0 {
		return 0, 0, nil, fmt.Errorf("bad magic or version % x", b[:min(len(b), 8)])
	}
	hlen := int(binary.LittleEndian.Uint16(b[8:10]))
	if 10+hlen > len(b) {
		return 0, 0, nil, fmt.Errorf("header length %d past the end", hlen)
	}
	if (10+hlen)%64 != 0 {
		return 0, 0, nil, fmt.Errorf("data starts at %d, not a multiple of 64", 10+hlen)
	}
	header := string(b[10 : 10+hlen])
	m := regexp.MustCompile(`^\{'descr': '<f8', 'fortran_order': False, 'shape': \((\d+), (\d+)\), \} *\n$`).FindStringSubmatch(header)
	if m == nil {
		return 0, 0, nil, fmt.Errorf("header %q", header)
	}
	rows, _ = strconv.Atoi(m[1])
	cols, _ = strconv.Atoi(m[2])
	body := b[10+hlen:]
	if len(body) != 8*rows*cols {
		return 0, 0, nil, fmt.Errorf("%d data bytes for %d × %d", len(body), rows, cols)
	}
	for i := 0; i < rows*cols; i++ {
		data = append(data, math.Float64frombits(binary.LittleEndian.Uint64(body[8*i:])))
	}
	return rows, cols, data, nil
}

func TestWriteNPY(t *testing.T) {
	for _, tc := range []struct {
		rows, cols int
		data       []float64
	}{
		{2, 3, []float64{1, -2.5, math.NaN(), math.Inf(1), 1e-300, math.MaxFloat64}},
		{0, 4, nil},
		{1, 1, []float64{math.Pi}},
		{12345678, 0, nil}, // a long shape still pads to 64
	} {
		var b bytes.Buffer
		if err := WriteNPY(&b, tc.rows, tc.cols, tc.data); err != nil {
			t.Fatal(err)
		}
		r, c, data, err := readNPY(b.Bytes())
		if err != nil {
			t.Fatalf("%d × %d: %v", tc.rows, tc.cols, err)
		}
		if r != tc.rows || c != tc.cols || len(data) != len(tc.data) {
			t.Fatalf("read %d × %d with %d values, wrote %d × %d", r, c, len(data), tc.rows, tc.cols)
		}
		for i, v := range tc.data {
			if math.Float64bits(data[i]) != math.Float64bits(v) {
				t.Errorf("value %d: read %v, wrote %v", i, data[i], v)
			}
		}
	}
	if err := WriteNPY(&bytes.Buffer{}, 2, 2, []float64{1}); err == nil {
		t.Error("a wrong number of values was written")
	}
}
