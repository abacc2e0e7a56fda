package inference

import (
	"errors"
	"fmt"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
	"sgplab/gp/features"
	"sgplab/gp/kernels"
)

// Block variational inference: the inducing variables come in B blocks
// u₁, …, u_B (feature sets, e.g. SOLVE-GP's u and v, ODVGP's β and γ), each
// with its own q. Block b is conditioned on the blocks before it, so that
// the blocks are independent a priori (Gram–Schmidt in the prior): with
// L_j the square root of block j's conditional covariance S_jj and
// A_{j,·} = L_j⁻¹ S_{j,·},
//
//	S_bb = K_bb − Σ_{j<b} A_{j,b}ᵀ A_{j,b},   S_bf = K_bf − Σ_{j<b} A_{j,b}ᵀ A_{j,f},
//
// and q(u_b) = N(m_b, L_q,b L_q,bᵀ) (over v_b = L_b⁻¹u_b when whitened) is a
// distribution over the orthogonal part of block b. The marginals of q(f)
// at x and the ELBO are
//
//	μ = Σ_b P_bᵀ m_b,   v = k(x,x) − Σ_b ‖A_{b,f}‖²_col + Σ_b ‖L_q,bᵀ P_b‖²_col,
//	ELBO = (N/|B|) Σ_n E_q log p(y_n | f_n) − Σ_b KL[q(u_b) ‖ N(0, S_bb)],
//
// with P_b = A_{b,f} (whitened) or S_bb⁻¹S_bf = L_b⁻ᵀA_{b,f}. The one-block
// case is SVGP (SVGP delegates here); two blocks give SOLVE-GP
// (spherical-odgp-spec §1.7, computed as §1.12's recipe: A_uf, A_uv,
// S_vv = K_vv − A_uvᵀA_uv, S_vf = K_vf − A_uvᵀA_uf); a mean-only second
// block (Variational.Sqrt nil: covariance fixed at S_bb, so its two
// variance terms cancel and its KL is ½ m_bᵀS_bb⁻¹m_b) gives ODVGP. The
// stacked root L = [[L₁, 0], [A_{1,2}ᵀ, L₂]] is a block Cholesky factor of
// the stacked Kuu, so predictions use the stacked feature set
// (features.Stack) with BlockPosterior.
//
// Block 1 uses its feature's Kuu structure (structured roots, diagonal and
// precision forms, as SVGP); later blocks' S_bb are Schur complements and
// are factorised densely (with Options.Jitter).

// Block is one feature set of a block variational bound and its q(u).
// Q.Sqrt nil makes a mean-only block: q's covariance is the conditional
// prior S_bb (ODVGP's mean basis).
//
// Weights parameterises a mean-only block as ODVGP does (Salimbeni et al.
// 2018, a_γ): Q.Mu holds weights a with m_b = S_bb a, so that
//
//	μ_b = S_fbᵀ a,   KL_b = ½ aᵀ S_bb a,
//
// and S_bb is never factorised (the mean basis "needs no inversion"). The
// bound is the same as with m_b; the optimisation path is not. Only the
// last block can be a weights block (later blocks would need its root).
type Block struct {
	Feature features.Bound
	Q       Variational
	Weights bool
}

func (b Block) meanOnly() bool { return b.Q.Sqrt == nil }

// blockSet holds the per-block roots and the whitened cross-covariances
// A_{j,b} = L_j⁻¹ S_{j,b} (j < b) of one evaluation.
type blockSet struct {
	k     kernels.Bound
	bs    []Block
	facs  []sqrtFactor // nil for a weights block
	sww   *ad.Node     // S_bb of the weights block, if any
	cross [][]*ad.Node // cross[j][b], b > j
}

