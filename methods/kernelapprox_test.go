package methods

import (
	"context"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp"
)

// Reference values of vof-spec §3.1 (Matérn-3/2, ℓ = 0.2, v = 1, 25-point
// grid on [−3, 3]): max |Q − K| and the band-limited k(0) fractions.
func TestKernelApproxMatchesSpec(t *testing.T) {
	tests := []struct {
		m       int
		a       float64
		maxErr  float64
		tol     float64
		varFrac float64 // Q(0,0)/k(0); 0 = not checked
	}{
		{11, 10, 1.00, 0.02, 0},
		{21, 10, 0.158, 0.005, 0},
		{31, 10, 0.145, 0.005, 0.861},
		{61, 10, 0.141, 0.005, 0.861},
		{31, 2, 0.72, 0.01, 0.284},
		{31, 5, 0.40, 0.01, 0.609},
		{31, 20, 1.00, 0.02, 0},
	}
	dummy := gp.Data{X: mat.NewDense(1, 1, []float64{0}), Y: []float64{0}}
	for _, tt := range tests {
		model, err := Build("kernel-approx", map[string]any{"num_features": tt.m, "a": tt.a, "grid_n": 25})
		if err != nil {
			t.Fatal(err)
		}
		res, err := model.Fit(context.Background(), dummy, FitOptions{}, func(Progress) {})
		if err != nil {
			t.Fatal(err)
		}
		if got := res.Extra["max_abs_error"]; math.Abs(got-tt.maxErr) > tt.tol {
			t.Errorf("M=%d a=%v: max|Q-K| = %.4f, spec %.3f", tt.m, tt.a, got, tt.maxErr)
		}
		if tt.varFrac > 0 {
			if got := res.Extra["variance_fraction_centre"]; math.Abs(got-tt.varFrac) > 0.002 {
				t.Errorf("M=%d a=%v: Q(0,0)/k(0) = %.4f, spec %.3f", tt.m, tt.a, got, tt.varFrac)
			}
		}
		art, err := model.(ArtifactModel).Artifact("kernel_matrix", dummy, dummy)
		if err != nil || art.Rows != 25 || len(art.Data) != 625 || art.Columns[12] != "0" {
			t.Fatalf("artifact %v rows %d cols %v", err, art.Rows, art.Columns)
		}
		// Q is symmetric positive semi-definite: check symmetry.
		if d := art.Data[3*25+7] - art.Data[7*25+3]; math.Abs(d) > 1e-12 {
			t.Errorf("Q not symmetric: %g", d)
		}
	}
}

func TestKernelApproxErrors(t *testing.T) {
	for _, raw := range []map[string]any{
		{"num_features": 30},
		{"grid_n": 1},
		{"grid_low": 1.0, "grid_high": 0.0},
		{"a": -1.0},
		{"feature": "vof-hermite", "kernel": "matern32"},
	} {
		if _, err := Build("kernel-approx", raw); err == nil {
			t.Errorf("%v: no error", raw)
		}
	}
}

// Predict's variance is the diagonal of the Q artifact at the grid points
// (one Kuu factorisation for all inputs must not change it), and inputs of
// the wrong width are an error.
func TestKernelApproxPredict(t *testing.T) {
	dummy := gp.Data{X: mat.NewDense(1, 1, []float64{0}), Y: []float64{0}}
	for _, raw := range []map[string]any{
		{"num_features": 11, "grid_n": 9},
		{"feature": "vof-hermite", "kernel": "se", "num_features": 8, "grid_n": 9},
	} {
		model, err := Build("kernel-approx", raw)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := model.Fit(context.Background(), dummy, FitOptions{}, nil); err != nil {
			t.Fatal(err)
		}
		art, err := model.(ArtifactModel).Artifact("kernel_matrix", dummy, dummy)
		if err != nil {
			t.Fatal(err)
		}
		grid := mat.NewDense(9, 1, nil)
		for i := range 9 {
			grid.Set(i, 0, -3+0.75*float64(i))
		}
		pred, err := model.Predict(grid)
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range pred.VarF {
			want := art.Data[i*9+i]
			if math.Abs(v-want) > 1e-12*math.Max(1, want) || pred.Mean[i] != 0 || !(pred.VarY[i] > v) {
				t.Errorf("%v: point %d: mean %g, VarF %g, VarY %g; want 0, Q(x,x) = %g, VarF+", raw, i, pred.Mean[i], v, pred.VarY[i], want)
			}
		}
		if _, err := model.Predict(mat.NewDense(2, 2, nil)); err == nil {
			t.Errorf("%v: 2-column inputs accepted", raw)
		}
	}
}
