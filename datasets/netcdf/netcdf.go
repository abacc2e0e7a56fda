package netcdf

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
)

// Type is a netCDF external data type.
type Type int32

// The classic netCDF data types.
const (
	Byte   Type = 1
	Char   Type = 2
	Short  Type = 3
	Int    Type = 4
	Float  Type = 5
	Double Type = 6
)

func (t Type) size() (int, error) {
	switch t {
	case Byte, Char:
		return 1, nil
	case Short:
		return 2, nil
	case Int, Float:
		return 4, nil
	case Double:
		return 8, nil
	}
	return 0, fmt.Errorf("netcdf: unknown data type %d", t)
}

// Dim is a named dimension. Record dimensions have Len 0 and Unlimited set.
type Dim struct {
	Name      string
	Len       int
	Unlimited bool
}

// Attr is an attribute: text for Char attributes, numbers otherwise.
type Attr struct {
	Name   string
	Type   Type
	Text   string
	Values []float64
}

// Var is a variable with its dimensions (outermost first) and attributes.
type Var struct {
	Name  string
	Dims  []int // indices into File.Dims
	Shape []int
	Attrs []Attr
	Type  Type
	begin int64
	vsize int64
}

// Attr returns the named attribute.
func (v *Var) Attr(name string) (Attr, bool) {
	for _, a := range v.Attrs {
		if a.Name == name {
			return a, true
		}
	}
	return Attr{}, false
}

// File is a parsed classic netCDF file held in memory.
type File struct {
	Dims    []Dim
	Attrs   []Attr
	Vars    []*Var
	NumRecs int
	data    []byte
}

// Open reads and parses the file at path.
func Open(path string) (*File, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	f, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}

type reader struct {
	b        []byte
	off      int
	offset64 bool
	err      error
}

func (r *reader) need(n int) bool {
	if r.err != nil {
		return false
	}
	if n < 0 || r.off+n > len(r.b) {
		r.err = fmt.Errorf("netcdf: truncated header at byte %d", r.off)
		return false
	}
	return true
}

func (r *reader) u32() uint32 {
	if !r.need(4) {
		return 0
	}
	v := binary.BigEndian.Uint32(r.b[r.off:])
	r.off += 4
	return v
}

func (r *reader) int() int {
	v := r.u32()
	if v > math.MaxInt32 {
		r.err = fmt.Errorf("netcdf: count %d out of range at byte %d", v, r.off-4)
		return 0
	}
	return int(v)
}

func (r *reader) offset() int64 {
	if r.offset64 {
		hi := r.u32()
		lo := r.u32()
		return int64(hi)<<32 | int64(lo)
	}
	return int64(r.u32())
}

func pad4(n int) int { return (n + 3) &^ 3 }

func (r *reader) name() string {
	n := r.int()
	if !r.need(pad4(n)) {
		return ""
	}
	s := string(r.b[r.off : r.off+n])
	r.off += pad4(n)
	return s
}

const (
	tagDim  = 0x0A
	tagVar  = 0x0B
	tagAttr = 0x0C
)

// list reads a tagged list header and returns its element count.
func (r *reader) list(tag uint32) int {
	t := r.u32()
	n := r.int()
	if r.err != nil {
		return 0
	}
	if t == 0 && n == 0 { // ABSENT
		return 0
	}
	if t != tag {
		r.err = fmt.Errorf("netcdf: expected list tag %#x, found %#x at byte %d", tag, t, r.off-8)
		return 0
	}
	return n
}

func (r *reader) attrs() []Attr {
	n := r.list(tagAttr)
	var out []Attr
	for i := 0; i < n && r.err == nil; i++ {
		a := Attr{Name: r.name(), Type: Type(r.u32())}
		cnt := r.int()
		sz, err := a.Type.size()
		if err != nil {
			r.err = err
			return nil
		}
		if !r.need(pad4(cnt * sz)) {
			return nil
		}
		raw := r.b[r.off : r.off+cnt*sz]
		r.off += pad4(cnt * sz)
		if a.Type == Char {
			a.Text = string(bytes.TrimRight(raw, "\x00"))
		} else {
			a.Values = decode(raw, a.Type, cnt)
		}
		out = append(out, a)
	}
	return out
}

