package methods

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp"
	"sgplab/gp/ad"
	"sgplab/gp/features"
	"sgplab/gp/kernels"
	"sgplab/gp/param"
)

// The zonal-spectrum method does no inference: it reports one Funk–Hecke
// coefficient of level ℓ, either √λ_ℓ of a zonal kernel or ζ_ℓ of an
// activation unit on the same sphere (Tiao et al. 2023, Fig. 2: a spectra
// mismatch shows as levels where ζ_ℓ = 0 but λ_ℓ > 0). Both use the surface
// measure of package sphere, so the two are directly comparable: the unit
// σ(ẑᵀx̂) lies in the kernel's RKHS when Σ_ℓ ζ_ℓ² N(d,ℓ)/λ_ℓ converges.
// A grid sweeps level; each run's metric x_coefficient is one point.
func init() {
	Register(Method{
		Name:    "zonal-spectrum",
		Summary: "one Funk–Hecke coefficient: √λ_ℓ of a zonal kernel or ζ_ℓ of an activation unit (no training; spectra figures)",
		Paper:   "Tiao, Dutordoir & Picheny (2023), Fig. 2",
		Tasks:   []Task{Regression},
		Params: concat(zonalKernelParams("chordal-matern52"), []ParamDoc{
			{Name: "activation", Kind: String, Default: "relu", Choices: features.Activations(), Doc: "σ of the unit whose ζ_ℓ quantity = activation reports"},
			{Name: "level", Kind: Int, Default: 1, Range: Between(0, 200), Doc: "ℓ (0…200)"},
			{Name: "quantity", Kind: String, Default: "kernel", Choices: []string{"kernel", "activation"},
				Doc: "kernel: √λ_ℓ of the kernel; activation: |ζ_ℓ| of the unit (0 where it vanishes by parity)"},
		}),
		Fit: NoFit,
		New: func(p Params) (Model, error) { return &zonalSpectrum{p: p}, nil },
	})
}

type zonalSpectrum struct {
	p    Params
	kern kernels.Kernel
	set  *param.Set
	dim  int
}

// Fit computes the coefficient on the sphere of the training inputs'
// augmented dimension d (D inputs plus the bias columns).
func (m *zonalSpectrum) Fit(ctx context.Context, train gp.Data, opt FitOptions, progress func(Progress)) (FitResult, error) {
	if err := ctx.Err(); err != nil {
		return FitResult{}, err
	}
	if err := train.Validate(); err != nil {
		return FitResult{}, fmt.Errorf("zonal-spectrum: %w", err)
	}
	var err error
	m.dim = train.D()
	if m.kern, err = newZonalKernel(m.p, m.dim); err != nil {
		return FitResult{}, fmt.Errorf("zonal-spectrum: %w", err)
	}
	m.set = param.NewSet()
	if err := m.kern.Declare(m.set, KernelPrefix); err != nil {
		return FitResult{}, fmt.Errorf("zonal-spectrum: %w", err)
	}
	zb, ok := m.kern.Bind(m.set.Bind(ad.NewTape()), KernelPrefix).(kernels.ZonalBound)
	if !ok {
		return FitResult{}, fmt.Errorf("zonal-spectrum: kernel %q is not zonal", m.p.String("kernel"))
	}
	l := m.p.Int("level")
	d := zb.SphereDim()
	var c float64
	switch m.p.String("quantity") {
	case "kernel":
		lam, err := zb.Coefficients(l)
		if err != nil {
			return FitResult{}, fmt.Errorf("zonal-spectrum: %w", err)
		}
		// Quadrature noise can leave a vanishing level at −1e−17: clamp.
		c = math.Sqrt(math.Max(lam.Value().At(l, 0), 0))
	default:
		zeta, err := features.ActivationZeta(m.p.String("activation"), d, l+1)
		if err != nil {
			return FitResult{}, fmt.Errorf("zonal-spectrum: %w", err)
		}
		c = math.Abs(zeta[l])
	}
	extra := map[string]float64{"coefficient": c, "sphere_dim": float64(d)}
	return FitResult{Objective: math.NaN(), Extra: extra, Hyper: m.set.Natural()}, nil
}

// Predict returns the prior at x (mean 0, variance k(x, x)), so that a run
// is scored like any other; nothing is learnt.
func (m *zonalSpectrum) Predict(x *mat.Dense) (Prediction, error) {
	if err := checkInputs("zonal-spectrum", m.set != nil, x, m.dim); err != nil {
		return Prediction{}, err
	}
	v := kernels.DiagValues(m.kern, m.set, KernelPrefix, x)
	return Prediction{Mean: make([]float64, len(v)), VarF: v, VarY: v}, nil
}
