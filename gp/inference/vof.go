package inference

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
	"sgplab/gp/features"
	"sgplab/gp/kernels"
)

// Objectives of variational orthogonal features (VOF; Burt, Rasmussen & van
// der Wilk 2020), whose Kuu = I for any stationary kernel. With q(u) = N(m, S)
// and a Gaussian likelihood of noise variance σ²,
//
//	ELBO = Σ_n [ −½ log 2πσ² − (y_n² − 2y_n μ_n + μ_n² + σ_n²)/(2σ²) ] − KL,
//	μ_n = Kuf(x_n)ᵀ m,   σ_n² = k(x_n, x_n) + Kuf(x_n)ᵀ (S − I) Kuf(x_n),
//	KL  = ½ [tr S + mᵀm − M − log|S|].
//
// No M×M matrix is ever inverted. S is dense (S = LLᵀ) or diagonal.

// OrthoVariational is q(u) = N(Mu, S) for features with Kuu = I. Exactly one
// of Sqrt (S = LLᵀ with L the lower triangle of Sqrt, M×M) and SqrtDiag (S =
// diag(SqrtDiag²), M×1) is set.
type OrthoVariational struct {
	Mu       *ad.Node // M×1
	Sqrt     *ad.Node // M×M, dense S
	SqrtDiag *ad.Node // M×1, diagonal S
}

func (q OrthoVariational) check(m int) error {
	if q.Mu == nil {
		return errors.New("inference: q(u) needs a mean")
	}
	if r, c := q.Mu.Dims(); r != m || c != 1 {
		return fmt.Errorf("inference: q(u) mean is %d×%d, want %d×1", r, c, m)
	}
	switch {
	case (q.Sqrt == nil) == (q.SqrtDiag == nil):
		return errors.New("inference: q(u) needs exactly one of a dense square root and a diagonal one")
	case q.Sqrt != nil:
		if r, c := q.Sqrt.Dims(); r != m || c != m {
			return fmt.Errorf("inference: q(u) square root is %d×%d, want %d×%d", r, c, m, m)
		}
	default:
		if r, c := q.SqrtDiag.Dims(); r != m || c != 1 {
			return fmt.Errorf("inference: q(u) diagonal square root is %d×%d, want %d×1", r, c, m)
		}
	}
	return nil
}

// OrthoKL is KL[N(m, S) ‖ N(0, I)] = ½ [tr S + mᵀm − M − log|S|], O(M²) for
// dense S and O(M) for diagonal S.
func OrthoKL(q OrthoVariational) (*ad.Node, error) {
	m, _ := q.Mu.Dims()
	if err := q.check(m); err != nil {
		return nil, err
	}
	// d holds the entries whose squares give log|S|.
	d, tr := q.SqrtDiag, (*ad.Node)(nil)
	if q.Sqrt != nil {
		l := ad.Tril(q.Sqrt)
		d, tr = ad.Diag(l), ad.Sum(ad.Square(l))
	} else {
		tr = ad.Sum(ad.Square(d))
	}
	logDet := ad.Sum(ad.Log(ad.Square(d)))
	kl := ad.AddConst(ad.Sub(ad.Add(tr, ad.Sum(ad.Square(q.Mu))), logDet), -float64(m))
	return ad.Scale(0.5, kl), nil
}

// gaussianData is the Gaussian data term from the batch sums
// Σμ, Σμ², Σσ² (as yᵀμ, μ², σ²), scaled by numData/B.
func gaussianData(y []float64, noise, yMu, muSq, varSum *ad.Node, numData int) *ad.Node {
	b := len(y)
	yy := 0.0
	for _, v := range y {
		yy += v * v
	}
	// −(B/2) log 2πσ² − (yᵀy − 2yᵀμ + Σμ² + Σσ²)/(2σ²)
	quad := ad.Add(ad.Sub(ad.AddConst(muSq, yy), ad.Scale(2, yMu)), varSum)
	data := ad.Sub(ad.Scale(-float64(b)/2, ad.Log(ad.Scale(2*math.Pi, noise))), ad.Div(ad.Scale(0.5, quad), noise))
	return ad.Scale(float64(numData)/float64(b), data)
}

