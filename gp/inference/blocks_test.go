package inference

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
	"sgplab/gp/features"
	"sgplab/gp/kernels"
	"sgplab/gp/likelihoods"
	"sgplab/gp/param"
	"sgplab/internal/testhelp"
)

// twoBlock is a SOLVE-GP problem: inducing points zu (block u) and zv
// (block v) with q's qu_*, qv_*.
type twoBlock struct {
	*problem
	zu, zv *mat.Dense
}

func newTwoBlock(seed uint64) *twoBlock {
	p := newProblem(seed, 25, 2, 0.3)
	rng := rand.New(rand.NewPCG(seed, 99))
	tb := &twoBlock{problem: p, zu: testhelp.RandMat(rng, 5, 2, 1), zv: testhelp.RandMat(rng, 4, 2, 1)}
	must(p.set.Add("zu", tb.zu, param.Identity{}))
	must(p.set.Add("zv", tb.zv, param.Identity{}))
	for _, blk := range []struct {
		name string
		m    int
	}{{"qu_", 5}, {"qv_", 4}} {
		mu, sqrt := randomQ(rng, blk.m)
		must(p.set.Add(blk.name+"mu", mu, param.Identity{}))
		must(p.set.Add(blk.name+"sqrt", sqrt, param.Identity{}))
	}
	return tb
}

func (tb *twoBlock) blocks(b *param.Bound, whiten, meanOnly bool) []Block {
	qv := Variational{Mu: b.Get("qv_mu"), Sqrt: b.Get("qv_sqrt"), Whiten: whiten}
	if meanOnly {
		qv.Sqrt = nil
	}
	return []Block{
		{Feature: features.BoundPoints{Z: b.Get("zu")}, Q: Variational{Mu: b.Get("qu_mu"), Sqrt: b.Get("qu_sqrt"), Whiten: whiten}},
		{Feature: features.BoundPoints{Z: b.Get("zv")}, Q: qv},
	}
}

func (tb *twoBlock) elbo(whiten, meanOnly bool) objective {
	lik := likelihoods.NewGaussian(1)
	return func(t *ad.Tape, b *param.Bound) (*ad.Node, error) {
		ve := func(mu, v *ad.Node) *ad.Node { return lik.VarExp(b, "", mu, v, column(tb.y)) }
		out, _, err := BlockELBO(tb.kernel(b), tb.blocks(b, whiten, meanOnly), t.Const(tb.x), ve, 0, Options{})
		return out, err
	}
}

// naiveSolveGP is spherical-odgp-spec §1.7 with explicit inverses and
// determinants (non-whitened q's; meanOnly sets C_v = S_vv).
func (tb *twoBlock) naiveSolveGP(meanOnly bool) float64 {
	se := func(a, b *mat.Dense) *mat.Dense { return seMatrix(a, b, tb.vari, tb.ls) }
	inv := func(a mat.Matrix) *mat.Dense {
		var o mat.Dense
		if err := o.Inverse(a); err != nil {
			panic(err)
		}
		return &o
	}
	mul := func(ms ...mat.Matrix) *mat.Dense {
		out := mat.DenseCopyOf(ms[0])
		for _, m := range ms[1:] {
			var o mat.Dense
			o.Mul(out, m)
			out = &o
		}
		return out
	}
	sub := func(a, b mat.Matrix) *mat.Dense { var o mat.Dense; o.Sub(a, b); return &o }
	cov := func(name string) *mat.Dense {
		l := lowerOf(tb.set.Value(name))
		return mul(l, l.T())
	}
	kuu, kuv, kvv := se(tb.zu, tb.zu), se(tb.zu, tb.zv), se(tb.zv, tb.zv)
	kuf, kvf := se(tb.zu, tb.x), se(tb.zv, tb.x)
	kuuInv := inv(kuu)
	svv := sub(kvv, mul(kuv.T(), kuuInv, kuv))
	svf := sub(kvf, mul(kuv.T(), kuuInv, kuf))
	svvInv := inv(svv)
	mu, mv := tb.set.Value("qu_mu"), tb.set.Value("qv_mu")
	cu, cv := cov("qu_sqrt"), cov("qv_sqrt")
	if meanOnly {
		cv = svv
	}
	bu := mul(kuuInv, kuf)  // Kuu⁻¹Kuf
	bv := mul(svvInv, svf)  // Svv⁻¹Svf
	mean := mul(bu.T(), mu) // N×1
	mean.Add(mean, mul(bv.T(), mv))
	varTerm := mul(bu.T(), sub(cu, kuu), bu)
	varTerm.Add(varTerm, mul(bv.T(), sub(cv, svv), bv))
	s2 := tb.noise
	ell := 0.0
	for n, y := range tb.y {
		v := tb.vari + varTerm.At(n, n)
		r := y - mean.At(n, 0)
		ell += -0.5*math.Log(2*math.Pi*s2) - (r*r+v)/(2*s2)
	}
	kl := func(m, c, k *mat.Dense) float64 {
		ki := inv(k)
		ldK, _ := mat.LogDet(k)
		ldC, _ := mat.LogDet(c)
		r, _ := m.Dims()
		return 0.5 * (mat.Trace(mul(ki, c)) + mat.Inner(m.ColView(0), ki, m.ColView(0)) - float64(r) + ldK - ldC)
	}
	return ell - kl(mu, cu, kuu) - kl(mv, cv, svv)
}

