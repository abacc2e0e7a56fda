package inference

import (
	"errors"
	"fmt"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
)

// Blocks are the prior covariances of an orthogonally decoupled model with
// a base set u (M variables) and an orthogonal set v (K variables), at the
// B inputs where the marginals of q(f) are wanted (a minibatch, or test
// points). They are all the decoupled objectives need: a feature pair only
// has to supply them (inducing points × anything is "evaluate the feature at
// the points").
type Blocks struct {
	// Kuu is Cov(u, u) with its structure (Dense, Diag or, whitened only,
	// a structured Whiten map). Precision is not accepted.
	Kuu Kuu
	Kuf *ad.Node // Cov(u, f(x)), M×B
	Kvv *ad.Node // Cov(v, v), K×K (dense: S_vv is dense whatever Kvv is)
	Kvf *ad.Node // Cov(v, f(x)), K×B
	Kvu *ad.Node // Cov(v, u), K×M
	Kff *ad.Node // diagonal of Cov(f(x), f(x)), B×1
}

// K is the number of orthogonal variables (0 when Kvv is nil).
func (b Blocks) K() int {
	if b.Kvv == nil {
		return 0
	}
	r, _ := b.Kvv.Dims()
	return r
}

// Orthogonal is the variational factor of the orthogonal variables
// v' = v − Kvu Kuu⁻¹ u, whose prior is N(0, S_vv) with the Schur complement
// S_vv = Kvv − Kvu Kuu⁻¹ Kuv.
//
//   - SOLVE-GP (Shi et al. 2020): q(v') = N(Mu, Sqrt Sqrtᵀ). With Whiten,
//     v' = R_v w for S_vv = R_v R_vᵀ (Cholesky) and q is over w, prior N(0, I).
//   - ODVGP (Salimbeni et al. 2018), MeanOnly: C_v' = S_vv and Mu holds the
//     mean-basis weights a_γ with m_v' = S_vv a_γ. Then the orthogonal
//     covariance terms cancel, KL_v = ½ a_γᵀ S_vv a_γ, and S_vv is never
//     factorised (the mean basis "needs no inversion"). Sqrt must be nil.
type Orthogonal struct {
	Mu       *ad.Node // K×1
	Sqrt     *ad.Node // K×K (lower triangle used); nil when MeanOnly
	Whiten   bool
	MeanOnly bool
}

// DecoupledTerms are the pieces of the marginals of q(f) at the B inputs of
// the blocks, all B×1 (eqs. 11–12 of Shi et al. 2020, the Fig. 5 terms of
// Tiao et al. 2023):
//
//	mean = MeanBase + MeanOrth
//	var  = Residual + BaseCov + OrthCov − OrthPrior
//
// with Residual = k − Q_ff (≥ 0), BaseCov = Q_fu C_u Q_uf (≥ 0),
// OrthCov = S_fv S_vv⁻¹ C_v' S_vv⁻¹ S_vf (≥ 0) and
// OrthPrior = S_fv S_vv⁻¹ S_vf (0 ≤ OrthPrior ≤ Residual). For MeanOnly
// (C_v' = S_vv) the last two are equal and both are nil.
type DecoupledTerms struct {
	Mean, Var                             *ad.Node
	MeanBase, MeanOrth                    *ad.Node // MeanOrth nil when K = 0
	Residual, BaseCov, OrthCov, OrthPrior *ad.Node // the last two nil when K = 0 or MeanOnly
}

// decoupled holds everything one evaluation builds.
type decoupled struct {
	terms DecoupledTerms
	facU  sqrtFactor
	facV  factor   // Cholesky of S_vv; nil when K = 0 or MeanOnly
	svv   *ad.Node // S_vv (without jitter); nil when K = 0
	jitV  float64
}

