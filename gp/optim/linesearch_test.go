package optim

import (
	"errors"
	"testing"

	"gonum.org/v1/gonum/optimize"
)

// A line search that keeps evaluating without completing an iteration is
// stopped after maxLineSearchEvals evaluations; each completed iteration
// starts the count again.
func TestRecorderStopsStalledLineSearch(t *testing.T) {
	r := &recorder{cb: func(Iteration) {}}
	loc := &optimize.Location{F: 1, Gradient: []float64{0}}
	st := &optimize.Stats{}
	for round := 0; round < 3; round++ {
		for i := 0; i < maxLineSearchEvals; i++ {
			if err := r.Record(loc, optimize.FuncEvaluation|optimize.GradEvaluation, st); err != nil {
				t.Fatalf("round %d: evaluation %d stopped the search: %v", round, i+1, err)
			}
		}
		st.MajorIterations++
		if err := r.Record(loc, optimize.MajorIteration, st); err != nil {
			t.Fatal(err)
		}
	}
	var err error
	for i := 0; i <= maxLineSearchEvals && err == nil; i++ {
		err = r.Record(loc, optimize.FuncEvaluation, st)
	}
	if !errors.Is(err, errLineSearchStalled) {
		t.Fatalf("after %d evaluations without progress: error %v, want %v", maxLineSearchEvals+1, err, errLineSearchStalled)
	}
	// Gradient-only evaluations do not count.
	r2 := &recorder{cb: func(Iteration) {}}
	for i := 0; i < 3*maxLineSearchEvals; i++ {
		if err := r2.Record(loc, optimize.GradEvaluation, st); err != nil {
			t.Fatal(err)
		}
	}
}
