package runner

import (
	"context"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp"
	"sgplab/methods"
	"sgplab/results"
)

func TestRunStoresArtifacts(t *testing.T) {
	src := `
name = "t"
[[grid]]
name = "g"
methods = ["fake-mean"]
datasets = ["toy"]
iterations = 1
artifacts = ["train", "predictions"]
`
	runs, _, err := expand(t, src, "")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(runs[0].Canonical()), `"artifacts":["predictions","train"]`) {
		t.Fatalf("artifacts not in the run identity: %s", runs[0].Canonical())
	}
	plain, _, err := expand(t, strings.Replace(src, `artifacts = ["train", "predictions"]`, "", 1), "")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(plain[0].Canonical()), "artifacts") {
		t.Fatalf("a grid without artifacts changed its canonical spec: %s", plain[0].Canonical())
	}
	r, st := newRunner(t, filepath.Join(t.TempDir(), "a.db"))
	if sum, err := r.Run(context.Background(), runs); err != nil || sum.Done != 1 {
		t.Fatalf("%v %v", sum, err)
	}
	arts, err := st.Artifacts(runs[0].ID)
	if err != nil || len(arts) != 2 {
		t.Fatalf("artifacts %+v %v", arts, err)
	}
	pred, train := arts[0], arts[1]
	if pred.Name != "predictions" || pred.Rows != 20 || strings.Join(pred.Columns, ",") != "x0,y,mean,var_f,var_y" {
		t.Fatalf("predictions %+v", pred)
	}
	// The fake predicts the training mean (y = i%5 → 2) with unit variance.
	mean, _ := pred.Column("mean")
	vy, _ := pred.Column("var_y")
	x, _ := pred.Column("x0")
	if mean[7] != 2 || vy[7] != 1 || x[19] != 19 {
		t.Fatalf("mean %v var_y %v x %v", mean[7], vy[7], x[19])
	}
	if y, _ := train.Column("y"); train.Rows != 20 || y[6] != 1 {
		t.Fatalf("train %+v", train)
	}
}

func TestUnknownArtifactFailsTheRun(t *testing.T) {
	runs, _, err := expand(t, `
name = "t"
[[grid]]
name = "g"
methods = ["fake-mean"]
datasets = ["toy"]
iterations = 1
artifacts = ["kernel_matrix"]
`, "")
	if err != nil {
		t.Fatal(err)
	}
	r, st := newRunner(t, filepath.Join(t.TempDir(), "a.db"))
	if sum, err := r.Run(context.Background(), runs); err != nil || sum.Failed != 1 {
		t.Fatalf("%v %v", sum, err)
	}
	rr, _, _ := st.Run(runs[0].ID)
	if rr.Status != results.StatusFailed || !strings.Contains(rr.Error, "exports no artifacts") {
		t.Fatalf("run %s: %q", rr.Status, rr.Error)
	}
	if _, _, err := expand(t, `
name = "t"
[[grid]]
name = "g"
methods = ["fake-mean"]
datasets = ["toy"]
iterations = 1
artifacts = ["Bad Name"]
`, ""); err == nil || !strings.Contains(err.Error(), "snake case") {
		t.Fatalf("bad name error = %v", err)
	}
}

// planeModel predicts mean x0 + 2 x1 and, for classification, p = 0.25.
type planeModel struct{ prob bool }

func (planeModel) Fit(context.Context, gp.Data, methods.FitOptions, func(methods.Progress)) (methods.FitResult, error) {
	return methods.FitResult{}, nil
}

func (m planeModel) Predict(x *mat.Dense) (methods.Prediction, error) {
	n, _ := x.Dims()
	var p methods.Prediction
	for i := 0; i < n; i++ {
		p.Mean = append(p.Mean, x.At(i, 0)+2*x.At(i, 1))
		p.VarF = append(p.VarF, 1)
		if m.prob {
			p.ProbPositive = append(p.ProbPositive, 0.25)
		}
	}
	return p, nil
}

