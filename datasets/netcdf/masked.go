package netcdf

import (
	"fmt"
	"math"
)

// DefaultFill is the netCDF library's default fill value of each type,
// which readers treat as missing when a variable has no _FillValue.
var DefaultFill = map[Type]float64{
	Byte:   -127,
	Char:   0,
	Short:  -32767,
	Int:    -2147483647,
	Float:  float64(float32(9.9692099683868690e+36)),
	Double: 9.9692099683868690e+36,
}

// ReadMasked reads a non-record variable the way CF-aware readers do
// (netCDF4-python's default auto-mask and auto-scale): a value is invalid
// when it is NaN, equals a missing_value or the _FillValue (the type's
// default fill when the attribute is absent, except for byte and char
// variables), or lies outside valid_range / valid_min / valid_max. With no
// valid_* attributes, a _FillValue > 0 bounds the valid range from above
// and one < 0 from below (netCDF user guide convention). Comparisons use
// the packed values; valid values are then unpacked with scale_factor and
// add_offset. vals[i] is NaN wherever valid[i] is false.
func (f *File) ReadMasked(name string) (vals []float64, valid []bool, err error) {
	raw, err := f.Read(name)
	if err != nil {
		return nil, nil, err
	}
	v, _ := f.Var(name)
	scalar := func(attr string) (float64, bool, error) {
		a, ok := v.Attr(attr)
		if !ok {
			return 0, false, nil
		}
		if len(a.Values) != 1 {
			return 0, false, fmt.Errorf("netcdf: %s:%s has %d values, expected 1", name, attr, len(a.Values))
		}
		return a.Values[0], true, nil
	}
	fill, hasFill, err := scalar("_FillValue")
	if err != nil {
		return nil, nil, err
	}
	var missing []float64
	if a, ok := v.Attr("missing_value"); ok {
		missing = a.Values
	}
	lo, hi := math.Inf(-1), math.Inf(1)
	hasRange := false
	if a, ok := v.Attr("valid_range"); ok {
		if len(a.Values) != 2 {
			return nil, nil, fmt.Errorf("netcdf: %s:valid_range has %d values, expected 2", name, len(a.Values))
		}
		lo, hi, hasRange = a.Values[0], a.Values[1], true
	}
	if m, ok, err := scalar("valid_min"); err != nil {
		return nil, nil, err
	} else if ok {
		lo, hasRange = m, true
	}
	if m, ok, err := scalar("valid_max"); err != nil {
		return nil, nil, err
	} else if ok {
		hi, hasRange = m, true
	}
	if !hasFill && v.Type != Byte && v.Type != Char {
		fill, hasFill = DefaultFill[v.Type], true
	}
	if hasFill && !hasRange && v.Type != Byte && v.Type != Char {
		if fill > 0 {
			hi = fill
		} else if fill < 0 {
			lo = fill
		}
	}
	scale, hasScale, err := scalar("scale_factor")
	if err != nil {
		return nil, nil, err
	}
	offset, hasOffset, err := scalar("add_offset")
	if err != nil {
		return nil, nil, err
	}
	if !hasScale {
		scale = 1
	}
	valid = make([]bool, len(raw))
	for i, x := range raw {
		ok := !math.IsNaN(x) && x >= lo && x <= hi && !(hasFill && x == fill)
		for _, m := range missing {
			if x == m {
				ok = false
			}
		}
		valid[i] = ok
		if !ok {
			raw[i] = math.NaN()
			continue
		}
		if hasScale || hasOffset {
			raw[i] = x*scale + offset
		}
	}
	return raw, valid, nil
}
