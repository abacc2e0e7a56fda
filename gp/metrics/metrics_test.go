package metrics

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol*(1+math.Abs(b)) }

func TestRegression(t *testing.T) {
	halfLog2Pi := 0.5 * math.Log(2*math.Pi)
	tests := []struct {
		name          string
		y, mean, varY []float64
		sc            Scale
		want          map[string]float64
	}{
		{
			name: "identity",
			y:    []float64{1, 2, 3}, mean: []float64{1, 3, 3}, varY: []float64{1, 1, 4},
			want: map[string]float64{
				"mse":  1.0 / 3,
				"rmse": math.Sqrt(1.0 / 3),
				// per point ½log2π, ½log2π+½, ½log2π+log2
				"nlpd":       halfLog2Pi + (0.5+math.Log(2))/3,
				"coverage95": 1, // |−1| ≤ 1.96
			},
		},
		{
			name: "rescaled",
			// original y = 10 + 2·y_std; predictions in standardised units
			y: []float64{12, 6}, mean: []float64{1, -1.5}, varY: []float64{0.25, 1},
			sc: Scale{Shift: 10, Scale: 2},
			// original-unit predictions: mean [12, 7], var [1, 4]
			want: map[string]float64{
				"mse":        0.5,
				"rmse":       math.Sqrt(0.5),
				"nlpd":       halfLog2Pi + (math.Log(2)+0.125)/2,
				"coverage95": 1,
			},
		},
		{
			name: "coverage",
			y:    []float64{0, 1.95, 2.0, -3}, mean: []float64{0, 0, 0, 0}, varY: []float64{1, 1, 1, 1},
			want: map[string]float64{
				"mse":        (1.95*1.95 + 4 + 9) / 4,
				"rmse":       math.Sqrt((1.95*1.95 + 4 + 9) / 4),
				"nlpd":       halfLog2Pi + (1.95*1.95+4+9)/8,
				"coverage95": 0.5,
			},
		},
	}
	for _, tc := range tests {
		got, err := Regression(tc.y, tc.mean, tc.varY, tc.sc)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		for k, w := range tc.want {
			if !near(got[k], w, 1e-14) {
				t.Errorf("%s: %s = %.16g, want %.16g", tc.name, k, got[k], w)
			}
		}
		if got["test_loglik"] != -got["nlpd"] {
			t.Errorf("%s: test_loglik %g != −nlpd %g", tc.name, got["test_loglik"], got["nlpd"])
		}
	}
}

// NLPD in original units equals NLPD in standardised units plus log Scale.
func TestScaleLogJacobian(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	n := 50
	ystd, m, v := make([]float64, n), make([]float64, n), make([]float64, n)
	for i := range ystd {
		ystd[i], m[i], v[i] = rng.NormFloat64(), rng.NormFloat64(), 0.1+rng.Float64()
	}
	sc := Scale{Shift: -3, Scale: 7.5}
	orig, err := Regression(sc.Mean(ystd), m, v, sc)
	if err != nil {
		t.Fatal(err)
	}
	std, err := Regression(ystd, m, v, Scale{})
	if err != nil {
		t.Fatal(err)
	}
	if !near(orig["nlpd"], std["nlpd"]+math.Log(7.5), 1e-13) {
		t.Errorf("nlpd %g, want %g + log 7.5", orig["nlpd"], std["nlpd"])
	}
	if !near(orig["rmse"], 7.5*std["rmse"], 1e-13) || orig["coverage95"] != std["coverage95"] {
		t.Errorf("rmse/coverage not scaled: %v vs %v", orig, std)
	}
}