func newBlockSet(k kernels.Bound, bs []Block, opt Options) (*blockSet, error) {
	if len(bs) == 0 {
		return nil, errors.New("inference: block bound with no blocks")
	}
	s := &blockSet{k: k, bs: bs, facs: make([]sqrtFactor, len(bs)), cross: make([][]*ad.Node, len(bs))}
	for b, blk := range bs {
		if blk.Feature == nil {
			return nil, fmt.Errorf("inference: block %d has no feature set", b)
		}
		if blk.Q.Mu == nil {
			return nil, s.wrap(b, errors.New("inference: q(u) needs a mean and a square root"))
		}
		var err error
		switch {
		case blk.Weights:
			if err := checkWeights(blk, b, len(bs)); err != nil {
				return nil, s.wrap(b, err)
			}
			s.sww = s.conditional(b)
		case b == 0:
			s.facs[0], err = sqrtKuu(k, blk.Feature, blk.Q.Whiten, opt)
		default:
			s.facs[b], err = newDenseFactor(fmt.Sprintf("S_bb of block %d (its Kuu conditioned on the blocks before it; do its inputs coincide with theirs?)", b), s.conditional(b), opt)
		}
		if err != nil {
			return nil, s.wrap(b, err)
		}
		if err := s.checkQ(b); err != nil {
			return nil, s.wrap(b, err)
		}
		s.cross[b] = make([]*ad.Node, len(bs))
		for c := b + 1; c < len(bs); c++ {
			sbc, err := features.Kuv(k, blk.Feature, bs[c].Feature)
			if err != nil {
				return nil, fmt.Errorf("inference: blocks %d and %d: %w", b, c, err)
			}
			for j := 0; j < b; j++ {
				sbc = ad.Sub(sbc, ad.MatMulTA(s.cross[j][b], s.cross[j][c]))
			}
			a := s.facs[b].solveL(sbc)
			if err := checkWhitened(a, sbc); err != nil {
				return nil, err
			}
			s.cross[b][c] = a
		}
	}
	return s, nil
}

// conditional is S_bb = K_bb − Σ_{j<b} A_{j,b}ᵀA_{j,b}, symmetrised.
func (s *blockSet) conditional(b int) *ad.Node {
	sbb := s.bs[b].Feature.Kuu(s.k)
	for j := 0; j < b; j++ {
		sbb = ad.Sub(sbb, ad.MatMulTA(s.cross[j][b], s.cross[j][b]))
	}
	return ad.Scale(0.5, ad.Add(sbb, ad.T(sbb)))
}

func checkWeights(blk Block, b, n int) error {
	switch {
	case b != n-1:
		return fmt.Errorf("inference: only the last block can hold mean weights (block %d of %d)", b, n)
	case !blk.meanOnly():
		return errors.New("inference: a weights block is mean-only (its covariance is S_bb); give no square root")
	case blk.Q.Whiten:
		return errors.New("inference: a weights block has no whitened form")
	}
	return nil
}

func (s *blockSet) checkQ(b int) error {
	q, m := s.bs[b].Q, s.bs[b].Feature.M()
	if s.facs[b] != nil && s.facs[b].size() != m {
		return fmt.Errorf("inference: Kuu has %d rows for %d features", s.facs[b].size(), m)
	}
	if s.bs[b].meanOnly() {
		if r, c := q.Mu.Dims(); r != m || c != 1 {
			return fmt.Errorf("inference: q(u) mean is %d×%d, want %d×1", r, c, m)
		}
		return nil
	}
	return q.check(m)
}

// wrap labels err with the block when there are several.
func (s *blockSet) wrap(b int, err error) error {
	if err == nil || len(s.bs) == 1 {
		return err
	}
	return fmt.Errorf("block %d: %w", b, err)
}

// jitter is the largest jitter of the blocks' factorisations.
func (s *blockSet) jitter() float64 {
	j := 0.0
	for _, f := range s.facs {
		if f != nil {
			j = max(j, f.jitter())
		}
	}
	return j
}

