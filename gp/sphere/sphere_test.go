package sphere

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/integrate/quad"
	"gonum.org/v1/gonum/mat"
)

// Reference counts from vish-spec §1.13: N(d, ℓ), ℓ = 0…7, and the
// cumulative totals.
func TestLevelCounts(t *testing.T) {
	for _, c := range []struct {
		d      int
		n, cum []int
	}{
		{3, []int{1, 3, 5, 7, 9, 11, 13, 15}, []int{1, 4, 9, 16, 25, 36, 49, 64}},
		{4, []int{1, 4, 9, 16, 25, 36, 49, 64}, []int{1, 5, 14, 30, 55, 91, 140, 204}},
		{5, []int{1, 5, 14, 30, 55, 91, 140, 204}, []int{1, 6, 20, 50, 105, 196, 336, 540}},
		{6, []int{1, 6, 20, 50, 105, 196, 336, 540}, []int{1, 7, 27, 77, 182, 378, 714, 1254}},
		{7, []int{1, 7, 27, 77, 182, 378, 714, 1254}, []int{1, 8, 35, 112, 294, 672, 1386, 2640}},
		{8, []int{1, 8, 35, 112, 294, 672, 1386, 2640}, []int{1, 9, 44, 156, 450, 1122, 2508, 5148}},
		{9, []int{1, 9, 44, 156, 450, 1122, 2508, 5148}, []int{1, 10, 54, 210, 660, 1782, 4290, 9438}},
		{2, []int{1, 2, 2, 2, 2, 2, 2, 2}, []int{1, 3, 5, 7, 9, 11, 13, 15}},
	} {
		for l := range c.n {
			if got := LevelCount(c.d, l); got != c.n[l] {
				t.Errorf("N(%d,%d) = %d, want %d", c.d, l, got, c.n[l])
			}
			if got := CumulativeCount(c.d, l); got != c.cum[l] {
				t.Errorf("Σ N(%d, 0…%d) = %d, want %d", c.d, l, got, c.cum[l])
			}
		}
	}
	// The closed form for the cumulative count, and §1.6 (B)'s counts.
	for d := 3; d <= 21; d++ {
		for l := 0; l <= 8; l++ {
			if got, want := CumulativeCount(d, l), binom(l+d-1, d-1)+binom(l+d-2, d-1); got != want {
				t.Errorf("Σ N(%d, 0…%d) = %d, closed form %d", d, l, got, want)
			}
		}
	}
	for _, c := range [][3]int{{3, 2, 5}, {5, 3, 30}, {7, 5, 378}, {9, 3, 156}, {9, 4, 450}, {12, 3, 352}, {15, 3, 665}, {20, 2, 209}, {3, 27, 55}} {
		if got := LevelCount(c[0], c[1]); got != c[2] {
			t.Errorf("N(%d,%d) = %d, want %d", c[0], c[1], got, c[2])
		}
	}
	if LevelCount(1, 2) != 0 || LevelCount(3, -1) != 0 {
		t.Error("invalid arguments must give 0")
	}
	if LevelCount(400, 400) != math.MaxInt {
		t.Error("overflow must saturate")
	}
}

func TestSurfaceArea(t *testing.T) {
	for _, c := range []struct {
		d    int
		want float64
	}{
		{1, 2}, {2, 2 * math.Pi}, {3, 4 * math.Pi}, {4, 2 * math.Pi * math.Pi},
		// vish-spec §1.13: Ω_{d−1} for d = 5, 7, 9.
		{5, 26.318945069}, {7, 33.073361792}, {9, 29.686580124},
	} {
		if got := SurfaceArea(c.d); math.Abs(got-c.want) > 1e-9*c.want {
			t.Errorf("Ω_%d = %.12g, want %.12g", c.d-1, got, c.want)
		}
	}
}

// explicitGegenbauer is the monomial sum, accurate at low degree.
func explicitGegenbauer(n int, a, t float64) float64 {
	s := 0.0
	for j := 0; j <= n/2; j++ {
		lg, _ := math.Lgamma(float64(n-j) + a)
		la, _ := math.Lgamma(a)
		lj, _ := math.Lgamma(float64(j) + 1)
		lk, _ := math.Lgamma(float64(n-2*j) + 1)
		s += math.Pow(-1, float64(j)) * math.Exp(lg-la-lj-lk) * math.Pow(2*t, float64(n-2*j))
	}
	return s
}