// sqrtFactor returns the square root of Kuu for the base set: Dense and
// Diag factorise; a structured Whiten map serves the whitened q(u) only.
func (k Kuu) sqrtFactor(whitened bool, opt Options) (sqrtFactor, error) {
	set := 0
	for _, n := range []*ad.Node{k.Dense, k.Diag, k.Precision} {
		if n != nil {
			set++
		}
	}
	if k.Whiten != nil {
		set++
	}
	if set != 1 {
		return nil, fmt.Errorf("inference: Kuu: exactly one of Dense, Diag, Whiten must be set, got %d", set)
	}
	switch {
	case k.Dense != nil:
		return newDenseFactor("Kuu", k.Dense, opt)
	case k.Diag != nil:
		return newDiagFactor("Kuu", k.Diag, opt)
	case k.Whiten != nil:
		if !whitened {
			return nil, errors.New("inference: the non-whitened q(u) needs L⁻ᵀ and log|Kuu|, which a structured Kuu whitener does not give; set Kuu.Dense or Kuu.Diag, or whiten q(u)")
		}
		return nil, nil // sized by the caller, which knows M
	}
	return nil, errors.New("inference: Kuu.Precision is not supported by the decoupled objectives; pass Kuu.Diag")
}

func (b Blocks) check() (m, k, n int, err error) {
	if b.Kuf == nil || b.Kff == nil {
		return 0, 0, 0, errors.New("inference: decoupled blocks need Kuf and Kff")
	}
	m, n = b.Kuf.Dims()
	if n == 0 {
		return 0, 0, 0, errEmpty
	}
	if r, c := b.Kff.Dims(); r != n || c != 1 {
		return 0, 0, 0, fmt.Errorf("inference: Kff (diagonal) is %d×%d, want %d×1", r, c, n)
	}
	k = b.K()
	if k == 0 {
		if b.Kvf != nil || b.Kvu != nil {
			return 0, 0, 0, errors.New("inference: Kvf or Kvu given without Kvv")
		}
		return m, 0, n, nil
	}
	if b.Kvf == nil || b.Kvu == nil {
		return 0, 0, 0, errors.New("inference: an orthogonal set needs Kvv, Kvf and Kvu")
	}
	if r, c := b.Kvv.Dims(); r != c {
		return 0, 0, 0, fmt.Errorf("inference: Kvv is %d×%d, not square", r, c)
	}
	if r, c := b.Kvf.Dims(); r != k || c != n {
		return 0, 0, 0, fmt.Errorf("inference: Kvf is %d×%d, want %d×%d", r, c, k, n)
	}
	if r, c := b.Kvu.Dims(); r != k || c != m {
		return 0, 0, 0, fmt.Errorf("inference: Kvu is %d×%d, want %d×%d", r, c, k, m)
	}
	return m, k, n, nil
}

func (q Orthogonal) check(k int) error {
	if q.Mu == nil {
		return errors.New("inference: q(v') needs a mean")
	}
	if r, c := q.Mu.Dims(); r != k || c != 1 {
		return fmt.Errorf("inference: q(v') mean is %d×%d, want %d×1", r, c, k)
	}
	if q.MeanOnly {
		if q.Sqrt != nil {
			return errors.New("inference: a mean-only (ODVGP) q(v') has C_v' = S_vv and takes no square root")
		}
		if q.Whiten {
			return errors.New("inference: a mean-only (ODVGP) q(v') has no whitened form")
		}
		return nil
	}
	if q.Sqrt == nil {
		return errors.New("inference: q(v') needs a square root (or MeanOnly)")
	}
	if r, c := q.Sqrt.Dims(); r != k || c != k {
		return fmt.Errorf("inference: q(v') square root is %d×%d, want %d×%d", r, c, k, k)
	}
	return nil
}

