package runner

import (
	"errors"
	"fmt"
	"math"

	"sgplab/gp"
	"sgplab/methods"
)

// What a run will need, from the method's declaration (methods.Method.Plan)
// and the dataset's shape, checked when a grid expands (so also at
// --dry-run) and again when a run starts, with the exact training set.

// planKey identifies a planned combination within one expansion.
type planKey struct {
	method  int // index of the method combination
	params  int // index of its parameter combination
	dataset string
	batch   int
}

// planRun checks method m with validated parameters p on dataset dn (with
// parameters dp) and batch size bs before anything runs: the method's input
// dimension limit, its feature counts, the training set's size and the
// memory it will need. Errors point at the parameter the method names (src
// maps parameters to their keys) or at the grid's methods; warnings are
// recorded once.
func (x *expander) planRun(key string, m methods.Method, p methods.Params, src map[string]string, dn string, dp map[string]any, bs int) (methods.Plan, bool) {
	var s methods.Shape
	if x.opt.Shape != nil {
		s.N, s.D, s.Exact = x.opt.Shape(dn, dp)
	}
	s.Batch = bs
	plan, err := m.Plan(p, s)
	where := describeShape(dn, s)
	if err != nil {
		at := key + ".methods"
		var pe *methods.ParamError
		if errors.As(err, &pe) {
			if k, ok := src[pe.Param]; ok {
				at = k
			}
		}
		x.f.errorf(x.es, at, "%s: %v", where, err)
		return plan, false
	}
	if lim := x.opt.MemoryLimit; lim > 0 && plan.Memory > lim {
		at := key + ".methods"
		if k, ok := src[plan.MemoryParam]; ok {
			at = k
		}
		x.f.errorf(x.es, at, "%s: method %s needs at least %s (%s), more than the %s a run may use; shrink the run, or run it on a machine with more memory (SGPLAB_MEMORY=bytes validates for that machine)",
			where, m.Name, methods.Bytes(plan.Memory), plan.MemoryWhat, methods.Bytes(lim))
		return plan, false
	}
	for _, w := range plan.Warnings {
		msg := fmt.Sprintf("%s:%d: %s: %s: method %s: %s", x.f.Path, x.f.lines.Line(key), key, where, m.Name, w)
		if !contains(x.warnings, msg) {
			x.warnings = append(x.warnings, msg)
		}
	}
	return plan, true
}

// checkCombo validates one combination of a method's parameters as a
// whole (each value alone is checked where it is set): the method's checks
// across parameters, reported at the key of the parameter they name.
func (x *expander) checkCombo(key string, m methods.Method, raw map[string]any, src map[string]string) (methods.Params, bool) {
	p, err := m.Validate(raw)
	if err == nil {
		err = m.CheckParams(p)
	}
	if err != nil {
		at := key + ".methods"
		var pe *methods.ParamError
		if errors.As(err, &pe) && src[pe.Param] != "" {
			at = src[pe.Param]
		}
		x.f.errorf(x.es, at, "%v", err)
		return p, false
	}
	return p, true
}

// describeShape is "dataset yacht (N ≤ 308, D = 6)".
func describeShape(dn string, s methods.Shape) string {
	out := "dataset " + dn
	if s.N == 0 && s.D == 0 {
		return out
	}
	rel := "≤"
	if s.Exact {
		rel = "="
	}
	n, d := "?", "?"
	if s.N > 0 {
		n = fmt.Sprint(s.N)
	}
	if s.D > 0 {
		d = fmt.Sprint(s.D)
	}
	return fmt.Sprintf("%s (N %s %s, D = %s)", out, rel, n, d)
}

// checkPlan checks a run against its method's declaration on the training
// set it got (the exact N and D): what Expand could not know (a user's
// CSV) fails here, before the fit.
func checkPlan(m methods.Method, spec *RunSpec, train gp.Data) error {
	p, err := m.Validate(spec.Params)
	if err != nil {
		return err
	}
	if err := m.CheckParams(p); err != nil {
		return err
	}
	_, err = m.Plan(p, methods.Shape{N: train.N(), D: train.D(), Batch: spec.BatchSize, Exact: true})
	return err
}

// checkFinite reports a NaN or infinite number in a grid value (a list
// is checked element by element), naming nothing: the caller names the
// key.
func checkFinite(v any) error {
	switch x := v.(type) {
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("%v is not a finite number", x)
		}
	case []any:
		for i, e := range x {
			if err := checkFinite(e); err != nil {
				return fmt.Errorf("element %d: %w", i, err)
			}
		}
	case []float64:
		for i, e := range x {
			if err := checkFinite(e); err != nil {
				return fmt.Errorf("element %d: %w", i, err)
			}
		}
	}
	return nil
}
