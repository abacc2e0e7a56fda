package methods

import (
	"context"
	"testing"
	"time"

	"sgplab/gp/ad"
	"sgplab/gp/inference"
)

// benchAVFF fits nothing: it builds A-VFF (D = 8, 30 frequencies per
// dimension, M = 472) on N = 10⁵ points and precomputes the statistics.
func benchAVFF(b *testing.B) *intervalModel {
	b.Helper()
	model, err := Build("avff", map[string]any{})
	if err != nil {
		b.Fatal(err)
	}
	m := model.(*intervalModel)
	start := time.Now()
	if _, err := model.Fit(context.Background(), boxData(100000, 8, 1), FitOptions{Iterations: 0}, nil); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(time.Since(start).Seconds(), "fit0-s")
	return m
}

// BenchmarkAVFFStep is one objective + gradient evaluation (what an L-BFGS
// step costs, O(M³) and independent of N).
func BenchmarkAVFFStep(b *testing.B) {
	m := benchAVFF(b)
	for b.Loop() {
		tp := ad.NewTape()
		bd := m.set.Bind(tp)
		out, err := m.collapsed(tp, bd)
		if err != nil {
			b.Fatal(err)
		}
		tp.Backward(out)
		_ = bd.Gradient()
	}
}

// BenchmarkAVFFPrecompute is the O(NM²) ΦΦᵀ pass over N = 10⁵, M = 472.
func BenchmarkAVFFPrecompute(b *testing.B) {
	m := benchAVFF(b)
	x := boxData(100000, 8, 2)
	for b.Loop() {
		if _, err := inference.ComputeStats(x.X, x.Y, m.feat.M(), m.feat.Phi); err != nil {
			b.Fatal(err)
		}
	}
}