func checkBatch(x *ad.Node, y []float64, noise *ad.Node, numData int) (int, error) {
	b, _ := x.Dims()
	if b == 0 {
		return 0, errEmpty
	}
	if len(y) != b {
		return 0, fmt.Errorf("inference: %d inputs but %d targets", b, len(y))
	}
	if r, c := noise.Dims(); r != 1 || c != 1 {
		return 0, fmt.Errorf("inference: noise variance is %d×%d, want 1×1", r, c)
	}
	if numData == 0 {
		numData = b
	}
	if numData < b {
		return 0, fmt.Errorf("inference: minibatch of %d points from a training set of %d", b, numData)
	}
	return numData, nil
}

// VOFELBO is the VOF ELBO with the feature's deterministic Kuf (closed form
// for Hermite features, quadrature for trigonometric ones) on the minibatch
// (x, y), scaled to numData points (0: no scaling). It costs O(BM²) for dense
// S and O(BM) for diagonal S. The feature must have Kuu = I; it is not read.
func VOFELBO(k kernels.Bound, f features.Bound, x *ad.Node, y []float64, noise *ad.Node, q OrthoVariational, numData int) (*ad.Node, error) {
	numData, err := checkBatch(x, y, noise, numData)
	if err != nil {
		return nil, err
	}
	if err := q.check(f.M()); err != nil {
		return nil, err
	}
	kl, err := OrthoKL(q)
	if err != nil {
		return nil, err
	}
	t := x.Tape()
	kuf := f.Kuf(k, x)
	mu := ad.MatMulTA(kuf, q.Mu) // B×1
	yn := t.Const(mat.NewDense(len(y), 1, append([]float64(nil), y...)))
	varSum := ad.Sum(k.Diag(x))
	if q.Sqrt != nil {
		lk := ad.MatMulTA(ad.Tril(q.Sqrt), kuf) // ‖LᵀK‖² − ‖K‖²
		varSum = ad.Add(varSum, ad.Sub(ad.Sum(ad.Square(lk)), ad.Sum(ad.Square(kuf))))
	} else {
		d := ad.AddConst(ad.Square(q.SqrtDiag), -1) // S_mm − 1
		varSum = ad.Add(varSum, ad.Dot(ad.RowSums(ad.Square(kuf)), d))
	}
	data := gaussianData(y, noise, ad.Dot(yn, mu), ad.Sum(ad.Square(mu)), varSum, numData)
	return ad.Sub(data, kl), nil
}

// SampleSet is one stratified set of frequency samples on [−1, 1]: the
// points C and their weights W (2/T each).
type SampleSet struct {
	C, W []float64
}

// StratifiedSamples draws the shifted grid of VOF App. E.1: u_1 ~ U[0, 1/T],
// u_i = (i−1)/T + u_1, mapped to c_i = 2u_i − 1 on [−1, 1], each with weight
// 2/T. Every c_i is marginally uniform, so Σ_i W_i g(c_i) is an unbiased
// estimate of ∫_{−1}^{1} g.
func StratifiedSamples(rng *rand.Rand, t int) SampleSet {
	u1 := rng.Float64() / float64(t)
	s := SampleSet{C: make([]float64, t), W: make([]float64, t)}
	for i := range t {
		s.C[i] = 2*(float64(i)/float64(t)+u1) - 1
		s.W[i] = 2 / float64(t)
	}
	return s
}

// DefaultVOFSamples is T of the paper: two sets of 50 give 100 samples for
// the mean and 2500 pairs for the variance.
const DefaultVOFSamples = 50