func TestGegenbauer(t *testing.T) {
	// vish-spec §1.13: C_n^{(3.5)}(1), n = 0…5.
	for n, want := range []float64{1, 7, 28, 84, 210, 462} {
		if got := GegenbauerAtOne(n, 3.5); math.Abs(got-want) > 1e-12*want {
			t.Errorf("C_%d^(3.5)(1) = %v, want %v", n, got, want)
		}
		if got := Gegenbauer(n, 3.5, 1); math.Abs(got-want) > 1e-12*want {
			t.Errorf("recurrence C_%d^(3.5)(1) = %v, want %v", n, got, want)
		}
	}
	for _, a := range []float64{0.5, 1, 3.5, 9.5} {
		for n := 0; n <= 8; n++ {
			for _, x := range []float64{-1, -0.7, -0.1, 0, 0.3, 0.9, 1} {
				got, want := Gegenbauer(n, a, x), explicitGegenbauer(n, a, x)
				if math.Abs(got-want) > 1e-11*math.Max(1, math.Abs(want)) {
					t.Errorf("C_%d^(%v)(%v) = %v, explicit %v", n, a, x, got, want)
				}
				// Derivative against a central difference.
				h := 1e-6
				fd := (Gegenbauer(n, a, x+h) - Gegenbauer(n, a, x-h)) / (2 * h)
				if d := GegenbauerDeriv(n, a, x); math.Abs(d-fd) > 1e-6*math.Max(1, math.Abs(fd)) {
					t.Errorf("C'_%d^(%v)(%v) = %v, finite difference %v", n, a, x, d, fd)
				}
			}
		}
	}
	// Normalised polynomials: C_n/C_n(1), Chebyshev at α = 0, derivative.
	r, dr := make([]float64, 41), make([]float64, 41)
	for _, a := range []float64{0, 0.5, 3.5, 9.5} {
		for _, x := range []float64{-0.95, -0.3, 0.2, 0.8} {
			NormalizedGegenbauerDeriv(r, dr, a, x)
			h := 1e-6
			rp, rm := make([]float64, 41), make([]float64, 41)
			NormalizedGegenbauer(rp, a, x+h)
			NormalizedGegenbauer(rm, a, x-h)
			for n := range r {
				var want float64
				if a == 0 {
					want = math.Cos(float64(n) * math.Acos(x))
				} else {
					want = Gegenbauer(n, a, x) / GegenbauerAtOne(n, a)
				}
				if math.Abs(r[n]-want) > 1e-12 {
					t.Errorf("R_%d^(%v)(%v) = %v, want %v", n, a, x, r[n], want)
				}
				if fd := (rp[n] - rm[n]) / (2 * h); math.Abs(dr[n]-fd) > 2e-6*math.Max(1, math.Abs(fd)) {
					t.Errorf("R'_%d^(%v)(%v) = %v, finite difference %v", n, a, x, dr[n], fd)
				}
			}
		}
	}
}

// randomUnit returns n points uniform on S^{d−1}.
func randomUnit(rng *rand.Rand, n, d int) *mat.Dense {
	x := mat.NewDense(n, d, nil)
	for i := 0; i < n; i++ {
		row := x.RawRowView(i)
		s := 0.0
		for k := range row {
			row[k] = rng.NormFloat64()
			s += row[k] * row[k]
		}
		s = math.Sqrt(s)
		for k := range row {
			row[k] /= s
		}
	}
	return x
}

