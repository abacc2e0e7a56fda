package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp"
	"sgplab/methods"
)

// cliMean is a test double: it predicts the training mean.
type cliMean struct{ m float64 }

func (c *cliMean) Fit(_ context.Context, d gp.Data, o methods.FitOptions, p func(methods.Progress)) (methods.FitResult, error) {
	for _, y := range d.Y {
		c.m += y / float64(len(d.Y))
	}
	p(methods.Progress{Iteration: 1, Objective: -1})
	return methods.FitResult{Objective: -1, Iterations: 1}, nil
}

func (c *cliMean) Predict(x *mat.Dense) (methods.Prediction, error) {
	n, _ := x.Dims()
	p := methods.Prediction{Mean: make([]float64, n), VarY: make([]float64, n)}
	for i := range p.Mean {
		p.Mean[i], p.VarY[i] = c.m, 1
	}
	return p, nil
}

func init() {
	methods.Register(methods.Method{Name: "cli-test-mean", Summary: "test double", Tasks: []methods.Task{methods.Regression},
		Params: []methods.ParamDoc{{Name: "m", Kind: methods.Int, Default: 1}},
		New:    func(methods.Params) (methods.Model, error) { return &cliMean{}, nil }})
}

func TestEndToEnd(t *testing.T) {
	dir := t.TempDir()
	grid := filepath.Join(dir, "g.toml")
	db := filepath.Join(dir, "r.db")
	os.WriteFile(grid, []byte(`name = "e2e"
[[grid]]
name = "g"
methods = ["cli-test-mean"]
datasets = ["gp-sample"]
splits = [0, 1]
iterations = 1
[grid.params]
m = [1, 2]
[grid.dataset]
n = 50
n_test = 20
`), 0o644)
	run := func(args ...string) string {
		t.Helper()
		var out, errb bytes.Buffer
		if code := Main(args, &out, &errb); code != 0 {
			t.Fatalf("sgplab %v: exit %d\n%s%s", args, code, out.String(), errb.String())
		}
		return out.String()
	}
	if s := run("run", "--db", db, grid); !strings.Contains(s, "4 runs: 4 done") {
		t.Errorf("run output:\n%s", s)
	}
	if s := run("run", "--db", db, grid); !strings.Contains(s, "4 skipped") {
		t.Errorf("resume output:\n%s", s)
	}
	if s := run("status", "--db", db, grid); !strings.Contains(s, "e2e") || !strings.Contains(s, "4") {
		t.Errorf("status output:\n%s", s)
	}
	s := run("query", "--db", db, "--format", "csv", "SELECT COUNT(*) AS n FROM run_metrics WHERE metric = 'rmse'")
	if !strings.Contains(s, "n\n4") {
		t.Errorf("query output:\n%s", s)
	}
	if s := run("run", "--dry-run", "--shard", "1/2", "--db", db, grid); !strings.Contains(s, "2 runs") || !strings.Contains(s, "done") {
		t.Errorf("dry-run output:\n%s", s)
	}
	merged := filepath.Join(dir, "m.db")
	run("results", "merge", db, db, "-o", merged)
	run("results", "merge", db, "-o", merged)
	if s := run("query", "--db", merged, "--format", "csv", "SELECT COUNT(*) AS n FROM runs"); !strings.Contains(s, "n\n4") {
		t.Errorf("merged twice:\n%s", s)
	}
	if s := run("results", "export", "--db", db); !strings.Contains(s, "rmse") {
		t.Errorf("export:\n%s", s)
	}
}