// VOFMonteCarlo is the unbiased Monte-Carlo estimate of the VOF ELBO of
// App. E.1, with the cos/sin phase split of vof-spec §1.7 (D7 b), from two
// independent sample sets s1, s2 (typically StratifiedSamples). With Ψ, Φ the
// factors of set 1 and Ψ′, Φ′ those of set 2 (features.SpectralFeature),
//
//	μ̂₁ = Φcᵀ Ψ_E m_E + Φsᵀ Ψ_O m_O,  μ̂ = (μ̂₁ + μ̂₂)/2,  μ̂² = μ̂₁ μ̂₂,
//	σ̂² = k(x, x) + Σ_{p,q ∈ {c,s}} Φ_p(x)ᵀ [Ψ_p D_pq Ψ′_qᵀ] Φ′_q(x),  D = S − I,
//
// using all T×T pairs. Every term of the Gaussian ELBO is linear in μ̂, μ̂²
// and σ̂², so the estimate is unbiased; σ̂² may be negative. The per-batch
// cost is O(M²T + MT² + BT²), independent of M per data point; the KL is
// exact.
func VOFMonteCarlo(k kernels.Bound, f features.SpectralFeature, x *ad.Node, y []float64, noise *ad.Node,
	q OrthoVariational, s1, s2 SampleSet, numData int) (*ad.Node, error) {
	numData, err := checkBatch(x, y, noise, numData)
	if err != nil {
		return nil, err
	}
	for i, s := range []SampleSet{s1, s2} {
		if len(s.C) == 0 || len(s.C) != len(s.W) {
			return nil, fmt.Errorf("inference: VOF sample set %d has %d points and %d weights", i+1, len(s.C), len(s.W))
		}
	}
	m := f.M()
	if err := q.check(m); err != nil {
		return nil, err
	}
	kl, err := OrthoKL(q)
	if err != nil {
		return nil, err
	}
	e := f.NumEven()
	t := x.Tape()
	type factors struct {
		psi        [2]*ad.Node // Ψ_E, Ψ_O (nil when there is no odd feature)
		phi        [2]*ad.Node // Φc, Φs
		mean       *ad.Node    // μ̂ at the batch, B×1
		projection [2]*ad.Node // Ψ_p L[p, :] for dense S
	}
	mE := ad.Slice(q.Mu, 0, e, 0, 1)
	var mO, lq *ad.Node
	if e < m {
		mO = ad.Slice(q.Mu, e, m, 0, 1)
	}
	if q.Sqrt != nil {
		lq = ad.Tril(q.Sqrt)
	}
	build := func(s SampleSet) factors {
		psi, pc, ps := f.SpectralSample(k, x, s.C, s.W)
		nt, _ := psi.Dims()
		var fs factors
		fs.phi = [2]*ad.Node{pc, ps}
		fs.psi[0] = ad.Slice(psi, 0, nt, 0, e)
		fs.mean = ad.MatMulTA(pc, ad.MatMul(fs.psi[0], mE))
		if e < m {
			fs.psi[1] = ad.Slice(psi, 0, nt, e, m)
			fs.mean = ad.Add(fs.mean, ad.MatMulTA(ps, ad.MatMul(fs.psi[1], mO)))
		}
		if lq != nil {
			fs.projection[0] = ad.MatMul(fs.psi[0], ad.Slice(lq, 0, e, 0, m))
			if e < m {
				fs.projection[1] = ad.MatMul(fs.psi[1], ad.Slice(lq, e, m, 0, m))
			}
		}
		return fs
	}
	f1, f2 := build(s1), build(s2)
	yn := t.Const(mat.NewDense(len(y), 1, append([]float64(nil), y...)))
	yMu := ad.Scale(0.5, ad.Add(ad.Dot(yn, f1.mean), ad.Dot(yn, f2.mean)))
	muSq := ad.Dot(f1.mean, f2.mean)

	varSum := ad.Sum(k.Diag(x))
	blocks := 1
	if e < m {
		blocks = 2
	}
	var dDiag [2]*ad.Node
	if q.SqrtDiag != nil {
		d := ad.AddConst(ad.Square(q.SqrtDiag), -1)
		dDiag[0] = ad.T(ad.Slice(d, 0, e, 0, 1))
		if e < m {
			dDiag[1] = ad.T(ad.Slice(d, e, m, 0, 1))
		}
	}
	for p := 0; p < blocks; p++ {
		for r := 0; r < blocks; r++ {
			var c *ad.Node // Ψ_p D_pr Ψ′_rᵀ, T×T
			switch {
			case lq != nil:
				c = ad.MatMulTB(f1.projection[p], f2.projection[r])
				if p == r {
					c = ad.Sub(c, ad.MatMulTB(f1.psi[p], f2.psi[r]))
				}
			case p == r:
				c = ad.MatMulTB(ad.MulRowVec(f1.psi[p], dDiag[p]), f2.psi[r])
			default:
				continue // diagonal S has no cos–sin block
			}
			// Σ_n Φ_p(x_n)ᵀ C Φ′_r(x_n) = ⟨C, Φ_p Φ′_rᵀ⟩.
			varSum = ad.Add(varSum, ad.Dot(c, ad.MatMulTB(f1.phi[p], f2.phi[r])))
		}
	}
	data := gaussianData(y, noise, yMu, muSq, varSum, numData)
	return ad.Sub(data, kl), nil
}

