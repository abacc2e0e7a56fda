package methods

import (
	"errors"
	"fmt"

	"sgplab/gp/features"
	"sgplab/gp/kernels"
	"sgplab/gp/optim"
	"sgplab/gp/param"
)

// Interval features (VFF, A-VFF, B-splines) on a fixed box: a θ-independent
// Kuf = Φ(x), a structured Matérn Kuu, and either the collapsed bound from
// ΦΦᵀ, Φy, yᵀy precomputed once (O(M³) per step; only A = I + L⁻¹PL⁻ᵀ/σ² is
// factorised densely, with the feature's structured root L of Kuu) or the
// uncollapsed SVGP ELBO (whitened by the same root).

// intervalDecl declares an interval-feature method with the feature
// builder feature, whose size num_inducing chooses by size.
func intervalDecl(name, feature string, size *sizeRule) *sparseDecl {
	return &sparseDecl{
		name: name, tasks: []Task{Regression},
		kernel:    intervalKernel,
		blocks:    []blockDecl{{feature: builder(feature)}},
		objective: objectiveParam, optimizer: optim.LBFGS,
		qPrior: true, exactLML: true, size: size,
	}
}

// The size rules of the interval features: num_inducing chooses the
// frequencies or bases per dimension.
var (
	frequenciesRule = &sizeRule{param: "frequencies", min: 1}
	basesRule       = &sizeRule{param: "bases", min: 4}
)

func init() {
	Register(intervalDecl("vff", "vff", frequenciesRule).method(Method{
		Summary: "variational Fourier features on a box: 1-D, Kronecker (optionally masked) or additive; collapsed from ΦΦᵀ precomputed once, or SVGP",
		Paper:   "Hensman, Durrande & Solin (2017)",
		Params: intervalParams("matern52", "kronecker", vffMargin, []ParamDoc{
			{Name: "frequencies", Kind: Int, Default: 16, Range: Count,
				Doc: "frequencies per dimension, including 0: cos(ω_m(x−a)) for m < frequencies and sin for 1 ≤ m, so 2·frequencies−1 features per dimension"},
			{Name: "mask", Kind: Bool, Default: false,
				Doc: "Kronecker only: keep the grid points with Σ_d (m_d/(frequencies−1))² ≤ 1 (the IFF paper's refined VFF grid)"},
			sizeParam(frequenciesRule, "2f − 1 per dimension: (2f − 1)^D with structure = \"kronecker\", fewer with mask = true, D·(2f − 1) with \"additive\""),
		}),
		Check: checkInterval,
	}))
	Register(intervalDecl("avff", "vff", frequenciesRule).method(Method{
		Summary: "additive variational Fourier features: f = Σ_d f_d with one 1-D VFF set per dimension, " +
			"joint collapsed bound from ΦΦᵀ precomputed once (the VISH paper's A-VFF baseline)",
		Paper: "Hensman, Durrande & Solin (2017); baseline in Dutordoir et al. (2020)",
		Params: intervalParams("matern52", "additive", vffMargin, []ParamDoc{
			{Name: "frequencies", Kind: Int, Default: 30, Range: Count,
				Doc: "frequencies per dimension, including 0 (the VISH paper's 30: 59 features per dimension)"},
			sizeParam(frequenciesRule, "D·(2f − 1)"),
		}),
		Check: func(p Params) error {
			if p.String("structure") != "additive" {
				return paramErr("structure", errAVFFStructure)
			}
			return checkInterval(p)
		},
	}))
	Register(intervalDecl("bspline", "bspline", basesRule).method(Method{
		Summary: "cubic B-spline inter-domain features (ASVGP) on a regular grid over [min − 0.1, max + 0.1] per dimension, " +
			"banded Matérn Kuu, tensor product in D > 1; collapsed from ΦΦᵀ precomputed once, or SVGP",
		Paper: "Cunningham et al. (2023, ASVGP); baseline in Cheema & Rasmussen (2023)",
		Params: intervalParams("matern52", "kronecker", 0.1, []ParamDoc{
			{Name: "bases", Kind: Int, Default: 20, Range: AtLeast(4),
				Doc: "cubic B-splines per dimension, ≥ 4 (knot spacing (b − a)/(bases − 3)); M = bases^D (Kronecker) or D·bases (additive)"},
			sizeParam(basesRule, "bases^D with structure = \"kronecker\", D·bases with \"additive\""),
		}),
		Check: checkInterval,
	}))
}

// vffMargin is the default interval_margin of the VFF features, whose
// harmonics are periodic on the box; B-splines have compact support and
// keep the IFF paper's 0.1.
const vffMargin = 1.0

var errAVFFStructure = errors.New("avff: structure must be additive (use method vff for Kronecker features)")

