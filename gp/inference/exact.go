package inference

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
	"sgplab/gp/kernels"
	"sgplab/gp/linalg"
)

// ExactLML is the log marginal likelihood of GP regression,
//
//	log N(y | 0, K + σ²I) = −½ yᵀ(K + σ²I)⁻¹y − ½ log|K + σ²I| − (N/2) log 2π,
//
// with K = k(X, X) and noise the 1×1 noise variance σ². It costs O(N³) time
// and O(N²) memory.
func ExactLML(k kernels.Bound, x *ad.Node, y []float64, noise *ad.Node, opt Options) (*ad.Node, Info, error) {
	e, err := exact(k, x, y, noise, opt)
	if err != nil {
		return nil, Info{}, err
	}
	return e.lml, Info{Jitter: e.jitter()}, nil
}

// ExactPosterior is the exact GP-regression posterior of f. Its basis
// variables are the training function values: Posterior.Predict must be
// given a feature that evaluates covariances at the training inputs (for
// example features.BoundPoints{Z: t.Const(X)}).
func ExactPosterior(k kernels.Bound, x *ad.Node, y []float64, noise *ad.Node, opt Options) (*Posterior, error) {
	e, err := exact(k, x, y, noise, opt)
	if err != nil {
		return nil, err
	}
	linv := invLower(e.l)
	// α = (K + σ²I)⁻¹ y = L⁻ᵀ L⁻¹ y.
	alpha := mat.NewDense(len(y), 1, nil)
	alpha.Mul(linv.T(), e.w)
	return &Posterior{Alpha: alpha, A: linv}, nil
}

type exactTerms struct {
	lml *ad.Node
	l   *mat.Dense // Cholesky factor of K + σ²I (+ jitter)
	jit float64
	w   *mat.Dense // L⁻¹ y
}

func (e *exactTerms) jitter() float64 { return e.jit }

func exact(k kernels.Bound, x *ad.Node, y []float64, noise *ad.Node, opt Options) (*exactTerms, error) {
	if err := opt.validate(); err != nil {
		return nil, err
	}
	if err := checkData(x, y); err != nil {
		return nil, err
	}
	if err := checkNoise(noise); err != nil {
		return nil, err
	}
	return gaussianLogDensity("K + σ²I", ad.AddDiag(k.K(x, x), noise), y, opt)
}

// gaussianLogDensity records log N(y | 0, K) as one tape node. Its adjoint
// is K̄ = ½ ḡ (ααᵀ − K⁻¹) with α = K⁻¹y and K⁻¹ from the Cholesky factor
// (dpotri), which costs about two forward factorisations; the generic
// route through the Cholesky adjoint costs about eight. Jitter (Options
// and escalation) is a constant, as in newDenseFactor.
func gaussianLogDensity(name string, kn *ad.Node, y []float64, opt Options) (*exactTerms, error) {
	n, c := kn.Dims()
	if n != c || n != len(y) {
		return nil, fmt.Errorf("inference: %s is %d×%d, want %d×%d", name, n, c, len(y), len(y))
	}
	t := kn.Tape()
	kv := kn.Value()
	if err := checkFinite(name, kv); err != nil {
		return nil, err
	}
	if opt.Jitter > 0 {
		c := t.NewDenseNonZeroed(n, n)
		c.Copy(kv)
		for i := 0; i < n; i++ {
			c.Set(i, i, c.At(i, i)+opt.Jitter)
		}
		kv = c
	}
	l := t.NewDenseNonZeroed(n, n)
	extra, err := linalg.CholeskyJitterTo(l, kv, opt.maxTries())
	if kv != kn.Value() {
		t.Recycle(kv)
	}
	if err != nil {
		t.Recycle(l)
		return nil, fmt.Errorf("inference: %s (%d×%d) not positive definite after jitter %g and %d escalations: %w",
			name, n, n, opt.Jitter, opt.maxTries(), err)
	}
	w := linalg.SolveLower(l, column(y))
	alpha := linalg.SolveLowerT(l, w)
	quad := mat.Dot(w.ColView(0), w.ColView(0))
	v := -0.5*quad - 0.5*linalg.LogDetChol(l) - 0.5*float64(n)*math.Log(2*math.Pi)
	lml := ad.Custom(mat.NewDense(1, 1, []float64{v}), func(g *mat.Dense) []*mat.Dense {
		inv := t.NewDenseNonZeroed(n, n)
		if err := linalg.InverseCholTo(inv, l); err != nil {
			// l has a positive diagonal, so this cannot happen.
			panic(err)
		}
		// K̄ = ½ ḡ (ααᵀ − K⁻¹), built in place in inv.
		s := 0.5 * g.At(0, 0)
		a := alpha.RawMatrix().Data
		raw := inv.RawMatrix()
		for i := 0; i < n; i++ {
			row := raw.Data[i*raw.Stride : i*raw.Stride+n]
			for j, v := range row {
				row[j] = s * (a[i]*a[j] - v)
			}
		}
		return []*mat.Dense{inv}
	}, kn)
	return &exactTerms{lml: lml, l: l, jit: opt.Jitter + extra, w: w}, nil
}