func TestClassification(t *testing.T) {
	y := []float64{1, -1, 1, -1, 1}
	p := []float64{0.9, 0.8, 0.8, 0.1, 0.3}
	got, err := Classification(y, p)
	if err != nil {
		t.Fatal(err)
	}
	// Pairs (pos, neg): (.9,.8) (.9,.1) (.8,.8)=½ (.8,.1) (.3,.8)=0 (.3,.1) → 4.5/6.
	nlpd := -(math.Log(0.9) + math.Log(0.2) + math.Log(0.8) + math.Log(0.9) + math.Log(0.3)) / 5
	want := map[string]float64{"accuracy": 0.6, "auc": 0.75, "nlpd": nlpd, "test_loglik": -nlpd}
	for k, w := range want {
		if !near(got[k], w, 1e-14) {
			t.Errorf("%s = %.16g, want %.16g", k, got[k], w)
		}
	}
	// 0/1 labels give the same scores.
	y01 := []float64{1, 0, 1, 0, 1}
	got01, err := Classification(y01, p)
	if err != nil {
		t.Fatal(err)
	}
	for k := range want {
		if got01[k] != got[k] {
			t.Errorf("0/1 labels: %s = %g, want %g", k, got01[k], got[k])
		}
	}
}

// Rank-based AUC equals the pairwise definition, with many ties.
func TestAUCPairwise(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 20; trial++ {
		n := 2 + rng.IntN(60)
		y, p := make([]float64, n), make([]float64, n)
		for i := range y {
			y[i] = -1
			if rng.IntN(2) == 0 {
				y[i] = 1
			}
			p[i] = float64(rng.IntN(5)) / 4 // heavy ties
		}
		y[0], y[1] = 1, -1
		var num, den float64
		for i := range y {
			for j := range y {
				if y[i] == 1 && y[j] == -1 {
					den++
					switch {
					case p[i] > p[j]:
						num++
					case p[i] == p[j]:
						num += 0.5
					}
				}
			}
		}
		got, err := AUC(y, p)
		if err != nil {
			t.Fatal(err)
		}
		if !near(got, num/den, 1e-14) {
			t.Fatalf("trial %d: AUC %g, pairwise %g", trial, got, num/den)
		}
	}
}

