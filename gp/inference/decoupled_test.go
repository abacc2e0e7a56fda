package inference

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
	"sgplab/gp/features"
	"sgplab/gp/kernels"
	"sgplab/gp/likelihoods"
	"sgplab/gp/optim"
	"sgplab/gp/param"
	"sgplab/internal/testhelp"
)

// decProblem is a small decoupled model with an SE kernel: data x, y, base
// inputs z (M), orthogonal inputs w (K) and both variational factors.
type decProblem struct {
	*problem
	z, w           *mat.Dense
	mu, lu, mv, lv *mat.Dense
}

func newDecProblem(seed uint64, n, d, m, k int) *decProblem {
	p := newProblem(seed, n, d, 0.1)
	rng := rand.New(rand.NewPCG(seed, 11))
	dp := &decProblem{problem: p, z: testhelp.RandMat(rng, m, d, 1), w: &mat.Dense{}}
	dp.mu, dp.lu = randomQ(rng, m)
	if k > 0 {
		dp.w = testhelp.RandMat(rng, k, d, 1.2)
		dp.mv, dp.lv = randomQ(rng, k)
	}
	return dp
}

// model records the kernel and both point sets as constants on t and
// returns the two blocks with q (qv may be a mean-only or weights block).
func (p *decProblem) model(t *ad.Tape, qu Variational, qv Block) (kernels.Bound, []Block) {
	k := seBound{variance: t.Scalar(p.vari), ls: t.Const(mat.NewDense(1, len(p.ls), p.ls))}
	bs := []Block{{Feature: features.BoundPoints{Z: t.Const(p.z)}, Q: qu}}
	if !p.w.IsEmpty() {
		qv.Feature = features.BoundPoints{Z: t.Const(p.w)}
		bs = append(bs, qv)
	}
	return k, bs
}

// full returns q(u) and q(v') at p's values on t.
func (p *decProblem) full(t *ad.Tape) (Variational, Block) {
	return Variational{Mu: t.Const(p.mu), Sqrt: t.Const(p.lu)}, Block{Q: Variational{Mu: t.Const(p.mv), Sqrt: t.Const(p.lv)}}
}

func (p *decProblem) elbo(t *ad.Tape, qu Variational, qv Block, x *mat.Dense, opt Options) (*ad.Node, Info, error) {
	k, bs := p.model(t, qu, qv)
	return BlockELBO(k, bs, t.Const(x), gaussVE(p.y, p.noise), 0, opt)
}

func (p *decProblem) terms(t *ad.Tape, qu Variational, qv Block, x *mat.Dense) (BlockTerms, error) {
	k, bs := p.model(t, qu, qv)
	tm, _, err := BlockMarginalTerms(k, bs, t.Const(x), Options{})
	return tm, err
}

// gaussVE is the closed-form Gaussian expectation, written independently
// of the likelihoods package.
func gaussVE(y []float64, noise float64) VarExp {
	return func(mu, v *ad.Node) *ad.Node {
		t := mu.Tape()
		r := ad.Sub(t.Const(column(y)), mu)
		out := ad.Scale(-0.5/noise, ad.Add(ad.Square(r), v))
		return ad.AddConst(out, -0.5*math.Log(2*math.Pi*noise))
	}
}

func inv(a mat.Matrix) *mat.Dense {
	var out mat.Dense
	if err := out.Inverse(a); err != nil {
		panic(err)
	}
	return &out
}

func mul(ms ...mat.Matrix) *mat.Dense {
	out := mat.DenseCopyOf(ms[0])
	for _, m := range ms[1:] {
		var next mat.Dense
		next.Mul(out, m)
		out = &next
	}
	return out
}

func sub(a, b mat.Matrix) *mat.Dense {
	var out mat.Dense
	out.Sub(a, b)
	return &out
}

func outer(l *mat.Dense) *mat.Dense {
	lo := lowerOf(l)
	var out mat.Dense
	out.Mul(lo, lo.T())
	return &out
}

func logDet(a mat.Matrix) float64 {
	v, _ := mat.LogDet(a)
	return v
}

