package ad

import (
	"math/rand/v2"
	"runtime"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// arenaStep records one objective with values, gradients and backward
// scratch of every kind the tape allocates (products, a Cholesky factor and
// its adjoint, solves, elementwise ops, a checkpointed segment), runs the
// backward pass and returns the objective and the gradients of x and w
// (owned by the tape).
func arenaStep(t *Tape, x, w *mat.Dense, chunk int, free bool) (float64, *mat.Dense, *mat.Dense) {
	xn, wn := t.Var(x), t.Var(w)
	g := chunkedGramFree(xn, wn, chunk, free) // k×k, positive definite
	l, err := Cholesky(AddDiag(g, t.Scalar(1)))
	if err != nil {
		panic(err)
	}
	s := SolveLower(l, MatMulTB(wn, wn))
	out := Add(Sum(Square(s)), LogDetChol(l))
	t.Backward(out)
	return out.Scalar(), xn.Grad(), wn.Grad()
}

// TestTapeResetAndFree checks that a tape reused with Reset, and segments
// whose matrices are handed back with Free, give bitwise the gradients of a
// fresh tape, step after step, and that the steady state allocates far
// less than a step's matrices.
func TestTapeResetAndFree(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	x, w := segRand(rng, 11, 4, 0.5), segRand(rng, 4, 4, 0.5)
	want, gx, gw := arenaStep(NewTape(), x, w, 3, false) // a fresh tape, not reused
	tp := NewTape()
	for step := range 4 {
		tp.Reset()
		got, hx, hw := arenaStep(tp, x, w, 3, step%2 == 0)
		if got != want || !mat.Equal(hx, gx) || !mat.Equal(hw, gw) {
			t.Fatalf("step %d on a reset tape: objective %v (fresh tape %v) or gradients differ", step, got, want)
		}
	}
	// Steady state: the matrices come from the tape, so a step allocates
	// only small bookkeeping (nodes, closures), not the step's matrices.
	var before, after runtime.MemStats
	big := segRand(rng, 200, 30, 0.5)
	bw := segRand(rng, 30, 30, 0.1)
	step := func() {
		tp.Reset()
		arenaStep(tp, big, bw, 50, true)
	}
	step()
	runtime.ReadMemStats(&before)
	step()
	runtime.ReadMemStats(&after)
	fresh := func() {
		arenaStep(NewTape(), big, bw, 50, true)
	}
	var f0, f1 runtime.MemStats
	runtime.ReadMemStats(&f0)
	fresh()
	runtime.ReadMemStats(&f1)
	reused, first := after.TotalAlloc-before.TotalAlloc, f1.TotalAlloc-f0.TotalAlloc
	t.Logf("bytes allocated by a step: %d on a fresh tape, %d on a reset one", first, reused)
	if reused*10 > first {
		t.Errorf("a step on a reset tape allocated %d bytes, more than a tenth of a fresh tape's %d", reused, first)
	}
}

// TestFreeKeepsGradients checks that Free keeps a matrix a segment handed
// to an earlier node as its gradient, and recycles the rest.
func TestFreeKeepsGradients(t *testing.T) {
	tp := NewTape()
	v := tp.Var(mat.NewDense(2, 2, []float64{1, 2, 3, 4}))
	mark := tp.Mark()
	seg := Scale(3, v) // its backward hands v a new, tape-owned gradient
	out := Sum(seg)
	g := tp.NewDense(1, 1)
	g.Set(0, 0, 1)
	tp.BackwardSegment(mark.Nodes, out, g)
	tp.Truncate(mark.Nodes)
	tp.Free(mark)
	// Recycled matrices are handed out again: if v's gradient had been
	// recycled, these would overwrite it.
	for range 4 {
		m := tp.NewDense(2, 2)
		m.Set(0, 0, -7)
	}
	if want := mat.NewDense(2, 2, []float64{3, 3, 3, 3}); !mat.Equal(v.Grad(), want) {
		t.Errorf("gradient after Free = %v, want %v", mat.Formatted(v.Grad()), mat.Formatted(want))
	}
}
