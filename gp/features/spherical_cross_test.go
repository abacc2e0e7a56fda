package features_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
	"sgplab/gp/features"
	"sgplab/gp/kernels"
	"sgplab/gp/param"
)

// TestActivationCrossCovariances: units against units with the same
// directions reproduce Kuu (eq. 53 is eq. 45 off the diagonal), and
// against spherical harmonics of every level below the truncation they
// satisfy the projection H_m(x) = Σ_j ⟨H_m, Y_j⟩_H λ_ℓ(j) Y_j(x) (eq. 42/49
// against the units' own Kuf, eq. 6), since the truncated units lie in the
// span of those harmonics.
func TestActivationCrossCovariances(t *testing.T) {
	for _, c := range []struct{ kernel, act string }{
		{"arccos1", "softplus"}, {"arccos1", "relu"}, {"sphere-matern52", "softplus"}, {"chordal-matern52", "relu"},
	} {
		t.Run(c.kernel+"/"+c.act, func(t *testing.T) {
			const L = 5
			rng := rand.New(rand.NewPCG(3, 4))
			k, err := kernels.New(c.kernel, 2, kernels.Options{Variance: 1.3, Lengthscales: []float64{0.8}})
			if err != nil {
				t.Fatal(err)
			}
			s := param.NewSet()
			_ = k.Declare(s, "k.")
			act, err := features.NewActivation(c.act, randDense(rng, 4, 3, -1, 1), L)
			if err != nil {
				t.Fatal(err)
			}
			_ = act.Declare(s, "a.")
			tape := ad.NewTape()
			b := s.Bind(tape)
			kb := k.Bind(b, "k.").(kernels.ZonalBound)
			harm, err := features.NewSphericalHarmonicsFor(kb, L-1)
			if err != nil {
				t.Fatal(err)
			}
			ab, hb := act.Bind(b, "a."), harm.Bind(b, "")
			self, err := features.Kuv(kb, ab, ab)
			if err != nil {
				t.Fatal(err)
			}
			if !mat.EqualApprox(self.Value(), ab.Kuu(kb).Value(), 1e-12) {
				t.Errorf("Kuv(units, same units) ≠ Kuu:\n%v\n%v", mat.Formatted(self.Value()), mat.Formatted(ab.Kuu(kb).Value()))
			}
			kah, err := features.Kuv(kb, ab, hb)
			if err != nil {
				t.Fatal(err)
			}
			kha, err := features.Kuv(kb, hb, ab)
			if err != nil {
				t.Fatal(err)
			}
			if !mat.Equal(kha.Value(), kah.Value().T()) {
				t.Error("Kuv(harmonics, units) is not the transpose of Kuv(units, harmonics)")
			}
			x := tape.Const(randDense(rng, 6, 2, -1, 1))
			want := ab.Kuf(kb, x).Value()
			prec, err := features.StructureOf(kb, hb, 0, features.FormPrecision)
			if err != nil {
				t.Fatal(err)
			}
			var proj mat.Dense
			proj.Mul(ad.MulRowVec(kah, ad.T(prec.Precision)).Value(), hb.Kuf(kb, x).Value())
			scale := mat.Norm(want, math.Inf(1))
			var diff mat.Dense
			diff.Sub(&proj, want)
			if e := mat.Norm(&diff, math.Inf(1)) / scale; e > 1e-10 {
				t.Errorf("projection onto the harmonics misses the units by %.3g (relative)\n%v\n%v", e, mat.Formatted(&proj), mat.Formatted(want))
			}
		})
	}
}