// decoupledMarginals follows the numerically stable recipe (Tiao et al.
// 2023 spec §1.12, the non-whitened branch of the SOLVE-GP code): with
// Kuu = R_u R_uᵀ,
//
//	A_uf = R_u⁻¹Kuf,  A_uv = R_u⁻¹Kuv,
//	S_vv = Kvv − A_uvᵀA_uv = R_v R_vᵀ,  S_vf = Kvf − A_uvᵀA_uf,
//	B_u = R_u⁻ᵀA_uf (= Kuu⁻¹Kuf),  T_v = R_v⁻¹S_vf,  B_v = R_v⁻ᵀT_v,
//	μ = B_uᵀm_u + B_vᵀm_v',
//	s = kff − ‖A_uf‖²_col + ‖L_uᵀB_u‖²_col + ‖L_vᵀB_v‖²_col − ‖T_v‖²_col.
//
// Whitened q(u) uses A_uf in place of B_u (and then any square root of Kuu,
// e.g. a structured one, will do: S_vv and S_vf need R_u only through
// R_u⁻¹); whitened q(v') uses T_v in place of B_v. Mean-only q(v') (ODVGP)
// adds S_vfᵀa to the mean and nothing to the variance.
func decoupledMarginals(b Blocks, qu Variational, qv Orthogonal, opt Options) (*decoupled, error) {
	if err := opt.validate(); err != nil {
		return nil, err
	}
	m, k, _, err := b.check()
	if err != nil {
		return nil, err
	}
	facU, err := b.Kuu.sqrtFactor(qu.Whiten, opt)
	if err != nil {
		return nil, err
	}
	if facU == nil {
		facU = structFactor{m: m, w: b.Kuu.Whiten}
	}
	if facU.size() != m {
		return nil, fmt.Errorf("inference: Kuu has %d rows but Kuf has %d", facU.size(), m)
	}
	if err := qu.check(m); err != nil {
		return nil, err
	}
	aUF := facU.solveL(b.Kuf)
	if err := checkWhitened(aUF, b.Kuf); err != nil {
		return nil, err
	}
	projU := aUF
	if !qu.Whiten {
		full, err := fullFactor(facU)
		if err != nil {
			return nil, err
		}
		projU = full.solveLT(aUF)
	}
	lu := ad.Tril(qu.Sqrt)
	d := &decoupled{facU: facU}
	tm := &d.terms
	tm.MeanBase = ad.MatMulTA(projU, qu.Mu)
	tm.Residual = ad.Sub(b.Kff, ad.T(ad.ColSums(ad.Square(aUF))))
	tm.BaseCov = ad.T(ad.ColSums(ad.Square(ad.MatMulTA(lu, projU))))
	tm.Mean, tm.Var = tm.MeanBase, ad.Add(tm.Residual, tm.BaseCov)
	if k == 0 {
		return d, nil
	}
	if err := qv.check(k); err != nil {
		return nil, err
	}
	kuv := ad.T(b.Kvu)
	aUV := facU.solveL(kuv)
	if err := checkWhitened(aUV, kuv); err != nil {
		return nil, err
	}
	svv := ad.Sub(b.Kvv, ad.MatMulTA(aUV, aUV))
	svv = ad.Scale(0.5, ad.Add(svv, ad.T(svv))) // symmetric against rounding
	d.svv = svv
	svf := ad.Sub(b.Kvf, ad.MatMulTA(aUV, aUF))
	if qv.MeanOnly {
		tm.MeanOrth = ad.MatMulTA(svf, qv.Mu)
		tm.Mean = ad.Add(tm.MeanBase, tm.MeanOrth)
		return d, nil
	}
	facV, err := newDenseFactor("S_vv = Kvv − Kvu Kuu⁻¹ Kuv (do orthogonal inputs coincide with base inputs?)", svv, opt)
	if err != nil {
		return nil, err
	}
	d.facV, d.jitV = facV, facV.jit
	tV := facV.solveL(svf)
	projV := tV
	if !qv.Whiten {
		projV = facV.solveLT(tV)
	}
	lv := ad.Tril(qv.Sqrt)
	tm.MeanOrth = ad.MatMulTA(projV, qv.Mu)
	tm.OrthCov = ad.T(ad.ColSums(ad.Square(ad.MatMulTA(lv, projV))))
	tm.OrthPrior = ad.T(ad.ColSums(ad.Square(tV)))
	tm.Mean = ad.Add(tm.MeanBase, tm.MeanOrth)
	tm.Var = ad.Sub(ad.Add(tm.Var, tm.OrthCov), tm.OrthPrior)
	return d, nil
}