// blockProject computes, for block residual covariances r = S_bf (M×N)
// and root fac, A = L⁻¹r, P (A or L⁻ᵀA), μ_b = Pᵀm and L_qᵀP (nil for a
// mean-only q).
func blockProject(r *ad.Node, fac sqrtFactor, q Variational) (mu, a, qa *ad.Node, err error) {
	a = fac.solveL(r)
	if err := checkWhitened(a, r); err != nil {
		return nil, nil, nil, err
	}
	proj := a
	if !q.Whiten {
		full, err := fullFactor(fac)
		if err != nil {
			return nil, nil, nil, err
		}
		proj = full.solveLT(a) // S⁻¹ S_bf
	}
	mu = ad.MatMulTA(proj, q.Mu)
	if q.Sqrt != nil {
		// MulLowerT reads only the lower triangle of q.Sqrt and its
		// gradient is lower triangular: no Tril copy is needed.
		qa = ad.MulLowerT(q.Sqrt, proj) // triangular: half the flops of a general product
	}
	return mu, a, qa, nil
}

// BlockTerms are the pieces of the marginals of q(f) at n inputs, all
// n×1, per block b:
//
//	μ = Σ_b Mean[b],   v = Kff − Σ_b Prior[b] + Σ_b Cov[b],
//
// with Prior[b] = ‖A_{b,f}‖²_col = diag(S_fb S_bb⁻¹ S_bf) (≥ 0) and
// Cov[b] = ‖L_q,bᵀ P_b‖²_col = diag(S_fb S_bb⁻¹ C_b S_bb⁻¹ S_bf) (≥ 0), both
// nil for a mean-only block (its covariance is S_bb: the two cancel). For
// two blocks u, v these are the terms of eq. (12) of Shi et al. (2020),
// plotted one by one in Fig. 5 of Tiao et al. (2023):
//
//	v = [k − Q_ff] + Q_fu C_u Q_uf + S_fv S_vv⁻¹ C_v S_vv⁻¹ S_vf − S_fv S_vv⁻¹ S_vf.
type BlockTerms struct {
	Kff        *ad.Node
	Mean       []*ad.Node
	Prior, Cov []*ad.Node
}

// Sum returns μ and v.
func (tm BlockTerms) Sum() (mu, v *ad.Node) {
	for _, m := range tm.Mean {
		if mu == nil {
			mu = m
		} else {
			mu = ad.Add(mu, m)
		}
	}
	v = tm.Kff
	for _, p := range tm.Prior {
		if p != nil {
			v = ad.Sub(v, p)
		}
	}
	for _, c := range tm.Cov {
		if c != nil {
			v = ad.Add(v, c)
		}
	}
	return mu, v
}

// terms computes BlockTerms at the rows of x.
func (s *blockSet) terms(x *ad.Node) (BlockTerms, error) {
	n := len(s.bs)
	tm := BlockTerms{Kff: s.k.Diag(x), Mean: make([]*ad.Node, n), Prior: make([]*ad.Node, n), Cov: make([]*ad.Node, n)}
	as := make([]*ad.Node, n)
	for b, blk := range s.bs {
		r, err := features.KufChecked(s.k, blk.Feature, x)
		if err != nil {
			return BlockTerms{}, s.wrap(b, err)
		}
		for j := 0; j < b; j++ {
			r = ad.Sub(r, ad.MatMulTA(s.cross[j][b], as[j]))
		}
		if blk.Weights {
			tm.Mean[b] = ad.MatMulTA(r, blk.Q.Mu) // S_fb a
			continue
		}
		if fusedTerms(blk.Q) && b == n-1 {
			// The last block's A has no other consumer: its three terms
			// are one operation (whitenedTerms).
			a := s.facs[b].solveL(r)
			if err := checkWhitened(a, r); err != nil {
				return BlockTerms{}, s.wrap(b, err)
			}
			as[b] = a
			tm.Mean[b], tm.Prior[b], tm.Cov[b] = whitenedTerms(a, blk.Q.Mu, blk.Q.Sqrt)
			continue
		}
		mb, a, qa, err := blockProject(r, s.facs[b], blk.Q)
		if err != nil {
			return BlockTerms{}, s.wrap(b, err)
		}
		as[b], tm.Mean[b] = a, mb
		if qa != nil {
			tm.Prior[b] = ad.ColSqNorms(a)
			tm.Cov[b] = ad.ColSqNorms(qa)
		}
	}
	return tm, nil
}

