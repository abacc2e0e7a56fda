package inference

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
	"sgplab/gp/param"
	"sgplab/internal/testhelp"
)

// orthogonal returns a random m×m orthogonal matrix (QR of a Gaussian one).
func orthogonal(seed uint64, m int) *mat.Dense {
	rng := rand.New(rand.NewPCG(seed, seed))
	var qr mat.QR
	qr.Factorize(testhelp.RandMat(rng, m, m, 1))
	var q mat.Dense
	qr.QTo(&q)
	return &q
}

// TestCollapsedFromStatsWhitenMatchesDense gives the same Kuu densely and
// through a caller's whitener (its Cholesky factor on the tape, or a
// non-triangular factor L·Q with Q orthogonal, which the bound must not
// notice since it depends on L only through LLᵀ): bound, gradient and
// posterior agree.
func TestCollapsedFromStatsWhitenMatchesDense(t *testing.T) {
	const m = 12
	p, omega := newCosProblem(41, 40, 2, m, 0.2)
	rng := rand.New(rand.NewPCG(5, 5))
	tmix := testhelp.RandMat(rng, m, m, 0.3)
	for i := 0; i < m; i++ {
		tmix.Set(i, i, tmix.At(i, i)+1)
	}
	fixed := fixedFeature{cos: cosFeature{omega: omega}, tmix: tmix}
	stats, err := ComputeStats(p.x, p.y, m, func(_, x *mat.Dense) (*mat.Dense, error) { return fixed.phi(x), nil })
	if err != nil {
		t.Fatal(err)
	}
	kuuOf := func(b *param.Bound) *ad.Node {
		return fixedFeature{cos: cosFeature{omega: omega, lambda: b.Get("lambda")}, tmix: tmix}.Kuu(nil)
	}
	q := orthogonal(9, m)
	for _, tc := range []struct {
		name string
		kuu  func(tape *ad.Tape, b *param.Bound) (Kuu, error)
	}{
		{"cholesky", func(_ *ad.Tape, b *param.Bound) (Kuu, error) {
			l, err := ad.Cholesky(kuuOf(b))
			return Kuu{Whiten: func(x *ad.Node) *ad.Node { return ad.SolveLower(l, x) }}, err
		}},
		{"non-triangular factor", func(tape *ad.Tape, b *param.Bound) (Kuu, error) {
			l, err := ad.Cholesky(kuuOf(b))
			// (LQ)⁻¹x = Qᵀ L⁻¹ x.
			qt := tape.Const(mat.DenseCopyOf(q.T()))
			return Kuu{Whiten: func(x *ad.Node) *ad.Node { return ad.MatMul(qt, ad.SolveLower(l, x)) }}, err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bound := func(form string) objective {
				return func(tape *ad.Tape, b *param.Bound) (*ad.Node, error) {
					kuu := Kuu{Dense: kuuOf(b)}
					if form == "whiten" {
						var err error
						if kuu, err = tc.kuu(tape, b); err != nil {
							return nil, err
						}
					}
					kd := ad.Sum(p.kernel(b).Diag(tape.Const(p.x)))
					out, _, err := CollapsedFromStats(stats, kuu, kd, b.Get("noise_variance"), Options{})
					return out, err
				}
			}
			grad := func(f objective) (float64, []float64) {
				tape := ad.NewTape()
				b := p.set.Bind(tape)
				out, err := f(tape, b)
				if err != nil {
					t.Fatal(err)
				}
				tape.Backward(out)
				return out.Scalar(), b.Gradient()
			}
			vd, gd := grad(bound("dense"))
			vw, gw := grad(bound("whiten"))
			if e := testhelp.RelErr(vw, vd); e > 1e-10 {
				t.Errorf("bound with whitener %.14g, dense %.14g (rel. err %.2g)", vw, vd, e)
			}
			for i := range gd {
				if math.Abs(gw[i]-gd[i]) > 1e-10*math.Max(1, math.Abs(gd[i])) {
					t.Errorf("gradient[%d]: whitener %.14g, dense %.14g", i, gw[i], gd[i])
				}
			}
			checkGradient(t, p.set, bound("whiten"), 1e-6)

			tape := ad.NewTape()
			b := p.set.Bind(tape)
			kuu, err := tc.kuu(tape, b)
			if err != nil {
				t.Fatal(err)
			}
			pw, err := StatsPosterior(stats, kuu, b.Get("noise_variance"), Options{})
			if err != nil {
				t.Fatal(err)
			}
			pd, err := StatsPosterior(stats, Kuu{Dense: kuuOf(b)}, b.Get("noise_variance"), Options{})
			if err != nil {
				t.Fatal(err)
			}
			// The posterior depends on L only through LLᵀ: compare
			// AᵀA = Kuu⁻¹, BᵀB and the mean weights α.
			for _, c := range []struct {
				name string
				of   func(*Posterior) mat.Matrix
			}{
				{"AᵀA", func(p *Posterior) mat.Matrix { var o mat.Dense; o.Mul(p.A.T(), p.A); return &o }},
				{"BᵀB", func(p *Posterior) mat.Matrix { var o mat.Dense; o.Mul(p.B.T(), p.B); return &o }},
				{"α", func(p *Posterior) mat.Matrix { return p.Alpha }},
			} {
				if !mat.EqualApprox(c.of(pw), c.of(pd), 1e-9) {
					t.Errorf("posterior %s differs between whitener and dense Kuu", c.name)
				}
			}
		})
	}
}

func TestStatsWhitenBadInput(t *testing.T) {
	const m = 3
	tape := ad.NewTape()
	stats := &Stats{P: mat.NewSymDense(m, []float64{2, 0, 0, 0, 2, 0, 0, 0, 2}), R: []float64{1, 1, 1}, YY: 3, N: 5}
	ident := func(b *ad.Node) *ad.Node { return b }
	for _, tc := range []struct {
		name string
		kuu  Kuu
		want string
	}{
		{"whiten and dense", Kuu{Whiten: ident, Dense: tape.Const(mat.NewDense(m, m, []float64{1, 0, 0, 0, 1, 0, 0, 0, 1}))}, "exactly one"},
		{"nothing", Kuu{}, "exactly one"},
		{"wrong size", Kuu{Whiten: func(b *ad.Node) *ad.Node { return ad.Slice(b, 0, 2, 0, 2) }}, "maps 3×3 to 2×2"},
		{"nil result", Kuu{Whiten: func(*ad.Node) *ad.Node { return nil }}, "returned nil"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := CollapsedFromStats(stats, tc.kuu, tape.Scalar(5), tape.Scalar(0.5), Options{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want it to mention %q", err, tc.want)
			}
		})
	}
	// The identity whitener is Kuu = I, the same as Diag = 1. Σ k(x_n, x_n)
	// = 8 ≥ tr(Qff) = tr P = 6, as for any kernel whose Kuu = I and ΦΦᵀ = P.
	ones := tape.Const(mat.NewDense(m, 1, []float64{1, 1, 1}))
	a, _, err := CollapsedFromStats(stats, Kuu{Whiten: ident}, tape.Scalar(8), tape.Scalar(0.5), Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := CollapsedFromStats(stats, Kuu{Precision: ones}, tape.Scalar(8), tape.Scalar(0.5), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(a.Scalar()-b.Scalar()) > 1e-12 {
		t.Errorf("identity whitener %v, unit precision %v", a.Scalar(), b.Scalar())
	}
}
