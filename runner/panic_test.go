package runner

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp"
	"sgplab/gp/inference"
	"sgplab/methods"
	"sgplab/results"
)

// loopPanicModel computes the collapsed statistics of its training data
// with inference.ComputeStats (the parallel O(NM²) pass of IFF, VFF and the
// B-splines) and makes the pass panic on one of its goroutines: "features"
// with a feature map that panics on the chunk of rows from 20 000 on (the
// third of three, each on a goroutine of its own), "index" with a runtime
// error there (an index out of range, as a bad feature map makes; issue
// 27's Kronecker VFF on yacht died of a makeslice panic on such a
// goroutine, a feature count ComputeStats now refuses up front). Then it
// fits like fake-mean.
type loopPanicModel struct {
	meanModel
	loop string
}

func (m *loopPanicModel) Fit(ctx context.Context, d gp.Data, opt methods.FitOptions, progress func(methods.Progress)) (methods.FitResult, error) {
	const nf = 2
	phi := func(x *mat.Dense) (*mat.Dense, error) {
		if first := x.At(0, 0); first >= 20000 {
			if m.loop == "index" {
				rows := make([]int, nf)
				_ = rows[int(first)]
			}
			panic(fmt.Sprintf("feature map: rows from %v", first))
		}
		n, _ := x.Dims()
		return mat.NewDense(nf, n, nil), nil
	}
	if _, err := inference.ComputeStats(d.X, d.Y, nf, inference.Allocating(phi)); err != nil {
		return methods.FitResult{}, err
	}
	return m.meanModel.Fit(ctx, d, opt, progress)
}

func init() {
	methods.Register(methods.Method{
		Name: "fake-loop-panic", Summary: "panics on a goroutine of inference.ComputeStats", Tasks: []methods.Task{methods.Regression},
		Params: []methods.ParamDoc{{Name: "loop", Kind: methods.String, Default: "features", Choices: []string{"features", "index"}}},
		New:    func(p methods.Params) (methods.Model, error) { return &loopPanicModel{loop: p.String("loop")}, nil },
	})
}

// A panic on a goroutine of a parallel loop inside a fit fails that run,
// recorded with the panic, the stack where it began and the stack of the
// loop's caller; the other runs of the sweep still run. Before, the
// process died and the runs stayed "running".
func TestPanicOnLoopGoroutineFailsOnlyItsRun(t *testing.T) {
	runs, _, err := expand(t, `
name = "t"
[[grid]]
name = "g"
methods = ["fake-loop-panic"]
datasets = ["toy"]
iterations = 2
[grid.params]
loop = ["features", "index"]
[grid.dataset]
n = 30000

[[grid]]
name = "after"
methods = ["fake-mean"]
datasets = ["toy"]
splits = [0, 1]
iterations = 2
`, "")
	if err != nil {
		t.Fatal(err)
	}
	r, st := newRunner(t, filepath.Join(t.TempDir(), "r.db"))
	sum, err := r.Run(context.Background(), runs)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Done != 2 || sum.Failed != 2 {
		t.Fatalf("summary %+v, want the 2 fake-mean runs done and the 2 panicking ones failed", sum)
	}
	failed, err := st.Runs(results.Filter{Status: results.StatusFailed})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"features": "panic: feature map: rows from 20000\n",
		"index":    "panic: runtime error: index out of range [20000] with length 2\n",
	}
	for _, f := range failed {
		var loop string
		for _, p := range f.Params {
			if p.Name == "loop" {
				loop = p.Value
			}
		}
		if f.Method != "fake-loop-panic" || !strings.HasPrefix(f.Error, want[loop]) {
			t.Errorf("%s %s failed with %q, want it to start with %q", f.Method, loop, f.Error, want[loop])
			continue
		}
		began, again, ok := strings.Cut(f.Error, "\nraised again by goroutine ")
		if !ok {
			t.Errorf("%s: no stack of the loop's caller in\n%s", loop, f.Error)
			continue
		}
		if !strings.Contains(began, "sgplab/gp/inference.ComputeStats.func1()") || !strings.Contains(began, "created by sgplab/internal/goroutines.(*Group).Go") {
			t.Errorf("%s: the first stack is not that of the ComputeStats goroutine:\n%s", loop, began)
		}
		if !strings.Contains(again, "sgplab/gp/inference.ComputeStats(") || !strings.Contains(again, "runner.(*loopPanicModel).Fit") {
			t.Errorf("%s: the second stack is not that of the fit:\n%s", loop, again)
		}
		delete(want, loop)
	}
	if len(want) > 0 {
		t.Errorf("no failed run for %v", want)
	}
}
