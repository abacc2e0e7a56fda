package inference

import (
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
	"sgplab/gp/features"
	"sgplab/gp/kernels"
	"sgplab/gp/likelihoods"
	"sgplab/internal/testhelp"
)

// precFeature has a fixed Kuf (for one input set) and a diagonal Kuu given
// by its precision, which may vanish (infinite prior variance).
type precFeature struct {
	phi  *mat.Dense
	prec []float64
}

func (f precFeature) M() int { return len(f.prec) }
func (f precFeature) Kuu(kernels.Bound) *ad.Node {
	panic("precFeature: dense Kuu requested")
}
func (f precFeature) Kuf(_ kernels.Bound, x *ad.Node) *ad.Node { return x.Tape().Const(f.phi) }
func (f precFeature) KuuStructure(k kernels.Bound, _ int, _ features.Forms) (features.KuuStructure, error) {
	return features.KuuStructure{Precision: k.(seBound).variance.Tape().Const(mat.NewDense(len(f.prec), 1, f.prec))}, nil
}

// TestSVGPPrecisionDropsZeroPrecisionFeatures: on the whitened SVGP path a
// feature with zero precision (infinite Kuu entry, e.g. arc-cosine VISH's
// vanishing Funk–Hecke coefficients) drops out: with its q coordinate at
// the prior, the ELBO equals the ELBO without that feature; the
// non-whitened path, which needs log|Kuu|, reports an error.
func TestSVGPPrecisionDropsZeroPrecisionFeatures(t *testing.T) {
	p := newProblem(21, 15, 1, 0.2)
	rng := rand.New(rand.NewPCG(1, 1))
	m, keep := 6, []int{0, 2, 3, 5}
	full := precFeature{phi: testhelp.RandMat(rng, m, 15, 1), prec: []float64{0.7, 0, 1.3, 2.1, 0, 0.4}}
	red := precFeature{phi: mat.NewDense(len(keep), 15, nil), prec: make([]float64, len(keep))}
	muF, sqF := mat.NewDense(m, 1, nil), mat.NewDense(m, m, nil)
	muR, sqR := randomQ(rng, len(keep))
	for i := 0; i < m; i++ {
		sqF.Set(i, i, 1)
	}
	for a, i := range keep {
		red.phi.SetRow(a, full.phi.RawRowView(i))
		red.prec[a] = full.prec[i]
		muF.Set(i, 0, muR.At(a, 0))
		for c, j := range keep {
			if c <= a {
				sqF.Set(i, j, sqR.At(a, c))
			}
		}
	}
	lik := likelihoods.NewGaussian(1)
	elbo := func(f precFeature, mu, sq *mat.Dense, whiten bool) (float64, error) {
		tape := ad.NewTape()
		b := p.set.Bind(tape)
		q := Variational{Mu: tape.Const(mu), Sqrt: tape.Const(sq), Whiten: whiten}
		ve := func(mu, v *ad.Node) *ad.Node { return lik.VarExp(b, "", mu, v, column(p.y)) }
		out, _, err := SVGP(p.kernel(b), f, tape.Const(p.x), ve, q, 0, Options{})
		if err != nil {
			return 0, err
		}
		return out.Scalar(), nil
	}
	got, err := elbo(full, muF, sqF, true)
	if err != nil {
		t.Fatal(err)
	}
	want, err := elbo(red, muR, sqR, true)
	if err != nil {
		t.Fatal(err)
	}
	if e := testhelp.RelErr(got, want); e > 1e-12 {
		t.Errorf("ELBO with zero-precision features %.15g, without them %.15g", got, want)
	}
	if _, err := elbo(full, muF, sqF, false); err == nil {
		t.Error("non-whitened SVGP with zero precision: no error")
	}
}