// gaussKL is KL[N(m, C) ‖ N(0, P)] with explicit inverses.
func gaussKL(m, c, p *mat.Dense) float64 {
	pinv := inv(p)
	k, _ := m.Dims()
	quad := mul(m.T(), pinv, m).At(0, 0)
	return 0.5 * (mat.Trace(mul(pinv, c)) + quad - float64(k) + logDet(p) - logDet(c))
}

// naiveSOLVE returns the mean, the full covariance of eq. (12) at x and the
// two KL terms with explicit inverses (Shi et al. 2020, eqs. 11–12).
func naiveSOLVE(p *decProblem, x *mat.Dense) (mean []float64, cov *mat.Dense, klu, klv float64) {
	se := func(a, b *mat.Dense) *mat.Dense { return seMatrix(a, b, p.vari, p.ls) }
	kuu, kuf, kff := se(p.z, p.z), se(p.z, x), se(x, x)
	kuuInv := inv(kuu)
	qfu := mul(kuf.T(), kuuInv)
	cu := outer(p.lu)
	cov = mat.DenseCopyOf(kff)
	cov.Add(cov, mul(qfu, sub(cu, kuu), qfu.T()))
	mu := mul(qfu, p.mu)
	klu = gaussKL(p.mu, cu, kuu)
	if !p.w.IsEmpty() {
		kvv, kvf, kvu := se(p.w, p.w), se(p.w, x), se(p.w, p.z)
		svv := sub(kvv, mul(kvu, kuuInv, kvu.T()))
		sfv := sub(kvf.T(), mul(qfu, kvu.T()))
		svvInv := inv(svv)
		cv := outer(p.lv)
		g := mul(sfv, svvInv)
		cov.Add(cov, mul(g, sub(cv, svv), g.T()))
		mu.Add(mu, mul(g, p.mv))
		klv = gaussKL(p.mv, cv, svv)
	}
	return mat.Col(nil, 0, mu), cov, klu, klv
}