func decode(raw []byte, t Type, n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		switch t {
		case Byte:
			v[i] = float64(int8(raw[i]))
		case Char:
			v[i] = float64(raw[i])
		case Short:
			v[i] = float64(int16(binary.BigEndian.Uint16(raw[2*i:])))
		case Int:
			v[i] = float64(int32(binary.BigEndian.Uint32(raw[4*i:])))
		case Float:
			v[i] = float64(math.Float32frombits(binary.BigEndian.Uint32(raw[4*i:])))
		case Double:
			v[i] = math.Float64frombits(binary.BigEndian.Uint64(raw[8*i:]))
		}
	}
	return v
}

// Parse parses a classic netCDF file held in b.
func Parse(b []byte) (*File, error) {
	if len(b) < 4 || string(b[:3]) != "CDF" {
		return nil, errors.New("netcdf: not a classic netCDF file (missing CDF magic; netCDF-4/HDF5 is not supported)")
	}
	r := &reader{b: b, off: 4}
	switch b[3] {
	case 1:
	case 2:
		r.offset64 = true
	default:
		return nil, fmt.Errorf("netcdf: unsupported format version %d", b[3])
	}
	f := &File{data: b}
	f.NumRecs = r.int()
	nd := r.list(tagDim)
	for i := 0; i < nd && r.err == nil; i++ {
		d := Dim{Name: r.name(), Len: r.int()}
		d.Unlimited = d.Len == 0
		f.Dims = append(f.Dims, d)
	}
	f.Attrs = r.attrs()
	nv := r.list(tagVar)
	names := map[string]bool{}
	for i := 0; i < nv && r.err == nil; i++ {
		v := &Var{Name: r.name()}
		// Variables are looked up by name: a repeated one would silently
		// read as the first (found by fuzzing).
		if names[v.Name] && r.err == nil {
			return nil, fmt.Errorf("netcdf: variable name %q appears twice", v.Name)
		}
		names[v.Name] = true
		nd := r.int()
		for j := 0; j < nd && r.err == nil; j++ {
			id := r.int()
			if id >= len(f.Dims) {
				return nil, fmt.Errorf("netcdf: variable %q refers to dimension %d of %d", v.Name, id, len(f.Dims))
			}
			v.Dims = append(v.Dims, id)
			v.Shape = append(v.Shape, f.Dims[id].Len)
		}
		v.Attrs = r.attrs()
		v.Type = Type(r.u32())
		v.vsize = int64(r.u32())
		v.begin = r.offset()
		f.Vars = append(f.Vars, v)
	}
	if r.err != nil {
		return nil, r.err
	}
	return f, nil
}

// Var returns the named variable.
func (f *File) Var(name string) (*Var, bool) {
	for _, v := range f.Vars {
		if v.Name == name {
			return v, true
		}
	}
	return nil, false
}

// Read returns the values of a non-record variable in row-major order.
func (f *File) Read(name string) ([]float64, error) {
	v, ok := f.Var(name)
	if !ok {
		return nil, fmt.Errorf("netcdf: no variable %q", name)
	}
	for _, d := range v.Dims {
		if f.Dims[d].Unlimited {
			return nil, fmt.Errorf("netcdf: variable %q uses record dimension %q, which is not supported", name, f.Dims[d].Name)
		}
	}
	sz, err := v.Type.size()
	if err != nil {
		return nil, err
	}
	if v.begin < 0 || v.begin > int64(len(f.data)) {
		return nil, fmt.Errorf("netcdf: variable %q data starts at byte %d, outside the %d-byte file", name, v.begin, len(f.data))
	}
	// The element count is checked against what the rest of the file can
	// hold before each product: dimensions of up to 2³²−1 each would
	// overflow it (and wrap the end offset below the start).
	fits := (int64(len(f.data)) - v.begin) / int64(sz)
	n := int64(1)
	for i, l := range v.Shape {
		if l != 0 && n > fits/int64(l) {
			return nil, fmt.Errorf("netcdf: variable %q of shape %v needs more than the %d bytes of the file after byte %d", name, v.Shape[:i+1], int64(len(f.data))-v.begin, v.begin)
		}
		n *= int64(l)
	}
	if n > fits { // a scalar
		return nil, fmt.Errorf("netcdf: variable %q data [%d, %d) lies outside the %d-byte file", name, v.begin, v.begin+n*int64(sz), len(f.data))
	}
	return decode(f.data[v.begin:v.begin+n*int64(sz)], v.Type, int(n)), nil
}
