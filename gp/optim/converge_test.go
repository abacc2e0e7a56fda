package optim

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
)

// trace returns n values f(i).
func trace(n int, f func(i int) float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = f(i)
	}
	return out
}

func TestRuleCheck(t *testing.T) {
	noise := func(seed uint64, sd float64) func() float64 {
		rng := rand.New(rand.NewPCG(seed, 1))
		return func() float64 { return sd * rng.NormFloat64() }
	}
	n1, n2, n3 := noise(4, 5), noise(2, 5), noise(3, 20)
	// The yacht fit of issue 31: −204 → −138 over its last 20 of 100
	// iterations, still rising steeply at the cap.
	yacht := trace(101, func(i int) float64 { return -204 + 66*float64(i-80)/20 })
	tests := []struct {
		name      string
		f         []float64
		rule      Rule
		converged bool
		window    int
		rel       float64 // expected RelChange (NaN: too short); tolerance relTol
		relTol    float64
	}{
		{name: "rising steeply at the cap", f: trace(100, func(i int) float64 { return -1000 + 10*float64(i) }),
			rule: Rule{Floor: 100}, converged: false, window: 10, rel: 0.1, relTol: 1e-9}, // d = 100 over w = 10, s = Floor
		{name: "yacht at the cap", f: yacht, rule: Rule{Floor: 277}, converged: false, window: 11},
		{name: "flat", f: trace(100, func(int) float64 { return -512.25 }), rule: Rule{Floor: 300}, converged: true, window: 10},
		{name: "exponential approach, settled", f: trace(300, func(i int) float64 { return -100 + 50*math.Exp(-float64(i)/10) }),
			rule: Rule{Floor: 100}, converged: true, window: 30},
		{name: "exponential approach, still moving", f: trace(300, func(i int) float64 { return -100 + 50*math.Exp(-float64(i)/300) }),
			rule: Rule{Floor: 100}, converged: false, window: 30},
		{name: "noisy flat (minibatch)", f: trace(1000, func(int) float64 { return -500 + n1() }), rule: Rule{Floor: 300}, converged: true, window: 100},
		{name: "noisy rising", f: trace(200, func(i int) float64 { return -500 + float64(i) + n2() }), rule: Rule{Floor: 300}, converged: false, window: 20},
		{name: "very noisy, slow rise below the noise", f: trace(200, func(i int) float64 { return -500 + 0.01*float64(i) + n3() }),
			rule: Rule{Floor: 300}, converged: true, window: 20},
		{name: "falling (diverging)", f: trace(100, func(i int) float64 { return -100 - 5*float64(i) }), rule: Rule{Floor: 100}, converged: false, window: 10},
		{name: "slow drift within tolerance", f: trace(1000, func(i int) float64 { return -1000 + 1e-3*float64(i) }), rule: Rule{Floor: 100},
			converged: true, window: 100, rel: 1e-6, relTol: 0.01},
		{name: "the floor: an objective near zero", f: trace(100, func(i int) float64 { return -0.5 + 1e-3*float64(i) }), rule: Rule{Floor: 1000},
			converged: true, window: 10},
		{name: "the same without a floor", f: trace(100, func(i int) float64 { return -0.5 + 1e-3*float64(i) }), rule: Rule{},
			converged: false, window: 10},
		{name: "looser tolerance", f: trace(100, func(i int) float64 { return -1000 + 0.1*float64(i) }), rule: Rule{Tol: 1e-3, Floor: 100},
			converged: true, window: 10},
		{name: "too short to judge", f: trace(19, func(int) float64 { return 1 }), converged: false, rel: math.NaN()},
		{name: "non-finite in the windows", f: append(trace(30, func(int) float64 { return 1 }), math.NaN()), converged: false, window: 10, rel: math.NaN()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := tc.rule.Check(tc.f)
			if d.Converged != tc.converged {
				t.Errorf("converged %v, want %v (RelChange %g, window %d)", d.Converged, tc.converged, d.RelChange, d.Window)
			}
			if d.Window != tc.window {
				t.Errorf("window %d, want %d", d.Window, tc.window)
			}
			switch {
			case math.IsNaN(tc.rel):
				if !math.IsNaN(d.RelChange) {
					t.Errorf("RelChange %g, want NaN", d.RelChange)
				}
			case tc.relTol > 0:
				if math.Abs(d.RelChange-tc.rel) > tc.relTol*math.Abs(tc.rel) {
					t.Errorf("RelChange %g, want %g", d.RelChange, tc.rel)
				}
			}
		})
	}
}

