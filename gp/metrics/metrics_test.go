package metrics

import (
	"math"
	"math/rand/v2"
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
