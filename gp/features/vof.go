package features

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/integrate/quad"
	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
	"sgplab/gp/kernels"
	"sgplab/gp/param"
)

// Variational orthogonal features (VOF; Burt, Rasmussen & van der Wilk 2020)
// are inter-domain features u_m = ∫ g_m(x) f(x) dx with g_m = F⁻¹[ψ_m/√s]
// for orthonormal functions ψ_m of frequency ω and the spectral density s of
// a stationary 1-D kernel, in the unitary convention
//
//	k(τ) = (2π)^{−1/2} ∫ s(ω) e^{−iωτ} dω,   s = (2π)^{−1/2} S(ω/2π)
//
// (S the cycles-per-unit density of package kernels). With the normalisation
// of the paper's eq. (17), Kuu = I exactly, for any kernel, and
//
//	Kuf[m](x) = (2π)^{−1/4} ∫ ψ_m(ω) √s(ω) cos(ωx) dω   (ψ_m even)
//	Kuf[m](x) = (2π)^{−1/4} ∫ ψ_m(ω) √s(ω) sin(ωx) dω   (ψ_m odd).
//
// Both VOF features order their inducing variables with the even ones first
// (NumEven of them), then the odd ones, so the Monte-Carlo estimator in
// package inference can treat the cos and sin parts as two contiguous blocks.

// SpectralFeature is a bound feature with Kuu = I whose Kuf is an integral
// over frequency that can be estimated from frequency samples: for points
// c_t in [−1, 1] with weights ω_t,
//
//	K̂uf = [ Ψ_Eᵀ Φcos ; Ψ_Oᵀ Φsin ],
//
// where Ψ (T×M) holds the basis at the samples (Ψ_E its first NumEven
// columns, Ψ_O the rest) and Φcos, Φsin (T×N) the weighted spectral factors.
// K̂uf is exact for a quadrature rule and unbiased when the c_t are uniform on
// [−1, 1] with ω_t = 2/T.
type SpectralFeature interface {
	Bound
	DiagonalKuu
	// NumEven is the number of even (cosine-part) features; they come first.
	NumEven() int
	// SpectralSample returns Ψ (T×M) and Φcos, Φsin (T×N) for the sample
	// points c (in [−1, 1]) with weights w at the rows of x (N×1).
	SpectralSample(k kernels.Bound, x *ad.Node, c, w []float64) (psi, phiCos, phiSin *ad.Node)
}

// spectralKernels are the kernels whose square-root spectral density VOF
// evaluates on the tape.
var spectralKernels = []string{"se", "matern12", "matern32", "matern52"}

func checkVOFKernel(feature string, k kernels.Kernel, allowed []string) (string, error) {
	if k == nil {
		return "", fmt.Errorf("features: %s: kernel is nil", feature)
	}
	if d := kernels.Dim(k); d != 1 {
		return "", fmt.Errorf("features: %s is one-dimensional; kernel %s has input dimension %d", feature, k.Name(), d)
	}
	// The family is what the kernel declares (a stationary kernel of the
	// Matérn family, or SE when it has no Matérn order), not its name.
	if mk, ok := k.(kernels.Matern); ok {
		family := "se"
		if nu, isMatern := mk.MaternOrder(); isMatern {
			family = map[float64]string{0.5: "matern12", 1.5: "matern32", 2.5: "matern52"}[nu]
		}
		for _, a := range allowed {
			if family == a {
				return a, nil
			}
		}
	}
	return "", fmt.Errorf("features: %s does not support kernel %q; supported kernels: %v", feature, k.Name(), allowed)
}

// spectralParams returns the variance and lengthscale (both 1×1) of a bound
// 1-D stationary kernel.
func spectralParams(feature string, k kernels.Bound) (v, l *ad.Node) {
	sb, ok := k.(kernels.SpectralBound)
	if !ok {
		panic(fmt.Sprintf("features: %s needs a stationary kernel with a spectral density, got %T", feature, k))
	}
	ls := sb.Lengthscales()
	if r, c := ls.Dims(); r != 1 || c != 1 {
		panic(fmt.Sprintf("features: %s is one-dimensional; kernel lengthscales are %d×%d", feature, r, c))
	}
	return sb.Variance(), ls
}

