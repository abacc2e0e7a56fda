package features

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
	"sgplab/gp/kernels"
)

// NewVFF returns the variational Fourier features of Hensman, Durrande and
// Solin (2017) on the box Π_d intervals[d]: per dimension, the RKHS inner
// products of f with the harmonics cos(ω_m(x − a)), m = 0 … frequencies−1,
// and sin(ω_m(x − a)), m = 1 … frequencies−1, with ω_m = 2πm/(b − a); that
// is 2·frequencies − 1 features per dimension (the IFF and VISH papers'
// count: "30 frequencies" give 59 features). Kuf = Φ(x) for x inside the
// box, independent of the hyperparameters; Kuu is the closed-form Matérn
// Gram matrix, diagonal plus rank one or two per cos/sin block.
//
// k is a 1-D Matérn kernel (matern12, matern32, matern52), an additive
// kernel of them (structure Additive, f = Σ_d f_d) or a Separable product of
// them (structure Kronecker, Kuu = ⊗_d Kuu_d). mask keeps only the
// Kronecker grid points inside the sphere Σ_d (m_d/(frequencies−1))² ≤ 1.
func NewVFF(k kernels.Kernel, intervals []Interval, frequencies int, s Structure, mask bool) (*IntervalFeature, error) {
	if len(intervals) == 0 {
		return nil, fmt.Errorf("features: vff: no intervals")
	}
	if frequencies < 1 {
		return nil, fmt.Errorf("features: vff: %d frequencies per dimension, want ≥ 1", frequencies)
	}
	orders, err := maternOrders("VFF", k, len(intervals), s)
	if err != nil {
		return nil, err
	}
	bases := make([]basis1D, len(intervals))
	for d, iv := range intervals {
		if err := iv.validate(); err != nil {
			return nil, fmt.Errorf("features: vff: dimension %d: %w", d, err)
		}
		bases[d] = newFourierBasis(iv, frequencies)
	}
	f, err := newIntervalFeature("vff", s, bases, orders, mask)
	if err != nil {
		return nil, err
	}
	if mask && f.m < 2 {
		return nil, fmt.Errorf("features: vff: the mask keeps %d features; use more frequencies", f.m)
	}
	return f, nil
}

// fourierBasis is [cos(ω_m(x−a)), m < M; sin(ω_m(x−a)), 1 ≤ m < M].
type fourierBasis struct {
	iv    Interval
	nfreq int
	omega []float64 // ω_m, m = 0 … M−1
}

func newFourierBasis(iv Interval, m int) *fourierBasis {
	b := &fourierBasis{iv: iv, nfreq: m, omega: make([]float64, m)}
	for i := range b.omega {
		b.omega[i] = 2 * math.Pi * float64(i) / iv.Width()
	}
	return b
}

func (b *fourierBasis) size() int          { return 2*b.nfreq - 1 }
func (b *fourierBasis) interval() Interval { return b.iv }
func (b *fourierBasis) maxFreq() int       { return b.nfreq - 1 }

func (b *fourierBasis) freq(i int) int {
	if i < b.nfreq {
		return i
	}
	return i - b.nfreq + 1
}

func (b *fourierBasis) fill(x []float64, out *mat.Dense) {
	m := b.nfreq
	for n, v := range x {
		t := v - b.iv.A
		for i := 0; i < m; i++ {
			s, c := math.Sincos(b.omega[i] * t)
			out.Set(i, n, c)
			if i > 0 {
				out.Set(m+i-1, n, s)
			}
		}
	}
}

// dplr is a diagonal-plus-low-rank block diag(d) + Σ_j u_j u_jᵀ.
type dplr struct {
	d *ad.Node   // m×1, positive
	u []*ad.Node // m×1 each
}

func (b dplr) dense() *ad.Node {
	if len(b.u) == 0 {
		return ad.DiagMat(b.d)
	}
	u := ad.HCat(b.u...)
	return ad.AddDiag(ad.MatMulTB(u, u), b.d)
}

// whiten returns x ↦ L⁻¹x for a square root L of the block that costs
// O(m·r) per column instead of a dense Cholesky and triangular solve.
// With D = diag(d), K₀ = D and K_j = K_{j−1} + u_j u_jᵀ = L_j L_jᵀ:
// L₀ = D^{½} and L_j = L_{j−1}(I + c_j w_j w_jᵀ) with w_j = L_{j−1}⁻¹u_j and
// c_j = 1/(1 + s_j), s_j = √(1 + w_jᵀw_j), since (I + c w wᵀ)² = I + w wᵀ
// exactly for that c. Its inverse is I − w wᵀ/(s(1 + s)). L is not
// triangular, which the collapsed bound does not need (it sees only LLᵀ),
// and the scaling by D^{-½} first makes it insensitive to the (λ² + ω²)^{ν+½}
// spread of the diagonal, where a dense Cholesky of K loses digits.
func (b dplr) whiten() func(*ad.Node) *ad.Node {
	invSqrtD := ad.Pow(b.d, -0.5)
	ws := make([]*ad.Node, len(b.u))
	ks := make([]*ad.Node, len(b.u))
	apply := func(x *ad.Node, upto int) *ad.Node {
		x = ad.MulColVec(x, invSqrtD)
		for j := 0; j < upto; j++ {
			// x − w (wᵀx) κ, with κ = 1/(s(1+s)) a 1×1 node.
			x = ad.Sub(x, ad.MulScalar(ad.MatMul(ws[j], ad.MatMulTA(ws[j], x)), ks[j]))
		}
		return x
	}
	for j, u := range b.u {
		ws[j] = apply(u, j)
		s := ad.Sqrt(ad.AddConst(ad.Sum(ad.Square(ws[j])), 1))
		ks[j] = ad.Pow(ad.Mul(s, ad.AddConst(s, 1)), -1)
	}
	return func(x *ad.Node) *ad.Node { return apply(x, len(ws)) }
}

