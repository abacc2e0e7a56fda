package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp"
	"sgplab/gp/inference"
	"sgplab/methods"
	"sgplab/results/resultstest"
)

// cliFail fails its fit when param fail is 1.
type cliFail struct {
	cliMean
	fail bool
}

func (c *cliFail) Fit(ctx context.Context, d gp.Data, o methods.FitOptions, p func(methods.Progress)) (methods.FitResult, error) {
	if c.fail {
		return methods.FitResult{}, errors.New("deliberate failure")
	}
	return c.cliMean.Fit(ctx, d, o, p)
}

func (c *cliFail) Predict(x *mat.Dense) (methods.Prediction, error) { return c.cliMean.Predict(x) }

func init() {
	methods.Register(methods.Method{Name: "cli-test-fail", Summary: "test double that fails when fail = 1",
		Tasks:  []methods.Task{methods.Regression},
		Params: []methods.ParamDoc{{Name: "fail", Kind: methods.Int, Default: 0}},
		New:    func(p methods.Params) (methods.Model, error) { return &cliFail{fail: p.Int("fail") == 1}, nil }})
}

// cliLoopPanic panics on a goroutine of inference.ComputeStats, a
// parallel loop of the numerical code, in its fit.
type cliLoopPanic struct{ cliMean }

func (c *cliLoopPanic) Fit(ctx context.Context, d gp.Data, o methods.FitOptions, p func(methods.Progress)) (methods.FitResult, error) {
	_, err := inference.ComputeStats(d.X, d.Y, 2, func(_, _ *mat.Dense) (*mat.Dense, error) { panic("cli-test-loop-panic: feature map") })
	return methods.FitResult{}, err
}

func init() {
	methods.Register(methods.Method{Name: "cli-test-loop-panic", Summary: "test double that panics in a parallel loop",
		Tasks: []methods.Task{methods.Regression},
		New:   func(methods.Params) (methods.Model, error) { return &cliLoopPanic{}, nil }})
}

func sgplab(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = Main(args, &out, &errb)
	return code, out.String(), errb.String()
}