// marginals returns μ and v at the rows of x.
func (s *blockSet) marginals(x *ad.Node) (mu, v *ad.Node, err error) {
	tm, err := s.terms(x)
	if err != nil {
		return nil, nil, err
	}
	mu, v = tm.Sum()
	return mu, v, nil
}

// kl is KL[q(u_b) ‖ N(0, S_bb)] for block b; a mean-only block's is
// ½ m_bᵀS_bb⁻¹m_b (½‖m_b‖² whitened).
func (s *blockSet) kl(b int) (*ad.Node, error) {
	blk := s.bs[b]
	if blk.Weights {
		return ad.Scale(0.5, ad.Sum(ad.Mul(blk.Q.Mu, ad.MatMul(s.sww, blk.Q.Mu)))), nil
	}
	if !blk.meanOnly() {
		return klU(s.facs[b], blk.Q)
	}
	if blk.Q.Whiten {
		return ad.Scale(0.5, ad.Sum(ad.Square(blk.Q.Mu))), nil
	}
	full, err := fullFactor(s.facs[b])
	if err != nil {
		return nil, err
	}
	return ad.Scale(0.5, ad.Sum(ad.Square(full.solveL(blk.Q.Mu)))), nil
}

// BlockELBO is the block variational ELBO on the minibatch x (B rows) of
// a training set of numData points (0 means B):
//
//	(numData/B) Σ_b E_{q(f_b)} log p(y_b | f_b) − Σ_blocks KL[q(u_b) ‖ N(0, S_bb)].
//
// With one block it is SVGP, operation for operation.
func BlockELBO(k kernels.Bound, blocks []Block, x *ad.Node, ve VarExp, numData int, opt Options) (*ad.Node, Info, error) {
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
	s, err := newBlockSet(k, blocks, opt)
	if err != nil {
		return nil, Info{}, err
	}
	mu, v, err := s.marginals(x)
	if err != nil {
		return nil, Info{}, err
	}
	kls := make([]*ad.Node, len(blocks))
	for i := range blocks {
		if kls[i], err = s.kl(i); err != nil {
			return nil, Info{}, err
		}
	}
	e := ve(mu, v)
	if r, c := e.Dims(); r != b || c != 1 {
		return nil, Info{}, fmt.Errorf("inference: variational expectations are %d×%d, want %d×1", r, c, b)
	}
	out := ad.Scale(float64(numData)/float64(b), ad.Sum(e))
	for _, kl := range kls {
		out = ad.Sub(out, kl)
	}
	return out, Info{Jitter: s.jitter()}, nil
}

// BlockMarginals returns the means and variances of q(f) at the rows of x
// (both N×1) on the tape.
func BlockMarginals(k kernels.Bound, blocks []Block, x *ad.Node, opt Options) (mu, v *ad.Node, info Info, err error) {
	if err := opt.validate(); err != nil {
		return nil, nil, Info{}, err
	}
	s, err := newBlockSet(k, blocks, opt)
	if err != nil {
		return nil, nil, Info{}, err
	}
	if mu, v, err = s.marginals(x); err != nil {
		return nil, nil, Info{}, err
	}
	return mu, v, Info{Jitter: s.jitter()}, nil
}

// BlockKL returns Σ_blocks KL[q(u_b) ‖ N(0, S_bb)] on the tape.
func BlockKL(k kernels.Bound, blocks []Block, opt Options) (*ad.Node, error) {
	if err := opt.validate(); err != nil {
		return nil, err
	}
	s, err := newBlockSet(k, blocks, opt)
	if err != nil {
		return nil, err
	}
	var out *ad.Node
	for i := range blocks {
		kl, err := s.kl(i)
		if err != nil {
			return nil, err
		}
		if out == nil {
			out = kl
		} else {
			out = ad.Add(out, kl)
		}
	}
	return out, nil
}