// whitenBlocks maps the non-whitened q's of the set to whitened ones with
// the blocks' Cholesky roots (L_u of Kuu, L_v of S_vv), so the implied
// q(u), q(v') and the ELBO are unchanged.
func (tb *twoBlock) whitenBlocks(t *testing.T) {
	kuu := seMatrix(tb.zu, tb.zu, tb.vari, tb.ls)
	kuv := seMatrix(tb.zu, tb.zv, tb.vari, tb.ls)
	lu := cholesky(t, kuu)
	auv := solveLower(lu, kuv, false)
	var svv mat.Dense
	svv.Mul(auv.T(), auv)
	svv.Sub(seMatrix(tb.zv, tb.zv, tb.vari, tb.ls), &svv)
	lv := cholesky(t, &svv)
	for pfx, l := range map[string]*mat.Dense{"qu_": lu, "qv_": lv} {
		must(tb.set.SetValue(pfx+"mu", solveLower(l, tb.set.Value(pfx+"mu"), false)))
		must(tb.set.SetValue(pfx+"sqrt", solveLower(l, lowerOf(tb.set.Value(pfx+"sqrt")), false)))
	}
}

func TestBlockELBOSolveGP(t *testing.T) {
	for _, meanOnly := range []bool{false, true} {
		t.Run(fmt.Sprintf("meanOnly=%v", meanOnly), func(t *testing.T) {
			tb := newTwoBlock(3)
			want := tb.naiveSolveGP(meanOnly)
			got := evaluate(t, tb.set, tb.elbo(false, meanOnly))
			if e := testhelp.RelErr(got, want); e > 1e-10 {
				t.Errorf("two-block ELBO %.15g, naive SOLVE-GP %.15g (rel %.2g)", got, want, e)
			}
			tb.whitenBlocks(t)
			got = evaluate(t, tb.set, tb.elbo(true, meanOnly))
			if e := testhelp.RelErr(got, want); e > 1e-9 {
				t.Errorf("whitened two-block ELBO %.15g, naive SOLVE-GP %.15g (rel %.2g)", got, want, e)
			}
		})
	}
}

// TestBlockELBOODVGPIsSOLVEGPAtPriorCovariance: a mean-only block equals a
// full block whose covariance is S_vv (the ODVGP special case).
func TestBlockELBOODVGPIsSOLVEGPAtPriorCovariance(t *testing.T) {
	tb := newTwoBlock(5)
	meanOnly := evaluate(t, tb.set, tb.elbo(false, true))
	kuu := seMatrix(tb.zu, tb.zu, tb.vari, tb.ls)
	auv := solveLower(cholesky(t, kuu), seMatrix(tb.zu, tb.zv, tb.vari, tb.ls), false)
	var svv mat.Dense
	svv.Mul(auv.T(), auv)
	svv.Sub(seMatrix(tb.zv, tb.zv, tb.vari, tb.ls), &svv)
	must(tb.set.SetValue("qv_sqrt", cholesky(t, &svv)))
	full := evaluate(t, tb.set, tb.elbo(false, false))
	if e := testhelp.RelErr(meanOnly, full); e > 1e-11 {
		t.Errorf("mean-only block %.15g, full block at C = S_vv %.15g", meanOnly, full)
	}
}

func TestBlockELBOGradient(t *testing.T) {
	for _, whiten := range []bool{false, true} {
		for _, meanOnly := range []bool{false, true} {
			t.Run(fmt.Sprintf("whiten=%v/meanOnly=%v", whiten, meanOnly), func(t *testing.T) {
				tb := newTwoBlock(11)
				checkGradient(t, tb.set, tb.elbo(whiten, meanOnly), 1e-6)
			})
		}
	}
}

