package datasets

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
)

// TestGPDrawCovariance checks every sampling method against the kernel:
// the empirical covariance of many draws at fixed inputs matches k(x, x').
func TestGPDrawCovariance(t *testing.T) {
	x := mat.NewDense(3, 1, []float64{0.3, 0, 0.45})
	for _, tc := range []struct{ kernel, method string }{
		{"se", "cholesky"}, {"matern32", "cholesky"},
		{"matern12", "statespace"}, {"matern32", "statespace"}, {"matern52", "statespace"},
		{"se", "rff"}, {"matern32", "rff"},
	} {
		c := config{kernel: tc.kernel, method: tc.method, structure: "ard", ls: 0.2, variance: 1.5, rffFeatures: 200}
		rng := rand.New(rand.NewPCG(1, 2))
		const reps = 4000
		draws := mat.NewDense(reps, 3, nil)
		for r := 0; r < reps; r++ {
			f, _, err := sampleF(c, x, rng)
			if err != nil {
				t.Fatal(err)
			}
			draws.SetRow(r, f)
		}
		var cov mat.SymDense
		stat.CovarianceMatrix(&cov, draws, nil)
		k := kernelFunc(tc.kernel)
		for i := 0; i < 3; i++ {
			for j := 0; j <= i; j++ {
				want := 1.5 * k(math.Abs(x.At(i, 0)-x.At(j, 0))/0.2)
				if math.Abs(cov.At(i, j)-want) > 0.12 {
					t.Errorf("%s/%s: cov[%d][%d] = %.3f, want %.3f", tc.kernel, tc.method, i, j, cov.At(i, j), want)
				}
			}
		}
	}
}

func TestGenerators(t *testing.T) {
	for _, tc := range []struct {
		name   string
		params map[string]any
		check  func(t *testing.T, p *Prepared)
	}{
		{"odvff-gap", nil, func(t *testing.T, p *Prepared) {
			if p.Train.N() != 2000 || p.Test.N() != 1000 {
				t.Fatalf("sizes %d/%d", p.Train.N(), p.Test.N())
			}
			inGap := 0
			for i := 0; i < p.Test.N(); i++ {
				if v := p.Test.X.At(i, 0); v > 0.45 && v < 0.55 {
					inGap++
				}
			}
			for i := 0; i < p.Train.N(); i++ {
				if v := p.Train.X.At(i, 0); v > 0.45 && v < 0.55 || v < 0 || v > 1 {
					t.Fatalf("training input %v in the gap or outside [0,1]", v)
				}
			}
			if inGap < 50 {
				t.Errorf("only %d test points in the gap", inGap)
			}
			// var(y) = 1 + 0.15 in expectation; one realisation is noisy.
			if v := stat.Variance(p.Train.Y, nil); v < 0.5 || v > 2 {
				t.Errorf("var(y) = %v", v)
			}
		}},
		{"vof-inputs", map[string]any{"inputs": "mixture"}, func(t *testing.T, p *Prepared) {
			m, s := stat.MeanStdDev(mat.Col(nil, 0, p.Train.X), nil)
			if math.Abs(m) > 0.3 || math.Abs(s-3) > 0.2 {
				t.Errorf("mixture inputs: mean %v sd %v, want 0, 3", m, s)
			}
		}},
		{"vof-inputs", map[string]any{"inputs": "uniform"}, func(t *testing.T, p *Prepared) {
			_, s := stat.MeanStdDev(mat.Col(nil, 0, p.Train.X), nil)
			if math.Abs(s-6) > 0.3 {
				t.Errorf("uniform inputs sd %v, want 6", s)
			}
		}},
		{"iff-synthetic", map[string]any{"n": 2000}, func(t *testing.T, p *Prepared) {
			w := 6 * math.Sqrt(1000.0)
			for i := 0; i < p.Train.N(); i++ {
				if math.Abs(p.Train.X.At(i, 0)) > w/2 {
					t.Fatal("input outside the IFF width")
				}
			}
			// var(y) = 1 + 1/0.774.
			if v := stat.Variance(p.Train.Y, nil); math.Abs(v-(1+1/0.774)) > 0.5 {
				t.Errorf("var(y) = %v, want about %v", v, 1+1/0.774)
			}
		}},
		{"odvff-synthetic", map[string]any{"dim": 5, "n": 5000}, func(t *testing.T, p *Prepared) {
			// Additive generator: var(y) = 5*1 + 0.2.
			if v := stat.Variance(p.Train.Y, nil); math.Abs(v-5.2) > 1.5 {
				t.Errorf("var(y) = %v, want about 5.2", v)
			}
			if p.Test.N() != 1000 || p.Train.D() != 5 {
				t.Errorf("shape")
			}
		}},
	} {
		p, err := Prepare(Request{Name: tc.name, Params: tc.params, Seed: 11})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		tc.check(t, p)
	}
}
