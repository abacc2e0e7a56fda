package inference

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
	"sgplab/gp/features"
	"sgplab/gp/kernels"
)

// SGPR is the collapsed variational bound of Titsias (2009) for GP
// regression with noise variance σ² (noise, 1×1):
//
//	log N(y | 0, Qff + σ²I) − tr(Kff − Qff) / (2σ²),   Qff = Kfu Kuu⁻¹ Kuf.
//
// It is computed in the M×M Woodbury form with Kuu = LLᵀ, A = L⁻¹Kuf/σ and
// B = I + AAᵀ = LB LBᵀ:
//
//	−(N/2) log 2πσ² − ½ log|B| − yᵀy/(2σ²) + ½‖c‖² − tr(Kff)/(2σ²) + ½ tr(AAᵀ),
//
// with c = LB⁻¹ A y / σ; a feature with a closed form of tr(Kff − Qff)
// (features.TraceResidual) replaces the last two terms, which cancel in
// their leading digits at large kernel scales. L⁻¹Kuf is formed first
// and then AAᵀ (see whitenedGram: forming Kuf Kfu first and whitening it loses digits on
// ill-conditioned Kuu; Options.GramFirst selects that faster order), so the
// O(NM²) work is one triangular solve and one M×N by N×M product forward
// and one product backward, split over the cores (see linalg.GramVec). Memory is O(NM) in general; for inducing
// points with a large N·M, Kuf is formed in chunks of the data in both
// passes and memory is O(M² + chunk·M) (see gramVecChunked).
func SGPR(k kernels.Bound, f features.Bound, x *ad.Node, y []float64, noise *ad.Node, opt Options) (*ad.Node, Info, error) {
	s, err := sgpr(k, f, x, y, noise, opt)
	if err != nil {
		return nil, Info{}, err
	}
	return s.bound, Info{Jitter: s.fac.jitter()}, nil
}

// Gaussian is a multivariate normal N(Mean, Cov) over the inducing variables.
type Gaussian struct {
	Mean *mat.Dense // M×1
	Cov  *mat.Dense // M×M
}

// SGPRPosterior returns the predictive posterior of the collapsed bound and
// the Titsias-optimal q(u) = N(m, S),
//
//	S = Kuu (Kuu + σ⁻² Kuf Kfu)⁻¹ Kuu,   m = σ⁻² S Kuu⁻¹ Kuf y.
func SGPRPosterior(k kernels.Bound, f features.Bound, x *ad.Node, y []float64, noise *ad.Node, opt Options) (*Posterior, Gaussian, error) {
	s, err := sgpr(k, f, x, y, noise, opt)
	if err != nil {
		return nil, Gaussian{}, err
	}
	l := s.fac.lower()
	lb := lowerOf(s.lb.Value())
	linv := invLower(l)
	m := s.fac.size()
	// B = LB⁻¹ L⁻¹, α = Bᵀ c.
	b := solveLower(lb, linv, false)
	alpha := mat.NewDense(m, 1, nil)
	alpha.Mul(b.T(), s.c.Value())
	// L LB⁻ᵀ is a square root of S; m = L LB⁻ᵀ c.
	root := mat.NewDense(m, m, nil)
	root.Mul(l, invLower(lb).T())
	mean := mat.NewDense(m, 1, nil)
	mean.Mul(root, s.c.Value())
	cov := mat.NewDense(m, m, nil)
	cov.Mul(root, root.T())
	return &Posterior{Alpha: alpha, A: linv, B: b}, Gaussian{Mean: mean, Cov: cov}, nil
}

type sgprTerms struct {
	bound *ad.Node
	fac   factor
	lb    *ad.Node // Cholesky factor of B
	c     *ad.Node // LB⁻¹ L⁻¹ Kuf y / σ²
}

