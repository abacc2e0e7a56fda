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

// BenchmarkVFFKroneckerStep is one objective + gradient of 2-D Kronecker
// VFF with 16 frequencies per dimension (M = 31² = 961), after the
// precompute on N = 10⁴ (the per-step cost does not depend on N).
func BenchmarkVFFKroneckerStep(b *testing.B) {
	for _, c := range []struct {
		name string
		raw  map[string]any
	}{
		{"vff/M=961", map[string]any{"frequencies": int64(16)}},
		{"vff-masked", map[string]any{"frequencies": int64(16), "mask": true}},
		{"bspline/M=400", map[string]any{"bases": int64(20)}},
	} {
		b.Run(c.name, func(b *testing.B) {
			method := "vff"
			if _, ok := c.raw["bases"]; ok {
				method = "bspline"
			}
			model, err := Build(method, c.raw)
			if err != nil {
				b.Fatal(err)
			}
			m := model.(*intervalModel)
			if _, err := model.Fit(context.Background(), boxData(10000, 2, 1), FitOptions{}, nil); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(m.feat.M()), "M")
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
		})
	}
}
