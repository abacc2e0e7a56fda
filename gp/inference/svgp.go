package inference

import (
	"errors"
	"fmt"
	"math"

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
//
// With q.Whiten and a feature whose Kuu structure is a structured root
// (features.KuuStructure.Whiten, e.g. interval features),
// u = Lv for the feature's structured square root L of Kuu, and no M×M
// factorisation happens; otherwise L is the Cholesky factor of Kuu (or √ of
// a diagonal Kuu).
func SVGP(k kernels.Bound, f features.Bound, x *ad.Node, ve VarExp, q Variational, numData int, opt Options) (*ad.Node, Info, error) {
	if q.Sqrt == nil {
		return nil, Info{}, fmt.Errorf("inference: q(u) needs a mean and a square root")
	}
	return BlockELBO(k, []Block{{Feature: f, Q: q}}, x, ve, numData, opt) // the one-block case
}

// SVGPMarginals returns the latent means and variances of q(f) at the rows
// of x on the tape (both N×1), for objectives built on top of SVGP.
func SVGPMarginals(k kernels.Bound, f features.Bound, x *ad.Node, q Variational, opt Options) (mu, v *ad.Node, info Info, err error) {
	if err := opt.validate(); err != nil {
		return nil, nil, Info{}, err
	}
	fac, err := sqrtKuu(k, f, q.Whiten, opt)
	if err != nil {
		return nil, nil, Info{}, err
	}
	if err := q.check(fac.size()); err != nil {
		return nil, nil, Info{}, err
	}
	if mu, v, err = svgpMarginals(k, f, fac, x, q); err != nil {
		return nil, nil, Info{}, err
	}
	return mu, v, Info{Jitter: fac.jitter()}, nil
}

// svgpMarginals computes, with A = L⁻¹Kuf and Lq the square root of q,
//
//	whitened:     μ = Aᵀm,        v = kff − ‖A‖²_col + ‖Lqᵀ A‖²_col
//	not whitened: μ = (L⁻ᵀA)ᵀm,   v = kff − ‖A‖²_col + ‖Lqᵀ L⁻ᵀA‖²_col.
//
// The whitened form needs only L⁻¹, so fac may be any square root (a
// structured root of the feature's Kuu structure); the other needs a
// triangular factor.
func svgpMarginals(k kernels.Bound, f features.Bound, fac sqrtFactor, x *ad.Node, q Variational) (mu, v *ad.Node, err error) {
	kuf := f.Kuf(k, x)
	mu, a, qa, err := blockProject(kuf, fac, q)
	if err != nil {
		return nil, nil, err
	}
	v = ad.Add(ad.Sub(k.Diag(x), ad.ColSqNorms(a)), ad.ColSqNorms(qa))
	return mu, v, nil
}

// fullFactor returns fac as a triangular factorisation, which the
// non-whitened parameterisation needs (sqrtKuu always gives one then).
func fullFactor(fac sqrtFactor) (factor, error) {
	full, ok := fac.(factor)
	if !ok {
		return nil, errors.New("inference: the non-whitened q(u) needs a triangular factor of Kuu, not a structured whitener")
	}
	return full, nil
}

// klU is KL[N(m, LqLqᵀ) ‖ N(0, Kuu)] (or against N(0, I) when whitened):
//
//	½ [ ‖L⁻¹Lq‖²_F + ‖L⁻¹m‖² − M + log|Kuu| − log|LqLqᵀ| ].
//
// Whitened, it does not involve L at all.
func klU(fac sqrtFactor, q Variational) (*ad.Node, error) {
	if q.Whiten {
		return whitenedKL(q), nil
	}
	t := q.Mu.Tape()
	m := fac.size()
	lq := ad.Tril(q.Sqrt)
	logDetS := ad.Sum(ad.Log(ad.Square(ad.Diag(lq))))
	full, err := fullFactor(fac)
	if err != nil {
		return nil, err
	}
	tr := ad.SumSquares(full.solveL(lq))
	maha := ad.SumSquares(full.solveL(q.Mu))
	return ad.Scale(0.5, add(t.Scalar(-float64(m)), ad.Neg(logDetS), full.logDet(), tr, maha)), nil
}

// whitenedKL is klU for a whitened q(u) as one tape operation:
//
//	KL = ½ [ ‖S‖²_F + ‖m‖² − M − Σᵢ log S_ii² ],  S = tril(q.Sqrt),
//	S̄ = ḡ (S − diag(1/S_ii)) on the lower triangle,  m̄ = ḡ m.
//
// Composed of Tril, Diag, Square, Log, Sum and SumSquares it made a dozen
// passes over M×M matrices (4 % of a minibatch step at M = 500); here the
// gradient is one pass. It computes every sum in the composed operations'
// order and each gradient entry by their arithmetic, so value and gradients
// keep their bits (TestWhitenedKLBits).
func whitenedKL(q Variational) *ad.Node {
	t := q.Mu.Tape()
	sv, mv := q.Sqrt.Value(), q.Mu.Value()
	m, _ := sv.Dims()
	sr := sv.RawMatrix()
	var logDet, tr float64
	for i := 0; i < m; i++ {
		d := sr.Data[i*sr.Stride+i]
		logDet += math.Log(d * d)
		for _, x := range sr.Data[i*sr.Stride : i*sr.Stride+i+1] {
			tr += x * x
		}
	}
	var maha float64
	mr := mv.RawMatrix()
	for i := 0; i < mr.Rows; i++ {
		for _, x := range mr.Data[i*mr.Stride : i*mr.Stride+mr.Cols] {
			maha += x * x
		}
	}
	out := t.NewDenseNonZeroed(1, 1)
	out.Set(0, 0, 0.5*((((-float64(m))+(-1*logDet))+tr)+maha))
	return ad.Custom(out, func(g *mat.Dense) []*mat.Dense {
		g1 := 0.5 * g.At(0, 0) // through Scale(0.5, ·) and the sums
		two := 2 * g1          // SumSquares' factor: ḡ
		var gs, gm *mat.Dense
		if q.Sqrt.NeedsGrad() {
			gs = t.NewDenseNonZeroed(m, m)
			gr := gs.RawMatrix()
			for i := 0; i < m; i++ {
				row := gr.Data[i*gr.Stride : i*gr.Stride+m]
				src := sr.Data[i*sr.Stride : i*sr.Stride+i+1]
				for j, x := range src {
					row[j] = two * x
				}
				// log S_ii² through Neg, Sum, Log and Square: 2·((−g1)/S_ii²)·S_ii.
				d := src[i]
				row[i] += 2 * ((-1 * g1) / (d * d)) * d
				clear(row[i+1:])
			}
		}
		if q.Mu.NeedsGrad() {
			gm = t.NewDenseNonZeroed(mr.Rows, mr.Cols)
			gmr := gm.RawMatrix()
			for i := 0; i < mr.Rows; i++ {
				dst := gmr.Data[i*gmr.Stride : i*gmr.Stride+mr.Cols]
				for j, x := range mr.Data[i*mr.Stride : i*mr.Stride+mr.Cols] {
					dst[j] = two * x
				}
			}
		}
		return []*mat.Dense{gs, gm}
	}, q.Sqrt, q.Mu)
}

// KL returns KL[q(u) ‖ p(u)] on the tape.
func KL(k kernels.Bound, f features.Bound, q Variational, opt Options) (*ad.Node, error) {
	if err := opt.validate(); err != nil {
		return nil, err
	}
	fac, err := sqrtKuu(k, f, q.Whiten, opt)
	if err != nil {
		return nil, err
	}
	if err := q.check(fac.size()); err != nil {
		return nil, err
	}
	return klU(fac, q)
}

// SVGPPosterior returns the predictive posterior of q(u) (values of q.Mu and
// q.Sqrt are read; no gradients flow). With a structured square root
// (features.KuuStructure root or precision, whitened q) the posterior's A = L⁻¹ is that root's inverse,
// formed once by whitening the identity; predictions depend on it only
// through AᵀA = Kuu⁻¹ and the q-dependent terms, which are consistent with
// the ELBO's v = L⁻¹u.
func SVGPPosterior(k kernels.Bound, f features.Bound, q Variational, opt Options) (*Posterior, error) {
	if err := opt.validate(); err != nil {
		return nil, err
	}
	fac, err := sqrtKuu(k, f, q.Whiten, opt)
	if err != nil {
		return nil, err
	}
	m := fac.size()
	if err := q.check(m); err != nil {
		return nil, err
	}
	var linv *mat.Dense
	switch fc := fac.(type) {
	case factor:
		linv = invLower(fc.lower())
	default:
		id := mat.NewDense(m, m, nil)
		for i := 0; i < m; i++ {
			id.Set(i, i, 1)
		}
		in := q.Mu.Tape().Const(id)
		out := fac.solveL(in)
		if err := checkWhitened(out, in); err != nil {
			return nil, err
		}
		linv = out.Value()
	}
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