// The field artifact is an 81 × 81 grid over the training box widened by a
// tenth per side, x0 fastest, with the model's predictions at each point.
func TestFieldArtifact(t *testing.T) {
	train := gp.Data{X: mat.NewDense(3, 2, []float64{0, 10, 1, 20, 0.5, 15}), Y: []float64{1, -1, 1}}
	a, err := fieldArtifact(train, planeModel{prob: true})
	if err != nil {
		t.Fatal(err)
	}
	if a.Rows != fieldSize*fieldSize || strings.Join(a.Columns, ",") != "x0,x1,mean,var_f,p" {
		t.Fatalf("field %d rows, columns %v", a.Rows, a.Columns)
	}
	x0, _ := a.Column("x0")
	x1, _ := a.Column("x1")
	mean, _ := a.Column("mean")
	p, _ := a.Column("p")
	last := a.Rows - 1
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"x0 first", x0[0], -0.1}, {"x0 end of row 0", x0[fieldSize-1], 1.1}, {"x1 of row 0", x1[fieldSize-1], 9},
		{"x1 of row 1", x1[fieldSize], 9 + 12.0/(fieldSize-1)}, {"x1 last", x1[last], 21}, {"mean last", mean[last], 1.1 + 42}, {"p", p[5], 0.25},
	} {
		if math.Abs(c.got-c.want) > 1e-12 {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	reg, err := fieldArtifact(train, planeModel{})
	if err != nil {
		t.Fatal(err)
	}
	if p, _ := reg.Column("p"); !math.IsNaN(p[0]) {
		t.Errorf("regression p = %v, want NaN", p[0])
	}
	if _, err := fieldArtifact(gp.Data{X: mat.NewDense(2, 1, []float64{0, 1}), Y: []float64{0, 1}}, planeModel{}); err == nil || !strings.Contains(err.Error(), "2 inputs") {
		t.Errorf("1-D data: error %v, want one saying it needs 2 inputs", err)
	}
}

// TestRunStoresZAndQ: artifacts = ["z", "q"] stores the fitted inducing
// inputs and q(u) of a real SVGP fit (shapes M × (D+1) and M × (M+2), a
// positive-definite covariance); asking a collapsed SGPR for q fails that
// run with an error saying why.
func TestRunStoresZAndQ(t *testing.T) {
	src := `
name = "t"
[[grid]]
name = "g"
methods = ["svgp", "sgpr"]
datasets = ["toy"]
iterations = 5
optimizer = "lbfgs"
artifacts = ["q", "z"]
[grid.params]
num_inducing = 4
`
	runs, _, err := expand(t, src, "")
	if err != nil {
		t.Fatal(err)
	}
	r, st := newRunner(t, filepath.Join(t.TempDir(), "a.db"))
	sum, err := r.Run(context.Background(), runs)
	if err != nil || sum.Done != 1 || sum.Failed != 1 {
		t.Fatalf("%v %v", sum, err)
	}
	for _, run := range runs {
		rec, _, err := st.Run(run.ID)
		if err != nil {
			t.Fatal(err)
		}
		if run.Method == "sgpr" {
			if !strings.Contains(rec.Error, `artifact "q"`) || !strings.Contains(rec.Error, "optimal and not stored") {
				t.Errorf("sgpr asked for q: error %q", rec.Error)
			}
			continue
		}
		arts, err := st.Artifacts(run.ID)
		if err != nil || len(arts) != 2 {
			t.Fatalf("artifacts %+v %v", arts, err)
		}
		q, z := arts[0], arts[1]
		if z.Name != "z" || z.Rows != 4 || strings.Join(z.Columns, ",") != "x0,set" {
			t.Errorf("z: %s %v × %d", z.Name, z.Columns, z.Rows)
		}
		if q.Name != "q" || q.Rows != 4 || len(q.Columns) != 6 {
			t.Fatalf("q: %s %v × %d", q.Name, q.Columns, q.Rows)
		}
		cov := mat.NewSymDense(4, nil)
		for i := 0; i < 4; i++ {
			for j := i; j < 4; j++ {
				cov.SetSym(i, j, q.At(i, 2+j))
				if math.Abs(q.At(i, 2+j)-q.At(j, 2+i)) > 1e-12 {
					t.Errorf("q covariance not symmetric at (%d, %d)", i, j)
				}
			}
		}
		var ch mat.Cholesky
		if !ch.Factorize(cov) {
			t.Errorf("q covariance not positive definite:\n%v", mat.Formatted(cov))
		}
	}
}
