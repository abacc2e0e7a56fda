package ad

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// chunkedGram records Σ_c A_cᵀ A_c with A_c = exp(X_c W) for row chunks X_c
// of x, checkpointed: only the W.cols×W.cols sum is kept, and each A_c is
// recorded again in the backward pass. With free, each chunk's matrices go
// back to the tape (Mark and Free) once the chunk is done.
func chunkedGram(x, w *Node, chunk int) *Node { return chunkedGramFree(x, w, chunk, false) }

func chunkedGramFree(x, w *Node, chunk int, free bool) *Node {
	t := x.Tape()
	n, _ := x.Dims()
	_, k := w.Dims()
	build := func(r0, r1 int) *Node {
		return Exp(MatMul(Slice(x, r0, r1, 0, x.val.RawMatrix().Cols), w))
	}
	sum := t.NewDense(k, k)
	drop := func(m Mark) []*Node {
		e := t.Truncate(m.Nodes)
		if free {
			t.Free(m)
		}
		return e
	}
	var ext []*Node
	seen := map[*Node]bool{}
	for r0 := 0; r0 < n; r0 += chunk {
		mark := t.Mark()
		a := build(r0, min(r0+chunk, n)).Value()
		g := t.NewDenseNonZeroed(k, k)
		g.Mul(a.T(), a)
		sum.Add(sum, g)
		for _, e := range drop(mark) {
			if !seen[e] {
				seen[e] = true
				ext = append(ext, e)
			}
		}
	}
	if len(ext) == 0 {
		return t.Const(sum)
	}
	return Custom(sum, func(g *mat.Dense) []*mat.Dense {
		s := t.NewDense(k, k)
		s.Add(g, g.T())
		for r0 := 0; r0 < n; r0 += chunk {
			mark := t.Mark()
			a := build(r0, min(r0+chunk, n))
			seed := t.NewDenseNonZeroed(min(r0+chunk, n)-r0, k)
			seed.Mul(a.Value(), s)
			t.BackwardSegment(mark.Nodes, a, seed)
			drop(mark)
		}
		return make([]*mat.Dense, len(ext))
	}, ext...)
}

func TestSegmentCheckpointGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(81, 1))
	for _, tc := range []struct{ n, d, k, chunk int }{{5, 2, 3, 5}, {7, 3, 2, 3}, {9, 2, 4, 1}} {
		t.Run(fmt.Sprintf("n=%d/chunk=%d", tc.n, tc.chunk), func(t *testing.T) {
			x, w := segRand(rng, tc.n, tc.d, 0.5), segRand(rng, tc.d, tc.k, 0.5)
			// Both inputs variable, then only W (X constant: no gradient
			// flows into the dropped Slice nodes' constant input).
			if err := CheckGradient(func(_ *Tape, xs []*Node) *Node { return chunkedGram(xs[0], xs[1], tc.chunk) },
				[]*mat.Dense{x, w}, 1e-6, 1e-6); err != nil {
				t.Error(err)
			}
			if err := CheckGradient(func(tp *Tape, xs []*Node) *Node { return chunkedGram(tp.Const(x), xs[0], tc.chunk) },
				[]*mat.Dense{w}, 1e-6, 1e-6); err != nil {
				t.Error(err)
			}
			// The tape keeps only the inputs and the checkpointed node.
			tp := NewTape()
			xv, wv := tp.Var(x), tp.Var(w)
			before := tp.Len()
			chunkedGram(xv, wv, tc.chunk)
			if got := tp.Len() - before; got != 1 {
				t.Errorf("checkpointed op left %d nodes on the tape, want 1", got)
			}
		})
	}
}

func TestTruncateDroppedNodeFailsLoudly(t *testing.T) {
	tp := NewTape()
	x := tp.Var(mat.NewDense(1, 1, []float64{2}))
	mark := tp.Len()
	cached := Exp(x)
	if ext := tp.Truncate(mark); len(ext) != 1 || ext[0] != x {
		t.Fatalf("Truncate returned %v, want [x]", ext)
	}
	if cached.Tape() != nil {
		t.Errorf("dropped node still reports a tape")
	}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "different tapes") {
			t.Errorf("using a dropped node: recover() = %v, want a panic about tapes", r)
		}
	}()
	Add(x, cached)
}

func segRand(rng *rand.Rand, r, c int, scale float64) *mat.Dense {
	m := mat.NewDense(r, c, nil)
	for i := range r {
		for j := range c {
			m.Set(i, j, scale*rng.NormFloat64())
		}
	}
	return m
}
