package optim

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
	"sgplab/gp/param"
)

// toySet holds a (2×1, identity), b (positive) and c (identity).
func toySet(t *testing.T) *param.Set {
	s := param.NewSet()
	for _, err := range []error{
		s.Add("a", mat.NewDense(2, 1, []float64{0, 0}), param.Identity{}),
		s.AddScalar("b", 1, param.DefaultPositive),
		s.AddScalar("c", 0, param.Identity{}),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// toyObjective is −(a₀−1)² − (a₁+2)² − (b−3)² − (c−a₀)², maximal at
// a = (1, −2), b = 3, c = 1. It records how many values each call optimises.
func toyObjective(lens *[]int) func(t *ad.Tape, b *param.Bound) (*ad.Node, error) {
	return func(t *ad.Tape, b *param.Bound) (*ad.Node, error) {
		*lens = append(*lens, len(b.Gradient()))
		a := b.Get("a")
		da := ad.Sub(a, t.Const(mat.NewDense(2, 1, []float64{1, -2})))
		db := ad.AddConst(b.Get("b"), -3)
		dc := ad.Sub(b.Get("c"), ad.Slice(a, 0, 1, 0, 1))
		s := ad.Add(ad.Add(ad.Sum(ad.Square(da)), ad.Square(db)), ad.Square(dc))
		return ad.Neg(s), nil
	}
}

func TestTrainPhases(t *testing.T) {
	s := toySet(t)
	s.SetTrainable(false, "c") // the caller's flags must survive Train
	var lens []int
	phases := []Phase{
		{Name: "b only", Trainable: []string{"b"}, Settings: Settings{MaxIter: 100}},
		{Name: "all", Settings: Settings{MaxIter: 200}},
	}
	var aAfter1, cAfter1 *mat.Dense
	var bAfter1 float64
	seen := map[string]bool{}
	toy := toyObjective(&lens)
	obj := func(tp *ad.Tape, b *param.Bound) (*ad.Node, error) {
		out, err := toy(tp, b)
		if lens[len(lens)-1] == 4 && aAfter1 == nil {
			// Phase 2's first evaluation, at its starting point: the set
			// holds phase 1's result.
			aAfter1, bAfter1, cAfter1 = s.Value("a"), s.Scalar("b"), s.Value("c")
		}
		return out, err
	}
	rep, err := Train(context.Background(), s, obj, phases, func(p Progress) { seen[p.Phase] = true })
	if err != nil {
		t.Fatal(err)
	}
	if !seen["b only"] || !seen["all"] {
		t.Fatalf("phases reported: %v", seen)
	}
	// Phase 1 moved b only: a and c were fixed bit for bit.
	if aAfter1.At(0, 0) != 0 || aAfter1.At(1, 0) != 0 || cAfter1.At(0, 0) != 0 {
		t.Errorf("phase 1 changed fixed parameters: a = %v, c = %v", aAfter1.RawMatrix().Data, cAfter1.At(0, 0))
	}
	if math.Abs(bAfter1-3) > 1e-6 {
		t.Errorf("phase 1: b = %g, want 3", bAfter1)
	}
	if lens[0] != 1 || lens[len(lens)-1] != 4 {
		t.Errorf("optimised vector lengths %d (phase 1) and %d (phase 2), want 1 and 4", lens[0], lens[len(lens)-1])
	}
	want := map[string][]float64{"a": {1, -2}, "b": {3}, "c": {1}}
	for name, w := range want {
		got := s.Value(name).RawMatrix().Data
		for i := range w {
			if math.Abs(got[i]-w[i]) > 1e-5 {
				t.Errorf("%s = %v, want %v", name, got, w)
			}
		}
	}
	if math.Abs(rep.Objective) > 1e-9 || rep.Iterations == 0 || len(rep.Trace) != rep.Iterations+1 {
		t.Errorf("report %+v", rep)
	}
	for i := 1; i < len(rep.Trace); i++ {
		if rep.Trace[i].Iteration != rep.Trace[i-1].Iteration+1 {
			t.Fatalf("trace iterations not consecutive at %d: %+v", i, rep.Trace[i-1:i+1])
		}
	}
	if !s.Trainable("a") || !s.Trainable("b") || s.Trainable("c") {
		t.Error("Train did not restore the trainable flags")
	}
}

func TestTrainStops(t *testing.T) {
	// Cancellation: ctx.Err() and the set at a finite, improved point.
	s := toySet(t)
	var lens []int
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rep, err := Train(ctx, s, toyObjective(&lens), []Phase{{Settings: Settings{Method: Adam, MaxIter: 1000, LearningRate: 0.1}}},
		func(p Progress) {
			if p.Iteration == 2 {
				cancel()
			}
		})
	if err != context.Canceled {
		t.Errorf("cancel: err %v, want context.Canceled", err)
	}
	initial := -(1 + 4 + 4 + 0.0)
	if !(rep.Objective > initial) || s.Value("a").At(0, 0) == 0 {
		t.Errorf("cancel: objective %g (initial %g), a = %v", rep.Objective, initial, s.Value("a").RawMatrix().Data)
	}

	// An objective that fails beyond b = 2: L-BFGS rejects those trial
	// points and ends at an improved point ≤ 2, reporting the rejections.
	s = toySet(t)
	failing := func(tp *ad.Tape, b *param.Bound) (*ad.Node, error) {
		if b.Get("b").Scalar() > 2 {
			return nil, errors.New("cholesky failed")
		}
		return toyObjective(&lens)(tp, b)
	}
	rep, err = Train(context.Background(), s, failing, []Phase{{Settings: Settings{MaxIter: 100}}}, nil)
	if err != nil || rep.Rejected == 0 || rep.FirstRejection == nil || !strings.Contains(rep.FirstRejection.Error(), "cholesky failed") {
		t.Errorf("failing objective (L-BFGS): err %v, rejected %d (%v)", err, rep.Rejected, rep.FirstRejection)
	}
	if bv := s.Scalar("b"); !(bv <= 2) || bv == 1 {
		t.Errorf("failing objective (L-BFGS): b = %g, want an improved point ≤ 2", bv)
	}
	// Adam has no line search: the error comes back, set at the last good point.
	s = toySet(t)
	_, err = Train(context.Background(), s, failing, []Phase{{Settings: Settings{Method: Adam, MaxIter: 1000, LearningRate: 0.5}}}, nil)
	if err == nil || !strings.Contains(err.Error(), "cholesky failed") {
		t.Errorf("failing objective (Adam): err %v", err)
	}
	if bv := s.Scalar("b"); !(bv <= 2) || bv == 1 {
		t.Errorf("failing objective (Adam): b = %g, want an improved point ≤ 2", bv)
	}

	// Bad phases.
	for _, ph := range [][]Phase{nil, {{Trainable: []string{"nope"}, Settings: Settings{MaxIter: 1}}}, {{Trainable: []string{}, Settings: Settings{MaxIter: 1}}}} {
		if _, err := Train(context.Background(), toySet(t), toyObjective(&lens), ph, nil); err == nil {
			t.Errorf("phases %+v: no error", ph)
		}
	}
}