// The addition theorem Σ_k φ_{ℓk}(x)φ_{ℓk}(x') = N(d,ℓ)/Ω R_ℓ(xᵀx'): with
// the right count it implies that the level's functions are orthonormal.
func TestAdditionTheorem(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range []struct{ d, maxL int }{
		{2, 12}, {3, 45}, {4, 12}, {5, 8}, {7, 6}, {9, 5}, {10, 4}, {12, 3}, {15, 3}, {21, 4},
	} {
		b, err := NewBasis(c.d, c.maxL)
		if err != nil {
			t.Fatal(err)
		}
		if want := CumulativeCount(c.d, c.maxL); b.M() != want {
			t.Fatalf("d=%d L=%d: M = %d, want %d", c.d, c.maxL, b.M(), want)
		}
		x := randomUnit(rng, 6, c.d)
		phi, err := b.Eval(x)
		if err != nil {
			t.Fatal(err)
		}
		lev := b.LevelOf()
		r := make([]float64, c.maxL+1)
		worst := 0.0
		for i := 0; i < 6; i++ {
			for j := i; j < 6; j++ {
				sum := make([]float64, c.maxL+1)
				for m, l := range lev {
					sum[l] += phi.At(m, i) * phi.At(m, j)
				}
				tt := mat.Dot(x.RowView(i), x.RowView(j))
				NormalizedGegenbauer(r, Alpha(c.d), tt)
				for l := range sum {
					want := MercerWeight(c.d, l) * r[l]
					scale := MercerWeight(c.d, l)
					worst = math.Max(worst, math.Abs(sum[l]-want)/scale)
				}
			}
		}
		if worst > 1e-11 {
			t.Errorf("d=%d, levels ≤ %d: addition theorem relative error %.3g", c.d, c.maxL, worst)
		}
	}
}

// Orthonormality on S² by a product rule exact for the degrees involved:
// Gauss–Legendre in t = cos θ and the trapezoid rule in the azimuth.
func TestOrthonormalS2(t *testing.T) {
	const maxL = 30
	nt, nphi := 32, 64
	tx, tw := make([]float64, nt), make([]float64, nt)
	quad.Legendre{}.FixedLocations(tx, tw, -1, 1)
	x := mat.NewDense(nt*nphi, 3, nil)
	w := make([]float64, nt*nphi)
	for i := range tx {
		s := math.Sqrt(1 - tx[i]*tx[i])
		for j := 0; j < nphi; j++ {
			ph := 2 * math.Pi * float64(j) / float64(nphi)
			k := i*nphi + j
			x.SetRow(k, []float64{s * math.Cos(ph), s * math.Sin(ph), tx[i]})
			w[k] = tw[i] * 2 * math.Pi / float64(nphi)
		}
	}
	checkGram(t, 3, maxL, x, w, 1e-12)
}

// Orthonormality on S³: x = (√(1−t²) ξ, t), ξ on S², dσ₃ = √(1−t²)² … in
// θ: sin²θ dθ dσ₂(ξ), Gauss–Legendre in θ.
func TestOrthonormalS3(t *testing.T) {
	const maxL = 8
	nth, nt, nphi := 40, 12, 24
	thx, thw := make([]float64, nth), make([]float64, nth)
	quad.Legendre{}.FixedLocations(thx, thw, 0, math.Pi)
	tx, tw := make([]float64, nt), make([]float64, nt)
	quad.Legendre{}.FixedLocations(tx, tw, -1, 1)
	var rows []float64
	var w []float64
	for a := range thx {
		ct, st := math.Cos(thx[a]), math.Sin(thx[a])
		for i := range tx {
			s := math.Sqrt(1 - tx[i]*tx[i])
			for j := 0; j < nphi; j++ {
				ph := 2 * math.Pi * float64(j) / float64(nphi)
				rows = append(rows, st*s*math.Cos(ph), st*s*math.Sin(ph), st*tx[i], ct)
				w = append(w, thw[a]*st*st*tw[i]*2*math.Pi/float64(nphi))
			}
		}
	}
	checkGram(t, 4, maxL, mat.NewDense(len(w), 4, rows), w, 1e-12)
}