func TestErrors(t *testing.T) {
	cases := []struct {
		name string
		err  error
	}{
		{"empty", func() error { _, err := Regression(nil, nil, nil, Scale{}); return err }()},
		{"length", func() error { _, err := Regression([]float64{1}, []float64{1, 2}, []float64{1}, Scale{}); return err }()},
		{"variance", func() error { _, err := Regression([]float64{1}, []float64{1}, []float64{0}, Scale{}); return err }()},
		{"scale", func() error {
			_, err := Regression([]float64{1}, []float64{1}, []float64{1}, Scale{Scale: -1})
			return err
		}()},
		{"label", func() error { _, err := Classification([]float64{2}, []float64{0.5}); return err }()},
		{"prob", func() error { _, err := Classification([]float64{1}, []float64{1.5}); return err }()},
		{"auc one class", func() error { _, err := AUC([]float64{1, 1}, []float64{0.2, 0.3}); return err }()},
	}
	for _, c := range cases {
		if c.err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
	got, err := Classification([]float64{1, 1}, []float64{0.2, 0.7})
	if err != nil || !math.IsNaN(got["auc"]) || got["accuracy"] != 0.5 {
		t.Errorf("single class: %v, %v; want auc NaN, accuracy 0.5", got, err)
	}
}

// RegressionPositiveVar: RMSE over every point, NLPD and coverage over the
// positive-variance points only, the others counted; with no such point it
// fails.
func TestRegressionPositiveVar(t *testing.T) {
	halfLog2Pi := 0.5 * math.Log(2*math.Pi)
	y, mean, varY := []float64{1, 2, 3, 5}, []float64{1, 3, 3, 1}, []float64{1, -0.5, 4, 0}
	got, err := RegressionPositiveVar(y, mean, varY, Scale{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{
		"mse": (1 + 16) / 4.0, "rmse": math.Sqrt(17 / 4.0),
		"nlpd":             halfLog2Pi + math.Log(2)/2, // points 0 and 2: ½log2π and ½log2π + log 2
		"coverage95":       1,
		NonPositiveVarName: 2,
		"test_loglik":      -(halfLog2Pi + math.Log(2)/2),
	}
	for k, w := range want {
		if !near(got[k], w, 1e-14) {
			t.Errorf("%s = %v, want %v", k, got[k], w)
		}
	}
	if _, err := RegressionPositiveVar([]float64{1}, []float64{1}, []float64{-1}, Scale{}); err == nil {
		t.Error("no positive variance: want an error")
	}
	if _, err := Regression(y, mean, varY, Scale{}); err == nil {
		t.Error("Regression accepted a negative variance")
	}
}

// byCopies is how Regression and RegressionPositiveVar scored before they
// streamed: the predictions mapped to original units as whole copies
// (Scale.Mean, Scale.Var), then MSE, NLPD and Coverage95 on the copies (on
// the positive-variance points only for NLPD and coverage when asked).
func byCopies(t *testing.T, y, mean, varY []float64, sc Scale, positiveOnly bool) map[string]float64 {
	t.Helper()
	m, v := sc.Mean(mean), sc.Var(varY)
	mse, err := MSE(y, m)
	if err != nil {
		t.Fatal(err)
	}
	yd, md, vd := y, m, v
	if positiveOnly {
		yd, md, vd = nil, nil, nil
		for i, x := range varY {
			if x > 0 {
				yd, md, vd = append(yd, y[i]), append(md, m[i]), append(vd, v[i])
			}
		}
	}
	nlpd, err := NLPD(yd, md, vd)
	if err != nil {
		t.Fatal(err)
	}
	cov, err := Coverage95(yd, md, vd)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]float64{MSEName: mse, RMSEName: math.Sqrt(mse), NLPDName: nlpd, TestLogLikName: -nlpd, Coverage95Name: cov}
}

// randomPredictions are n test targets in original units and standardised
// predictions around them; with negatives, a tenth of the variances is
// zero or negative.
func randomPredictions(n int, sc Scale, negatives bool) (y, mean, varY []float64) {
	rng := rand.New(rand.NewPCG(3, uint64(n)))
	y, mean, varY = make([]float64, n), make([]float64, n), make([]float64, n)
	for i := range y {
		ystd := rng.NormFloat64()
		y[i] = ystd*sc.Scale + sc.Shift
		mean[i] = ystd + 0.7*rng.NormFloat64()
		varY[i] = 0.05 + rng.ExpFloat64()
		if negatives && rng.IntN(10) == 0 {
			varY[i] = -rng.Float64() * float64(rng.IntN(2))
		}
	}
	return y, mean, varY
}

// The streamed scores are bitwise those of the mapped copies (the stored
// metrics of every run stay the same), for both regression scorers.
func TestRegressionStreamedBitwise(t *testing.T) {
	for _, tc := range []struct {
		name     string
		sc       Scale
		positive bool
	}{
		{"scaled", Scale{Shift: -3.25, Scale: 7.5}, false},
		{"identity", Scale{}, false},
		{"positive-var scaled", Scale{Shift: 12.5, Scale: 0.3}, true},
	} {
		y, mean, varY := randomPredictions(10007, tc.sc, tc.positive)
		score := Regression
		if tc.positive {
			score = RegressionPositiveVar
		}
		got, err := score(y, mean, varY, tc.sc)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		for k, w := range byCopies(t, y, mean, varY, tc.sc, tc.positive) {
			if math.Float64bits(got[k]) != math.Float64bits(w) {
				t.Errorf("%s: %s = %.17g, by copies %.17g", tc.name, k, got[k], w)
			}
		}
	}
}

// Scoring makes no copy of the test points: the bytes the scorers allocate
// do not grow with N (a million points scored by copies allocated 16 MB).
func TestRegressionAllocatesNoCopies(t *testing.T) {
	sc := Scale{Shift: 1, Scale: 2}
	allocated := func(n int, score func(y, mean, varY []float64, sc Scale) (map[string]float64, error)) uint64 {
		y, mean, varY := randomPredictions(n, sc, false)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		if _, err := score(y, mean, varY, sc); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	for name, score := range map[string]func(y, mean, varY []float64, sc Scale) (map[string]float64, error){
		"Regression": Regression, "RegressionPositiveVar": RegressionPositiveVar,
	} {
		if b := allocated(1_000_000, score); b > 64<<10 {
			t.Errorf("%s allocated %d bytes scoring 10⁶ points, want O(1) in N (≤ 64 KiB)", name, b)
		}
	}
}
