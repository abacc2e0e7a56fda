package runner

import (
	"context"
	"math"
	"runtime"
	"testing"
	"weak"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp"
	"sgplab/methods"
)

// probe watches the training inputs of the dataset probePrepare made last:
// fake-probe's Predict collects garbage and records whether they are
// still reachable.
var probe struct {
	train      weak.Pointer[float64]
	trainAlive bool
}

func init() {
	methods.Register(methods.Method{
		Name: "fake-probe", Summary: "predicts the training mean; reports whether the training inputs are reachable when predicting", Tasks: []methods.Task{methods.Regression},
		New: func(methods.Params) (methods.Model, error) { return probeModel{&meanModel{}}, nil },
	})
}

type probeModel struct{ *meanModel }

func (m probeModel) Predict(x *mat.Dense) (methods.Prediction, error) {
	runtime.GC()
	probe.trainAlive = probe.train.Value() != nil
	return m.meanModel.Predict(x)
}

// probePrepare makes separate training and test sets, the test targets
// standing for themselves in original units.
func probePrepare(_ context.Context, _ *RunSpec) (*Dataset, error) {
	train := gp.Data{X: mat.NewDense(4096, 2, nil), Y: make([]float64, 4096)}
	test := gp.Data{X: mat.NewDense(8, 2, nil), Y: make([]float64, 8)}
	for i := range train.Y {
		train.X.Set(i, 0, float64(i))
		train.Y[i] = float64(i % 3)
	}
	for i := range test.Y {
		test.Y[i] = float64(i % 2)
	}
	probe.train = weak.Make(&train.X.RawMatrix().Data[0])
	return &Dataset{Task: "regression", Train: train, Test: test, TestY: test.Y}, nil
}

// A run in its own child process (oneRun) drops the training set after
// the fit and the test inputs after prediction, so that a model that no
// longer holds them (VISH from statistics) predicts and is scored without
// them in memory; a sweep in one process keeps its cached dataset for the
// next run, and a run whose artifacts need the data keeps it. The scores
// are the same either way.
func TestRunReleasesDataItNoLongerNeeds(t *testing.T) {
	var rmse []float64
	for _, tc := range []struct {
		name            string
		oneRun          bool
		artifacts       string
		trainAlive      bool
		testInputsAfter bool
	}{
		{"child process", true, "", false, false},
		{"in-process sweep", false, "", true, true},
		{"child process with artifacts", true, `artifacts = ["train", "predictions"]`, true, true},
	} {
		runs, _, err := expand(t, grid(`"fake-probe"`, "toy", tc.artifacts), "")
		if err != nil {
			t.Fatal(err)
		}
		r := &Runner{Prepare: probePrepare, oneRun: tc.oneRun}
		oc := r.guarded(context.Background(), runs[0], func(methods.Progress) {})
		if oc.err != nil {
			t.Fatalf("%s: %v", tc.name, oc.err)
		}
		if probe.trainAlive != tc.trainAlive {
			t.Errorf("%s: training inputs reachable while predicting: %v, want %v", tc.name, probe.trainAlive, tc.trainAlive)
		}
		if got := oc.data.Test.X != nil; got != tc.testInputsAfter {
			t.Errorf("%s: test inputs kept after prediction: %v, want %v", tc.name, got, tc.testInputsAfter)
		}
		if oc.nTrain != 4096 {
			t.Errorf("%s: %d training rows recorded, want 4096", tc.name, oc.nTrain)
		}
		ms, err := runMetrics(runs[0], oc)
		if err != nil {
			t.Fatalf("%s: scoring: %v", tc.name, err)
		}
		for _, m := range ms {
			if m.Name == "rmse" {
				rmse = append(rmse, m.Value)
			}
		}
	}
	if len(rmse) != 3 || math.Float64bits(rmse[0]) != math.Float64bits(rmse[1]) || rmse[1] != rmse[2] {
		t.Errorf("rmse of the three runs %v, want three equal values", rmse)
	}
}
