package sphere

import (
	"fmt"
	"math"
	"testing"
)

func arccos1(t float64) (float64, float64) {
	return (math.Sqrt(1-t*t) + (math.Pi-math.Acos(t))*t) / math.Pi, 0
}
func relu(t float64) (float64, float64)     { return math.Max(t, 0), 0 }
func softplus(t float64) (float64, float64) { return math.Log1p(math.Exp(t)), 0 }
func matern52(t float64) (float64, float64) {
	r := math.Sqrt(math.Max(2-2*t, 0))
	return (1 + math.Sqrt(5)*r + 5*r*r/3) * math.Exp(-math.Sqrt(5)*r), 0
}
func se(t float64) (float64, float64) { return math.Exp(-(1 - t)), 0 }

// closeTo reports whether got rounds to want at 7 significant digits (the
// spec's tables), allowing an absolute 1e-15: the spec's Simpson rule has
// an absolute error of that order, visible in its smallest entries (the
// d = 3 SE value at ℓ = 10 is checked against a closed form below).
// Printed zeros must be exact zeros.
func closeTo(got, want float64) bool {
	if want == 0 {
		return got == 0
	}
	return math.Abs(got-want) <= 5.01e-7*math.Abs(want)+1e-15
}

// vish-spec §1.13: arc-cosine (order 1, J/π) coefficients under the
// surface measure, ℓ = 0…9, with exact zeros at odd ℓ ≥ 3, and the Mercer
// check Σ_{ℓ<60} λ_ℓ N(d,ℓ)/Ω_{d−1} against s(1) = 1.
func TestFunkHeckeArcCosineVISH(t *testing.T) {
	ref := map[int][]float64{
		3: {4.71239, 2.09440, 0.294524, 0, 0.00818123, 0, 0.00115049, 0, 0.000287621, 0},
		5: {9.25275, 2.63189, 0.257021, 0, 0.00401595, 0, 0.000361436, 0, 6.27493e-5, 0},
		7: {11.3044, 2.36238, 0.176631, 0, 0.00176631, 0, 0.000110394, 0, 1.40809e-5, 0},
		9: {9.98824, 1.64925, 0.0998824, 0, 0.000693628, 0, 3.18502e-5, 0, 3.11038e-6, 0},
	}
	mercer := map[int]float64{3: 0.999998, 5: 0.999996, 7: 0.999994, 9: 0.999991}
	for d, want := range ref {
		lam, _, err := FunkHecke(d, 59, arccos1, EvenPlusLinear)
		if err != nil {
			t.Fatal(err)
		}
		for l, w := range want {
			// Six significant digits as printed.
			if w == 0 && lam[l] != 0 || w != 0 && math.Abs(lam[l]-w) > 6e-6*w {
				t.Errorf("d=%d: λ_%d = %.9g, want %g", d, l, lam[l], w)
			}
		}
		s := 0.0
		for l, v := range lam {
			s += v * MercerWeight(d, l)
		}
		if math.Abs(s-mercer[d]) > 1e-6 {
			t.Errorf("d=%d: Σ_{ℓ<60} λ N/Ω = %.7f, want %.6f", d, s, mercer[d])
		}
	}
	// The closed forms at d = 3: 3π/2, 2π/3, 3π/32.
	lam, _, _ := FunkHecke(3, 2, arccos1, EvenPlusLinear)
	for l, w := range []float64{3 * math.Pi / 2, 2 * math.Pi / 3, 3 * math.Pi / 32} {
		if math.Abs(lam[l]-w) > 1e-14*w {
			t.Errorf("d=3: λ_%d = %.17g, closed form %.17g", l, lam[l], w)
		}
	}
}

