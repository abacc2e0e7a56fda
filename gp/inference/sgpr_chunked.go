package inference

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
	"sgplab/gp/features"
	"sgplab/gp/kernels"
)

// The collapsed bound only needs Kuf through Kuf Kfu (M×M) and Kuf y (M×1).
// Recorded whole, Kuf costs several N×M matrices on the tape (its value,
// the kernel's saved derivative, its gradient and the temporaries of the
// backward pass): at N = 10⁵, M = 1000 that is gigabytes. For inducing
// points, whose Kuf = k(Z, X) has one column per data point, the bound
// instead forms Kuf chunk by chunk of X, keeps only the two sums, and forms
// each chunk again in the backward pass (ad.Tape segments): memory
// O(M² + chunk·M) for one more kernel evaluation.
var (
	// sgprChunkedAbove is the size N·M of Kuf above which the chunked path
	// is used. Below it the whole path's few N×M matrices (2²⁴ entries are
	// 128 MiB each) are affordable and it saves the second kernel
	// evaluation. (Measured with OpenBLAS: CPU time per evaluation the
	// same within noise at N = 10⁴, M = 1000; at N = 10⁵ the chunked path
	// used less, 11.2 s against 12.5 s at M = 1000, and peak heap 0.4 GiB
	// against 3.3 GiB.)
	sgprChunkedAbove = 1 << 24
	// sgprChunkEntries is the size (entries, chunk·M) of one chunk of Kuf:
	// 2²¹ entries are 16 MiB, large enough for full-rate BLAS calls on
	// every core and small enough to stay far below the whole Kuf.
	sgprChunkEntries = 1 << 21
)

// kufChunkable reports whether Kuf(X) of f is formed column by column from
// the rows of X, so that the chunked path gives the same matrix. Only
// inducing points are known to be: other features may depend on the whole
// of X (the trigonometric VOF chooses its quadrature from max |x|, a
// precomputed Φ serves exactly the training inputs).
func kufChunkable(f features.Bound) bool {
	_, ok := f.(features.BoundPoints)
	return ok
}

// gramVecChunked records Kuf Kfu and Kuf y (as gramVec) for Kuf =
// f.Kuf(k, X) formed over row chunks of X of the given size, holding one
// chunk at a time in both passes. When l (a lower-triangular factor of
// Kuu on the tape) is not nil it records A Aᵀ and A y for A = L⁻¹Kuf
// instead (see whitenedGram).
func gramVecChunked(k kernels.Bound, f features.Bound, x *ad.Node, y []float64, m, chunk int, l *ad.Node) (g, av *ad.Node, err error) {
	t := x.Tape()
	n, d := x.Dims()
	rows := func(r0, r1 int) *ad.Node {
		if x.NeedsGrad() {
			return ad.Slice(x, r0, r1, 0, d)
		}
		return t.Const(x.Value().Slice(r0, r1, 0, d).(*mat.Dense))
	}
	wg := newWhitenedGram(t, l, m)
	var ext []*ad.Node
	seen := map[*ad.Node]bool{}
	// Each chunk's matrices go back to the tape (Free) once its sums are
	// taken, so that the next chunk reuses them.
	drop := func(mark ad.Mark) []*ad.Node {
		e := t.Truncate(mark.Nodes)
		t.Free(mark)
		return e
	}
	for r0 := 0; r0 < n; r0 += chunk {
		r1 := min(r0+chunk, n)
		mark := t.Mark()
		kc := f.Kuf(k, rows(r0, r1))
		if r, c := kc.Dims(); r != m || c != r1-r0 {
			drop(mark)
			return nil, nil, fmt.Errorf("inference: Kuf of inputs %d..%d is %d×%d, want %d×%d", r0, r1-1, r, c, m, r1-r0)
		}
		if err := checkFinite(fmt.Sprintf("Kuf (columns %d..%d)", r0, r1-1), kc.Value()); err != nil {
			drop(mark)
			return nil, nil, err
		}
		wg.add(kc.Value(), y[r0:r1])
		for _, e := range drop(mark) {
			if !seen[e] {
				seen[e] = true
				ext = append(ext, e)
			}
		}
	}
	both := wg.finish()
	inputs := ext
	if l != nil && l.NeedsGrad() {
		inputs = append(inputs, l)
	}
	var node *ad.Node
	if len(inputs) == 0 {
		node = t.Const(both)
	} else {
		node = ad.Custom(both, func(gbar *mat.Dense) []*mat.Dense {
			adj := wg.adjoint(gbar)
			for r0 := 0; r0 < n; r0 += chunk {
				r1 := min(r0+chunk, n)
				mark := t.Mark()
				kc := f.Kuf(k, rows(r0, r1))
				t.BackwardSegment(mark.Nodes, kc, adj.kuf(kc.Value(), y[r0:r1]))
				drop(mark)
			}
			// The gradients reached ext inside the segments.
			grads := make([]*mat.Dense, len(inputs))
			if len(inputs) > len(ext) {
				grads[len(ext)] = adj.lbar
			}
			return grads
		}, inputs...)
	}
	return ad.Slice(node, 0, m, 0, m), ad.Slice(node, 0, m, m, m+1), nil
}