// gram is blockdiag(Kcos, Ksin), see blocks.
func (b *fourierBasis) gram(k kernels.SpectralBound, nu float64) *ad.Node {
	blocks := b.blocks(k, nu)
	if len(blocks) == 1 {
		return blocks[0].dense()
	}
	return BlockDiag(blocks[0].dense(), blocks[1].dense())
}

// whiten applies the structured square root of each cos/sin block.
func (b *fourierBasis) whiten(k kernels.SpectralBound, nu float64) func(*ad.Node) *ad.Node {
	blocks := b.blocks(k, nu)
	fs := make([]func(*ad.Node) *ad.Node, len(blocks))
	for i, blk := range blocks {
		fs[i] = blk.whiten()
	}
	if len(fs) == 1 {
		return fs[0]
	}
	m := b.nfreq
	return func(x *ad.Node) *ad.Node {
		r, c := x.Dims()
		return ad.VCat(fs[0](ad.Slice(x, 0, m, 0, c)), fs[1](ad.Slice(x, m, r, 0, c)))
	}
}

// blocks are Kcos and Ksin (the latter absent with one frequency), with
// (λ = √(2ν)/ℓ, L = b − a, σ² the variance; Hensman et al. 2017, iff-spec
// §1.14, odvff-spec §1.4)
//
//	ν = ½: Kcos = diag(L(λ²+ω²)/(c_m λσ²)) + 11ᵀ/σ², c = 2, 4;  Ksin = diag(L(λ²+ω²)/(4λσ²))
//	ν = 3⁄2: Kcos = diag(L(λ²+ω²)²/(c_m λ³σ²)) + 11ᵀ/σ², c = 4, 8;
//	       Ksin = diag(L(λ²+ω²)²/(8λ³σ²)) + vvᵀ, v = ω/(λσ)
//	ν = 5⁄2: Kcos = diag(3L(λ²+ω²)³/(c_m λ⁵σ²)) + w₁w₁ᵀ + 11ᵀ/σ², c = 16, 32,
//	       w₁ = (3ω²/λ² − 1)/√(8σ²);  Ksin = diag(3L(λ²+ω²)³/(32λ⁵σ²)) + vvᵀ, v = √3ω/(λσ)
//
// where c_m takes its first value at ω = 0.
func (b *fourierBasis) blocks(k kernels.SpectralBound, nu float64) []dplr {
	t := k.Variance().Tape()
	sv := k.Variance()
	lam := ad.Scale(math.Sqrt(2*nu), ad.Pow(k.Lengthscales(), -1))
	m := b.nfreq
	w2c := mat.NewDense(m, 1, nil)
	wc := mat.NewDense(m, 1, nil)
	ones := mat.NewDense(m, 1, nil)
	for i, w := range b.omega {
		w2c.Set(i, 0, w*w)
		wc.Set(i, 0, w)
		ones.Set(i, 0, 1)
	}
	p := nu + 0.5 // power of (λ² + ω²)
	var head, tail float64
	switch nu {
	case 0.5:
		head, tail = 1.0/2, 1.0/4
	case 1.5:
		head, tail = 1.0/4, 1.0/8
	case 2.5:
		head, tail = 3.0/16, 3.0/32
	default:
		panic(fmt.Sprintf("features: vff: Matérn order %v unsupported", nu))
	}
	coef := mat.NewDense(m, 1, nil)
	for i := range b.omega {
		coef.Set(i, 0, tail*b.iv.Width())
	}
	coef.Set(0, 0, head*b.iv.Width())
	// diag = coef ∘ (λ² + ω²)^p / (λ^{2p−1} σ²)
	den := ad.Mul(ad.Pow(lam, 2*p-1), sv)
	diag := func(w2, c *mat.Dense) *ad.Node {
		base := ad.AddScalar(t.Const(w2), ad.Square(lam))
		return ad.DivScalar(ad.Mul(ad.Pow(base, p), t.Const(c)), den)
	}
	invSigma := ad.Pow(sv, -0.5)
	kcos := dplr{d: diag(w2c, coef), u: []*ad.Node{ad.MulScalar(t.Const(ones), invSigma)}}
	if nu == 2.5 {
		w1 := ad.AddConst(ad.Scale(3, ad.MulScalar(t.Const(w2c), ad.Pow(lam, -2))), -1)
		kcos.u = append(kcos.u, ad.Scale(1/math.Sqrt(8), ad.MulScalar(w1, invSigma)))
	}
	if m == 1 {
		return []dplr{kcos}
	}
	sin := func(a *mat.Dense) *mat.Dense { return mat.DenseCopyOf(a.Slice(1, m, 0, 1)) }
	ksin := dplr{d: diag(sin(w2c), sin(coef))}
	if nu != 0.5 {
		scale := 1.0
		if nu == 2.5 {
			scale = math.Sqrt(3)
		}
		ksin.u = []*ad.Node{ad.Scale(scale, ad.MulScalar(t.Const(sin(wc)), ad.Mul(invSigma, ad.Pow(lam, -1))))}
	}
	return []dplr{kcos, ksin}
}
