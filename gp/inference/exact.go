package inference

import (
	"math"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
	"sgplab/gp/kernels"
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
	return e.lml, Info{Jitter: e.fac.jitter()}, nil
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
	linv := invLower(e.fac.lower())
	// α = (K + σ²I)⁻¹ y = L⁻ᵀ L⁻¹ y.
	alpha := mat.NewDense(len(y), 1, nil)
	alpha.Mul(linv.T(), e.w.Value())
	return &Posterior{Alpha: alpha, A: linv}, nil
}

type exactTerms struct {
	lml *ad.Node
	fac factor
	w   *ad.Node // L⁻¹ y
}

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
	t := x.Tape()
	n := len(y)
	kxx := ad.AddDiag(k.K(x, x), noise)
	fac, err := newDenseFactor("K + σ²I", kxx, opt)
	if err != nil {
		return nil, err
	}
	w := fac.solveL(t.Const(column(y)))
	lml := add(
		ad.Scale(-0.5, ad.Sum(ad.Square(w))),
		ad.Scale(-0.5, fac.logDet()),
		t.Scalar(-0.5*float64(n)*math.Log(2*math.Pi)),
	)
	return &exactTerms{lml: lml, fac: fac, w: w}, nil
}
