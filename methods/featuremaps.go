package methods

import (
	"context"
	"fmt"
	"math"
	"strconv"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp"
	"sgplab/gp/kernels"
	"sgplab/gp/sphere"
)

// The feature-maps method does no inference: it draws what an inducing
// feature set is, for the VISH paper's illustrations (Dutordoir et al.
// 2020, Figs. 2–4). Its artifacts are
//
//   - "prior_variance": log₁₀ of the prior variance of each feature's L2
//     projection ⟨f, φ⟩ (vish-spec decision §6.15) relative to the
//     largest (0 for the constant feature, −k for k decades less). For
//     vff-2d the cell (i, j) is the product feature φ_i(x₁)φ_j(x₂) of the
//     1-D Fourier basis φ_0 = 1, φ_{2q−1} = sin(q·), φ_{2q} = cos(q·) on
//     [0, 2π], with variance S(q_i)S(q_j), S the Matérn-3/2 spectral
//     density (unit lengthscale); for vish-s2 row ℓ holds the 2ℓ + 1
//     harmonics of level ℓ on S² (2 inputs + bias, d = 3), centred, with
//     the spherical Matérn-3/2 coefficient λ_ℓ = S(√(ℓ(ℓ+1))) (κ = 1,
//     spectral dimension 2), NaN outside the triangle;
//   - "selected_variance": the same with NaN outside the first
//     num_features features in each method's order (VFF: i, j below
//     √M, the square; VISH: complete levels, the triangle);
//   - "harmonic_map" (harmonic-s2): the harmonic number harmonic (levels
//     in order, ℓ² + k for the k-th of level ℓ) of the orthonormal basis
//     of gp/sphere on an equirectangular grid, rows polar angle θ ∈ [0, π]
//     from the north pole, columns azimuth φ ∈ [0, 2π].
func init() {
	Register(Method{
		Name:    "feature-maps",
		Summary: "pictures of inducing features (no training): prior variance per feature of 2-D VFF and of VISH on S², maps of the spherical harmonics",
		Paper:   "Dutordoir, Durrande & Hensman (2020), Figs. 2–4",
		Tasks:   []Task{Regression},
		Params: []ParamDoc{
			{Name: "feature", Kind: String, Default: "vish-s2", Choices: []string{"vff-2d", "vish-s2", "harmonic-s2"},
				Doc: "vff-2d: products of 1-D Fourier features; vish-s2: spherical harmonics on S²; harmonic-s2: a map of one harmonic"},
			{Name: "num_features", Kind: Int, Default: 49, Range: Count, Doc: "M of the selection drawn in selected_variance (a square for vff-2d, complete levels for vish-s2)"},
			{Name: "size", Kind: Int, Default: 13, Range: Between(1, 200), Doc: "vff-2d: 1-D basis functions per axis; vish-s2: levels drawn (0…size−1)"},
			{Name: "harmonic", Kind: Int, Default: 0, Range: Between(0, 399), Doc: "harmonic-s2: index ℓ² + k of the harmonic (k = 0…2ℓ)"},
			{Name: "grid_n", Kind: Int, Default: 61, Range: Between(3, 1000), Doc: "harmonic-s2: polar-angle grid points (2 grid_n − 1 azimuths)"},
		},
		Fit: NoFit,
		New: newFeatureMaps,
	})
}

type featureMaps struct {
	p      Params
	arts   map[string]*mat.Dense
	labels map[string][]string
}

func newFeatureMaps(p Params) (Model, error) { return &featureMaps{p: p}, nil }

// matern32Density1D is the Matérn-3/2 spectral density with unit variance
// and lengthscale at angular frequency ω: 4λ³/(λ² + ω²)², λ = √3.
func matern32Density1D(w float64) float64 {
	l2 := 3.0
	return 4 * math.Sqrt(27) / ((l2 + w*w) * (l2 + w*w))
}