// sqrtDensity returns √s(w) (unitary angular convention, D = 1) at the
// entries of w (T×1) for the named kernel family with variance v and
// lengthscale l (1×1 nodes). Gradients flow to v, l and w.
//
//	SE:       s = v l exp(−l²ω²/2)
//	Matérn-ν: s = v C_ν λ^{2ν} (λ² + ω²)^{−(ν+½)},  λ² = 2ν/l²,  C_ν = √2 Γ(ν+½)/Γ(ν)
func sqrtDensity(family string, v, l, w *ad.Node) *ad.Node {
	if family == "se" {
		// √(v l) exp(−l²ω²/4)
		e := ad.Exp(ad.MulScalar(ad.Square(w), ad.Scale(-0.25, ad.Square(l))))
		return ad.MulScalar(e, ad.Sqrt(ad.Mul(v, l)))
	}
	var nu float64
	switch family {
	case "matern12":
		nu = 0.5
	case "matern32":
		nu = 1.5
	case "matern52":
		nu = 2.5
	default:
		panic("features: no spectral density for kernel " + family)
	}
	lg1, _ := math.Lgamma(nu + 0.5)
	lg2, _ := math.Lgamma(nu)
	c := math.Sqrt2 * math.Exp(lg1-lg2)
	t := w.Tape()
	lam2 := ad.Div(t.Scalar(2*nu), ad.Square(l))
	pow := ad.Exp(ad.Scale(-(nu+0.5)/2, ad.Log(ad.AddScalar(ad.Square(w), lam2))))
	amp := ad.Mul(ad.Sqrt(ad.Scale(c, v)), ad.Pow(lam2, nu/2))
	return ad.MulScalar(pow, amp)
}