// klV is KL[q(v') ‖ N(0, S_vv)]: the Gaussian KL of klU against S_vv's
// Cholesky factor, or ½ aᵀS_vv a for a mean-only q(v').
func (d *decoupled) klV(qv Orthogonal) (*ad.Node, error) {
	if qv.MeanOnly {
		return ad.Scale(0.5, ad.Sum(ad.Mul(qv.Mu, ad.MatMul(d.svv, qv.Mu)))), nil
	}
	return klU(d.facV, Variational{Mu: qv.Mu, Sqrt: qv.Sqrt, Whiten: qv.Whiten})
}

// Decoupled is the evidence lower bound of the orthogonally decoupled model
// (SOLVE-GP, Shi et al. 2020; ODVGP, Salimbeni et al. 2018, with a
// mean-only q(v')) on the B inputs of the blocks:
//
//	(numData/B) Σ_b E_{N(f_b; μ_b, s_b)} log p(y_b | f_b)
//	    − KL[q(u) ‖ N(0, Kuu)] − KL[q(v') ‖ N(0, S_vv)],
//
// where μ and s are the marginals of DecoupledTerms. The prior p(h | v')
// cancels between the joint and q. With K = 0 (Kvv nil) it is the SVGP
// ELBO; numData = 0 means B (no minibatch scaling).
func Decoupled(b Blocks, ve VarExp, qu Variational, qv Orthogonal, numData int, opt Options) (*ad.Node, Info, error) {
	_, _, n, err := b.check()
	if err != nil {
		return nil, Info{}, err
	}
	if numData == 0 {
		numData = n
	}
	if numData < n {
		return nil, Info{}, fmt.Errorf("inference: minibatch of %d points from a training set of %d", n, numData)
	}
	d, err := decoupledMarginals(b, qu, qv, opt)
	if err != nil {
		return nil, Info{}, err
	}
	e := ve(d.terms.Mean, d.terms.Var)
	if r, c := e.Dims(); r != n || c != 1 {
		return nil, Info{}, fmt.Errorf("inference: variational expectations are %d×%d, want %d×1", r, c, n)
	}
	kl, err := klU(d.facU, qu)
	if err != nil {
		return nil, Info{}, err
	}
	if b.K() > 0 {
		klv, err := d.klV(qv)
		if err != nil {
			return nil, Info{}, err
		}
		kl = ad.Add(kl, klv)
	}
	data := ad.Scale(float64(numData)/float64(n), ad.Sum(e))
	return ad.Sub(data, kl), d.info(), nil
}

// DecoupledMarginals returns the terms of q(f) at the inputs of the blocks
// on the tape: the ELBO's marginals at training inputs, or the predictive
// decomposition of eq. (12) at test inputs (pass constant blocks).
func DecoupledMarginals(b Blocks, qu Variational, qv Orthogonal, opt Options) (DecoupledTerms, Info, error) {
	d, err := decoupledMarginals(b, qu, qv, opt)
	if err != nil {
		return DecoupledTerms{}, Info{}, err
	}
	return d.terms, d.info(), nil
}

func (d *decoupled) info() Info {
	return Info{Jitter: d.facU.jitter(), OrthJitter: d.jitV}
}

