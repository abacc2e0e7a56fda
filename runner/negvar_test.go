package runner

import (
	"context"
	"path/filepath"
	"testing"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp"
	"sgplab/methods"
)

func init() {
	for _, c := range []struct {
		name string
		flag bool
	}{{"fake-negvar", true}, {"fake-negvar-unflagged", false}} {
		flag := c.flag
		methods.Register(methods.Method{
			Name: c.name, Summary: "one negative predictive variance", Tasks: []methods.Task{methods.Regression},
			New: func(methods.Params) (methods.Model, error) { return negVarModel{flag: flag}, nil },
		})
	}
}

// negVarModel predicts 0 with variance −1 at the first test point and 1
// elsewhere; flag sets Prediction.PositiveVarOnly, as SKI does.
type negVarModel struct{ flag bool }

func (negVarModel) Fit(context.Context, gp.Data, methods.FitOptions, func(methods.Progress)) (methods.FitResult, error) {
	return methods.FitResult{}, nil
}

func (m negVarModel) Predict(x *mat.Dense) (methods.Prediction, error) {
	n, _ := x.Dims()
	p := methods.Prediction{Mean: make([]float64, n), VarY: make([]float64, n), PositiveVarOnly: m.flag}
	for i := range p.VarY {
		p.VarY[i] = 1
	}
	p.VarY[0] = -1
	return p, nil
}

// A method that flags its predictions is scored over positive variances and
// the others are counted; without the flag a negative variance fails the run.
func TestPositiveVarianceScoring(t *testing.T) {
	runs, _, err := expand(t, `
name = "t"
[[grid]]
name = "g"
methods = ["fake-negvar", "fake-negvar-unflagged"]
datasets = ["toy"]
splits = [0]
iterations = 0
`, "")
	if err != nil {
		t.Fatal(err)
	}
	r, st := newRunner(t, filepath.Join(t.TempDir(), "r.db"))
	sum, err := r.Run(context.Background(), runs)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Done != 1 || sum.Failed != 1 {
		t.Fatalf("summary %v, want one done and one failed", sum)
	}
	if n := count(t, st, "SELECT CAST(value AS INTEGER) FROM run_metrics WHERE method = 'fake-negvar' AND metric = 'x_nonpositive_variances'"); n != 1 {
		t.Errorf("x_nonpositive_variances = %d, want 1", n)
	}
	if n := count(t, st, "SELECT COUNT(*) FROM runs WHERE method = 'fake-negvar-unflagged' AND error LIKE '%not positive%'"); n != 1 {
		t.Error("the unflagged negative variance did not fail its run with a clear message")
	}
}
