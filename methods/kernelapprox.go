package methods

import (
	"context"
	"fmt"
	"math"
	"strconv"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp"
	"sgplab/gp/ad"
	"sgplab/gp/features"
	"sgplab/gp/inference"
	"sgplab/gp/kernels"
	"sgplab/gp/param"
)

// The kernel-approx method does no inference: it evaluates the prior
// covariance an inducing-feature set implies, Q(x, x') = k_xu Kuu⁻¹ k_ux',
// against the kernel k on a grid, for figures such as VOF Figure 1. Its
// artifacts are the two grid matrices; its metrics the approximation error.
func init() {
	Register(Method{
		Name:    "kernel-approx",
		Summary: "prior kernel approximation Q = k_xu Kuu⁻¹ k_ux of a feature set on a 1-D grid (no training)",
		Paper:   "Burt, Rasmussen & van der Wilk (2020), Fig. 1",
		Tasks:   []Task{Regression},
		Params: concat([]ParamDoc{
			{Name: "feature", Kind: String, Default: "vof-trig", Choices: []string{"vof-trig", "vof-hermite"}, Doc: "inducing features (a registered feature builder)"},
		}, KernelParamsFor(KernelDefaults{Kernel: "matern32", Choices: []string{"se", "matern12", "matern32", "matern52"},
			KernelDoc: "kernel family", Lengthscale: 0.2, OneD: true}), []ParamDoc{
			{Name: "num_features", Kind: Int, Default: 31, Range: Count, Doc: "M (odd for vof-trig: M = 2J+1)"},
			{Name: "a", Kind: Float, Default: 10.0, Range: Positive, Doc: "vof-trig half-width of the frequency interval [−a, a]"},
			{Name: "sigma_x", Kind: Float, Default: 1.0, Range: Positive, Doc: "vof-hermite input-density std σx"},
			{Name: "grid_low", Kind: Float, Default: -3.0, Doc: "grid start"},
			{Name: "grid_high", Kind: Float, Default: 3.0, Doc: "grid end"},
			{Name: "grid_n", Kind: Int, Default: 121, Range: Between(2, 2000), Doc: "grid points"},
		}),
		Fit: NoFit,
		New: newKernelApprox,
		Check: func(p Params) error {
			if lo, hi := p.Float("grid_low"), p.Float("grid_high"); !(hi > lo) {
				return paramErr("grid_high", fmt.Errorf("need grid_high > grid_low, got [%v, %v]", lo, hi))
			}
			if ls := initialLengthscales(p); len(ls) != 1 {
				return paramErr("lengthscales", fmt.Errorf("%d values; the grid is 1-D, give one", len(ls)))
			}
			fb, err := Feature(p.String("feature"))
			if err != nil {
				return err
			}
			_, err = fb.Count(CountContext{Params: p, Shape: Shape{D: 1}})
			return err
		},
	})
}

type kernelApprox struct {
	p      Params
	grid   *mat.Dense // grid_n×1
	q, k   *mat.Dense // grid_n×grid_n
	kernel kernels.Kernel
	set    *param.Set
	feat   features.Feature
}

func newKernelApprox(p Params) (Model, error) {
	n := p.Int("grid_n")
	lo, hi := p.Float("grid_low"), p.Float("grid_high")
	k, err := NewKernel(p, 1)
	if err != nil {
		return nil, fmt.Errorf("kernel-approx: %w", err)
	}
	fb, err := Feature(p.String("feature"))
	if err != nil {
		return nil, fmt.Errorf("kernel-approx: %w", err)
	}
	built, err := fb.Build(&FeatureContext{Params: p, Request: p.Int("num_features"), Kernel: k})
	if err != nil {
		return nil, fmt.Errorf("kernel-approx: %w", err)
	}
	f := built.Feature
	s := param.NewSet()
	if err := k.Declare(s, KernelPrefix); err != nil {
		return nil, err
	}
	if err := f.Declare(s, vofFeaturePrefix); err != nil {
		return nil, err
	}
	grid := mat.NewDense(n, 1, nil)
	for i := 0; i < n; i++ {
		grid.Set(i, 0, lo+(hi-lo)*float64(i)/float64(n-1))
	}
	return &kernelApprox{p: p, grid: grid, kernel: k, set: s, feat: f}, nil
}

// approx returns Q(x, z) = Kuf(x)ᵀ Kuu⁻¹ Kuf(z).
func (m *kernelApprox) approx(x, z *mat.Dense) (*mat.Dense, error) {
	kx, solved, err := m.solve(x, z)
	if err != nil {
		return nil, err
	}
	var q mat.Dense
	q.Mul(kx.T(), solved)
	return &q, nil
}