// TestExitStatus: 0 only when every run is done, 3 when a run failed (also
// on the next invocation, which retries it), 1 for an invalid grid.
func TestExitStatus(t *testing.T) {
	dir := t.TempDir()
	grid, db := filepath.Join(dir, "g.toml"), filepath.Join(dir, "r.db")
	write := func(fail string) {
		os.WriteFile(grid, []byte(`name = "exit"
[[grid]]
name = "g"
methods = ["cli-test-fail"]
datasets = ["gp-sample"]
splits = [0, 1]
iterations = 1
[grid.params]
fail = `+fail+`
[grid.dataset]
n = 30
n_test = 10
`), 0o644)
	}
	write("[0, 1]")
	code, out, errOut := sgplab("run", "--db", db, grid)
	if code != exitRunsFailed || !strings.Contains(out, "4 runs: 2 done, 2 failed") || !strings.Contains(errOut, "2 of 4 runs are not done") {
		t.Errorf("a sweep with failed runs: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitRunsFailed, out, errOut)
	}
	if code, out, _ := sgplab("run", "--db", db, grid); code != exitRunsFailed || !strings.Contains(out, "2 skipped") {
		t.Errorf("re-run: exit %d, want %d (the failed runs fail again)\n%s", code, exitRunsFailed, out)
	}
	write("[0]")
	if code, out, errOut := sgplab("run", "--db", db, grid); code != 0 {
		t.Errorf("grid whose runs are all done: exit %d, want 0\n%s%s", code, out, errOut)
	}
	write("[]")
	if code, _, errOut := sgplab("run", "--db", db, grid); code != 1 || !strings.Contains(errOut, "grid[0].params.fail: empty list") {
		t.Errorf("empty parameter list: exit %d, want 1 with the key named\n%s", code, errOut)
	}
	if code, out, _ := sgplab("run", "--help"); code != 0 || !strings.Contains(out, "Exit status") {
		t.Errorf("run --help does not document the exit status:\n%s", out)
	}
}

// TestLoopPanicExitStatus: a panic on a goroutine of a parallel loop in a
// fit fails that run and the sweep goes on to exit 3 (before, the process
// died with exit 2 and left the run "running").
func TestLoopPanicExitStatus(t *testing.T) {
	dir := t.TempDir()
	grid, db := filepath.Join(dir, "g.toml"), filepath.Join(dir, "r.db")
	os.WriteFile(grid, []byte(`name = "loop-panic"
[[grid]]
name = "g"
methods = ["cli-test-loop-panic", "cli-test-mean"]
datasets = ["gp-sample"]
iterations = 1
[grid.dataset]
n = 30
n_test = 10
`), 0o644)
	code, out, errOut := sgplab("run", "--db", db, grid)
	if code != exitRunsFailed || !strings.Contains(out, "2 runs: 1 done, 1 failed") || !strings.Contains(out, "cli-test-loop-panic gp-sample: panic: cli-test-loop-panic: feature map") {
		t.Errorf("exit %d, want %d with 1 run done and 1 failed\nstdout:\n%s\nstderr:\n%s", code, exitRunsFailed, out, errOut)
	}
	code, out, errOut = sgplab("query", "--db", db, "SELECT status, error FROM runs WHERE method = 'cli-test-loop-panic'")
	if code != 0 || !strings.Contains(out, "failed") || !strings.Contains(out, "inference.ComputeStats.func1") {
		t.Errorf("the failed run's error has no stack of the loop goroutine (exit %d):\n%s%s", code, out, errOut)
	}
}

// TestUserCSVGrid runs a grid on the generated example CSV, exports it wide,
// and checks that editing the file makes new runs.
func TestUserCSVGrid(t *testing.T) {
	dir := t.TempDir()
	if code, out, errOut := sgplab("data", "example-csv", dir); code != 0 || !strings.Contains(out, "example.csv") {
		t.Fatalf("example-csv: exit %d\n%s%s", code, out, errOut)
	}
	file := filepath.Join(dir, "example.csv")
	grid, db := filepath.Join(dir, "g.toml"), filepath.Join(dir, "r.db")
	os.WriteFile(grid, []byte(`name = "csvgrid"
[[grid]]
name = "g"
methods = ["cli-test-mean"]
datasets = ["csv"]
splits = [0, 1]
iterations = 1
[grid.params]
m = [1, 2]
[grid.dataset]
file = "`+file+`"
target = "y"
inputs = [["x1", "x2"]]
test_mask = "is_test"
`), 0o644)
	if code, _, errOut := sgplab("run", "--db", db, grid); code != 1 || !strings.Contains(errOut, "protocol test-mask has one split (0), not 1") {
		t.Fatalf("split 1 with a test mask: exit %d\n%s", code, errOut)
	}
	src, _ := os.ReadFile(grid)
	os.WriteFile(grid, bytes.Replace(src, []byte("splits = [0, 1]"), []byte("splits = [0]"), 1), 0o644)
	if code, out, errOut := sgplab("run", "--db", db, grid); code != 0 || !strings.Contains(out, "2 runs: 2 done") {
		t.Fatalf("run on the example CSV: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut := sgplab("results", "export", "--db", db, "--status", "done")
	if code != 0 {
		t.Fatalf("export: exit %d\n%s", code, errOut)
	}
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil || len(rows) != 3 {
		t.Fatalf("export: %d rows (%v), want a header and 2 runs:\n%s", len(rows), err, out)
	}
	col := map[string]int{}
	for i, c := range rows[0] {
		col[c] = i
	}
	for _, c := range []string{"p.m", "p.sha256.dataset.file", "m.rmse", "status"} {
		if _, ok := col[c]; !ok {
			t.Errorf("export lacks column %s: %v", c, rows[0])
		}
	}
	if rows[1][col["p.m"]] == rows[2][col["p.m"]] {
		t.Errorf("the two runs have the same m in the export: %v", rows)
	}
	// Edit the file: the runs are new, the old ones stale.
	b, _ := os.ReadFile(file)
	os.WriteFile(file, append(b, []byte("0.5,0.5,0,1.0\n")...), 0o644)
	if code, out, _ := sgplab("run", "--dry-run", "--db", db, grid); code != 0 || strings.Count(out, "pending") != 2 {
		t.Errorf("after editing the CSV, dry-run should list 2 pending runs:\n%s", out)
	}
}

// TestStatusOnDamagedDatabase: status, export and report refuse a
// database with a damaged page and say so.
func TestStatusOnDamagedDatabase(t *testing.T) {
	dir := t.TempDir()
	grid, db := filepath.Join(dir, "g.toml"), filepath.Join(dir, "r.db")
	os.WriteFile(grid, []byte(strings.Replace(workGrid, "tag = [", "tag = [12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, ", 1)), 0o644)
	if code, out, errOut := sgplab("run", "--db", db, grid); code != 0 {
		t.Fatalf("run: exit %d\n%s%s", code, out, errOut)
	}
	if err := resultstest.DamageMiddlePage(db); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"status", "--db", db, grid}, {"status", "--db", db}, {"results", "export", "--db", db}, {"report", "--db", db, grid}} {
		code, _, errOut := sgplab(args...)
		if code == 0 || !(strings.Contains(errOut, "damaged") || strings.Contains(errOut, "malformed")) {
			t.Errorf("sgplab %v on a damaged database: exit %d, stderr %q; want an error naming the damage", args, code, errOut)
		}
	}
}