// Monte Carlo orthonormality in high dimension: E[φφᵀ]·Ω = I under the
// uniform distribution. The tolerance is five standard errors of the
// entries (estimated from the sample itself), so a wrong normalisation
// (off by a factor) or correlated harmonics fail.
func TestOrthonormalMonteCarlo(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for _, c := range []struct{ d, maxL, n int }{{10, 3, 20000}, {21, 2, 20000}} {
		x := randomUnit(rng, c.n, c.d)
		b, err := NewBasis(c.d, c.maxL)
		if err != nil {
			t.Fatal(err)
		}
		phi, _ := b.Eval(x)
		om := SurfaceArea(c.d)
		m := b.M()
		worst := 0.0
		for i := 0; i < m; i++ {
			ri := phi.RawRowView(i)
			for j := i; j < m; j++ {
				rj := phi.RawRowView(j)
				var s, s2 float64
				for k := range ri {
					v := ri[k] * rj[k] * om
					s += v
					s2 += v * v
				}
				mean := s / float64(c.n)
				se := math.Sqrt((s2/float64(c.n) - mean*mean) / float64(c.n))
				want := 0.0
				if i == j {
					want = 1
				}
				worst = math.Max(worst, math.Abs(mean-want)/se)
			}
		}
		// The maximum of ~M²/2 roughly normal z-scores.
		if worst > 6 {
			t.Errorf("d=%d: Monte Carlo Gram deviates from I by %.2f standard errors", c.d, worst)
		}
	}
}

func checkGram(t *testing.T, d, maxL int, x *mat.Dense, w []float64, tol float64) {
	t.Helper()
	b, err := NewBasis(d, maxL)
	if err != nil {
		t.Fatal(err)
	}
	phi, _ := b.Eval(x)
	m := b.M()
	pw := mat.DenseCopyOf(phi)
	for i := 0; i < m; i++ {
		row := pw.RawRowView(i)
		for k := range row {
			row[k] *= w[k]
		}
	}
	g := mat.NewDense(m, m, nil)
	g.Mul(pw, phi.T())
	worst := 0.0
	for i := 0; i < m; i++ {
		for j := 0; j < m; j++ {
			want := 0.0
			if i == j {
				want = 1
			}
			worst = math.Max(worst, math.Abs(g.At(i, j)-want))
		}
	}
	if worst > tol {
		t.Errorf("S^%d, levels ≤ %d (M = %d): max |ΦWΦᵀ − I| = %.3g", d-1, maxL, m, worst)
	}
}

// Selected levels give exactly the rows of the full basis.
func TestBasisLevelsSubset(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	x := randomUnit(rng, 300, 5)
	full, _ := NewBasis(5, 6)
	sub, err := NewBasisLevels(5, []int{0, 1, 2, 4, 6})
	if err != nil {
		t.Fatal(err)
	}
	pf, _ := full.Eval(x)
	ps, _ := sub.Eval(x)
	row := 0
	for m, l := range full.LevelOf() {
		if l == 3 || l == 5 {
			continue
		}
		for i := 0; i < 300; i++ {
			if pf.At(m, i) != ps.At(row, i) {
				t.Fatalf("row %d (level %d) differs from the full basis", row, l)
			}
		}
		row++
	}
	if row != sub.M() {
		t.Fatalf("subset has %d rows, want %d", sub.M(), row)
	}
}

func TestBasisBadInput(t *testing.T) {
	if _, err := NewBasis(1, 3); err == nil {
		t.Error("d = 1 accepted")
	}
	if _, err := NewBasis(3, -1); err == nil {
		t.Error("negative level accepted")
	}
	if _, err := NewBasisLevels(3, []int{0, 2, 2}); err == nil {
		t.Error("repeated level accepted")
	}
	if _, err := NewBasis(21, 40); err == nil {
		t.Error("a basis of ~10^13 harmonics accepted")
	}
	b, _ := NewBasis(3, 2)
	if _, err := b.Eval(mat.NewDense(2, 4, nil)); err == nil {
		t.Error("points of the wrong dimension accepted")
	}
	if _, _, err := FunkHecke(1, 3, func(float64) (float64, float64) { return 1, 0 }, Parity{}); err == nil {
		t.Error("Funk–Hecke on d = 1 accepted")
	}
	if _, _, err := FunkHecke(3, MaxQuadratureLevel+1, func(float64) (float64, float64) { return 1, 0 }, Parity{}); err == nil {
		t.Error("too high a level accepted")
	}
	if _, _, err := FunkHecke(3, 3, func(float64) (float64, float64) { return math.NaN(), 0 }, Parity{}); err == nil {
		t.Error("NaN shape accepted")
	}
}

