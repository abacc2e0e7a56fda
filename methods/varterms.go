package methods

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp"
	"sgplab/gp/inference"
)

// Artifacts of the block (SVGP and orthogonally decoupled) models on 1-D
// inputs, for the figures of Tiao, Dutordoir & Picheny (2023).
const (
	// ArtifactVarianceTerms is the predictive decomposition of eq. (12) on
	// a dense grid of VarianceTermsPoints inputs over the training inputs'
	// range widened by a tenth of its width on each side (coordinates as
	// the model saw them), one row per input, columns:
	//
	//	x0           the input
	//	mean, var_f  the predictive mean and variance of f
	//	kff          the prior variance k(x, x)
	//	var_g        Var g(x) = Q(x, x) = k_u(x)ᵀ Kuu⁻¹ k_u(x), the prior variance of the projection on the base set
	//	var_h        Var h(x) = k(x, x) − Q(x, x), the prior variance of the orthogonal part
	//	base_cov     Q_{*u} C_u Q_{u*} (the base set's q(u))
	//	orth_cov     S_{*v} S_vv⁻¹ C_v' S_vv⁻¹ S_{v*} (0 without an orthogonal set)
	//	orth_prior   S_{*v} S_vv⁻¹ S_{v*}, subtracted (0 without an orthogonal set)
	//
	// so var_f = var_h + base_cov + orth_cov − orth_prior (Fig. 5), and
	// kff = var_g + var_h (Fig. 1).
	ArtifactVarianceTerms = "variance_terms"
	// ArtifactInducingInputs lists the inducing inputs of the point sets
	// (columns x0, …, set: 0 base, 1 orthogonal), as the model saw them.
	ArtifactInducingInputs = "inducing_inputs"
)

// VarianceTermsPoints is the number of grid inputs of ArtifactVarianceTerms.
const VarianceTermsPoints = 301

var varianceTermsColumns = []string{"x0", "mean", "var_f", "kff", "var_g", "var_h", "base_cov", "orth_cov", "orth_prior"}

// varianceTermsArtifact evaluates the block model bound by bind on the
// dense 1-D grid of ArtifactVarianceTerms over train's inputs.
func varianceTermsArtifact(method string, train gp.Data, bind inference.BlockBinder, opt inference.Options) (Artifact, error) {
	if train.X == nil {
		return Artifact{}, fmt.Errorf("%s: %s needs the training inputs", method, ArtifactVarianceTerms)
	}
	n, d := train.X.Dims()
	if d != 1 || n == 0 {
		return Artifact{}, fmt.Errorf("%s: %s is drawn over 1-D inputs; the training inputs have %d columns", method, ArtifactVarianceTerms, d)
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for i := 0; i < n; i++ {
		v := train.X.At(i, 0)
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	w := hi - lo
	if w == 0 {
		w = 1
	}
	lo, hi = lo-w/10, hi+w/10
	g := VarianceTermsPoints
	x := mat.NewDense(g, 1, nil)
	for i := 0; i < g; i++ {
		x.Set(i, 0, lo+(hi-lo)*float64(i)/float64(g-1))
	}
	p, err := inference.BlockPredict(x, bind, opt)
	if err != nil {
		return Artifact{}, fmt.Errorf("%s: %s: %w", method, ArtifactVarianceTerms, err)
	}
	at := func(v [][]float64, b, i int) float64 {
		if b < len(v) && v[b] != nil {
			return v[b][i]
		}
		if b < len(v) {
			return math.NaN() // a mean-only block has no variance terms
		}
		return 0 // no such block
	}
	a := Artifact{Name: ArtifactVarianceTerms, Columns: varianceTermsColumns, Rows: g}
	for i := 0; i < g; i++ {
		vg := at(p.Prior, 0, i)
		a.Data = append(a.Data, x.At(i, 0), p.Mean[i], p.Var[i], p.Kff[i], vg, p.Kff[i]-vg,
			at(p.Cov, 0, i), at(p.Cov, 1, i), at(p.Prior, 1, i))
	}
	return a, nil
}

// inducingInputsArtifact lists the rows of the point sets zs (nil entries
// are sets of another kind) with their set index.
func inducingInputsArtifact(zs ...*mat.Dense) (Artifact, error) {
	a := Artifact{Name: ArtifactInducingInputs}
	for s, z := range zs {
		if z == nil {
			continue
		}
		r, d := z.Dims()
		if a.Columns == nil {
			for j := 0; j < d; j++ {
				a.Columns = append(a.Columns, fmt.Sprintf("x%d", j))
			}
			a.Columns = append(a.Columns, "set")
		}
		if len(a.Columns) != d+1 {
			return Artifact{}, fmt.Errorf("%s: the point sets have different dimensions", ArtifactInducingInputs)
		}
		for i := 0; i < r; i++ {
			a.Data = append(a.Data, z.RawRowView(i)...)
			a.Data = append(a.Data, float64(s))
			a.Rows++
		}
	}
	if a.Rows == 0 {
		return Artifact{}, fmt.Errorf("%s: the model has no inducing points", ArtifactInducingInputs)
	}
	return a, nil
}

// unknownArtifact is the error for an artifact name a model does not export.
func unknownArtifact(method, name string, offered ...string) error {
	return fmt.Errorf("%s exports no artifact %q; it offers %v", method, name, offered)
}