// BlockPosterior returns the predictive posterior for the stacked feature
// set features.Stack(blocks' features…) (values only). With W = L⁻¹ the
// inverse of the stacked block root (rows W_b per block) and P_b = W_b or
// L_b⁻ᵀW_b:
//
//	α = Σ_b P_bᵀ m_b,   A = [W_b]_{full b},   B = [L_q,bᵀ P_b]_{full b},
//
// so mean(x) = k(x)ᵀα and var(x) = k(x,x) − ‖A k(x)‖² + ‖B k(x)‖² with
// k(x) the stacked Kuf, as BlockMarginals computes on the tape.
func BlockPosterior(k kernels.Bound, blocks []Block, opt Options) (*Posterior, error) {
	if err := opt.validate(); err != nil {
		return nil, err
	}
	s, err := newBlockSet(k, blocks, opt)
	if err != nil {
		return nil, err
	}
	t := blocks[0].Q.Mu.Tape()
	sizes := make([]int, len(blocks))
	total := 0
	for b := range blocks {
		sizes[b] = blocks[b].Feature.M()
		total += sizes[b]
	}
	// Row block b of W applied to the stacked identity: the residual of
	// block b's unit columns against the earlier blocks, whitened.
	ws := make([]*ad.Node, len(blocks))
	alpha := mat.NewDense(total, 1, nil)
	off := 0
	for b := range blocks {
		e := mat.NewDense(sizes[b], total, nil)
		for i := 0; i < sizes[b]; i++ {
			e.Set(i, off+i, 1)
		}
		r := t.Const(e)
		for j := 0; j < b; j++ {
			r = ad.Sub(r, ad.MatMulTA(s.cross[j][b], ws[j]))
		}
		if blocks[b].Weights {
			// μ_b(x) = S_xb a with S_bx = r k(x): α += rᵀa.
			var ab mat.Dense
			ab.Mul(r.Value().T(), blocks[b].Q.Mu.Value())
			alpha.Add(alpha, &ab)
			continue
		}
		ws[b] = s.facs[b].solveL(r)
		if err := checkWhitened(ws[b], r); err != nil {
			return nil, err
		}
		off += sizes[b]
	}
	var aRows, bRows []*mat.Dense
	for b, blk := range blocks {
		if blk.Weights {
			continue
		}
		proj := ws[b].Value()
		if !blk.Q.Whiten {
			full, err := fullFactor(s.facs[b])
			if err != nil {
				return nil, err
			}
			proj = full.solveLT(ws[b]).Value()
		}
		var ab mat.Dense
		ab.Mul(proj.T(), blk.Q.Mu.Value())
		alpha.Add(alpha, &ab)
		if blk.meanOnly() {
			continue
		}
		aRows = append(aRows, ws[b].Value())
		lq := lowerOf(blk.Q.Sqrt.Value())
		var bb mat.Dense
		bb.Mul(lq.T(), proj)
		bRows = append(bRows, &bb)
	}
	return &Posterior{Alpha: alpha, A: vstack(aRows), B: vstack(bRows)}, nil
}

func vstack(ms []*mat.Dense) *mat.Dense {
	if len(ms) == 0 {
		return nil
	}
	if len(ms) == 1 {
		return ms[0]
	}
	rows, cols := 0, 0
	for _, m := range ms {
		r, c := m.Dims()
		rows, cols = rows+r, c
	}
	out := mat.NewDense(rows, cols, nil)
	r0 := 0
	for _, m := range ms {
		r, _ := m.Dims()
		out.Slice(r0, r0+r, 0, cols).(*mat.Dense).Copy(m)
		r0 += r
	}
	return out
}