// Results do not depend on the number of cores (blocks write disjoint
// columns) and a single point evaluates like a block of many.
func TestEvalDeterministic(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	x := randomUnit(rng, 1000, 9)
	b, _ := NewBasis(9, 4)
	all, _ := b.Eval(x)
	for _, i := range []int{0, 127, 128, 999} {
		one, _ := b.Eval(mat.DenseCopyOf(x.Slice(i, i+1, 0, 9)))
		for m := 0; m < b.M(); m++ {
			if one.At(m, 0) != all.At(m, i) {
				t.Fatalf("point %d, harmonic %d: %v alone, %v in a block", i, m, one.At(m, 0), all.At(m, i))
			}
		}
	}
}

// Gradient against central differences of Eval, in several dimensions,
// at points off the sphere too (the harmonics as polynomials on R^d).
func TestBasisGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	for _, c := range []struct{ d, maxL int }{{2, 5}, {3, 6}, {5, 4}, {9, 3}, {21, 2}} {
		b, _ := NewBasis(c.d, c.maxL)
		n := 3
		x := randomUnit(rng, n, c.d)
		x.Scale(1.1, x)
		g := mat.NewDense(b.M(), n, nil)
		for i := range g.RawMatrix().Data {
			g.RawMatrix().Data[i] = rng.NormFloat64()
		}
		got, err := b.Gradient(x, g)
		if err != nil {
			t.Fatal(err)
		}
		f := func(xv *mat.Dense) float64 {
			phi, _ := b.Eval(xv)
			s := 0.0
			for i, v := range phi.RawMatrix().Data {
				s += v * g.RawMatrix().Data[i]
			}
			return s
		}
		for i := 0; i < n; i++ {
			for j := 0; j < c.d; j++ {
				h := 1e-6
				xp, xm := mat.DenseCopyOf(x), mat.DenseCopyOf(x)
				xp.Set(i, j, x.At(i, j)+h)
				xm.Set(i, j, x.At(i, j)-h)
				fd := (f(xp) - f(xm)) / (2 * h)
				if math.Abs(got.At(i, j)-fd) > 1e-6*math.Max(1, math.Abs(fd)) {
					t.Errorf("d=%d L=%d: ∂/∂x[%d,%d] = %.10g, finite difference %.10g", c.d, c.maxL, i, j, got.At(i, j), fd)
				}
			}
		}
	}
}

// The fused column scale equals scaling Eval's output.
func TestEvalScaled(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 8))
	for _, d := range []int{2, 3, 9} {
		b, _ := NewBasis(d, 4)
		x := randomUnit(rng, 300, d)
		s := make([]float64, 300)
		for i := range s {
			s[i] = 0.5 + rng.Float64()
		}
		plain, _ := b.Eval(x)
		got := mat.NewDense(b.M(), 300, nil)
		b.EvalScaledInto(got, x, s)
		for m := 0; m < b.M(); m++ {
			for i := 0; i < 300; i++ {
				if w := plain.At(m, i) * s[i]; math.Abs(got.At(m, i)-w) > 1e-15*math.Max(1, math.Abs(w)) {
					t.Fatalf("d=%d: [%d,%d] = %v, want %v", d, m, i, got.At(m, i), w)
				}
			}
		}
	}
}

// EvalThenScaleInto is bitwise Eval's output with every column scaled
// afterwards (what a prediction's Kuf = Φ·diag(ρ^p) computes in two
// steps), at block edges and ragged ends too.
func TestEvalThenScaleBitwise(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 9))
	for _, c := range []struct{ d, maxL, n int }{{2, 4, 130}, {3, 5, 257}, {9, 3, 301}} {
		b, _ := NewBasis(c.d, c.maxL)
		x := randomUnit(rng, c.n, c.d)
		x.Scale(1.3, x)
		s := make([]float64, c.n)
		for i := range s {
			s[i] = 0.5 + 3*rng.Float64()
		}
		plain, _ := b.Eval(x)
		got := mat.NewDense(b.M(), c.n, nil)
		b.EvalThenScaleInto(got, x, s)
		for m := 0; m < b.M(); m++ {
			for i := 0; i < c.n; i++ {
				if w := plain.At(m, i) * s[i]; math.Float64bits(got.At(m, i)) != math.Float64bits(w) {
					t.Fatalf("d=%d: [%d,%d] = %v, want Φ·s = %v", c.d, m, i, got.At(m, i), w)
				}
			}
		}
	}
}
