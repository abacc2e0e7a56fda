package inference

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
	"sgplab/gp/features"
	"sgplab/gp/kernels"
)

// VarExp returns the per-point variational expectations
// E_{N(f; μ_n, v_n)} log p(y_n | f) (N×1) for latent means mu and variances
// v (both N×1). Likelihoods provide it (bound to their own targets and
// parameters).
type VarExp func(mu, v *ad.Node) *ad.Node

// Variational is q(u) = N(Mu, Sqrt Sqrtᵀ) on a tape. Only the lower triangle
// of Sqrt is used, so an unconstrained M×M parameter can be passed. When
// Whiten is set, q is over v with u = L v (Kuu = LLᵀ), and the prior on v is
// N(0, I).
type Variational struct {
	Mu     *ad.Node // M×1
	Sqrt   *ad.Node // M×M
	Whiten bool
}

func (q Variational) check(m int) error {
	if q.Mu == nil || q.Sqrt == nil {
		return fmt.Errorf("inference: q(u) needs a mean and a square root")
	}
	if r, c := q.Mu.Dims(); r != m || c != 1 {
		return fmt.Errorf("inference: q(u) mean is %d×%d, want %d×1", r, c, m)
	}
	if r, c := q.Sqrt.Dims(); r != m || c != m {
		return fmt.Errorf("inference: q(u) square root is %d×%d, want %d×%d", r, c, m, m)
	}
	return nil
}

// SVGP is the uncollapsed evidence lower bound of Hensman et al. (2013,
// 2015) on the minibatch x (B rows):
//
//	(numData/B) Σ_b E_{q(f_b)} log p(y_b | f_b) − KL[q(u) ‖ p(u)],
//
// where q(f_b) = N(μ_b, v_b) is the marginal of ∫ p(f | u) q(u) du. numData is
// the size of the full training set (0 means B: no minibatch scaling).
func SVGP(k kernels.Bound, f features.Bound, x *ad.Node, ve VarExp, q Variational, numData int, opt Options) (*ad.Node, Info, error) {
	if err := opt.validate(); err != nil {
		return nil, Info{}, err
	}
	b, _ := x.Dims()
	if b == 0 {
		return nil, Info{}, errEmpty
	}
	if numData == 0 {
		numData = b
	}
	if numData < b {
		return nil, Info{}, fmt.Errorf("inference: minibatch of %d points from a training set of %d", b, numData)
	}
	fac, err := factorKuu(k, f, opt)
	if err != nil {
		return nil, Info{}, err
	}
	if err := q.check(fac.size()); err != nil {
		return nil, Info{}, err
	}
	mu, v := svgpMarginals(k, f, fac, x, q)
	e := ve(mu, v)
	if r, c := e.Dims(); r != b || c != 1 {
		return nil, Info{}, fmt.Errorf("inference: variational expectations are %d×%d, want %d×1", r, c, b)
	}
	data := ad.Scale(float64(numData)/float64(b), ad.Sum(e))
	return ad.Sub(data, klU(fac, q)), Info{Jitter: fac.jitter()}, nil
}

// SVGPMarginals returns the latent means and variances of q(f) at the rows
// of x on the tape (both N×1), for objectives built on top of SVGP.
func SVGPMarginals(k kernels.Bound, f features.Bound, x *ad.Node, q Variational, opt Options) (mu, v *ad.Node, info Info, err error) {
	if err := opt.validate(); err != nil {
		return nil, nil, Info{}, err
	}
	fac, err := factorKuu(k, f, opt)
	if err != nil {
		return nil, nil, Info{}, err
	}
	if err := q.check(fac.size()); err != nil {
		return nil, nil, Info{}, err
	}
	mu, v = svgpMarginals(k, f, fac, x, q)
	return mu, v, Info{Jitter: fac.jitter()}, nil
}

// svgpMarginals computes, with A = L⁻¹Kuf and Lq the square root of q,
//
//	whitened:     μ = Aᵀm,        v = kff − ‖A‖²_col + ‖Lqᵀ A‖²_col
//	not whitened: μ = (L⁻ᵀA)ᵀm,   v = kff − ‖A‖²_col + ‖Lqᵀ L⁻ᵀA‖²_col.
func svgpMarginals(k kernels.Bound, f features.Bound, fac factor, x *ad.Node, q Variational) (mu, v *ad.Node) {
	a := fac.solveL(f.Kuf(k, x))
	proj := a
	if !q.Whiten {
		proj = fac.solveLT(a) // Kuu⁻¹ Kuf
	}
	lq := ad.Tril(q.Sqrt)
	mu = ad.MatMulTA(proj, q.Mu)
	qa := ad.MatMulTA(lq, proj)
	v = ad.Add(ad.Sub(k.Diag(x), ad.T(ad.ColSums(ad.Square(a)))), ad.T(ad.ColSums(ad.Square(qa))))
	return mu, v
}

// klU is KL[N(m, LqLqᵀ) ‖ N(0, Kuu)] (or against N(0, I) when whitened):
//
//	½ [ ‖L⁻¹Lq‖²_F + ‖L⁻¹m‖² − M + log|Kuu| − log|LqLqᵀ| ].
func klU(fac factor, q Variational) *ad.Node {
	t := q.Mu.Tape()
	m := fac.size()
	lq := ad.Tril(q.Sqrt)
	logDetS := ad.Sum(ad.Log(ad.Square(ad.Diag(lq))))
	var tr, maha *ad.Node
	terms := []*ad.Node{t.Scalar(-float64(m)), ad.Neg(logDetS)}
	if q.Whiten {
		tr = ad.Sum(ad.Square(lq))
		maha = ad.Sum(ad.Square(q.Mu))
	} else {
		tr = ad.Sum(ad.Square(fac.solveL(lq)))
		maha = ad.Sum(ad.Square(fac.solveL(q.Mu)))
		terms = append(terms, fac.logDet())
	}
	terms = append(terms, tr, maha)
	return ad.Scale(0.5, add(terms...))
}

// KL returns KL[q(u) ‖ p(u)] on the tape.
func KL(k kernels.Bound, f features.Bound, q Variational, opt Options) (*ad.Node, error) {
	if err := opt.validate(); err != nil {
		return nil, err
	}
	fac, err := factorKuu(k, f, opt)
	if err != nil {
		return nil, err
	}
	if err := q.check(fac.size()); err != nil {
		return nil, err
	}
	return klU(fac, q), nil
}

// SVGPPosterior returns the predictive posterior of q(u) (values of q.Mu and
// q.Sqrt are read; no gradients flow).
func SVGPPosterior(k kernels.Bound, f features.Bound, q Variational, opt Options) (*Posterior, error) {
	if err := opt.validate(); err != nil {
		return nil, err
	}
	fac, err := factorKuu(k, f, opt)
	if err != nil {
		return nil, err
	}
	m := fac.size()
	if err := q.check(m); err != nil {
		return nil, err
	}
	linv := invLower(fac.lower())
	lq := lowerOf(q.Sqrt.Value())
	// Whitened: α = L⁻ᵀm and B = Lqᵀ L⁻¹; otherwise α = Kuu⁻¹m and
	// B = Lqᵀ Kuu⁻¹.
	proj := linv
	if !q.Whiten {
		proj = mat.NewDense(m, m, nil)
		proj.Mul(linv.T(), linv)
	}
	alpha := mat.NewDense(m, 1, nil)
	alpha.Mul(proj.T(), q.Mu.Value())
	b := mat.NewDense(m, m, nil)
	b.Mul(lq.T(), proj)
	return &Posterior{Alpha: alpha, A: linv, B: b}, nil
}