// checkInterval rejects parameter combinations the interval methods
// cannot run.
func checkInterval(p Params) error {
	if p.Has("natgrad_step") && p.String("objective") != "svgp" {
		return paramErr("natgrad_step", fmt.Errorf("trains q(u) of the svgp objective; the collapsed objective has no q(u) (set objective = \"svgp\")"))
	}
	if p.Int("warm_start_iterations") > 0 && p.String("objective") != "svgp" {
		return paramErr("warm_start_iterations", fmt.Errorf("needs objective = \"svgp\" (the collapsed bound is trained by one L-BFGS run on all rows)"))
	}
	if p.Bool("mask") && p.String("structure") == "additive" {
		return paramErr("mask", fmt.Errorf("the frequency mask applies to the Kronecker structure only"))
	}
	return nil
}

// intervalParams are the parameters shared by the interval-feature methods.
func intervalParams(kernel, structure string, margin float64, extra []ParamDoc) []ParamDoc {
	// The shared kernel parameters (kernel, variance, lengthscales) with
	// interval-specific documentation; no ard: every dimension has its own
	// 1-D kernel and hence its own lengthscale.
	var docs []ParamDoc
	for _, d := range KernelParamsFor(KernelDefaults{Kernel: kernel, Choices: []string{"matern12", "matern32", "matern52"},
		KernelDoc: "1-D Matérn kernel of each dimension (VFF and B-spline Gram matrices exist for these only; Matérn-5/2 is the closest to the SE kernel of the other methods)"}) {
		switch d.Name {
		case "ard":
			continue
		case "variance":
			d.Doc = "initial prior variance k(x,x): the product kernel's first component (others fixed at 1), or split evenly over additive components"
		case "lengthscales":
			d.Doc = "initial lengthscale of each dimension's 1-D kernel: one value for all, or one per input dimension (the IFF paper's is 0.2)"
		}
		docs = append(docs, d)
	}
	docs = append(docs, NoiseParams()...)
	docs = append(docs, []ParamDoc{
		{Name: "structure", Kind: String, Default: structure, Choices: []string{"kronecker", "additive"},
			Doc: "kronecker: separable product kernel Π_d k_d, Kuu = ⊗ Kuu_d; additive: f = Σ_d f_d, block-diagonal Kuu"},
		{Name: "interval_margin", Kind: Float, Default: margin, Range: NonNegative,
			Doc: "box per dimension [min − margin, max + margin] of the training inputs (the IFF paper's is 0.1); VFF's harmonics are periodic on the box and miss part of the Matérn prior within about a lengthscale of its ends, so a margin of about a lengthscale avoids a floor on the bound (on standardised UCI inputs 1 beats 0.1 by 0.2–1.3 nats of test NLPD)"},
		{Name: "interval_lower", Kind: Floats, Doc: "explicit lower ends a_d (1 value or one per dimension); overrides interval_margin"},
		{Name: "interval_upper", Kind: Floats, Doc: "explicit upper ends b_d (1 value or one per dimension); overrides interval_margin"},
		{Name: "objective", Kind: String, Default: "collapsed", Choices: []string{"collapsed", "svgp"},
			Doc: "collapsed: Titsias bound from statistics precomputed once (O(M³) per step); svgp: uncollapsed ELBO with q(u) = N(m, S) trained jointly"},
		{Name: "whiten", Kind: Bool, Default: true, Doc: "svgp: whitened parameterisation u = L v with L the feature's structured square root of Kuu (no dense Cholesky); false: q over u, which needs a dense factorisation of Kuu every step"},
	}...)
	docs = append(docs, VariationalParams()...)
	return append(docs, extra...)
}

// intervalKernel is the kernel of the interval features on dim inputs: one
// 1-D Matérn kernel per dimension, multiplied (Kronecker structure, the
// components' variances after the first fixed at 1: only their product is
// identifiable) or added (the variance split evenly).
func intervalKernel(p Params, dim int, s *param.Set) (kernels.Kernel, error) {
	k, err := newIntervalKernel(p, dim)
	if err != nil {
		return nil, err
	}
	if err := k.Declare(s, KernelPrefix); err != nil {
		return nil, err
	}
	if dim > 1 && intervalStructure(p) == features.Kronecker {
		for i := 1; i < dim; i++ {
			s.SetTrainable(false, features.ComponentPrefix(KernelPrefix, i)+"variance")
		}
	}
	return k, nil
}

func newIntervalKernel(p Params, d int) (kernels.Kernel, error) {
	structure := intervalStructure(p)
	variance := p.Float("variance")
	ls := initialLengthscales(p)
	if len(ls) != 1 && len(ls) != d {
		return nil, paramErr("lengthscales", fmt.Errorf("%d values for %d input dimensions; give 1 or %d", len(ls), d, d))
	}
	parts := make([]kernels.Kernel, d)
	for i := range parts {
		v := 1.0
		switch {
		case structure == features.Additive:
			v = variance / float64(d)
		case i == 0:
			v = variance
		}
		l := ls[0]
		if len(ls) == d {
			l = ls[i]
		}
		var err error
		if parts[i], err = kernels.New(p.String("kernel"), 1, kernels.Options{Variance: v, Lengthscales: []float64{l}}); err != nil {
			return nil, err
		}
	}
	switch {
	case d == 1:
		return parts[0], nil
	case structure == features.Additive:
		return kernels.Additive(parts...)
	}
	return features.NewSeparable(parts...)
}