// OrthoPosterior is the predictive posterior of q(u) for features with Kuu =
// I: mean(x) = Kuf(x)ᵀm and var(x) = k(x,x) − ‖Kuf(x)‖² + ‖LᵀKuf(x)‖² (values
// only). Use it with the feature's deterministic Kuf; clamp variances at 0
// (ClampVariances), since a quadrature Kuf need not keep them non-negative.
func OrthoPosterior(q OrthoVariational) (*Posterior, error) {
	m, _ := q.Mu.Dims()
	if err := q.check(m); err != nil {
		return nil, err
	}
	id := mat.NewDense(m, m, nil)
	b := mat.NewDense(m, m, nil)
	for i := range m {
		id.Set(i, i, 1)
	}
	if q.Sqrt != nil {
		b.Copy(lowerOf(q.Sqrt.Value()).T())
	} else {
		for i := range m {
			b.Set(i, i, q.SqrtDiag.Value().At(i, 0))
		}
	}
	return &Posterior{Alpha: mat.DenseCopyOf(q.Mu.Value()), A: id, B: b}, nil
}

// ClampVariances sets negative entries to zero.
func ClampVariances(v []float64) {
	for i, x := range v {
		if x < 0 {
			v[i] = 0
		}
	}
}

// OrthoOptimum holds the closed-form optimum of the VOF ELBO over q(u) for a
// Gaussian likelihood and fixed Kuf = K (vof-spec §1.8), with A = I + KKᵀ/σ².
type OrthoOptimum struct {
	// Full is the ELBO at the optimal dense q: Titsias' collapsed bound.
	Full float64
	// MeanField is the ELBO at the optimal diagonal q:
	// Full − ½(Σ log A_mm − log|A|) ≤ Full.
	MeanField float64
	// Mean is the optimal mean σ⁻²A⁻¹Ky (the same for dense and diagonal S).
	Mean []float64
	// Cov is the optimal dense S = A⁻¹.
	Cov *mat.SymDense
	// Diag is the optimal diagonal S_mm = 1/A_mm.
	Diag []float64
}

// OrthoOptimal computes the closed-form optimum for Kuf = kuf (M×N), prior
// variances kdiag, targets y and noise variance σ², in O(NM² + M³).
func OrthoOptimal(kuf *mat.Dense, kdiag, y []float64, noise float64) (*OrthoOptimum, error) {
	m, n := kuf.Dims()
	if len(kdiag) != n || len(y) != n {
		return nil, fmt.Errorf("inference: Kuf has %d columns, %d prior variances and %d targets", n, len(kdiag), len(y))
	}
	if !(noise > 0) || math.IsInf(noise, 0) {
		return nil, fmt.Errorf("inference: noise variance must be finite and positive, got %v", noise)
	}
	a := mat.NewSymDense(m, nil)
	a.SymOuterK(1/noise, kuf)
	for i := range m {
		a.SetSym(i, i, a.At(i, i)+1)
	}
	var ch mat.Cholesky
	if !ch.Factorize(a) {
		return nil, errors.New("inference: I + KKᵀ/σ² is not positive definite (non-finite Kuf?)")
	}
	yv := mat.NewVecDense(n, append([]float64(nil), y...))
	ky := mat.NewVecDense(m, nil)
	ky.MulVec(kuf, yv)
	mean := mat.NewVecDense(m, nil)
	if err := ch.SolveVecTo(mean, ky); err != nil {
		return nil, err
	}
	mean.ScaleVec(1/noise, mean)
	var kk, yy, ks float64
	for i := range n {
		yy += y[i] * y[i]
		ks += kdiag[i]
	}
	for i := range m {
		for _, v := range kuf.RawRowView(i) {
			kk += v * v
		}
	}
	logDetA := ch.LogDet()
	// log N(y | 0, KᵀK + σ²I) = −½[N log 2πσ² + log|A| + (yᵀy − yᵀKᵀA⁻¹Ky/σ²)/σ²].
	fit := yy - mat.Dot(ky, mean)
	full := -0.5*(float64(n)*math.Log(2*math.Pi*noise)+logDetA+fit/noise) - (ks-kk)/(2*noise)
	opt := &OrthoOptimum{Full: full, Mean: mean.RawVector().Data, Diag: make([]float64, m)}
	sumLog := 0.0
	for i := range m {
		opt.Diag[i] = 1 / a.At(i, i)
		sumLog += math.Log(a.At(i, i))
	}
	opt.MeanField = full - 0.5*(sumLog-logDetA)
	opt.Cov = mat.NewSymDense(m, nil)
	if err := ch.InverseTo(opt.Cov); err != nil {
		return nil, err
	}
	return opt, nil
}
