package ad

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/diff/fd"
	"gonum.org/v1/gonum/mat"
)

// CheckGradient compares the reverse-mode gradient of f with central finite
// differences (gonum diff/fd) at inputs, for use in tests of any package
// that builds on ad.
//
// f receives one variable node per input. If its result is not 1×1 it is
// reduced to Σ W∘out with a fixed pseudo-random W, so every output entry
// contributes. step is the finite-difference step (1e-6 if ≤ 0) and tol the
// allowed mismatch |ad − fd| / max(1, |fd|) per entry (1e-6 if ≤ 0). The
// inputs are not modified. The returned error describes the worst mismatch
// and how many entries exceeded tol; nil means every entry agreed.
func CheckGradient(f func(t *Tape, xs []*Node) *Node, inputs []*mat.Dense, step, tol float64) error {
	if step <= 0 {
		step = 1e-6
	}
	if tol <= 0 {
		tol = 1e-6
	}
	if len(inputs) == 0 {
		return fmt.Errorf("ad.CheckGradient: no inputs")
	}
	xs := make([]*mat.Dense, len(inputs))
	for k, in := range inputs {
		xs[k] = mat.DenseCopyOf(in)
	}
	var w *mat.Dense // projection, fixed on first use
	eval := func(vars bool) (*Tape, []*Node, *Node) {
		t := NewTape()
		nodes := make([]*Node, len(xs))
		for k, x := range xs {
			if vars {
				nodes[k] = t.Var(x)
			} else {
				nodes[k] = t.Const(x)
			}
		}
		out := f(t, nodes)
		if r, c := out.Dims(); r != 1 || c != 1 {
			if w == nil {
				w = projection(r, c)
			}
			out = Dot(out, t.Const(w))
		}
		return t, nodes, out
	}

	t, nodes, out := eval(true)
	if v := out.Scalar(); math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Errorf("ad.CheckGradient: objective is %v at the given inputs", v)
	}
	t.Backward(out)
	grads := make([]*mat.Dense, len(nodes))
	for k, n := range nodes {
		grads[k] = mat.DenseCopyOf(n.Grad())
	}

	var (
		worst      float64
		worstMsg   string
		bad, total int
		settings   = &fd.Settings{Formula: fd.Central, Step: step}
	)
	for k, x := range xs {
		r, c := x.Dims()
		raw := x.RawMatrix()
		x0 := make([]float64, 0, r*c)
		for i := 0; i < r; i++ {
			x0 = append(x0, raw.Data[i*raw.Stride:i*raw.Stride+c]...)
		}
		set := func(v []float64) {
			for i := 0; i < r; i++ {
				copy(raw.Data[i*raw.Stride:i*raw.Stride+c], v[i*c:(i+1)*c])
			}
		}
		num := fd.Gradient(nil, func(v []float64) float64 {
			set(v)
			_, _, o := eval(false)
			return o.Scalar()
		}, x0, settings)
		set(x0)
		for i := 0; i < r; i++ {
			for j := 0; j < c; j++ {
				a, n := grads[k].At(i, j), num[i*c+j]
				e := math.Abs(a-n) / math.Max(1, math.Abs(n))
				if math.IsNaN(e) {
					e = math.Inf(1)
				}
				total++
				if e > tol {
					bad++
				}
				if e > worst || (worstMsg == "" && e > tol) {
					worst = e
					worstMsg = fmt.Sprintf("input %d (%d×%d) entry (%d,%d): reverse-mode %.10g, finite difference %.10g (mismatch %.3g)",
						k, r, c, i, j, a, n, e)
				}
			}
		}
	}
	if bad > 0 {
		return fmt.Errorf("ad.CheckGradient: %d of %d gradient entries exceed tol %g; worst at %s", bad, total, tol, worstMsg)
	}
	return nil
}

// projection returns a fixed pseudo-random r×c matrix with entries in
// [0.5, 1.5) and random signs, so no output entry is weighted near zero.
func projection(r, c int) *mat.Dense {
	rng := rand.New(rand.NewPCG(0x5eed, uint64(r)<<32|uint64(c)))
	d := make([]float64, r*c)
	for i := range d {
		d[i] = 0.5 + rng.Float64()
		if rng.IntN(2) == 0 {
			d[i] = -d[i]
		}
	}
	return mat.NewDense(r, c, d)
}
