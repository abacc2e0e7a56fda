package methods

import (
	"testing"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp"
	"sgplab/gp/ad"
	"sgplab/gp/features"
	"sgplab/gp/inference"
	"sgplab/gp/param"
)

// sparseOf is the sparse model behind a built model.
func sparseOf(t testing.TB, model Model) *sparseModel {
	t.Helper()
	switch m := model.(type) {
	case *sparseModel:
		return m
	case *exactSparseModel:
		return m.sparseModel
	}
	t.Fatalf("%T is not a sparse model", model)
	return nil
}

// buildSparse declares a model's parameters on data without training.
func buildSparse(t testing.TB, method string, raw map[string]any, train gp.Data, task Task) *sparseModel {
	t.Helper()
	model, err := Build(method, raw)
	if err != nil {
		t.Fatal(err)
	}
	m := sparseOf(t, model)
	m.obj = m.decl.objective(m.p)
	if err := m.build(train, FitOptions{Seed: 1, Task: task}); err != nil {
		t.Fatal(err)
	}
	return m
}

// feat is block 0's feature.
func (m *sparseModel) feat() features.Feature { return m.blocks[0].feat }

// interval is block 0's interval feature.
func (m *sparseModel) interval() *features.IntervalFeature {
	return m.blocks[0].feat.(*features.IntervalFeature)
}

// collapsed is the collapsed bound from the precomputed statistics; after
// Fit it needs the training inputs handed back (restoreInputs).
func (m *sparseModel) collapsed(t *ad.Tape, b *param.Bound) (*ad.Node, error) {
	return m.stats.objective(t, b)
}

// restoreInputs hands a model fitted from statistics its training inputs
// back: the bound's trace term reads them, and a fitted model drops them.
func (m *sparseModel) restoreInputs(x *mat.Dense) { m.stats.trainX = x }

// svgpELBO is the SVGP objective of block 0 on the minibatch (x, y) of a
// training set of n points. phi, when not nil, is the precomputed Kuf =
// Φ(x). structured hands the whitened form the feature's structured
// square root of Kuu, as Fit does; false (a dense Cholesky of Kuu) is the
// reference.
func (m *sparseModel) svgpELBO(t *ad.Tape, b *param.Bound, x *mat.Dense, y []float64, phi *mat.Dense, n int, structured bool) (*ad.Node, error) {
	var fb features.Bound = m.blocks[0].Bind(b, m.feat())
	if phi != nil {
		fb = fixedKuf{Bound: fb, phi: phi}
	}
	if !structured {
		fb = features.DenseKuu(fb)
	}
	ycol := columnOf(y)
	ve := func(mu, v *ad.Node) *ad.Node { return m.lik.VarExp(b, likelihoodPfx, mu, v, ycol) }
	out, _, err := inference.SVGP(m.kern.Bind(b, KernelPrefix), fb, t.Const(x), ve, m.q(b, 0), n, m.opts())
	return out, err
}
