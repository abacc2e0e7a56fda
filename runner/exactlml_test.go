package runner

import (
	"errors"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp"
	"sgplab/methods"
)

// lmlModel is a model that knows its exact log marginal likelihood.
type lmlModel struct {
	meanModel
	v     float64
	err   error
	calls int
}

func (m *lmlModel) ExactLML(gp.Data) (float64, error) { m.calls++; return m.v, m.err }

func TestAddExactLML(t *testing.T) {
	train := gp.Data{X: mat.NewDense(1, 1, []float64{0}), Y: []float64{0}}
	cases := []struct {
		name      string
		metrics   []string
		extra     map[string]float64
		model     methods.Model
		want      float64 // NaN: must be NaN; absent if !present
		present   bool
		wantCalls int
	}{
		{"asked", []string{"elbo", "log_marginal_likelihood"}, nil, &lmlModel{v: -12.5}, -12.5, true, 1},
		{"not asked", []string{"elbo"}, nil, &lmlModel{v: -12.5}, 0, false, 0},
		{"all metrics is not asking", nil, nil, &lmlModel{v: -12.5}, 0, false, 0},
		{"method reported it", []string{"log_marginal_likelihood"}, map[string]float64{"log_marginal_likelihood": -3}, &lmlModel{v: -12.5}, -3, true, 0},
		{"failure is NaN", []string{"log_marginal_likelihood"}, nil, &lmlModel{err: errors.New("not PD")}, math.NaN(), true, 1},
		{"model cannot", []string{"log_marginal_likelihood"}, nil, &meanModel{}, 0, false, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fit := methods.FitResult{Extra: c.extra}
			addExactLML(&RunSpec{Metrics: c.metrics}, &fit, c.model, train)
			v, ok := fit.Extra["log_marginal_likelihood"]
			switch {
			case ok != c.present:
				t.Fatalf("present = %v, want %v", ok, c.present)
			case ok && math.IsNaN(c.want) && !math.IsNaN(v):
				t.Errorf("value %v, want NaN", v)
			case ok && !math.IsNaN(c.want) && v != c.want:
				t.Errorf("value %v, want %v", v, c.want)
			}
			if m, isLML := c.model.(*lmlModel); isLML && m.calls != c.wantCalls {
				t.Errorf("ExactLML called %d times, want %d", m.calls, c.wantCalls)
			}
		})
	}
}
