package methods

func init() {
	Register(Method{
		Name: "avff",
		Summary: "additive variational Fourier features: f = Σ_d f_d with one 1-D VFF set per dimension, " +
			"joint collapsed bound from ΦΦᵀ precomputed once (the VISH paper's A-VFF baseline)",
		Paper: "Hensman, Durrande & Solin (2017); baseline in Dutordoir et al. (2020)",
		Tasks: []Task{Regression},
		Params: intervalParams("matern32", "additive", []ParamDoc{
			{Name: "frequencies", Kind: Int, Default: 30,
				Doc: "frequencies per dimension, including 0 (the VISH paper's 30: 59 features per dimension)"},
		}),
		New: func(p Params) (Model, error) {
			if p.String("structure") != "additive" {
				return nil, errAVFFStructure
			}
			return newIntervalModel("avff", p, vffFeature)
		},
	})
}