// spherical-odgp-spec §1.13: coefficients under the probability measure
// (ours divided by Ω_{d−1}) for d = 3, 9 and 2.
func TestFunkHeckeODGP(t *testing.T) {
	shapes := map[string]Shape{"arccos": arccos1, "relu": relu, "softplus": softplus, "matern52": matern52, "se": se}
	parity := map[string]Parity{"arccos": EvenPlusLinear, "relu": EvenPlusLinear, "softplus": EvenPlusLinear}
	type row struct {
		d      int
		shape  string
		levels []int
		want   []float64
	}
	rows := []row{
		{3, "arccos", []int{0, 1, 2, 3, 4, 5, 6, 8, 10}, []float64{0.375, 0.1666667, 0.0234375, 0, 6.510417e-4, 0, 9.155273e-5, 2.288818e-5, 7.788340e-6}},
		{3, "relu", []int{0, 1, 2, 3, 4, 5, 6, 8, 10}, []float64{0.25, 0.1666667, 0.0625, 0, -1.041667e-2, 0, 3.906250e-3, -1.953125e-3, 1.139323e-3}},
		{3, "softplus", []int{0, 1, 2, 3, 4, 5, 6, 8, 10}, []float64{0.7338190, 0.1666667, 0.01610251, 0, -1.211593e-4, 0, 1.613519e-6, -2.561889e-8, 4.461507e-10}},
		{3, "matern52", []int{0, 1, 2, 3, 4, 5, 6, 8, 10}, []float64{0.3889981, 0.1218685, 0.03131360, 7.954268e-3, 2.186841e-3, 6.759200e-4, 2.363448e-4, 4.001652e-5, 9.469214e-6}},
		{3, "se", []int{0, 1, 2, 3, 4, 5, 6, 8, 10}, []float64{0.4323324, 0.1353353, 0.02632651, 3.702740e-3, 4.073295e-4, 3.677410e-5, 2.814401e-6, 1.096004e-8, 2.734407e-11}},
		{9, "arccos", []int{0, 1, 2, 4, 6}, []float64{0.3364563, 1.0 / 18, 3.364563e-3, 2.336502e-5, 1.072884e-6}},
		{9, "relu", []int{0, 1, 2, 4, 6}, []float64{0.1367188, 1.0 / 18, 1.367187e-2, -1.139323e-3, 2.441406e-4}},
		{9, "softplus", []int{0, 1, 2, 4, 6}, []float64{0.7068822, 1.0 / 18, 2.478244e-3, -6.114260e-6, 3.633528e-8}},
		{9, "matern52", []int{0, 1, 2, 3, 4, 5, 6}, []float64{0.3385622, 0.03581345, 4.104493e-3, 5.390317e-4, 8.370379e-5, 1.549131e-5, 3.384865e-6}},
		{2, "arccos", []int{0, 1, 2, 3, 4, 5, 6, 7, 8}, []float64{0.4052847, 0.25, 0.04503164, 0, 1.801265e-3, 0, 3.308447e-4, 0, 1.021126e-4}},
		{2, "relu", []int{0, 1, 2, 3, 4, 5, 6, 7, 8}, []float64{0.3183099, 0.25, 0.1061033, 0, -2.122066e-2, 0, 9.094568e-3, 0, -5.052538e-3}},
		{2, "softplus", []int{0, 1, 2, 3, 4, 5, 6, 7, 8}, []float64{0.7537958, 0.25, 0.03002394, 0, -2.956207e-4, 0, 4.686898e-6, 0, -8.467243e-8}},
		{2, "matern52", []int{0, 1, 2, 3, 4, 5, 6, 7, 8}, []float64{0.4312768, 0.1942669, 0.06217388, 0.01858021, 5.836518e-3, 2.025448e-3, 7.856293e-4, 3.382139e-4, 1.594242e-4}},
	}
	for _, r := range rows {
		t.Run(fmt.Sprintf("d%d-%s", r.d, r.shape), func(t *testing.T) {
			lam, _, err := FunkHecke(r.d, 10, shapes[r.shape], parity[r.shape])
			if err != nil {
				t.Fatal(err)
			}
			om := SurfaceArea(r.d)
			for i, l := range r.levels {
				// The d = 2 table uses P_ℓ = 2T_ℓ: its a_ℓ are λ_ℓ/Ω as well.
				got := lam[l] / om
				if !closeTo(got, r.want[i]) {
					t.Errorf("ℓ=%d: %.9g, want %.7g", l, got, r.want[i])
				}
			}
		})
	}
}

// The derivative with respect to a shape parameter is the quadrature of
// ∂s/∂θ: check it against central differences of λ_ℓ(θ) for a chordal
// Matérn-3/2 lengthscale.
func TestFunkHeckeDerivative(t *testing.T) {
	shape := func(ls float64) Shape {
		return func(t float64) (float64, float64) {
			r := math.Sqrt(math.Max(2-2*t, 0)) / ls
			e := math.Exp(-math.Sqrt(3) * r)
			// dk/dls = dk/dr · dr/dls = (−3 r e)(−r/ls).
			return (1 + math.Sqrt(3)*r) * e, 3 * r * r * e / ls
		}
	}
	for _, d := range []int{3, 9, 21} {
		for _, ls := range []float64{0.3, 1, 2.5} {
			_, dl, err := FunkHecke(d, 12, shape(ls), Parity{})
			if err != nil {
				t.Fatal(err)
			}
			h := 1e-5 * ls
			lp, _, _ := FunkHecke(d, 12, shape(ls+h), Parity{})
			lm, _, _ := FunkHecke(d, 12, shape(ls-h), Parity{})
			for l := range dl {
				fd := (lp[l] - lm[l]) / (2 * h)
				if math.Abs(dl[l]-fd) > 1e-7*math.Max(math.Abs(fd), 1e-6*math.Abs(lp[0]/h)) {
					t.Errorf("d=%d ls=%v: dλ_%d/dls = %.10g, finite difference %.10g", d, ls, l, dl[l], fd)
				}
			}
		}
	}
}

// On S², exp(t−1) has a_ℓ = e⁻¹ i_ℓ(1) (modified spherical Bessel
// function, i_n(x) = xⁿ Σ_k (x²/2)^k / (k! (2n+2k+1)!!)): an independent
// check. The quadrature's error is absolute, about ε·λ_0 (cancellation in
// ∫ s R_ℓ), so levels far below λ_0 are noise: Accurate says which.
func TestFunkHeckeSEClosedForm(t *testing.T) {
	lam, _, err := FunkHecke(3, 30, se, Parity{})
	if err != nil {
		t.Fatal(err)
	}
	for n := 0; n <= 30; n++ {
		sum, term := 0.0, 1.0
		for k := 0; k < 40; k++ {
			df := 1.0
			for j := 2*n + 2*k + 1; j > 1; j -= 2 {
				df *= float64(j)
			}
			if k > 0 {
				term *= 0.5 / float64(k)
			}
			sum += term / df
		}
		want := math.Exp(-1) * sum
		got := lam[n] / SurfaceArea(3)
		if math.Abs(got-want) > 1e-13*want+1e-16*lam[0]/SurfaceArea(3) {
			t.Errorf("ℓ=%d: a_ℓ = %.15g, closed form %.15g (rel. error %.2g)", n, got, want, math.Abs(got-want)/want)
		}
		// Accurate must flag every level whose value is not reliable to 1%.
		if Accurate(lam, n) && math.Abs(got-want) > 0.01*want {
			t.Errorf("ℓ=%d: a_ℓ = %.3g is off by %.2g but Accurate says it is usable", n, got, math.Abs(got-want)/want)
		}
	}
	if !Accurate(lam, 9) || Accurate(lam, 15) {
		t.Errorf("Accurate: want level 9 usable and 15 not (λ_9 = %g, λ_15 = %g)", lam[9], lam[15])
	}
}