// TestBlockPosteriorMatchesMarginals: predictions through the stacked
// feature set equal the tape marginals at the same inputs.
func TestBlockPosteriorMatchesMarginals(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	xs := testhelp.RandMat(rng, 7, 2, 1.5)
	for _, whiten := range []bool{false, true} {
		for _, meanOnly := range []bool{false, true} {
			t.Run(fmt.Sprintf("whiten=%v/meanOnly=%v", whiten, meanOnly), func(t *testing.T) {
				tb := newTwoBlock(13)
				tape := ad.NewTape()
				b := tb.set.Bind(tape)
				mu, v, _, err := BlockMarginals(tb.kernel(b), tb.blocks(b, whiten, meanOnly), tape.Const(xs), Options{})
				if err != nil {
					t.Fatal(err)
				}
				post, err := BlockPosterior(tb.kernel(b), tb.blocks(b, whiten, meanOnly), Options{})
				if err != nil {
					t.Fatal(err)
				}
				mean, variance, err := post.Predict(xs, func(t *ad.Tape) (kernels.Bound, features.Bound) {
					b := tb.set.Bind(t)
					blks := tb.blocks(b, whiten, meanOnly)
					st, err := features.Stack(blks[0].Feature, blks[1].Feature)
					must(err)
					return tb.kernel(b), st
				})
				if err != nil {
					t.Fatal(err)
				}
				for i := range mean {
					if e := testhelp.RelErr(mean[i], mu.Value().At(i, 0)); e > 1e-10 {
						t.Errorf("mean[%d]: posterior %.15g, marginals %.15g", i, mean[i], mu.Value().At(i, 0))
					}
					if e := testhelp.RelErr(variance[i], v.Value().At(i, 0)); e > 1e-10 {
						t.Errorf("variance[%d]: posterior %.15g, marginals %.15g", i, variance[i], v.Value().At(i, 0))
					}
				}
			})
		}
	}
}

// TestBlockELBOStructuredFirstBlock: a VFF first block (structured root,
// no dense Cholesky) with an inducing-point second block (the ODVFF/SOLVE
// pairing: S_vv and S_vf through Kuv(VFF, points) = Φ(Z_v)), gradient in
// Z_v (inside and outside the box), the kernel and both q's.
func TestBlockELBOStructuredFirstBlock(t *testing.T) {
	k, err := kernels.New("matern32", 1, kernels.Options{Variance: 1.1, Lengthscales: []float64{0.3}})
	must(err)
	vff, err := features.NewVFF(k, []features.Interval{{A: -0.5, B: 1.5}}, 4, features.Kronecker, false)
	must(err)
	rng := rand.New(rand.NewPCG(8, 8))
	x := testhelp.RandMat(rng, 20, 1, 0.4)
	y := make([]float64, 20)
	for i := range y {
		y[i] = math.Sin(4*x.At(i, 0)) + 0.1*rng.NormFloat64()
	}
	s := param.NewSet()
	must(k.Declare(s, "k."))
	must(s.AddScalar("noise_variance", 0.2, param.DefaultPositive))
	must(s.Add("zv", mat.NewDense(3, 1, []float64{-0.9, 0.2, 1.8}), param.Identity{}))
	mb := vff.M()
	for _, blk := range []struct {
		name string
		m    int
	}{{"qu_", mb}, {"qv_", 3}} {
		mu, sqrt := randomQ(rng, blk.m)
		must(s.Add(blk.name+"mu", mu, param.Identity{}))
		must(s.Add(blk.name+"sqrt", sqrt, param.Identity{}))
	}
	lik := likelihoods.NewGaussian(1)
	for _, structured := range []bool{true, false} {
		obj := func(tp *ad.Tape, b *param.Bound) (*ad.Node, error) {
			fb := vff.Bind(b, "")
			if !structured {
				fb = features.DenseKuu(fb)
			}
			blks := []Block{
				{Feature: fb, Q: Variational{Mu: b.Get("qu_mu"), Sqrt: b.Get("qu_sqrt"), Whiten: true}},
				{Feature: features.BoundPoints{Z: b.Get("zv")}, Q: Variational{Mu: b.Get("qv_mu"), Sqrt: b.Get("qv_sqrt"), Whiten: true}},
			}
			ve := func(mu, v *ad.Node) *ad.Node { return lik.VarExp(b, "", mu, v, column(y)) }
			out, _, err := BlockELBO(k.Bind(b, "k."), blks, tp.Const(x), ve, 0, Options{})
			return out, err
		}
		checkGradient(t, s, obj, 1e-6)
	}
}
