package methods

import (
	"fmt"
	"maps"

	"sgplab/gp/kernels"
	"sgplab/gp/param"
)

// One size axis. Every sparse method takes num_inducing, the number of
// inducing variables M, so that one grid key sweeps M across families. A
// method whose feature set has a structure (frequencies per dimension,
// levels, B-spline bases) declares a sizeRule: num_inducing then chooses
// that structure parameter: the value whose feature count on the data's
// input dimension is nearest to M, the smaller on a tie (counts grow in
// steps: 2f − 1 per dimension, D·(2f − 1) additive, (2f − 1)^D Kronecker;
// all harmonics of a level at once), and the run records the count it got
// as num_features.
// A decoupled method's num_inducing is its base set; its orthogonal set
// has num_orthogonal, by default as many (sizeFallback).

// sizeRule maps num_inducing onto the structure parameter of a method's
// first block.
type sizeRule struct {
	param string // the parameter num_inducing chooses
	min   int    // its smallest value
	// limit, when set, is the largest usable value for parameters p on
	// data of shape s (VISH: the last level whose kernel coefficient is
	// usable in float64), or an error.
	limit func(p Params, s Shape, kernel func() (kernels.Kernel, *param.Set, error)) (int, error)
}

// sizeParam documents num_inducing of a method with a size rule: how
// counts the structure parameter's feature count.
func sizeParam(r *sizeRule, how string) ParamDoc {
	return ParamDoc{Name: "num_inducing", Kind: Int, Range: Count, Chooses: r.param,
		Doc: fmt.Sprintf("number of inducing variables M: chooses %s, the value whose feature count (%s) on the data's input dimension is nearest to num_inducing "+
			"(the smaller on a tie); the run records the count as num_features and the choice as x_%s; give num_inducing or %s, not both",
			r.param, how, r.param, r.param)}
}

// with returns p with name set to v.
func (p Params) with(name string, v any) Params {
	vals := maps.Clone(p.values)
	vals[name] = v
	return Params{method: p.method, values: vals}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// sizing is the outcome of a size rule.
type sizing struct {
	value int    // the structure parameter's value chosen (0: none chosen)
	m     int    // its feature count
	note  string // why M differs much from num_inducing, for Plan.Warnings
}

// sized applies the declaration's size rule: p with the structure
// parameter chosen by num_inducing on data of shape s. Unchanged when the
// method has no rule, num_inducing is not given, or the dimension is not
// known yet (then the count is not known either).
func (d *sparseDecl) sized(p Params, s Shape) (Params, sizing, error) {
	r := d.size
	if r == nil || !p.Has("num_inducing") || s.D == 0 {
		return p, sizing{}, nil
	}
	want := p.Int("num_inducing")
	fb, err := Feature(d.blocks[0].feature(p))
	if err != nil {
		return p, sizing{}, err
	}
	kernel := func() (kernels.Kernel, *param.Set, error) {
		set := param.NewSet()
		k, err := d.kernel(p, s.D, set)
		return k, set, err
	}
	count := func(v int) (int, bool) {
		m, err := fb.Count(CountContext{Params: p.with(r.param, v), Shape: s, Kernel: kernel})
		return m, err == nil
	}
	limit := -1
	if r.limit != nil {
		if limit, err = r.limit(p, s, kernel); err != nil {
			return p, sizing{}, paramErr("num_inducing", err)
		}
	}
	fits := func(v int) bool {
		m, ok := count(v)
		return ok && m <= want && (limit < 0 || v <= limit)
	}
	lo := r.min
	if !fits(lo) {
		m, _ := count(lo)
		sz := sizing{value: lo, m: m, note: fmt.Sprintf("num_inducing = %d is below the smallest feature set (%s = %d: M = %d); the runs use that", want, r.param, lo, m)}
		return p.with(r.param, lo), sz, nil
	}
	// Counts grow with the parameter: double, then halve, to the largest
	// value that fits.
	step := 1
	for fits(lo + step) {
		lo += step
		step *= 2
	}
	for hi := lo + step; hi-lo > 1; {
		if mid := lo + (hi-lo)/2; fits(mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
	// The smallest value with the same count (levels that add no
	// feature), and the first one above with more.
	best, _ := count(lo)
	for lo > r.min {
		if m, _ := count(lo - 1); m != best {
			break
		}
		lo--
	}
	next, nextM := lo+1, -1
	for ; limit < 0 || next <= limit; next++ {
		m, ok := count(next)
		if !ok {
			break
		}
		if m > best {
			nextM = m
			break
		}
	}
	// The nearer of the two counts (the smaller on a tie).
	if nextM > 0 && nextM-want < want-best {
		lo, best = next, nextM
	}
	sz := sizing{value: lo, m: best}
	switch {
	case 2*abs(best-want) <= want:
	case limit >= 0 && lo == limit && best < want:
		sz.note = fmt.Sprintf("num_inducing = %d needs %s > %d, beyond the largest usable here: M = %d", want, r.param, limit, best)
	default:
		sz.note = fmt.Sprintf("num_inducing = %d gives M = %d (%s = %d, the nearest count)", want, best, r.param, lo)
	}
	return p.with(r.param, lo), sz, nil
}
