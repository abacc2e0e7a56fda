package methods

func init() {
	Register(Method{
		Name: "bspline",
		Summary: "cubic B-spline inter-domain features (ASVGP) on a regular grid over [min − 0.1, max + 0.1] per dimension, " +
			"banded Matérn Kuu, tensor product in D > 1; collapsed from ΦΦᵀ precomputed once, or SVGP",
		Paper: "Cunningham et al. (2023, ASVGP); baseline in Cheema & Rasmussen (2023)",
		Tasks: []Task{Regression},
		Params: intervalParams("matern52", "kronecker", []ParamDoc{
			{Name: "bases", Kind: Int, Default: 20,
				Doc: "cubic B-splines per dimension (knot spacing (b − a)/(bases − 3)); M = bases^D (Kronecker) or D·bases (additive)"},
		}),
		New: func(p Params) (Model, error) { return newIntervalModel("bspline", p, bsplineFeature) },
	})
}
