package methods

import (
	"context"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp"
	"sgplab/gp/ad"
	"sgplab/gp/inference"
	"sgplab/gp/kernels"
)

// TestVarianceTermsArtifact checks the eq. (12) decomposition exported for
// Figs. 1 and 3–5 of Tiao et al. (2023) against the models' own Predict
// (an independent code path for activated SVGP and SVGP) and the
// identities kff = Var g + Var h and var_f = Var h + base_cov + orth_cov −
// orth_prior, and that Var h vanishes at the inducing inputs (Fig. 1).
func TestVarianceTermsArtifact(t *testing.T) {
	train := firstColumn(toyData(1, 60, 0.1))
	for _, tc := range []struct {
		method string
		raw    map[string]any
		orth   bool
	}{
		{"svgp", map[string]any{"num_inducing": int64(4), "whiten": false}, false},
		{"svgp", map[string]any{"num_inducing": int64(5), "whiten": true}, false},
		{"activated-svgp", map[string]any{"num_inducing": int64(6), "activation_levels": int64(8), "activation": "relu"}, false},
		{"spherical-orthogonal", map[string]any{"num_inducing": int64(6), "num_orthogonal": int64(4), "activation_levels": int64(8), "kernel": "chordal-matern52"}, true},
		{"solvegp", map[string]any{"num_inducing": int64(4), "num_orthogonal": int64(4)}, true},
	} {
		t.Run(tc.method, func(t *testing.T) {
			model, err := Build(tc.method, tc.raw)
			if err != nil {
				t.Fatal(err)
			}
			am := model.(ArtifactModel)
			if _, err := am.Artifact(ArtifactVarianceTerms, train, gp.Data{}); err == nil {
				t.Error("an artifact before Fit did not fail")
			}
			if _, err := model.Fit(context.Background(), train, FitOptions{Iterations: 30, Seed: 2}, nil); err != nil {
				t.Fatal(err)
			}
			a, err := am.Artifact(ArtifactVarianceTerms, train, gp.Data{})
			if err != nil {
				t.Fatal(err)
			}
			if a.Rows != VarianceTermsPoints || len(a.Data) != a.Rows*len(a.Columns) {
				t.Fatalf("artifact is %d rows × %d columns with %d values", a.Rows, len(a.Columns), len(a.Data))
			}
			col := func(name string) []float64 {
				for j, c := range a.Columns {
					if c == name {
						out := make([]float64, a.Rows)
						for i := range out {
							out[i] = a.Data[i*len(a.Columns)+j]
						}
						return out
					}
				}
				t.Fatalf("no column %q in %v", name, a.Columns)
				return nil
			}
			x, mean, vf, kff := col("x0"), col("mean"), col("var_f"), col("kff")
			vg, vh, bc, oc, op := col("var_g"), col("var_h"), col("base_cov"), col("orth_cov"), col("orth_prior")
			xs := mat.NewDense(len(x), 1, x)
			pred, err := model.Predict(xs)
			if err != nil {
				t.Fatal(err)
			}
			for i := range x {
				tol := 1e-9 * (1 + kff[i])
				if math.Abs(mean[i]-pred.Mean[i]) > 1e-8*(1+math.Abs(mean[i])) || math.Abs(vf[i]-pred.VarF[i]) > 1e-8*(1+vf[i]) {
					t.Fatalf("x = %.3g: artifact mean, var %.10g, %.10g; Predict %.10g, %.10g", x[i], mean[i], vf[i], pred.Mean[i], pred.VarF[i])
				}
				if math.Abs(vg[i]+vh[i]-kff[i]) > tol || math.Abs(vh[i]+bc[i]+oc[i]-op[i]-vf[i]) > tol {
					t.Fatalf("x = %.3g: kff %.10g, var_g + var_h %.10g; var_f %.10g, sum of terms %.10g", x[i], kff[i], vg[i]+vh[i], vf[i], vh[i]+bc[i]+oc[i]-op[i])
				}
				if !tc.orth && (oc[i] != 0 || op[i] != 0) {
					t.Fatalf("one block, but orthogonal terms %g, %g", oc[i], op[i])
				}
				if tc.orth && !(op[i] >= -1e-12 && oc[i] >= -1e-12) {
					t.Fatalf("orthogonal terms %g, %g are not ≥ 0", oc[i], op[i])
				}
			}
			if x[0] >= x[len(x)-1] {
				t.Errorf("grid is not increasing: %g … %g", x[0], x[len(x)-1])
			}
			if tc.method == "svgp" {
				z, err := am.Artifact(ArtifactInducingInputs, train, gp.Data{})
				if err != nil {
					t.Fatal(err)
				}
				if z.Rows != int(tc.raw["num_inducing"].(int64)) || len(z.Columns) != 2 {
					t.Fatalf("inducing inputs %d × %v", z.Rows, z.Columns)
				}
				// At an inducing input Var h = 0 and Var g = k(z, z).
				zx := mat.NewDense(z.Rows, 1, nil)
				for i := 0; i < z.Rows; i++ {
					zx.Set(i, 0, z.Data[2*i])
				}
				one := gp.Data{X: zx, Y: make([]float64, z.Rows)}
				at, err := varianceTermsAt(model, one)
				if err != nil {
					t.Fatal(err)
				}
				for i, v := range at {
					if math.Abs(v) > 1e-5 {
						t.Errorf("Var h(z_%d) = %.3g, want 0 (up to the jitter)", i, v)
					}
				}
			}
			if _, err := am.Artifact("nonsense", train, gp.Data{}); err == nil || !strings.Contains(err.Error(), ArtifactVarianceTerms) {
				t.Errorf("unknown artifact: %v", err)
			}
			two := gp.Data{X: mat.NewDense(3, 2, []float64{0, 1, 2, 3, 4, 5}), Y: make([]float64, 3)}
			if _, err := am.Artifact(ArtifactVarianceTerms, two, gp.Data{}); err == nil {
				t.Error("2-D inputs did not fail")
			}
		})
	}
}

// varianceTermsAt returns Var h = k − Q of an SVGP model at the rows of d.
func varianceTermsAt(model Model, d gp.Data) ([]float64, error) {
	m := model.(*sparseModel)
	p, err := inferenceBlockPredict(m, d.X)
	if err != nil {
		return nil, err
	}
	out := make([]float64, len(p.Kff))
	for i := range out {
		out[i] = p.Kff[i] - p.Prior[0][i]
	}
	return out, nil
}

func inferenceBlockPredict(m *sparseModel, x *mat.Dense) (*inference.BlockPrediction, error) {
	return inference.BlockPredict(x, singleBlock(func(t *ad.Tape) (kernels.Bound, inference.Block) {
		b := m.set.Bind(t)
		return m.kern.Bind(b, KernelPrefix), inference.Block{Feature: m.feat().Bind(b, inducingPfx), Q: m.q(b, 0)}
	}), m.opts())
}

// singleBlock binds a one-block (SVGP) model for BlockPredict.
func singleBlock(bind func(t *ad.Tape) (kernels.Bound, inference.Block)) inference.BlockBinder {
	return func(t *ad.Tape) (kernels.Bound, []inference.Block, error) {
		k, b := bind(t)
		return k, []inference.Block{b}, nil
	}
}