func (m *featureMaps) Fit(_ context.Context, _ gp.Data, opt FitOptions, _ func(Progress)) (FitResult, error) {
	if err := checkTask("feature-maps", opt, Regression); err != nil {
		return FitResult{}, err
	}
	size, sel := m.p.Int("size"), m.p.Int("num_features")
	m.arts, m.labels = map[string]*mat.Dense{}, map[string][]string{}
	extra := map[string]float64{}
	switch m.p.String("feature") {
	case "vff-2d":
		side := int(math.Sqrt(float64(sel)))
		if side*side != sel {
			return FitResult{}, fmt.Errorf("feature-maps: vff-2d selects a square, num_features = %d is not a square", sel)
		}
		all, chosen := mat.NewDense(size, size, nil), mat.NewDense(size, size, nil)
		freq := func(i int) float64 { return float64((i + 1) / 2) } // φ_0 = 1, then sin, cos of 1, 2, …
		top := matern32Density1D(0) * matern32Density1D(0)
		for i := 0; i < size; i++ {
			for j := 0; j < size; j++ {
				v := math.Log10(matern32Density1D(freq(i)) * matern32Density1D(freq(j)) / top)
				all.Set(i, j, v)
				chosen.Set(i, j, math.NaN())
				if i < side && j < side {
					chosen.Set(i, j, v)
				}
			}
		}
		m.arts["prior_variance"], m.arts["selected_variance"] = all, chosen
		extra["num_features"] = float64(sel)
	case "vish-s2":
		levels := 0
		for sphere.CumulativeCount(3, levels) < sel {
			levels++
		}
		if sphere.CumulativeCount(3, levels) != sel {
			return FitResult{}, fmt.Errorf("feature-maps: vish-s2 selects complete levels, num_features = %d is not (L+1)²", sel)
		}
		width := 2*size - 1
		all, chosen := mat.NewDense(size, width, nil), mat.NewDense(size, width, nil)
		top := kernels.SphereSpectralDensity(1.5, 3, 1, 0)
		for l := 0; l < size; l++ {
			v := math.Log10(kernels.SphereSpectralDensity(1.5, 3, 1, math.Sqrt(float64(l*(l+1)))) / top)
			for c := 0; c < width; c++ {
				all.Set(l, c, math.NaN())
				chosen.Set(l, c, math.NaN())
				if c >= size-1-l && c <= size-1+l {
					all.Set(l, c, v)
					if l <= levels {
						chosen.Set(l, c, v)
					}
				}
			}
		}
		m.arts["prior_variance"], m.arts["selected_variance"] = all, chosen
		extra["num_features"] = float64(sel)
	case "harmonic-s2":
		h := m.p.Int("harmonic")
		l := int(math.Sqrt(float64(h)))
		basis, err := sphere.NewBasisLevels(3, []int{l})
		if err != nil {
			return FitResult{}, fmt.Errorf("feature-maps: %w", err)
		}
		nt := m.p.Int("grid_n")
		np := 2*nt - 1
		pts := mat.NewDense(nt*np, 3, nil)
		for a := 0; a < nt; a++ {
			th := math.Pi * float64(a) / float64(nt-1)
			for b := 0; b < np; b++ {
				ph := 2 * math.Pi * float64(b) / float64(np-1)
				pts.SetRow(a*np+b, []float64{math.Sin(th) * math.Cos(ph), math.Sin(th) * math.Sin(ph), math.Cos(th)})
			}
		}
		phi, err := basis.Eval(pts)
		if err != nil {
			return FitResult{}, fmt.Errorf("feature-maps: %w", err)
		}
		row := phi.RawRowView(h - l*l)
		m.arts["harmonic_map"] = mat.NewDense(nt, np, append([]float64(nil), row...))
		cols := make([]string, np)
		for b := range cols {
			cols[b] = strconv.FormatFloat(360*float64(b)/float64(np-1), 'g', 4, 64)
		}
		m.labels["harmonic_map"] = cols
		extra["level"] = float64(l)
		extra["num_features"] = 1
	}
	return FitResult{Objective: math.NaN(), Extra: extra}, nil
}

// Predict returns a zero mean and unit variance: the method has no
// posterior, only pictures (its grids list no predictive metrics).
func (m *featureMaps) Predict(x *mat.Dense) (Prediction, error) {
	if x == nil {
		return Prediction{}, fmt.Errorf("feature-maps: Predict with no inputs")
	}
	n, _ := x.Dims()
	p := Prediction{Mean: make([]float64, n), VarF: make([]float64, n), VarY: make([]float64, n)}
	for i := range p.VarF {
		p.VarF[i], p.VarY[i] = 1, 1
	}
	return p, nil
}

// Artifact exports the pictures Fit computed (see the method's doc).
func (m *featureMaps) Artifact(name string, _, _ gp.Data) (Artifact, error) {
	src, ok := m.arts[name]
	if !ok {
		if m.arts == nil {
			return Artifact{}, fmt.Errorf("feature-maps: %s asked for before Fit", name)
		}
		return Artifact{}, fmt.Errorf("feature-maps with feature = %s offers %v, not %q", m.p.String("feature"), keysOf(m.arts), name)
	}
	r, c := src.Dims()
	cols := m.labels[name]
	if cols == nil {
		cols = make([]string, c)
		for j := range cols {
			cols[j] = strconv.Itoa(j)
		}
	}
	return Artifact{Name: name, Columns: cols, Rows: r, Data: append([]float64(nil), src.RawMatrix().Data...)}, nil
}

func keysOf(m map[string]*mat.Dense) []string {
	var out []string
	for _, k := range []string{"prior_variance", "selected_variance", "harmonic_map"} {
		if _, ok := m[k]; ok {
			out = append(out, k)
		}
	}
	return out
}