// SqrtSpectralDensity returns √s(ω) of a 1-D SE or Matérn kernel with
// variance v and lengthscale l in VOF's unitary convention, without
// gradients. It is exported for tests and figures.
func SqrtSpectralDensity(family string, v, l float64, omega []float64) ([]float64, error) {
	if !contains(spectralKernels, family) {
		return nil, fmt.Errorf("features: no spectral density for kernel %q; supported: %v", family, spectralKernels)
	}
	t := ad.NewTape()
	w := t.Const(mat.NewDense(len(omega), 1, append([]float64(nil), omega...)))
	out := sqrtDensity(family, t.Scalar(v), t.Scalar(l), w)
	return append([]float64(nil), out.Value().RawMatrix().Data...), nil
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

// spectralFactors returns Φcos, Φsin (T×N) with entries
//
//	ω_t Ω (2π)^{−1/4} √s(Ω c_t) · cos or sin(Ω c_t x_n) · scale
//
// for the half-width Ω of the frequency interval (1×1 node) and a 1×1 scale.
func spectralFactors(family string, v, l, omega, scale, x *ad.Node, c, w []float64) (phiCos, phiSin *ad.Node) {
	t := x.Tape()
	n := len(c)
	freq := ad.MulScalar(t.Const(mat.NewDense(n, 1, append([]float64(nil), c...))), omega)
	amp := ad.Mul(t.Const(mat.NewDense(n, 1, append([]float64(nil), w...))), sqrtDensity(family, v, l, freq))
	amp = ad.MulScalar(amp, ad.Scale(math.Pow(2*math.Pi, -0.25), ad.Mul(omega, scale)))
	arg := ad.MatMulTB(freq, x) // T×N
	return ad.MulColVec(ad.Cos(arg), amp), ad.MulColVec(ad.Sin(arg), amp)
}

func checkX(feature string, x *ad.Node) {
	if _, d := x.Dims(); d != 1 {
		panic(fmt.Sprintf("features: %s is one-dimensional; inputs have %d columns", feature, d))
	}
}

func identityNode(t *ad.Tape, m int) *ad.Node {
	id := mat.NewDense(m, m, nil)
	for i := 0; i < m; i++ {
		id.Set(i, i, 1)
	}
	return t.Const(id)
}

func onesNode(t *ad.Tape, m int) *ad.Node {
	v := make([]float64, m)
	for i := range v {
		v[i] = 1
	}
	return t.Const(mat.NewDense(m, 1, v))
}

// hermite returns the normalised Hermite polynomials h_m(z) = H_m(z)/√(2^m m!)
// for the degrees in order (row i holds degree order[i]) at the entries of the
// row z (1×N), M×N, with the backward pass h_m' = √(2m) h_{m−1}.
func hermite(z *ad.Node, order []int) *ad.Node {
	zv := z.Value().RawRowView(0)
	n := len(zv)
	maxDeg := 0
	for _, m := range order {
		maxDeg = max(maxDeg, m)
	}
	all := hermiteTable(zv, maxDeg) // (maxDeg+1)×N
	out := mat.NewDense(len(order), n, nil)
	for i, m := range order {
		copy(out.RawRowView(i), all[m])
	}
	return ad.Custom(out, func(g *mat.Dense) []*mat.Dense {
		dz := mat.NewDense(1, n, nil)
		row := dz.RawRowView(0)
		for i, m := range order {
			if m == 0 {
				continue
			}
			f := math.Sqrt(2 * float64(m))
			gi, prev := g.RawRowView(i), all[m-1]
			for j := range row {
				row[j] += gi[j] * f * prev[j]
			}
		}
		return []*mat.Dense{dz}
	}, z)
}

// hermiteTable evaluates h_0 … h_maxDeg at z by the stable recursion
// h_{m+1} = √(2/(m+1)) z h_m − √(m/(m+1)) h_{m−1}.
func hermiteTable(z []float64, maxDeg int) [][]float64 {
	tab := make([][]float64, maxDeg+1)
	tab[0] = make([]float64, len(z))
	for j := range z {
		tab[0][j] = 1
	}
	if maxDeg >= 1 {
		tab[1] = make([]float64, len(z))
		for j, v := range z {
			tab[1][j] = math.Sqrt2 * v
		}
	}
	for m := 1; m < maxDeg; m++ {
		a, b := math.Sqrt(2/float64(m+1)), math.Sqrt(float64(m)/float64(m+1))
		next := make([]float64, len(z))
		for j, v := range z {
			next[j] = a*v*tab[m][j] - b*tab[m-1][j]
		}
		tab[m+1] = next
	}
	return tab
}

// ---------------------------------------------------------------------------
// Hermite VOF

// HermiteVOF are the Hermite variational orthogonal features of the SE kernel
// (VOF §3.1.1 with the corrected closed form of vof-spec §1.4): ψ_m are the
// Hermite functions of degree m = 0 … M−1 in frequency, scaled by r, with
// r² = ℓ √(σx² + ℓ²/4) so that they equal the Mercer eigenfunction features
// of the SE kernel for the input density N(0, σx²). σx is registered as the
// positive parameter prefix+"sigma_x". With P = r² − ℓ²/2, Q = r² + ℓ²/2 and
// z = r x/√(PQ),
//
//	Kuf[m](x) = √v 2^{1/4} √(rℓ/Q) (P/Q)^{m/2} exp(−x²/(2Q)) h_m(z),
//
// h_m the normalised Hermite polynomials. Rows are ordered even degrees first
// (Degrees gives the degree of each row).
type HermiteVOF struct {
	NumFeatures int
	SigmaX      float64 // initial σx > 0
	Fixed       bool    // keep σx out of training
}

// NewHermiteVOF returns M Hermite features for the kernel k, which must be the
// 1-D SE kernel, with σx initialised at sigmaX (typically the standard
// deviation of the training inputs).
func NewHermiteVOF(k kernels.Kernel, m int, sigmaX float64) (*HermiteVOF, error) {
	if _, err := checkVOFKernel("Hermite VOF", k, []string{"se"}); err != nil {
		return nil, fmt.Errorf("%w (Hermite features have a closed form only for the squared-exponential kernel; use trigonometric VOF for Matérn kernels)", err)
	}
	h := &HermiteVOF{NumFeatures: m, SigmaX: sigmaX}
	return h, h.validate()
}

func (h *HermiteVOF) validate() error {
	if h.NumFeatures < 1 {
		return fmt.Errorf("features: Hermite VOF needs at least one feature, got %d", h.NumFeatures)
	}
	if !(h.SigmaX > 0) || math.IsInf(h.SigmaX, 0) {
		return fmt.Errorf("features: Hermite VOF needs a finite σx > 0, got %v", h.SigmaX)
	}
	return nil
}

// Name returns "vof_hermite".
func (h *HermiteVOF) Name() string { return "vof_hermite" }

// Declare registers prefix+"sigma_x".
func (h *HermiteVOF) Declare(s *param.Set, prefix string) error {
	if err := h.validate(); err != nil {
		return err
	}
	if err := s.AddScalar(prefix+"sigma_x", h.SigmaX, param.DefaultPositive); err != nil {
		return err
	}
	if h.Fixed {
		s.SetTrainable(false, prefix+"sigma_x")
	}
	return nil
}

// Bind records σx on the tape of b.
func (h *HermiteVOF) Bind(b *param.Bound, prefix string) Bound {
	return &BoundHermiteVOF{SigmaX: b.Get(prefix + "sigma_x"), order: hermiteOrder(h.NumFeatures)}
}

// hermiteOrder lists the degrees 0 … m−1 even first.
func hermiteOrder(m int) []int {
	out := make([]int, 0, m)
	for d := 0; d < m; d += 2 {
		out = append(out, d)
	}
	for d := 1; d < m; d += 2 {
		out = append(out, d)
	}
	return out
}

// BoundHermiteVOF are Hermite features with σx (1×1) on a tape.
type BoundHermiteVOF struct {
	SigmaX *ad.Node
	order  []int
}

// NewBoundHermiteVOF returns m Hermite features with σx given as a node.
func NewBoundHermiteVOF(sigmaX *ad.Node, m int) *BoundHermiteVOF {
	return &BoundHermiteVOF{SigmaX: sigmaX, order: hermiteOrder(m)}
}

// M is the number of features.
func (h *BoundHermiteVOF) M() int { return len(h.order) }

// NumEven is the number of even-degree features (they come first).
func (h *BoundHermiteVOF) NumEven() int { return (len(h.order) + 1) / 2 }

// Degrees returns the Hermite degree of each feature, in row order.
func (h *BoundHermiteVOF) Degrees() []int { return append([]int(nil), h.order...) }

// Kuu is the identity.
func (h *BoundHermiteVOF) Kuu(kernels.Bound) *ad.Node { return identityNode(h.SigmaX.Tape(), h.M()) }

// KuuDiag is a vector of ones.
func (h *BoundHermiteVOF) KuuDiag(kernels.Bound) *ad.Node { return onesNode(h.SigmaX.Tape(), h.M()) }

// shape returns r², P and Q (1×1) for the bound kernel.
func (h *BoundHermiteVOF) shape(l *ad.Node) (r2, p, q *ad.Node) {
	l2 := ad.Square(l)
	root := ad.Sqrt(ad.Add(ad.Square(h.SigmaX), ad.Scale(0.25, l2))) // √(σx² + ℓ²/4)
	r2 = ad.Mul(l, root)
	// P = ℓ(root − ℓ/2) = ℓσx²/(root + ℓ/2), free of cancellation for σx ≪ ℓ.
	p = ad.Div(ad.Mul(l, ad.Square(h.SigmaX)), ad.Add(root, ad.Scale(0.5, l)))
	q = ad.Add(r2, ad.Scale(0.5, l2))
	return r2, p, q
}

// Kuf is the closed form above, M×N.
func (h *BoundHermiteVOF) Kuf(k kernels.Bound, x *ad.Node) *ad.Node {
	checkX("Hermite VOF", x)
	v, l := spectralParams("Hermite VOF", k)
	t := x.Tape()
	r2, p, q := h.shape(l)
	xr := ad.T(x) // 1×N
	z := ad.MulScalar(xr, ad.Sqrt(ad.Div(r2, ad.Mul(p, q))))
	hm := hermite(z, h.order)
	half := make([]float64, len(h.order))
	for i, m := range h.order {
		half[i] = float64(m) / 2
	}
	// √v 2^{1/4} √(rℓ/Q) (P/Q)^{m/2}
	pref := ad.Scale(math.Pow(2, 0.25), ad.Sqrt(ad.Div(ad.Mul(v, ad.Mul(ad.Sqrt(r2), l)), q)))
	col := ad.MulScalar(ad.Exp(ad.MulScalar(t.Const(mat.NewDense(len(half), 1, half)), ad.Log(ad.Div(p, q)))), pref)
	row := ad.Exp(ad.MulScalar(ad.Square(xr), ad.Div(t.Scalar(-0.5), q)))
	return ad.MulRowVec(ad.MulColVec(hm, col), row)
}

// HermiteCutoff is the half-width, in units of the scaled frequency t = rω,
// of the interval on which SpectralSample integrates: beyond
// √(2M+1) + HermiteCutoff the Hermite functions are below ~1e-14.
const HermiteCutoff = 8.0

// SpectralSample returns the frequency-sample factors of the Hermite
// features (see SpectralFeature). In the scaled frequency t = rω on
// [−Ω̃, Ω̃], Ω̃ = √(2M+1) + HermiteCutoff, the basis is
// Ψ_tm = (−1)^⌊m/2⌋ π^{−1/4} h_m(t) e^{−t²/2}, independent of every parameter,
// and all dependence on r, v and ℓ is in Φ. The sign makes the spectral form
// agree with the closed-form Kuf. Truncation at Ω̃ leaves an error of order
// 1e-14 relative to the closed form.
func (h *BoundHermiteVOF) SpectralSample(k kernels.Bound, x *ad.Node, c, w []float64) (psi, phiCos, phiSin *ad.Node) {
	checkX("Hermite VOF", x)
	v, l := spectralParams("Hermite VOF", k)
	t := x.Tape()
	span := math.Sqrt(2*float64(h.maxDeg())+3) + HermiteCutoff
	ts := make([]float64, len(c))
	for i, ci := range c {
		ts[i] = span * ci
	}
	tab := hermiteTable(ts, h.maxDeg())
	ps := mat.NewDense(len(c), h.M(), nil)
	norm := math.Pow(math.Pi, -0.25)
	for j, m := range h.order {
		sign := 1.0
		if (m/2)%2 == 1 {
			sign = -1
		}
		for i, ti := range ts {
			ps.Set(i, j, sign*norm*tab[m][i]*math.Exp(-ti*ti/2))
		}
	}
	r2, _, _ := h.shape(l)
	// ω = t/r on [−Ω̃/r, Ω̃/r] and ψ_m(ω) = √r Ψ_m(rω): Ω = Ω̃/r, scale √r.
	omega := ad.Scale(span, ad.Pow(r2, -0.5))
	phiCos, phiSin = spectralFactors("se", v, l, omega, ad.Pow(r2, 0.25), x, c, w)
	return t.Const(ps), phiCos, phiSin
}

func (h *BoundHermiteVOF) maxDeg() int {
	m := 0
	for _, d := range h.order {
		m = max(m, d)
	}
	return m
}

// ---------------------------------------------------------------------------
// Trigonometric VOF

// TrigVOF are the trigonometric variational orthogonal features on [−a, a]
// (VOF §3.1.2 with the orthonormal basis of vof-spec §1.5): M = 2J+1
// features, ψ_0 = 1/√(2a), ψ_{cos j} = cos(πjω/a)/√a, ψ_{sin j} =
// sin(πjω/a)/√a on [−a, a], ordered [const, cos_1…cos_J, sin_1…sin_J].
// They work for every 1-D SE or Matérn kernel. The half-width a is the
// positive parameter prefix+"a".
//
// Kuf has no closed form: Bound.Kuf integrates by composite Gauss–Legendre
// quadrature (deterministic, for predictions and checks) and SpectralSample
// gives the factors of the paper's Monte-Carlo estimator.
type TrigVOF struct {
	Kernel string  // kernel family: se, matern12, matern32 or matern52
	J      int     // number of cosine (and of sine) features
	A      float64 // initial half-width a > 0
	Fixed  bool    // keep a out of training
}

// NewTrigVOF returns trigonometric features with J frequencies (M = 2J+1) on
// [−a, a] for the 1-D SE or Matérn kernel k.
func NewTrigVOF(k kernels.Kernel, j int, a float64) (*TrigVOF, error) {
	fam, err := checkVOFKernel("trigonometric VOF", k, spectralKernels)
	if err != nil {
		return nil, err
	}
	f := &TrigVOF{Kernel: fam, J: j, A: a}
	return f, f.validate()
}

// DefaultTrigA is the spec's initial half-width a₀ = πJ / max|x| (vof-spec
// D5): the highest basis frequency then resolves the data range.
func DefaultTrigA(j int, x *mat.Dense) (float64, error) {
	xm := 0.0
	r, _ := x.Dims()
	for i := 0; i < r; i++ {
		xm = math.Max(xm, math.Abs(x.At(i, 0)))
	}
	if !(xm > 0) || math.IsInf(xm, 0) {
		return 0, fmt.Errorf("features: trigonometric VOF: cannot choose a from inputs with max |x| = %v", xm)
	}
	return math.Pi * float64(max(j, 1)) / xm, nil
}

func (f *TrigVOF) validate() error {
	if !contains(spectralKernels, f.Kernel) {
		return fmt.Errorf("features: trigonometric VOF does not support kernel %q; supported kernels: %v", f.Kernel, spectralKernels)
	}
	if f.J < 0 {
		return fmt.Errorf("features: trigonometric VOF needs J ≥ 0 frequencies, got %d", f.J)
	}
	if !(f.A > 0) || math.IsInf(f.A, 0) {
		return fmt.Errorf("features: trigonometric VOF needs a finite half-width a > 0, got %v", f.A)
	}
	return nil
}

// Name returns "vof_trig".
func (f *TrigVOF) Name() string { return "vof_trig" }

// Declare registers prefix+"a".
func (f *TrigVOF) Declare(s *param.Set, prefix string) error {
	if err := f.validate(); err != nil {
		return err
	}
	if err := s.AddScalar(prefix+"a", f.A, param.DefaultPositive); err != nil {
		return err
	}
	if f.Fixed {
		s.SetTrainable(false, prefix+"a")
	}
	return nil
}

// Bind records a on the tape of b.
func (f *TrigVOF) Bind(b *param.Bound, prefix string) Bound {
	return &BoundTrigVOF{Kernel: f.Kernel, J: f.J, A: b.Get(prefix + "a")}
}

// BoundTrigVOF are trigonometric features with a (1×1) on a tape.
type BoundTrigVOF struct {
	Kernel string
	J      int
	A      *ad.Node
	// Panels is the number of 16-point Gauss–Legendre panels Kuf uses; 0
	// chooses enough for about half a period of the integrand per panel.
	Panels int
}

// M is 2J+1.
func (f *BoundTrigVOF) M() int { return 2*f.J + 1 }

// NumEven is J+1 (the constant and the cosines).
func (f *BoundTrigVOF) NumEven() int { return f.J + 1 }

// Kuu is the identity.
func (f *BoundTrigVOF) Kuu(kernels.Bound) *ad.Node { return identityNode(f.A.Tape(), f.M()) }

// KuuDiag is a vector of ones.
func (f *BoundTrigVOF) KuuDiag(kernels.Bound) *ad.Node { return onesNode(f.A.Tape(), f.M()) }

// SpectralSample returns the factors of SpectralFeature with ω_t = a c_t:
// Ψ_tm is the basis at c_t without its 1/√a (so Ψ is constant), and Φ
// carries √a.
func (f *BoundTrigVOF) SpectralSample(k kernels.Bound, x *ad.Node, c, w []float64) (psi, phiCos, phiSin *ad.Node) {
	checkX("trigonometric VOF", x)
	v, l := spectralParams("trigonometric VOF", k)
	ps := mat.NewDense(len(c), f.M(), nil)
	for i, ci := range c {
		ps.Set(i, 0, 1/math.Sqrt2)
		for j := 1; j <= f.J; j++ {
			s, co := math.Sincos(math.Pi * float64(j) * ci)
			ps.Set(i, j, co)
			ps.Set(i, f.J+j, s)
		}
	}
	// ∫_{−a}^{a} dω = a ∫_{−1}^{1} dc and ψ = Ψ/√a: the scale is a^{−1/2}.
	phiCos, phiSin = spectralFactors(f.Kernel, v, l, f.A, ad.Pow(f.A, -0.5), x, c, w)
	return x.Tape().Const(ps), phiCos, phiSin
}

// Kuf integrates the spectral form by composite 16-point Gauss–Legendre
// quadrature on [−a, a], M×N.
func (f *BoundTrigVOF) Kuf(k kernels.Bound, x *ad.Node) *ad.Node {
	checkX("trigonometric VOF", x)
	panels := f.Panels
	if panels <= 0 {
		xm := 0.0
		for _, v := range x.Value().RawMatrix().Data {
			xm = math.Max(xm, math.Abs(v))
		}
		// Phase range of cos(πjc)·cos(a c x) over [−1, 1] is 2(πJ + a|x|);
		// half a period per panel.
		panels = max(8, int(math.Ceil(2*(math.Pi*float64(f.J)+f.A.Scalar()*xm)/math.Pi)))
	}
	c, w := CompositeLegendre(panels, 16)
	return SpectralKuf(f, k, x, c, w)
}

// SpectralKuf returns K̂uf = [Ψ_Eᵀ Φcos ; Ψ_Oᵀ Φsin] (M×N) of a spectral
// feature for the points c and weights w on [−1, 1].
func SpectralKuf(f SpectralFeature, k kernels.Bound, x *ad.Node, c, w []float64) *ad.Node {
	psi, pc, ps := f.SpectralSample(k, x, c, w)
	t, m := psi.Dims()
	e := f.NumEven()
	parts := []*ad.Node{ad.MatMulTA(ad.Slice(psi, 0, t, 0, e), pc)}
	if e < m {
		parts = append(parts, ad.MatMulTA(ad.Slice(psi, 0, t, e, m), ps))
	}
	return ad.VCat(parts...)
}

// CompositeLegendre returns the nodes and weights of the composite
// Gauss–Legendre rule with the given number of equal panels on [−1, 1] and
// per points per panel.
func CompositeLegendre(panels, per int) (nodes, weights []float64) {
	x, w := make([]float64, per), make([]float64, per)
	h := 2 / float64(panels)
	for p := 0; p < panels; p++ {
		lo := -1 + float64(p)*h
		quad.Legendre{}.FixedLocations(x, w, lo, lo+h)
		nodes = append(nodes, x...)
		weights = append(weights, w...)
	}
	return nodes, weights
}

var (
	_ SpectralFeature = (*BoundHermiteVOF)(nil)
	_ SpectralFeature = (*BoundTrigVOF)(nil)
	_ Feature         = (*HermiteVOF)(nil)
	_ Feature         = (*TrigVOF)(nil)
)