// TestRuleNoise: over many seeds, a flat trace with noise is flagged as
// unconverged rarely (Z = 3 standard errors: about 0.3 % by chance), and a
// climb of a fiftieth of the noise's standard deviation per iteration over
// 1000 iterations (20 % of the scale) is caught nearly always.
func TestRuleNoise(t *testing.T) {
	const seeds = 1000
	var flat, rising int
	for seed := uint64(0); seed < seeds; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		if !(Rule{Floor: 300}).Check(trace(1000, func(int) float64 { return -500 + 5*rng.NormFloat64() })).Converged {
			flat++
		}
		if !(Rule{Floor: 300}).Check(trace(1000, func(i int) float64 { return -500 + 0.1*float64(i) + 5*rng.NormFloat64() })).Converged {
			rising++
		}
	}
	if flat > seeds/100 {
		t.Errorf("noisy flat traces flagged %d times in %d, want ≤ 1 %%", flat, seeds)
	}
	if rising < seeds*99/100 {
		t.Errorf("noisy rising traces caught %d times in %d, want ≥ 99 %%", rising, seeds)
	}
}

// An objective that keeps falling slowly (exp(−x), no minimum): L-BFGS and
// Adam run to their cap without a stopping rule and stop by the rule with
// one, at a point where the rule holds on their own trace.
func TestMinimizeStopRule(t *testing.T) {
	slow := func(x, grad []float64) float64 {
		f := math.Exp(-x[0])
		grad[0] = -f
		return f
	}
	for _, method := range []string{LBFGS, Adam} {
		for _, stop := range []Rule{{}, {Tol: 1e-3}} {
			s := Settings{Method: method, MaxIter: 400, GradTol: 1e-300, LearningRate: 0.05, Stop: stop}
			var f []float64
			res, err := Minimize(context.Background(), slow, []float64{0}, s, func(it Iteration) { f = append(f, -it.F) })
			if err != nil {
				t.Fatalf("%s %+v: %v", method, stop, err)
			}
			stopped := res.Status == StatusStopRule
			if stopped != (stop.Tol > 0) {
				t.Errorf("%s stop %+v: status %q after %d iterations", method, stop, res.Status, res.Iterations)
			}
			if stopped {
				if res.Iterations >= s.MaxIter {
					t.Errorf("%s: stopped by the rule at the cap (%d)", method, res.Iterations)
				}
				if d := stop.Check(f); !d.Converged {
					t.Errorf("%s: stopped where the rule does not hold on the reported trace (%+v)", method, d)
				}
			}
		}
	}
}

func TestTrainNatGradStopRule(t *testing.T) {
	for _, stop := range []Rule{{}, {Tol: 1e-6, Floor: 30}} {
		rng := rand.New(rand.NewPCG(9, 9))
		c, s := newLinGauss(rng, 30, 6)
		rep, err := TrainNatGrad(context.Background(), s, c.objective, []Gaussian{{Mu: "q_mu", Sqrt: "q_sqrt"}},
			NatGradSettings{MaxIter: 500, Gamma: 0.5, LearningRate: 0.05, Stop: stop}, nil)
		if err != nil {
			t.Fatal(err)
		}
		stopped := rep.Status == StatusStopRule
		if stopped != (stop.Tol > 0) || (stopped && rep.Iterations >= 500) {
			t.Errorf("stop %+v: status %q after %d iterations", stop, rep.Status, rep.Iterations)
		}
	}
	rng := rand.New(rand.NewPCG(9, 9))
	c, s := newLinGauss(rng, 5, 2)
	if _, err := TrainNatGrad(context.Background(), s, c.objective, []Gaussian{{Mu: "q_mu", Sqrt: "q_sqrt"}},
		NatGradSettings{MaxIter: 5, Gamma: 1, Stop: Rule{Tol: -1}}, nil); err == nil {
		t.Error("negative stopping tolerance accepted")
	}
}
