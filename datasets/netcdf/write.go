package netcdf

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
)

// VarSpec is a non-record variable to encode: its dimensions by name
// (outermost first), type, attributes and row-major values.
type VarSpec struct {
	Name  string
	Dims  []string
	Type  Type
	Attrs []Attr
	Data  []float64
}

// Encode serialises dimensions, global attributes and non-record variables
// as a classic netCDF file (CDF-1, or CDF-2 when offset64 is set). Values
// must be representable in their variable's type. It exists so that tests
// and tools can produce small files readable by Parse and by the netCDF
// library.
func Encode(dims []Dim, attrs []Attr, vars []VarSpec, offset64 bool) ([]byte, error) {
	dimID := map[string]int{}
	for i, d := range dims {
		if d.Unlimited || d.Len <= 0 {
			return nil, fmt.Errorf("netcdf: encode: dimension %q: only fixed dimensions of positive length are supported", d.Name)
		}
		if _, dup := dimID[d.Name]; dup {
			return nil, fmt.Errorf("netcdf: encode: duplicate dimension %q", d.Name)
		}
		dimID[d.Name] = i
	}
	type enc struct {
		ids  []int
		data []byte
	}
	encs := make([]enc, len(vars))
	for k, v := range vars {
		n := 1
		for _, dn := range v.Dims {
			id, ok := dimID[dn]
			if !ok {
				return nil, fmt.Errorf("netcdf: encode: variable %q uses unknown dimension %q", v.Name, dn)
			}
			encs[k].ids = append(encs[k].ids, id)
			n *= dims[id].Len
		}
		if len(v.Data) != n {
			return nil, fmt.Errorf("netcdf: encode: variable %q has %d values for shape of %d", v.Name, len(v.Data), n)
		}
		b, err := encodeValues(v.Type, v.Data)
		if err != nil {
			return nil, fmt.Errorf("netcdf: encode: variable %q: %w", v.Name, err)
		}
		encs[k].data = append(b, make([]byte, pad4(len(b))-len(b))...)
	}
	header := func(begins []int64) ([]byte, error) {
		var h bytes.Buffer
		w := func(v uint32) { binary.Write(&h, binary.BigEndian, v) }
		name := func(s string) {
			w(uint32(len(s)))
			h.WriteString(s)
			h.Write(make([]byte, pad4(len(s))-len(s)))
		}
		// list starts a dimension, attribute or variable list: ABSENT (two
		// zero words) when it is empty, else the tag and the count.
		list := func(tag uint32, n int) bool {
			if n == 0 {
				w(0)
				w(0)
				return false
			}
			w(tag)
			w(uint32(n))
			return true
		}
		writeAttrs := func(as []Attr) error {
			if !list(tagAttr, len(as)) {
				return nil
			}
			for _, a := range as {
				name(a.Name)
				w(uint32(a.Type))
				var b []byte
				if a.Type == Char {
					b = []byte(a.Text)
				} else {
					var err error
					if b, err = encodeValues(a.Type, a.Values); err != nil {
						return fmt.Errorf("netcdf: encode: attribute %q: %w", a.Name, err)
					}
				}
				sz, err := a.Type.size()
				if err != nil {
					return err
				}
				w(uint32(len(b) / sz))
				h.Write(b)
				h.Write(make([]byte, pad4(len(b))-len(b)))
			}
			return nil
		}
		if offset64 {
			h.WriteString("CDF\x02")
		} else {
			h.WriteString("CDF\x01")
		}
		w(0) // numrecs
		if list(tagDim, len(dims)) {
			for _, d := range dims {
				name(d.Name)
				w(uint32(d.Len))
			}
		}
		if err := writeAttrs(attrs); err != nil {
			return nil, err
		}
		if list(tagVar, len(vars)) {
			for k, v := range vars {
				name(v.Name)
				w(uint32(len(encs[k].ids)))
				for _, id := range encs[k].ids {
					w(uint32(id))
				}
				if err := writeAttrs(v.Attrs); err != nil {
					return nil, err
				}
				w(uint32(v.Type))
				w(uint32(len(encs[k].data)))
				if offset64 {
					binary.Write(&h, binary.BigEndian, begins[k])
				} else {
					if begins[k] > math.MaxUint32 {
						return nil, fmt.Errorf("netcdf: encode: variable %q starts beyond 4 GiB; use offset64", v.Name)
					}
					w(uint32(begins[k]))
				}
			}
		}
		return h.Bytes(), nil
	}
	begins := make([]int64, len(vars))
	h, err := header(begins) // the header size does not depend on the offsets
	if err != nil {
		return nil, err
	}
	off := int64(len(h))
	for k := range vars {
		begins[k] = off
		off += int64(len(encs[k].data))
	}
	if h, err = header(begins); err != nil {
		return nil, err
	}
	out := make([]byte, 0, off)
	out = append(out, h...)
	for _, e := range encs {
		out = append(out, e.data...)
	}
	return out, nil
}

// encodeValues writes vals big-endian as type t, rejecting values the type
// cannot hold exactly (integers) or in range (float).
func encodeValues(t Type, vals []float64) ([]byte, error) {
	sz, err := t.size()
	if err != nil {
		return nil, err
	}
	b := make([]byte, len(vals)*sz)
	for i, v := range vals {
		intOK := func(lo, hi float64) error {
			if v != math.Trunc(v) || v < lo || v > hi {
				return fmt.Errorf("value %v at %d does not fit type %d", v, i, t)
			}
			return nil
		}
		switch t {
		case Byte, Char:
			lo, hi := -128.0, 127.0
			if t == Char {
				lo, hi = 0, 255
			}
			if err := intOK(lo, hi); err != nil {
				return nil, err
			}
			b[i] = byte(int(v))
		case Short:
			if err := intOK(math.MinInt16, math.MaxInt16); err != nil {
				return nil, err
			}
			binary.BigEndian.PutUint16(b[2*i:], uint16(int16(v)))
		case Int:
			if err := intOK(math.MinInt32, math.MaxInt32); err != nil {
				return nil, err
			}
			binary.BigEndian.PutUint32(b[4*i:], uint32(int32(v)))
		case Float:
			if math.Abs(v) > math.MaxFloat32 && !math.IsInf(v, 0) {
				return nil, fmt.Errorf("value %v at %d overflows float32", v, i)
			}
			binary.BigEndian.PutUint32(b[4*i:], math.Float32bits(float32(v)))
		case Double:
			binary.BigEndian.PutUint64(b[8*i:], math.Float64bits(v))
		}
	}
	return b, nil
}
