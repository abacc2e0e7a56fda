package optim

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"sgplab/gp/ad"
	"sgplab/gp/param"
)

// Phase is one stage of training: which parameters move and how.
type Phase struct {
	Name      string
	Trainable []string // nil = all parameters of the set
	Settings  Settings
}

// Progress is reported after every iteration of Train. Iteration counts
// across phases; Objective is the maximised value.
type Progress struct {
	Phase     string
	Iteration int
	Objective float64
	Elapsed   time.Duration
}

// Report summarises Train.
type Report struct {
	Objective  float64 // maximised value at the final point
	Iterations int     // over all phases
	Trace      []Progress
	Status     string // status of the last phase run
	// Rejected counts non-finite trial points over all phases (see
	// Result.Rejected); FirstRejection is the error of the first.
	Rejected       int
	FirstRejection error
}

// Train maximises obj over the trainable parameters of set, phase by phase,
// fixing the parameters a phase does not list. It leaves set at the best
// point found (Minimize's Result) and restores every parameter's trainable
// flag afterwards. On cancellation it returns ctx.Err() with set at the last
// good point; when obj fails or turns non-finite it returns that error, again
// with set at the last good point.
func Train(ctx context.Context, set *param.Set, obj func(t *ad.Tape, b *param.Bound) (*ad.Node, error),
	phases []Phase, cb func(Progress)) (Report, error) {
	if len(phases) == 0 {
		return Report{}, errors.New("optim: Train needs at least one phase")
	}
	names := set.Names()
	flags := make([]bool, len(names))
	for i, n := range names {
		flags[i] = set.Trainable(n)
	}
	defer func() {
		for i, n := range names {
			set.SetTrainable(flags[i], n)
		}
	}()

	start := time.Now()
	var rep Report
	for pi, ph := range phases {
		label := ph.Name
		if label == "" {
			label = fmt.Sprintf("phase %d", pi+1)
		}
		if err := selectTrainable(set, ph.Trainable); err != nil {
			return rep, fmt.Errorf("optim: %s: %w", label, err)
		}
		if set.Len() == 0 {
			return rep, fmt.Errorf("optim: %s: no trainable parameters", label)
		}
		var objErr error
		// One tape for every evaluation: Reset recycles the previous
		// evaluation's matrices, so the heap stops growing after the first.
		t := ad.NewTape()
		f := func(x, grad []float64) float64 {
			set.SetVector(x)
			t.Reset()
			b := set.Bind(t)
			out, err := obj(t, b)
			if err == nil {
				if r, c := out.Dims(); r != 1 || c != 1 {
					err = fmt.Errorf("objective is %d×%d, want 1×1", r, c)
				}
			}
			if err != nil {
				if objErr == nil {
					objErr = err
				}
				return nanValue
			}
			t.Backward(out)
			for i, g := range b.AppendGradient(grad[:0]) {
				grad[i] = -g
			}
			return -out.Scalar()
		}
		base := rep.Iterations
		report := func(it Iteration) {
			if it.Iter == 0 && pi > 0 {
				return // same point as the previous phase's last iteration
			}
			p := Progress{Phase: label, Iteration: base + it.Iter, Objective: -it.F, Elapsed: time.Since(start)}
			rep.Trace = append(rep.Trace, p)
			if cb != nil {
				cb(p)
			}
		}
		res, err := Minimize(ctx, f, set.Vector(), ph.Settings, report)
		if res.X != nil {
			set.SetVector(res.X)
			rep.Objective = -res.F
		}
		rep.Iterations += res.Iterations
		rep.Status = res.Status
		if res.Rejected > 0 {
			rep.Rejected += res.Rejected
			if rep.FirstRejection == nil {
				rep.FirstRejection = objErr
			}
		}
		if err != nil {
			if ctxErr := ctx.Err(); ctxErr != nil && errors.Is(err, ctxErr) {
				return rep, ctxErr
			}
			if objErr != nil {
				return rep, fmt.Errorf("optim: %s: objective failed: %w", label, objErr)
			}
			return rep, fmt.Errorf("optim: %s: %w", label, err)
		}
	}
	return rep, nil
}

var nanValue = math.NaN()

func selectTrainable(set *param.Set, names []string) error {
	if names == nil {
		set.SetAllTrainable(true)
		return nil
	}
	for _, n := range names {
		if !set.Has(n) {
			return fmt.Errorf("no parameter %q (have %v)", n, set.Names())
		}
	}
	set.SetAllTrainable(false)
	set.SetTrainable(true, names...)
	return nil
}