// DecoupledPrediction holds the terms of q(f_*) per test input (see
// DecoupledTerms): Mean = MeanBase + MeanOrth and
// Var = Residual + BaseCov + OrthCov − OrthPrior. Terms a model does not
// have (no orthogonal set; OrthCov and OrthPrior of a mean-only q(v')) are
// nil.
type DecoupledPrediction struct {
	Mean, Var, MeanBase, MeanOrth         []float64
	Residual, BaseCov, OrthCov, OrthPrior []float64
}

// DecoupledBinder records a decoupled model on t with constant parameters
// and returns its blocks at the test inputs x together with its q.
type DecoupledBinder func(t *ad.Tape, x *ad.Node) (Blocks, Variational, Orthogonal, error)

// DecoupledPredict returns the predictive terms of eq. (12) at the rows of
// x, PredictChunk rows at a time (O((M + K)·PredictChunk) memory; Kuu and
// S_vv are factorised once per chunk, O(M³ + K³), which the O(n(M² + K²))
// of the chunk dominates for full chunks).
func DecoupledPredict(x *mat.Dense, bind DecoupledBinder, opt Options) (*DecoupledPrediction, error) {
	n, d := x.Dims()
	out := &DecoupledPrediction{}
	fields := func(p *DecoupledPrediction, tm *DecoupledTerms) []struct {
		dst *[]float64
		src *ad.Node
	} {
		return []struct {
			dst *[]float64
			src *ad.Node
		}{{&p.Mean, tm.Mean}, {&p.Var, tm.Var}, {&p.MeanBase, tm.MeanBase}, {&p.MeanOrth, tm.MeanOrth},
			{&p.Residual, tm.Residual}, {&p.BaseCov, tm.BaseCov}, {&p.OrthCov, tm.OrthCov}, {&p.OrthPrior, tm.OrthPrior}}
	}
	for lo := 0; lo < n; lo += PredictChunk {
		hi := min(lo+PredictChunk, n)
		t := ad.NewTape()
		b, qu, qv, err := bind(t, t.Const(mat.DenseCopyOf(x.Slice(lo, hi, 0, d))))
		if err != nil {
			return nil, err
		}
		tm, _, err := DecoupledMarginals(b, qu, qv, opt)
		if err != nil {
			return nil, err
		}
		for _, f := range fields(out, &tm) {
			if f.src != nil {
				*f.dst = append(*f.dst, mat.Col(nil, 0, f.src.Value())...)
			}
		}
	}
	return out, nil
}

// DecoupledKL returns KL[q(u) ‖ p(u)] + KL[q(v') ‖ p(v')] alone, for
// evaluating the full-data ELBO of a minibatch fit from predicted
// marginals. Only b.Kuu, b.Kvv and b.Kvu are read.
func DecoupledKL(b Blocks, qu Variational, qv Orthogonal, opt Options) (*ad.Node, error) {
	if err := opt.validate(); err != nil {
		return nil, err
	}
	if qu.Mu == nil {
		return nil, errors.New("inference: q(u) needs a mean")
	}
	// The marginals at one probe input with zero covariances build the
	// factors of Kuu and S_vv the KL terms need, at O(M³ + K³).
	rows, _ := qu.Mu.Dims()
	t := qu.Mu.Tape()
	probe := Blocks{Kuu: b.Kuu, Kuf: t.Const(mat.NewDense(rows, 1, nil)), Kff: t.Const(mat.NewDense(1, 1, []float64{1})),
		Kvv: b.Kvv, Kvu: b.Kvu}
	if k := b.K(); k > 0 {
		probe.Kvf = t.Const(mat.NewDense(k, 1, nil))
	}
	d, err := decoupledMarginals(probe, qu, qv, opt)
	if err != nil {
		return nil, err
	}
	kl, err := klU(d.facU, qu)
	if err != nil {
		return nil, err
	}
	if b.K() == 0 {
		return kl, nil
	}
	klv, err := d.klV(qv)
	if err != nil {
		return nil, err
	}
	return ad.Add(kl, klv), nil
}