func sgpr(k kernels.Bound, f features.Bound, x *ad.Node, y []float64, noise *ad.Node, opt Options) (*sgprTerms, error) {
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
	fac, err := factorKuu(k, f, opt)
	if err != nil {
		return nil, err
	}
	m := fac.size()
	// AAᵀ and A y for A = L⁻¹Kuf (the O(NM²) step), whitening Kuf first
	// (see whitenedGram); for a diagonal or G-first factor, Kuf Kfu and
	// Kuf y, whitened afterwards.
	var l *ad.Node
	if df, ok := fac.(*denseFactor); ok && !opt.GramFirst {
		l = df.l
	}
	var kk, kufy *ad.Node
	if n*m > sgprChunkedAbove && kufChunkable(f) {
		kk, kufy, err = gramVecChunked(k, f, x, y, m, max(1, sgprChunkEntries/m), l)
		if err != nil {
			return nil, err
		}
	} else {
		kuf := f.Kuf(k, x)
		if r, c := kuf.Dims(); r != m || c != n {
			return nil, fmt.Errorf("inference: Kuf is %d×%d, want %d×%d", r, c, m, n)
		}
		if err := checkFinite("Kuf", kuf.Value()); err != nil {
			return nil, err
		}
		kk, kufy = gramVec(kuf, y, l)
	}
	yy := 0.0
	for _, v := range y {
		yy += v * v
	}
	trace := sgprTrace(k, f, x, fac.jitter())

	// AAᵀ = L⁻¹ Kuf Kfu L⁻ᵀ / σ², exactly symmetric; A y = L⁻¹ Kuf y.
	var aat, ay *ad.Node
	switch df, ok := fac.(*denseFactor); {
	case l != nil:
		aat, ay = kk, kufy
	case ok:
		aat, ay = congruence(df.l, kk), fac.solveL(kufy)
	default:
		half := fac.solveL(kk)
		aat = fac.solveL(ad.T(half))
		aat = ad.Scale(0.5, ad.Add(aat, ad.T(aat)))
		ay = fac.solveL(kufy)
	}
	aat = ad.DivScalar(aat, noise)
	bmat := ad.AddDiag(aat, t.Scalar(1))
	lb, err := ad.Cholesky(bmat)
	if err != nil {
		return nil, fmt.Errorf("inference: B = I + AAᵀ (%d×%d) not positive definite: %w", m, m, err)
	}
	c := ad.DivScalar(ad.SolveLower(lb, ay), noise)

	invNoise := ad.Pow(noise, -1)
	bound := add(append([]*ad.Node{
		t.Scalar(-0.5 * float64(n) * math.Log(2*math.Pi)),
		ad.Scale(-0.5*float64(n), ad.Log(noise)),
		ad.Scale(-0.5, ad.LogDetChol(lb)),
		ad.Scale(-0.5*yy, invNoise),
		ad.Scale(0.5, ad.Sum(ad.Square(c))),
	}, trace(aat, invNoise)...)...)
	return &sgprTerms{bound: bound, fac: fac, lb: lb, c: c}, nil
}

// sgprTrace returns the trace term −tr(Kff − Qff)/(2σ²) of the bound as
// a function of AAᵀ (already divided by σ²) and 1/σ², in terms to be
// summed in the bound's order: the feature's closed form
// (features.TraceResidual) when it has one, which holds for its Kuu
// without jitter, else −tr(Kff)/(2σ²) + ½ tr(AAᵀ), a difference that
// cancels in its leading digits when the kernel's scale is large.
// tr(Kff) is recorded on the tape here, before AAᵀ.
func sgprTrace(k kernels.Bound, f features.Bound, x *ad.Node, jitter float64) func(aat, invNoise *ad.Node) []*ad.Node {
	if jitter == 0 && !x.NeedsGrad() {
		if r, ok := features.TraceResidualOf(x.Tape(), k, f, x.Value()); ok {
			return func(_, invNoise *ad.Node) []*ad.Node { return []*ad.Node{ad.Scale(-0.5, ad.Mul(r, invNoise))} }
		}
	}
	trKff := ad.Sum(k.Diag(x))
	return func(aat, invNoise *ad.Node) []*ad.Node {
		return []*ad.Node{ad.Scale(-0.5, ad.Mul(trKff, invNoise)), ad.Scale(0.5, ad.Trace(aat))}
	}
}
