package inference

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
	"sgplab/internal/testhelp"
)

// TestGramVecGradient checks the fused [a aᵀ | a v] node and its adjoint
// against finite differences.
func TestGramVecGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(71, 1))
	for _, sh := range [][2]int{{1, 1}, {3, 8}, {6, 5}} {
		t.Run(fmt.Sprintf("%dx%d", sh[0], sh[1]), func(t *testing.T) {
			v := testhelp.RandMat(rng, sh[1], 1, 1).RawMatrix().Data
			err := ad.CheckGradient(func(_ *ad.Tape, xs []*ad.Node) *ad.Node {
				g, av := gramVec(xs[0], v, nil)
				return ad.HCat(g, av)
			}, []*mat.Dense{testhelp.RandMat(rng, sh[0], sh[1], 1)}, 1e-6, 1e-7)
			if err != nil {
				t.Error(err)
			}
		})
	}
}

// TestWhitenedGramVecGradient checks the A-first node [A Aᵀ | A v] with
// A = L⁻¹a against finite differences in a and in L.
func TestWhitenedGramVecGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(74, 1))
	for _, sh := range [][2]int{{1, 1}, {3, 8}, {6, 5}} {
		t.Run(fmt.Sprintf("%dx%d", sh[0], sh[1]), func(t *testing.T) {
			m := sh[0]
			l := testhelp.RandMat(rng, m, m, 0.3)
			for i := 0; i < m; i++ {
				l.Set(i, i, 1+rng.Float64())
			}
			v := testhelp.RandMat(rng, sh[1], 1, 1).RawMatrix().Data
			err := ad.CheckGradient(func(_ *ad.Tape, xs []*ad.Node) *ad.Node {
				g, av := gramVec(xs[0], v, ad.Tril(xs[1]))
				return ad.HCat(g, av)
			}, []*mat.Dense{testhelp.RandMat(rng, m, sh[1], 1), l}, 1e-6, 1e-7)
			if err != nil {
				t.Error(err)
			}
		})
	}
}

// TestCongruenceGradient checks C = L⁻¹ G L⁻ᵀ against finite differences
// in L and in X, with G = X Xᵀ symmetric as the node requires.
func TestCongruenceGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(72, 1))
	for _, n := range []int{1, 2, 5} {
		t.Run(fmt.Sprintf("n=%d", n), func(t *testing.T) {
			l := testhelp.RandMat(rng, n, n, 0.3)
			for i := 0; i < n; i++ {
				l.Set(i, i, 1+rng.Float64())
			}
			err := ad.CheckGradient(func(_ *ad.Tape, xs []*ad.Node) *ad.Node {
				return congruence(ad.Tril(xs[0]), ad.MatMulTB(xs[1], xs[1]))
			}, []*mat.Dense{l, testhelp.RandMat(rng, n, n+2, 1)}, 1e-6, 1e-6)
			if err != nil {
				t.Error(err)
			}
		})
	}
}

// TestSGPRGradientSplit checks the gradient of the collapsed bound along
// random directions at a size where the O(NM²) and M³ products are split
// over goroutines (N·M² ≥ 2²¹, M³ ≥ 2²¹ and M ≥ 2·64 columns), which the
// small full finite-difference tests do not reach.
func TestSGPRGradientSplit(t *testing.T) {
	const n, d, m = 700, 5, 140
	p := newProblem(73, n, d, 0.2)
	p.addZ(testhelp.RandMat(rand.New(rand.NewPCG(73, 2)), m, d, 1.5))
	obj := sgprObjective(p, p.points, Options{Jitter: 1e-6})
	x0 := p.set.Vector()
	defer p.set.SetVector(x0)
	tape := ad.NewTape()
	b := p.set.Bind(tape)
	out, err := obj(tape, b)
	if err != nil {
		t.Fatal(err)
	}
	tape.Backward(out)
	grad := b.Gradient()
	rng := rand.New(rand.NewPCG(73, 3))
	const h = 1e-4
	for k := range 3 {
		dir := make([]float64, len(x0))
		for i := range dir {
			dir[i] = rng.NormFloat64()
		}
		at := func(s float64) float64 {
			x := append([]float64(nil), x0...)
			floats.AddScaled(x, s, dir)
			p.set.SetVector(x)
			return evaluate(t, p.set, obj)
		}
		// Richardson extrapolation of two central differences cancels
		// their h² error.
		d1, d2 := (at(h)-at(-h))/(2*h), (at(h/2)-at(-h/2))/h
		fdv := (4*d2 - d1) / 3
		adv := floats.Dot(grad, dir)
		if e := math.Abs(adv-fdv) / math.Max(1, math.Abs(fdv)); e > 1e-7 {
			t.Errorf("direction %d: ∇·d = %.10g, central difference %.10g (rel %.2g)", k, adv, fdv, e)
		}
	}
}
