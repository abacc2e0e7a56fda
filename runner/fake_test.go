package runner

import (
	"context"
	"errors"
	"fmt"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp"
	"sgplab/methods"
)

// Test doubles registered under names no real method uses.
func init() {
	methods.Register(methods.Method{
		Name: "fake-mean", Summary: "predicts the training mean", Tasks: []methods.Task{methods.Regression},
		Params: []methods.ParamDoc{
			{Name: "num_inducing", Kind: methods.Int, Default: 10, Range: methods.Count, Doc: "ignored"},
			{Name: "lengthscales", Kind: methods.Floats, Doc: "ignored"},
			{Name: "kernel", Kind: methods.String, Default: "se", Choices: []string{"se", "matern32"}, Doc: "ignored"},
			{Name: "z_file", Kind: methods.String, Doc: "a file whose content is part of the run id"},
		},
		New: func(p methods.Params) (methods.Model, error) { return &meanModel{}, nil },
	})
	// fake-recipe declares a default recipe (natural gradients + Adam at
	// 0.05, a budget of 40 ended at stop_tol 1e-4; minibatches: Adam at
	// 0.01 for 80) that differs from its legacy one (L-BFGS; minibatches:
	// Adam at the optimiser's default).
	methods.Register(methods.Method{
		Name: "fake-recipe", Summary: "predicts the training mean; declares a changed default recipe", Tasks: []methods.Task{methods.Regression},
		Params: []methods.ParamDoc{
			{Name: "natgrad_step", Kind: methods.Float, Range: methods.Positive, Doc: "natural-gradient step"},
			{Name: "num_inducing", Kind: methods.Int, Default: 10, Range: methods.Count, Doc: "ignored"},
		},
		New: func(p methods.Params) (methods.Model, error) { return &meanModel{}, nil },
		Fit: func(_ methods.Params, c methods.FitCase) methods.Recipe {
			if c.Minibatch {
				return methods.Recipe{Optimizer: "adam", LearningRate: 0.01, Iterations: 80}
			}
			return methods.Recipe{Optimizer: "adam", LearningRate: 0.05, NatGrad: 1, Iterations: 40, StopTol: 1e-4}
		},
		Legacy: func(_ methods.Params, c methods.FitCase) methods.Recipe {
			if c.Minibatch {
				return methods.Recipe{Optimizer: "adam"}
			}
			return methods.Recipe{Optimizer: "lbfgs"}
		},
	})
	methods.Register(methods.Method{
		Name: "fake-panic", Summary: "panics in Fit", Tasks: []methods.Task{methods.Regression},
		New: func(methods.Params) (methods.Model, error) { return panicModel{}, nil },
	})
	methods.Register(methods.Method{
		Name: "fake-fail", Summary: "returns an error from Fit", Tasks: []methods.Task{methods.Regression},
		New: func(methods.Params) (methods.Model, error) { return failModel{}, nil },
	})
	methods.Register(methods.Method{
		Name: "fake-block", Summary: "blocks until cancelled", Tasks: []methods.Task{methods.Regression},
		New: func(methods.Params) (methods.Model, error) { return blockModel{}, nil },
	})
}

type meanModel struct{ mean float64 }

func (m *meanModel) Fit(ctx context.Context, d gp.Data, opt methods.FitOptions, progress func(methods.Progress)) (methods.FitResult, error) {
	for _, y := range d.Y {
		m.mean += y
	}
	m.mean /= float64(len(d.Y))
	for i := 1; i <= opt.Iterations; i++ {
		progress(methods.Progress{Iteration: i, Objective: -1 / float64(i)})
	}
	return methods.FitResult{Objective: -1, Iterations: opt.Iterations, Extra: map[string]float64{"jitter": 0, "Exact LML": 2}}, nil
}

func (m *meanModel) Predict(x *mat.Dense) (methods.Prediction, error) {
	n, _ := x.Dims()
	p := methods.Prediction{Mean: make([]float64, n), VarY: make([]float64, n)}
	for i := range p.Mean {
		p.Mean[i], p.VarY[i] = m.mean, 1
	}
	return p, nil
}

type panicModel struct{}

func (panicModel) Fit(context.Context, gp.Data, methods.FitOptions, func(methods.Progress)) (methods.FitResult, error) {
	var m map[string]int
	m["boom"]++ // a real runtime panic
	return methods.FitResult{}, nil
}
func (panicModel) Predict(*mat.Dense) (methods.Prediction, error) { return methods.Prediction{}, nil }

type failModel struct{}

func (failModel) Fit(context.Context, gp.Data, methods.FitOptions, func(methods.Progress)) (methods.FitResult, error) {
	return methods.FitResult{}, errors.New("matrix not positive definite")
}
func (failModel) Predict(*mat.Dense) (methods.Prediction, error) { return methods.Prediction{}, nil }

type blockModel struct{}

// started is signalled when a blockModel begins fitting.
var started = make(chan struct{}, 16)

func (blockModel) Fit(ctx context.Context, _ gp.Data, _ methods.FitOptions, progress func(methods.Progress)) (methods.FitResult, error) {
	progress(methods.Progress{Iteration: 1, Objective: -3})
	started <- struct{}{}
	<-ctx.Done()
	return methods.FitResult{}, ctx.Err()
}
func (blockModel) Predict(*mat.Dense) (methods.Prediction, error) { return methods.Prediction{}, nil }

// fakeDatasets validates and prepares the toy datasets "toy" and "toy2".
func fakeValidate(name string, params map[string]any) error {
	if name != "toy" && name != "toy2" {
		return fmt.Errorf("unknown dataset %q; valid names: toy, toy2", name)
	}
	for k := range params {
		if k != "n" {
			return fmt.Errorf("no parameter %q; valid: n", k)
		}
	}
	return nil
}

func fakePrepare(_ context.Context, s *RunSpec) (*Dataset, error) {
	n := 20
	if v, ok := s.DatasetParams["n"].(int64); ok {
		n = int(v)
	}
	x := mat.NewDense(n, 1, nil)
	y := make([]float64, n)
	for i := range y {
		x.Set(i, 0, float64(i))
		y[i] = float64(i%5) + float64(s.Split)
	}
	d := gp.Data{X: x, Y: y}
	return &Dataset{Task: "regression", Train: d, Test: d, Provenance: map[string]any{"generator": "toy", "n": n}}, nil
}