func TestDecoupledMatchesNaive(t *testing.T) {
	p := newDecProblem(1, 30, 2, 5, 4)
	mean, cov, klu, klv := naiveSOLVE(p, p.x)
	want := -klu - klv
	for i, y := range p.y {
		want += -0.5*math.Log(2*math.Pi*p.noise) - (math.Pow(y-mean[i], 2)+cov.At(i, i))/(2*p.noise)
	}
	tape := ad.NewTape()
	qu, qv := p.full(tape)
	got, info, err := p.elbo(tape, qu, qv, p.x, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if e := testhelp.RelErr(got.Scalar(), want); e > 1e-10 {
		t.Errorf("ELBO %.14g, naive %.14g (rel %.2g)", got.Scalar(), want, e)
	}
	if info.Jitter != 0 {
		t.Errorf("jitter %v on a well-conditioned problem", info.Jitter)
	}
	// Whitened parameterisations of the same q give the same ELBO.
	ru := cholesky(t, seMatrix(p.z, p.z, p.vari, p.ls))
	rv := cholesky(t, sub(seMatrix(p.w, p.w, p.vari, p.ls), mul(seMatrix(p.w, p.z, p.vari, p.ls),
		inv(seMatrix(p.z, p.z, p.vari, p.ls)), seMatrix(p.z, p.w, p.vari, p.ls))))
	for _, c := range []struct{ wu, wv bool }{{true, false}, {false, true}, {true, true}} {
		tape := ad.NewTape()
		qu, qv := p.full(tape)
		if c.wu {
			qu = Variational{Mu: tape.Const(solveLower(ru, p.mu, false)), Sqrt: tape.Const(solveLower(ru, lowerOf(p.lu), false)), Whiten: true}
		}
		if c.wv {
			qv.Q = Variational{Mu: tape.Const(solveLower(rv, p.mv, false)), Sqrt: tape.Const(solveLower(rv, lowerOf(p.lv), false)), Whiten: true}
		}
		got, _, err := p.elbo(tape, qu, qv, p.x, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if e := testhelp.RelErr(got.Scalar(), want); e > 1e-9 {
			t.Errorf("whitened u=%v v=%v: ELBO %.14g, naive %.14g (rel %.2g)", c.wu, c.wv, got.Scalar(), want, e)
		}
	}
	// BlockKL alone.
	k, bs := p.model(tape, qu, qv)
	kl, err := BlockKL(k, bs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if e := testhelp.RelErr(kl.Scalar(), klu+klv); e > 1e-10 {
		t.Errorf("KL %.14g, naive %.14g", kl.Scalar(), klu+klv)
	}
}

// TestDecoupledVarianceDecomposition checks eq. (12) term by term at test
// inputs against explicit matrices, the sum, and the signs theory gives.
func TestDecoupledVarianceDecomposition(t *testing.T) {
	p := newDecProblem(2, 20, 2, 6, 5)
	rng := rand.New(rand.NewPCG(5, 5))
	xs := testhelp.RandMat(rng, 40, 2, 1.5)
	mean, cov, _, _ := naiveSOLVE(p, xs)
	tape := ad.NewTape()
	qu, qv := p.full(tape)
	tm, err := p.terms(tape, qu, qv, xs)
	if err != nil {
		t.Fatal(err)
	}
	mu, v := tm.Sum()
	for i := range mean {
		at := func(n *ad.Node) float64 { return n.Value().At(i, 0) }
		if d := math.Abs(at(mu) - mean[i]); d > 1e-10 {
			t.Errorf("mean[%d] = %v, naive %v", i, at(mu), mean[i])
		}
		if d := math.Abs(at(tm.Mean[0]) + at(tm.Mean[1]) - at(mu)); d > 1e-14 {
			t.Errorf("mean[%d]: parts do not sum (%g)", i, d)
		}
		if d := math.Abs(at(v) - cov.At(i, i)); d > 1e-10 {
			t.Errorf("var[%d] = %v, naive %v", i, at(v), cov.At(i, i))
		}
		residual, base, orth, orthPrior := at(tm.Kff)-at(tm.Prior[0]), at(tm.Cov[0]), at(tm.Cov[1]), at(tm.Prior[1])
		if d := math.Abs(residual + base + orth - orthPrior - at(v)); d > 1e-14 {
			t.Errorf("var[%d]: eq. (12) terms sum to %v, total %v", i, residual+base+orth-orthPrior, at(v))
		}
		const eps = -1e-12
		if residual < eps || base < eps || orth < eps || orthPrior < eps || residual-orthPrior < eps {
			t.Errorf("point %d: k − Q %g, Q C_u Q %g, S C_v S %g, S S⁻¹ S %g: a term theory keeps ≥ 0 (or S S⁻¹ S ≤ k − Q) is not", i, residual, base, orth, orthPrior)
		}
	}
	// At an orthogonal input the residual prior variance is explained by v:
	// k − Q_ff = S_fv S_vv⁻¹ S_vf (Fig. 1 of Tiao et al.: Var h(w_k) is in v').
	tm2, err := p.terms(tape, qu, qv, p.w)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		r := tm2.Kff.Value().At(i, 0) - tm2.Prior[0].Value().At(i, 0)
		if o := tm2.Prior[1].Value().At(i, 0); math.Abs(r-o) > 1e-9 {
			t.Errorf("at w_%d: k − Q = %v but S S⁻¹ S = %v", i, r, o)
		}
	}
}

// TestDecoupledIdentities: a weights block (ODVGP's a_γ) is SOLVE-GP with
// C_v' = S_vv and m_v' = S_vv a, and the mean-only block over m_v'.
func TestDecoupledIdentities(t *testing.T) {
	p := newDecProblem(4, 25, 2, 5, 4)
	rng := rand.New(rand.NewPCG(9, 9))
	a := testhelp.RandMat(rng, 4, 1, 0.7)
	se := func(x, z *mat.Dense) *mat.Dense { return seMatrix(x, z, p.vari, p.ls) }
	svv := sub(se(p.w, p.w), mul(se(p.w, p.z), inv(se(p.z, p.z)), se(p.z, p.w)))
	lv := cholesky(t, svv)
	mv := mul(svv, a)
	for _, whiten := range []bool{false, true} {
		tape := ad.NewTape()
		qu := Variational{Mu: tape.Const(p.mu), Sqrt: tape.Const(p.lu), Whiten: whiten}
		vals := map[string]float64{}
		for name, qv := range map[string]Block{
			"weights":   {Q: Variational{Mu: tape.Const(a)}, Weights: true},
			"mean-only": {Q: Variational{Mu: tape.Const(mv)}},
			"solvegp":   {Q: Variational{Mu: tape.Const(mv), Sqrt: tape.Const(lv)}},
		} {
			out, _, err := p.elbo(tape, qu, qv, p.x, Options{})
			if err != nil {
				t.Fatal(err)
			}
			vals[name] = out.Scalar()
		}
		for _, name := range []string{"mean-only", "solvegp"} {
			if e := testhelp.RelErr(vals["weights"], vals[name]); e > 1e-9 {
				t.Errorf("whiten=%v: ODVGP (a_γ) %.14g, %s with m = S_vv a %.14g (rel %.2g)", whiten, vals["weights"], name, vals[name], e)
			}
		}
	}
}

// TestDecoupledTitsiasOptimum: for a Gaussian likelihood and K = 0 the
// optimal q(u) turns the bound into Titsias' collapsed bound.
func TestDecoupledTitsiasOptimum(t *testing.T) {
	p := newDecProblem(5, 40, 2, 7, 0)
	p.addZ(p.z)
	se := func(x, z *mat.Dense) *mat.Dense { return seMatrix(x, z, p.vari, p.ls) }
	kuu, kuf := se(p.z, p.z), se(p.z, p.x)
	// S = Kuu (Kuu + σ⁻² Kuf Kfu)⁻¹ Kuu (App. B's S with β = z), m = σ⁻² S Kuu⁻¹ Kuf y.
	s := appendixBS(p)
	m := mul(s, inv(kuu), kuf, column(p.y))
	m.Scale(1/p.noise, m)
	tape := ad.NewTape()
	got, _, err := p.elbo(tape, Variational{Mu: tape.Const(m), Sqrt: tape.Const(cholesky(t, s))}, Block{}, p.x, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := evaluate(t, p.set, func(tape *ad.Tape, b *param.Bound) (*ad.Node, error) {
		out, _, err := SGPR(p.kernel(b), p.points(b), tape.Const(p.x), p.y, b.Get("noise_variance"), Options{})
		return out, err
	})
	if e := testhelp.RelErr(got.Scalar(), want); e > 1e-9 {
		t.Errorf("ELBO at the optimal q(u) %.14g, collapsed bound %.14g (rel %.2g)", got.Scalar(), want, e)
	}
}

// TestODVGPAnalyticOptimum: at the optimum of odvff-spec App. B (β = u
// mean and covariance, γ = v mean only) the gradient in q is zero.
func TestODVGPAnalyticOptimum(t *testing.T) {
	p := newDecProblem(6, 40, 2, 5, 4) // u = β (5), v = γ (4)
	se := func(x, z *mat.Dense) *mat.Dense { return seMatrix(x, z, p.vari, p.ls) }
	kb, kbx, kbg := se(p.z, p.z), se(p.z, p.x), se(p.z, p.w)
	kg, kgx := se(p.w, p.w), se(p.w, p.x)
	s := appendixBS(p)
	// a_α = (Kαx Kxα + σ² Kα)⁻¹ Kαx y with α = (γ, β).
	ka := mat.NewDense(9, 9, nil)
	ka.Slice(0, 4, 0, 4).(*mat.Dense).Copy(kg)
	ka.Slice(0, 4, 4, 9).(*mat.Dense).Copy(kbg.T())
	ka.Slice(4, 9, 0, 4).(*mat.Dense).Copy(kbg)
	ka.Slice(4, 9, 4, 9).(*mat.Dense).Copy(kb)
	kax := mat.NewDense(9, 40, nil)
	kax.Slice(0, 4, 0, 40).(*mat.Dense).Copy(kgx)
	kax.Slice(4, 9, 0, 40).(*mat.Dense).Copy(kbx)
	lhs := mul(kax, kax.T())
	ka.Scale(p.noise, ka)
	lhs.Add(lhs, ka)
	aa := mul(inv(lhs), kax, column(p.y))
	ag := mat.DenseCopyOf(aa.Slice(0, 4, 0, 1))
	// a_β = a_α,β + Kβ⁻¹ Kβγ a_γ and m_β = Kβ a_β.
	ab := mat.DenseCopyOf(aa.Slice(4, 9, 0, 1))
	ab.Add(ab, mul(inv(kb), kbg, ag))
	mb := mul(kb, ab)
	lq := cholesky(t, s)
	grads := func(mb, lq, ag *mat.Dense) map[string]*mat.Dense {
		tape := ad.NewTape()
		mu, sq, a := tape.Var(mb), tape.Var(lq), tape.Var(ag)
		elbo, _, err := p.elbo(tape, Variational{Mu: mu, Sqrt: sq}, Block{Q: Variational{Mu: a}, Weights: true}, p.x, Options{})
		if err != nil {
			t.Fatal(err)
		}
		tape.Backward(elbo)
		return map[string]*mat.Dense{"m_β": mu.Grad(), "a_γ": a.Grad(), "chol S": lowerOf(sq.Grad())}
	}
	for name, g := range grads(mb, lq, ag) {
		if n := mat.Norm(g, math.Inf(1)); n > 1e-7 {
			t.Errorf("∂ELBO/∂%s at the App. B optimum has norm %.3g\n%v", name, n, mat.Formatted(g))
		}
	}
	// The check can fail: away from the optimum the gradients are O(1).
	off := mat.DenseCopyOf(ag)
	off.Apply(func(_, _ int, v float64) float64 { return v + 0.1 }, off)
	if n := mat.Norm(grads(mb, lq, off)["a_γ"], math.Inf(1)); n < 1e-3 {
		t.Errorf("∂ELBO/∂a_γ off the optimum is only %.3g", n)
	}
}

// TestDecoupledGradient checks the tape gradient with respect to every
// parameter block (kernel variance and lengthscales, both input sets, q(u),
// q(v') or a_γ) against finite differences.
func TestDecoupledGradient(t *testing.T) {
	p := newDecProblem(7, 12, 2, 4, 3)
	rng := rand.New(rand.NewPCG(3, 3))
	a := testhelp.RandMat(rng, 3, 1, 0.5)
	inputs := []*mat.Dense{mat.NewDense(1, 1, []float64{p.vari}), mat.NewDense(1, 2, p.ls), p.z, p.w,
		p.mu, p.lu, p.mv, p.lv, a}
	bern, _ := likelihoods.New("bernoulli")
	for _, c := range []struct {
		name                 string
		wu, wv, meanOnly, wt bool
		root, probit         bool
	}{
		{name: "solvegp"},
		{name: "solvegp-whitened", wu: true, wv: true},
		{name: "odvgp-weights", wt: true},
		{name: "odvgp-weights-whitened-u", wu: true, wt: true},
		{name: "odvgp-mean-only", meanOnly: true},
		{name: "structured-root", wu: true, root: true},
		{name: "probit", wv: true, probit: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := func(tape *ad.Tape, xs []*ad.Node) *ad.Node {
				k := seBound{variance: xs[0], ls: xs[1]}
				var fu features.Bound = features.BoundPoints{Z: xs[2]}
				if c.root {
					// A non-triangular root L·Q (Q a rotation) through WithKuu.
					fu = features.WithKuu(fu, features.FormRoot, func(k kernels.Bound, _ int) (features.KuuStructure, error) {
						l, err := ad.Cholesky(k.K(xs[2], xs[2]))
						if err != nil {
							return features.KuuStructure{}, err
						}
						rot := tape.Const(mat.NewDense(4, 4, []float64{0.6, -0.8, 0, 0, 0.8, 0.6, 0, 0, 0, 0, 0, 1, 0, 0, 1, 0}))
						return features.KuuStructure{Whiten: func(b *ad.Node) *ad.Node { return ad.MatMulTA(rot, ad.SolveLower(l, b)) }}, nil
					})
				}
				qv := Block{Feature: features.BoundPoints{Z: xs[3]}, Q: Variational{Mu: xs[6], Sqrt: xs[7], Whiten: c.wv}}
				switch {
				case c.wt:
					qv.Q, qv.Weights = Variational{Mu: xs[8]}, true
				case c.meanOnly:
					qv.Q = Variational{Mu: xs[8]}
				}
				bs := []Block{{Feature: fu, Q: Variational{Mu: xs[4], Sqrt: xs[5], Whiten: c.wu}}, qv}
				ve := gaussVE(p.y, p.noise)
				if c.probit {
					ve = func(mu, v *ad.Node) *ad.Node { return bern.VarExp(nil, "", mu, v, column(labels(p.y))) }
				}
				out, _, err := BlockELBO(k, bs, tape.Const(p.x), ve, 40, Options{})
				if err != nil {
					t.Fatal(err)
				}
				return out
			}
			if err := ad.CheckGradient(f, inputs, 1e-6, 2e-6); err != nil {
				t.Error(err)
			}
		})
	}
}

func TestDecoupledBadInput(t *testing.T) {
	p := newDecProblem(9, 15, 2, 4, 3)
	p.w = mat.DenseCopyOf(p.z.Slice(0, 3, 0, 2)) // orthogonal inputs on base inputs
	tape := ad.NewTape()
	qu, qv := p.full(tape)
	_, _, err := p.elbo(tape, qu, qv, p.x, Options{MaxTries: 2})
	if err == nil || !strings.Contains(err.Error(), "S_bb") || !strings.Contains(err.Error(), "coincide") {
		t.Errorf("coinciding inputs without jitter: err = %v", err)
	}
	_, info, err := p.elbo(tape, qu, qv, p.x, Options{Jitter: 1e-6})
	if err != nil {
		t.Errorf("coinciding inputs with jitter 1e-6: %v", err)
	} else if info.Jitter < 1e-6 {
		t.Errorf("S_vv jitter reported as %g", info.Jitter)
	}
	p = newDecProblem(9, 15, 2, 4, 3)
	k, bs := p.model(tape, qu, qv)
	a := tape.Const(filled(3, 1, 0.1))
	for name, c := range map[string]struct {
		bs []Block
		ok string
	}{
		"weights block first":       {[]Block{{Feature: bs[1].Feature, Q: Variational{Mu: a}, Weights: true}, bs[0]}, "last block"},
		"weights block with sqrt":   {[]Block{bs[0], {Feature: bs[1].Feature, Q: bs[1].Q, Weights: true}}, "no square root"},
		"weights block whitened":    {[]Block{bs[0], {Feature: bs[1].Feature, Q: Variational{Mu: a, Whiten: true}, Weights: true}}, "whitened"},
		"wrong size of the weights": {[]Block{bs[0], {Feature: bs[1].Feature, Q: Variational{Mu: tape.Const(filled(2, 1, 0))}, Weights: true}}, "want 3×1"},
	} {
		if _, _, err := BlockELBO(k, c.bs, tape.Const(p.x), gaussVE(p.y, p.noise), 0, Options{}); err == nil || !strings.Contains(err.Error(), c.ok) {
			t.Errorf("%s: err = %v, want it to mention %q", name, err, c.ok)
		}
	}
}

// TestDecoupledNatGradConjugate: with a Gaussian likelihood the ELBO is
// conjugate in each Gaussian factor, so one natural-gradient step of
// length 1 on q(u) (q(v') fixed) or on q(v') (q(u) fixed) lands on that
// factor's optimum: the gradient vanishes there, and for ODVGP q(u) equals
// the closed form of odvff-spec App. B.
func TestDecoupledNatGradConjugate(t *testing.T) {
	p := newDecProblem(10, 40, 2, 5, 4)
	rng := rand.New(rand.NewPCG(10, 10))
	a := testhelp.RandMat(rng, 4, 1, 0.5)
	type factorQ struct{ m, s *mat.Dense }
	// elbo evaluates with the stepped factor given by (m, S) on the tape
	// (Sqrt = chol S) and returns the gradients in m and S.
	elbo := func(which string, odvgp, whiten bool, q factorQ, other factorQ) (val float64, gm, gs *mat.Dense) {
		tape := ad.NewTape()
		m, s := tape.Var(q.m), tape.Var(q.s)
		l, err := ad.Cholesky(s)
		if err != nil {
			t.Fatal(err)
		}
		qu := Variational{Mu: m, Sqrt: l, Whiten: whiten}
		qv := Block{Q: Variational{Mu: tape.Const(other.m), Sqrt: tape.Const(other.s)}}
		if which == "v" {
			qu = Variational{Mu: tape.Const(other.m), Sqrt: tape.Const(other.s)}
			qv = Block{Q: Variational{Mu: m, Sqrt: l, Whiten: whiten}}
		} else if odvgp {
			qv = Block{Q: Variational{Mu: tape.Const(a)}, Weights: true}
		}
		out, _, err := p.elbo(tape, qu, qv, p.x, Options{})
		if err != nil {
			t.Fatal(err)
		}
		tape.Backward(out)
		return out.Scalar(), m.Grad(), s.Grad()
	}
	toSym := func(a *mat.Dense) *mat.SymDense {
		n, _ := a.Dims()
		s := mat.NewSymDense(n, nil)
		for i := 0; i < n; i++ {
			for j := i; j < n; j++ {
				s.SetSym(i, j, 0.5*(a.At(i, j)+a.At(j, i)))
			}
		}
		return s
	}
	for _, c := range []struct {
		name          string
		which         string
		odvgp, whiten bool
	}{
		{"odvgp q(u)", "u", true, false},
		{"odvgp q(u) whitened", "u", true, true},
		{"solvegp q(u)", "u", false, false},
		{"solvegp q(v')", "v", false, false},
		{"solvegp q(v') whitened", "v", false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			start := factorQ{p.mu, outer(p.lu)}
			other := factorQ{p.mv, lowerOf(p.lv)}
			if c.which == "v" {
				start, other = factorQ{p.mv, outer(p.lv)}, factorQ{p.mu, lowerOf(p.lu)}
			}
			v0, gm, gs := elbo(c.which, c.odvgp, c.whiten, start, other)
			m1, s1, err := optimNatGrad(start.m, toSym(start.s), gm, toSym(gs), 1)
			if err != nil {
				t.Fatal(err)
			}
			v1, gm1, gs1 := elbo(c.which, c.odvgp, c.whiten, factorQ{m1, s1}, other)
			if !(v1 > v0) {
				t.Errorf("ELBO %v → %v after the step", v0, v1)
			}
			if n := math.Max(mat.Norm(gm1, math.Inf(1)), mat.Norm(gs1, math.Inf(1))); n > 1e-7 {
				t.Errorf("gradient after one step of length 1 has norm %.3g (ELBO %v → %v)", n, v0, v1)
			}
			if c.odvgp && !c.whiten {
				if d := mat.Norm(sub(s1, appendixBS(p)), math.Inf(1)); d > 1e-9 {
					t.Errorf("S after the step differs from App. B's by %.3g", d)
				}
			}
		})
	}
}

// optimNatGrad wraps optim.NatGradStep on dense matrices.
func optimNatGrad(m *mat.Dense, s *mat.SymDense, gm *mat.Dense, gs *mat.SymDense, gamma float64) (*mat.Dense, *mat.Dense, error) {
	nm, ns, err := optim.NatGradStep(mat.VecDenseCopyOf(m.ColView(0)), s, mat.VecDenseCopyOf(gm.ColView(0)), gs, gamma)
	if err != nil {
		return nil, nil, err
	}
	return mat.DenseCopyOf(nm), mat.DenseCopyOf(ns), nil
}

// TestBlockPredict: the chunked predictor stitches the terms of one
// evaluation over all test inputs, and BlockPosterior (with a weights
// block) predicts the same marginals.
func TestBlockPredict(t *testing.T) {
	p := newDecProblem(11, 10, 2, 4, 3)
	rng := rand.New(rand.NewPCG(11, 1))
	xs := testhelp.RandMat(rng, PredictChunk+37, 2, 1)
	for _, kind := range []string{"solvegp", "weights"} {
		bind := func(tape *ad.Tape) (kernels.Bound, []Block, error) {
			qu, qv := p.full(tape)
			if kind == "weights" {
				qv = Block{Q: Variational{Mu: tape.Const(p.mv)}, Weights: true}
			}
			k, bs := p.model(tape, qu, qv)
			return k, bs, nil
		}
		pred, err := BlockPredict(xs, bind, Options{})
		if err != nil {
			t.Fatal(err)
		}
		tape := ad.NewTape()
		k, bs, _ := bind(tape)
		tm, _, err := BlockMarginalTerms(k, bs, tape.Const(xs), Options{})
		if err != nil {
			t.Fatal(err)
		}
		mu, v := tm.Sum()
		if (pred.Prior[1] == nil) != (kind == "weights") || pred.BlockMean[1] == nil {
			t.Fatalf("%s: orthogonal terms present: %v", kind, pred.Prior[1] != nil)
		}
		for i := range pred.Mean {
			if pred.Mean[i] != mu.Value().At(i, 0) || pred.Var[i] != v.Value().At(i, 0) || pred.Prior[0][i] != tm.Prior[0].Value().At(i, 0) {
				t.Fatalf("%s, row %d: chunked (%v, %v) vs whole (%v, %v)", kind, i, pred.Mean[i], pred.Var[i], mu.Value().At(i, 0), v.Value().At(i, 0))
			}
		}
		post, err := BlockPosterior(k, bs, Options{})
		if err != nil {
			t.Fatal(err)
		}
		stack, err := features.Stack(bs[0].Feature, bs[1].Feature)
		if err != nil {
			t.Fatal(err)
		}
		xn := tape.Const(xs)
		pm, pv, err := post.Marginals(stack.Kuf(k, xn).Value(), mat.Col(nil, 0, k.Diag(xn).Value()))
		if err != nil {
			t.Fatal(err)
		}
		for i := range pm {
			if math.Abs(pm[i]-pred.Mean[i]) > 1e-10 || math.Abs(pv[i]-pred.Var[i]) > 1e-10 {
				t.Fatalf("%s, row %d: BlockPosterior (%v, %v), terms (%v, %v)", kind, i, pm[i], pv[i], pred.Mean[i], pred.Var[i])
			}
		}
	}
}

// TestDecoupledVFFReference: with β = VFF features as the base set (the
// ODVFF layout) the residual term k − Q_ff at x is k(x,x) − φ(x)ᵀKφφ⁻¹φ(x),
// whose values odvff-spec §7 gives (Matérn-3/2, σ² = 1.3, ℓ = 0.2,
// [a,b] = [−1, 2], F = 60): q(0.3,0.3) = 1.2998 and q(−1,−1) = 0.65 (half
// the prior variance at the interval end). A mean-only γ set leaves it, and
// the structured root and the dense Gram agree.
func TestDecoupledVFFReference(t *testing.T) {
	k, err := kernels.New("matern32", 1, kernels.Options{Variance: 1.3, Lengthscales: []float64{0.2}})
	if err != nil {
		t.Fatal(err)
	}
	s := param.NewSet()
	must(k.Declare(s, "k."))
	f, err := features.NewVFF(k, []features.Interval{{A: -1, B: 2}}, 61, features.Additive, false)
	if err != nil {
		t.Fatal(err)
	}
	x := mat.NewDense(2, 1, []float64{0.3, -1})
	zg := mat.NewDense(3, 1, []float64{0.1, 0.5, 1.4})
	want := []float64{1.3 - 1.2998, 1.3 - 0.65}
	for _, whiten := range []bool{false, true} {
		tape := ad.NewTape()
		b := s.Bind(tape)
		kb := k.Bind(b, "k.")
		m := f.M()
		bs := []Block{
			{Feature: f.Bind(b, ""), Q: Variational{Mu: tape.Const(mat.NewDense(m, 1, nil)), Sqrt: tape.Const(mat.NewDense(m, m, nil)), Whiten: whiten}},
			{Feature: features.BoundPoints{Z: tape.Const(zg)}, Q: Variational{Mu: tape.Const(mat.NewDense(3, 1, []float64{0.2, -0.1, 0.3}))}, Weights: true},
		}
		tm, _, err := BlockMarginalTerms(kb, bs, tape.Const(x), Options{})
		if err != nil {
			t.Fatal(err)
		}
		for i, w := range want {
			if got := tm.Kff.Value().At(i, 0) - tm.Prior[0].Value().At(i, 0); math.Abs(got-w) > 1e-4 {
				t.Errorf("whiten=%v: k − q at x = %v is %.5f, want %.4f", whiten, x.At(i, 0), got, w)
			}
		}
	}
}

// appendixBS is the optimal q(β) covariance of odvff-spec App. B,
// S = Kβ (Kβ + σ⁻² Kβx Kxβ)⁻¹ Kβ, with β = z.
func appendixBS(p *decProblem) *mat.Dense {
	se := func(x, z *mat.Dense) *mat.Dense { return seMatrix(x, z, p.vari, p.ls) }
	kb, kbx := se(p.z, p.z), se(p.z, p.x)
	var sig mat.Dense
	sig.Mul(kbx, kbx.T())
	sig.Scale(1/p.noise, &sig)
	sig.Add(&sig, kb)
	return mul(kb, inv(&sig), kb)
}
