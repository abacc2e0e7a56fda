package methods

import (
	"fmt"

	"sgplab/gp/kernels"
)

// agpr is exact GP regression with an additive prior (the VISH paper's
// A-GPR baseline, Dutordoir et al. 2020, Table 1):
//
//	f(x) = Σ_d f_d(x_d),  f_d ~ GP(0, k_d),  k(x, x') = Σ_d k_d(x_d, x'_d),
//
// each k_d a 1-D stationary kernel with its own variance σ_d² and
// lengthscale ℓ_d. The objective is the exact log marginal likelihood
//
//	log p(y) = −½ yᵀ(K + σ²I)⁻¹y − ½ log|K + σ²I| − (N/2) log 2π,
//
// maximised over every σ_d², ℓ_d and σ² by L-BFGS; prediction is the exact
// posterior. It is gpr with kernel additive(k), with the initial variance
// split evenly over the D components (as avff does) so that k(x, x) starts
// at the variance parameter whatever D is.
func init() {
	var docs []ParamDoc
	for _, d := range KernelParamsFor(KernelDefaults{Kernel: "se", Choices: []string{"se", "matern12", "matern32", "matern52"},
		KernelDoc: "1-D stationary kernel k_d of every input dimension"}) {
		switch d.Name {
		case "ard":
			continue // every dimension has its own 1-D kernel and lengthscale
		case "variance":
			d.Doc = "initial prior variance k(x, x) = Σ_d σ_d², split evenly over the D components"
		case "lengthscales":
			d.Doc = "initial lengthscale of each dimension's 1-D kernel: one value for all, or one per input dimension"
		}
		docs = append(docs, d)
	}
	Register(Method{
		Name:    "agpr",
		Summary: "additive exact GP regression: k = Σ_d k_d(x_d, x'_d), one 1-D kernel per input, log marginal likelihood by L-BFGS, O(N³)",
		Paper:   "baseline A-GPR in Dutordoir, Durrande & Hensman (2020)",
		Tasks:   []Task{Regression},
		Params: concat(docs, NoiseParams(), []ParamDoc{
			{Name: "jitter", Kind: Float, Default: 0.0, Range: NonNegative, Doc: "added to the diagonal of K + σ²I before factorising it"},
			{Name: "max_points", Kind: Int, Default: 20000, Range: Count, Doc: "refuse training sets larger than this (O(N²) memory)"},
		}),
		New:   newExactGPR("agpr", newAdditiveKernel),
		Fit:   exactRecipe,
		Exact: true,
		Needs: exactNeeds(0),
	})
}

// newAdditiveKernel builds Σ_d k_d on dim inputs from p: component d has
// variance p.variance / dim and lengthscale p.lengthscales[d] (or the one
// value given).
func newAdditiveKernel(p Params, dim int) (kernels.Kernel, error) {
	ls := initialLengthscales(p)
	if len(ls) != 1 && len(ls) != dim {
		return nil, fmt.Errorf("lengthscales has %d values for %d input dimensions; give 1 or %d", len(ls), dim, dim)
	}
	parts := make([]kernels.Kernel, dim)
	for d := range parts {
		l := ls[0]
		if len(ls) == dim {
			l = ls[d]
		}
		var err error
		parts[d], err = kernels.New(p.String("kernel"), 1, kernels.Options{Variance: p.Float("variance") / float64(dim), Lengthscales: []float64{l}})
		if err != nil {
			return nil, err
		}
	}
	return kernels.Additive(parts...)
}
