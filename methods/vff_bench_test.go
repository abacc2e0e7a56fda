package methods

import (
	"context"
	"math/rand/v2"
	"testing"

	"sgplab/gp/ad"
	"sgplab/gp/inference"
	"sgplab/gp/param"
)

// fitNoSteps builds an interval model on n points of boxData and
// precomputes its statistics (no optimiser steps).
func fitNoSteps(b *testing.B, method string, raw map[string]any, n, d int) *sparseModel {
	b.Helper()
	model, err := Build(method, raw)
	if err != nil {
		b.Fatal(err)
	}
	train := boxData(n, d, 1)
	if _, err := model.Fit(context.Background(), train, FitOptions{Iterations: 0}, nil); err != nil {
		b.Fatal(err)
	}
	m := sparseOf(b, model)
	m.restoreInputs(train.X)
	return m
}

// BenchmarkIntervalStep is one objective + gradient of the collapsed bound
// (the cost of an optimiser step, O(M³) and independent of N) with the
// structured Kuu that Fit uses against the dense Kuu with one M×M
// Cholesky: 1-D VFF with 400 frequencies (M = 799), A-VFF with D = 8 and
// 30 frequencies (M = 472) and 2-D Kronecker VFF with 20 frequencies
// (M = 39² = 1521). The statistics come from N = 2000 points.
func BenchmarkIntervalStep(b *testing.B) {
	for _, c := range []struct {
		name, method string
		d            int
		raw          map[string]any
	}{
		{"vff-1D-F=400", "vff", 1, map[string]any{"frequencies": int64(400)}},
		{"avff-D=8-F=30", "avff", 8, map[string]any{"frequencies": int64(30)}},
		{"vff-kron-2D-F=20", "vff", 2, map[string]any{"frequencies": int64(20)}},
	} {
		m := fitNoSteps(b, c.method, c.raw, 2000, c.d)
		for _, form := range []struct {
			name string
			f    func(*ad.Tape, *param.Bound) (*ad.Node, error)
		}{{"structured", m.collapsed}, {"dense", m.collapsedDense}} {
			b.Run(c.name+"/"+form.name, func(b *testing.B) {
				b.ReportMetric(float64(m.interval().M()), "M")
				for b.Loop() {
					tp := ad.NewTape()
					bd := m.set.Bind(tp)
					out, err := form.f(tp, bd)
					if err != nil {
						b.Fatal(err)
					}
					tp.Backward(out)
					_ = bd.Gradient()
				}
			})
		}
	}
}

// BenchmarkAVFFLBFGS is issue 5's speed figure: A-VFF with D = 8 and 30
// frequencies per dimension (M = 472) on N = 10⁵, trained by L-BFGS for
// 20 iterations. It reports the precompute and the wall time per L-BFGS
// iteration (line-search evaluations included).
func BenchmarkAVFFLBFGS(b *testing.B) {
	train := boxData(100000, 8, 1)
	for b.Loop() {
		model, err := Build("avff", map[string]any{})
		if err != nil {
			b.Fatal(err)
		}
		res, err := model.Fit(context.Background(), train, FitOptions{Iterations: 20}, nil)
		if err != nil {
			b.Fatal(err)
		}
		pre := res.Extra["precompute_seconds"]
		last := res.Trace[len(res.Trace)-1]
		b.ReportMetric(pre, "precompute-s")
		b.ReportMetric((last.Elapsed-res.Trace[0].Elapsed)/float64(max(1, last.Iteration-res.Trace[0].Iteration)), "s/lbfgs-iter")
	}
}

// BenchmarkAVFFPrecompute is the O(NM²) ΦΦᵀ pass over N = 10⁵, M = 472.
func BenchmarkAVFFPrecompute(b *testing.B) {
	m := fitNoSteps(b, "avff", map[string]any{}, 1000, 8)
	x := boxData(100000, 8, 2)
	for b.Loop() {
		if _, err := inference.ComputeStats(x.X, x.Y, m.interval().M(), inference.Allocating(m.interval().Phi)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkIntervalSVGPStep is one evaluation + gradient of the whitened
// SVGP ELBO on a minibatch of B = 1000 (of N = 2000), Kuf = Φ(x) included,
// with the structured square root of Kuu that Fit uses against a dense
// M×M Cholesky: A-VFF with D = 8 and 30 frequencies (M = 472), 2-D
// Kronecker VFF with 20 frequencies (M = 39² = 1521), and for the small-M
// end A-VFF with D = 3 and 10 frequencies (M = 57) and 1-D VFF with 200
// frequencies (M = 399). Both forms also pay O(M²B) for q's full square
// root, which dominates at large M.
func BenchmarkIntervalSVGPStep(b *testing.B) {
	const n, batch = 2000, 1000
	for _, c := range []struct {
		name, method string
		d            int
		raw          map[string]any
	}{
		{"avff-D=8-F=30", "avff", 8, map[string]any{"frequencies": int64(30), "objective": "svgp"}},
		{"vff-kron-2D-F=20", "vff", 2, map[string]any{"frequencies": int64(20), "objective": "svgp"}},
		{"avff-D=3-F=10", "avff", 3, map[string]any{"frequencies": int64(10), "objective": "svgp"}},
		{"vff-1D-F=200", "vff", 1, map[string]any{"frequencies": int64(200), "objective": "svgp"}},
	} {
		m := fitNoSteps(b, c.method, c.raw, n, c.d)
		sub := boxData(n, c.d, 1).Subset(rand.New(rand.NewPCG(1, 2)).Perm(n)[:batch])
		for _, structured := range []bool{true, false} {
			name := c.name + "/structured"
			if !structured {
				name = c.name + "/dense"
			}
			b.Run(name, func(b *testing.B) {
				b.ReportMetric(float64(m.interval().M()), "M")
				for b.Loop() {
					tp := ad.NewTape()
					bd := m.set.Bind(tp)
					out, err := m.svgpELBO(tp, bd, sub.X, sub.Y, nil, n, structured)
					if err != nil {
						b.Fatal(err)
					}
					tp.Backward(out)
					_ = bd.Gradient()
				}
			})
		}
	}
}
