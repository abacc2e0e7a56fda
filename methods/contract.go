package methods

import (
	"errors"
	"fmt"
	"strconv"
)

// What a method declares beyond its parameters, for the runner to check a
// run before running it (DESIGN.md, "What a method declares"): Method.Exact,
// MaxDim, Check and Needs, combined by Method.Plan.

// Shape is what is known of a run's data before it runs: N training rows
// (exactly when Exact is set, e.g. a synthetic draw; otherwise at most: the
// dataset's rows before the test split; 0 unknown), D input dimensions (0
// unknown) and Batch rows per optimiser step (0: all).
type Shape struct {
	N, D, Batch int
	Exact       bool
}

// rows is the number of rows one optimiser step touches.
func (s Shape) rows() int {
	if s.Batch > 0 && (s.N == 0 || s.Batch < s.N) {
		return s.Batch
	}
	return s.N
}

// Plan is what one run of a method will need.
type Plan struct {
	// M is the number of inducing variables (features) of the run; 0 for
	// a method without any. A run records the M it used as num_features.
	M int
	// Exact: one N×N factorisation per step, no inducing variables.
	Exact bool
	// Memory is a lower bound of the bytes the run holds at once (0: not
	// estimated), MemoryWhat what dominates it and how to shrink it, and
	// MemoryParam the parameter it grows with ("": none in particular).
	Memory      float64
	MemoryWhat  string
	MemoryParam string
	// Warnings say how the run will differ from what its parameters ask
	// (e.g. num_inducing capped at N).
	Warnings []string
	// Params is about how many numbers the fit trains (0: not declared):
	// L-BFGS needs a few iterations per trained number to converge, which
	// is how long the ETA expects a fit that stop_tol may end early to run.
	Params int
	// StepFlops is about the flops of one optimiser step, for a method
	// whose step does not cost B·M² + M³ for B rows and M inducing
	// variables, as the ETA assumes otherwise (0: that).
	StepFlops float64
	// SetupFlops is about the flops of what a fit computes once before its
	// steps (0: nothing that matters), e.g. ΦΦᵀ of a fixed Kuf.
	SetupFlops float64
}

// A ParamError is an error about the value of one parameter, so that the
// runner can point at the line that sets it.
type ParamError struct {
	Param string
	Err   error
}

func (e *ParamError) Error() string { return e.Param + ": " + e.Err.Error() }
func (e *ParamError) Unwrap() error { return e.Err }

// paramErr wraps err as an error about parameter name.
func paramErr(name string, err error) error {
	if err == nil || name == "" {
		return err
	}
	var pe *ParamError
	if errors.As(err, &pe) {
		return err
	}
	return &ParamError{Param: name, Err: err}
}

// CheckParams runs the method's checks of parameter combinations on
// validated parameters.
func (m Method) CheckParams(p Params) error {
	if m.Check == nil {
		return nil
	}
	if err := m.Check(p); err != nil {
		return fmt.Errorf("method %s: %w", m.Name, err)
	}
	return nil
}

// Plan is what a run with validated parameters p will need on data of
// shape s, or why it cannot run there: an input dimension above MaxDim, or
// the method's own Needs error.
func (m Method) Plan(p Params, s Shape) (Plan, error) {
	if m.MaxDim > 0 && s.D > m.MaxDim {
		return Plan{}, fmt.Errorf("method %s handles inputs of at most %d dimension(s); the data have %d (choose another method, or select input columns)", m.Name, m.MaxDim, s.D)
	}
	var plan Plan
	if m.Needs != nil {
		var err error
		if plan, err = m.Needs(p, s); err != nil {
			return Plan{}, fmt.Errorf("method %s: %w", m.Name, err)
		}
	}
	plan.Exact = plan.Exact || m.Exact
	return plan, nil
}

// Bytes formats a byte count for messages ("6.3 EB", "512 MB").
func Bytes(b float64) string {
	units := []string{"B", "kB", "MB", "GB", "TB", "PB", "EB"}
	i := 0
	for b >= 1000 && i < len(units)-1 {
		b /= 1000
		i++
	}
	if b >= 1000 {
		return strconv.FormatFloat(b, 'g', 3, 64) + " " + units[i]
	}
	return strconv.FormatFloat(b, 'f', 1, 64) + " " + units[i]
}

// floatBytes is the memory of n float64 values.
func floatBytes(n float64) float64 { return 8 * n }