// solve returns Kuf(x) and Kuu⁻¹ Kuf(z), factorising Kuu once.
func (m *kernelApprox) solve(x, z *mat.Dense) (kx, solved *mat.Dense, err error) {
	t := ad.NewTape()
	b := m.set.Bind(t)
	kb := m.kernel.Bind(b, KernelPrefix)
	fb := m.feat.Bind(b, vofFeaturePrefix)
	kx = fb.Kuf(kb, t.Const(x)).Value()
	kz := kx
	if z != x {
		kz = fb.Kuf(kb, t.Const(z)).Value()
	}
	solved = new(mat.Dense)
	st, err := features.StructureOf(kb, fb, inference.DefaultMaxTries, features.FormDiag|features.FormPrecision)
	if err != nil {
		return nil, nil, fmt.Errorf("kernel-approx: %w", err)
	}
	if st.Diag != nil || st.Precision != nil {
		solved.CloneFrom(kz)
		r, c := solved.Dims()
		for i := 0; i < r; i++ {
			for j := 0; j < c; j++ {
				if st.Diag != nil {
					solved.Set(i, j, solved.At(i, j)/st.Diag.Value().At(i, 0))
				} else {
					solved.Set(i, j, solved.At(i, j)*st.Precision.Value().At(i, 0))
				}
			}
		}
		return kx, solved, nil
	}
	kuu := st.Dense.Value()
	r, _ := kuu.Dims()
	sym := mat.NewSymDense(r, nil)
	for i := 0; i < r; i++ {
		for j := 0; j <= i; j++ {
			sym.SetSym(i, j, (kuu.At(i, j)+kuu.At(j, i))/2)
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(sym) {
		return nil, nil, fmt.Errorf("kernel-approx: Kuu of %s is not positive definite", m.feat.Name())
	}
	if err := ch.SolveTo(solved, kz); err != nil {
		return nil, nil, fmt.Errorf("kernel-approx: %w", err)
	}
	return kx, solved, nil
}

// Fit evaluates Q and k on the grid; there is nothing to train.
func (m *kernelApprox) Fit(ctx context.Context, train gp.Data, opt FitOptions, progress func(Progress)) (FitResult, error) {
	if err := ctx.Err(); err != nil {
		return FitResult{}, err
	}
	q, err := m.approx(m.grid, m.grid)
	if err != nil {
		return FitResult{}, err
	}
	m.q = q
	m.k = kernels.Matrix(m.kernel, m.set, KernelPrefix, m.grid, m.grid)
	n, _ := q.Dims()
	maxErr, sumSq := 0.0, 0.0
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			d := q.At(i, j) - m.k.At(i, j)
			maxErr = math.Max(maxErr, math.Abs(d))
			sumSq += d * d
		}
	}
	mid := n / 2 // the grid point nearest the centre
	extra := map[string]float64{
		"max_abs_error": maxErr,
		"rms_error":     math.Sqrt(sumSq / float64(n*n)),
		// Q(x, x)/k(x, x) at the centre: the fraction of prior variance kept
		// (the band-limited k(0) for vof-trig with enough features).
		"variance_fraction_centre": q.At(mid, mid) / m.k.At(mid, mid),
		"num_features":             float64(m.p.Int("num_features")),
	}
	return FitResult{Objective: math.NaN(), Extra: extra, Hyper: m.set.Natural()}, nil
}

// Predict returns the approximate prior at x: mean 0, variance Q(x, x).
// It needs no Fit. Kuu is factorised once for all of x, and only the
// diagonal of Q is formed (O(NM) memory, not N×N).
func (m *kernelApprox) Predict(x *mat.Dense) (Prediction, error) {
	if x == nil {
		return Prediction{}, fmt.Errorf("kernel-approx: Predict with no inputs")
	}
	n, d := x.Dims()
	if d != 1 {
		return Prediction{}, fmt.Errorf("kernel-approx: test inputs have %d columns; the kernel approximation is 1-D, give one", d)
	}
	if err := checkFinite("kernel-approx", x); err != nil {
		return Prediction{}, err
	}
	kx, solved, err := m.solve(x, x)
	if err != nil {
		return Prediction{}, err
	}
	p := Prediction{Mean: make([]float64, n), VarF: make([]float64, n), VarY: make([]float64, n)}
	for i := 0; i < n; i++ {
		p.VarF[i] = math.Max(mat.Dot(kx.ColView(i), solved.ColView(i)), 0)
		p.VarY[i] = p.VarF[i] + 1e-12
	}
	return p, nil
}

// Artifact exports "kernel_matrix" (Q on the grid) or "exact_kernel" (k);
// columns are the grid coordinates, and so are the rows.
func (m *kernelApprox) Artifact(name string, _, _ gp.Data) (Artifact, error) {
	var src *mat.Dense
	switch name {
	case "kernel_matrix":
		src = m.q
	case "exact_kernel":
		src = m.k
	default:
		return Artifact{}, fmt.Errorf("kernel-approx offers kernel_matrix and exact_kernel, not %q", name)
	}
	if src == nil {
		return Artifact{}, fmt.Errorf("kernel-approx: %s asked for before Fit", name)
	}
	n, _ := src.Dims()
	a := Artifact{Name: name, Rows: n, Columns: make([]string, n), Data: make([]float64, 0, n*n)}
	for j := 0; j < n; j++ {
		a.Columns[j] = strconv.FormatFloat(m.grid.At(j, 0), 'g', 6, 64)
	}
	for i := 0; i < n; i++ {
		a.Data = append(a.Data, src.RawRowView(i)...)
	}
	return a, nil
}
