package methods

import (
	"context"
	"strings"
	"testing"
)

// TestSizeRule: num_inducing reaches every family with a structure: the
// method chooses the structure value whose feature count is nearest to it
// (the smaller on a tie), Plan and Fit agree on that M (num_features), and
// the fit records the choice. Before, num_inducing was not a parameter of
// vff, avff, bspline, iff, vish or odvff (a grid sweeping it collapsed them
// to one run each).
func TestSizeRule(t *testing.T) {
	for _, tc := range []struct {
		method string
		raw    map[string]any
		dim    int
		want   int
		param  string
		value  int
	}{
		// additive VFF on D = 3: counts 3·(2f − 1) = 3, 9, 15, 21, …
		{"vff", map[string]any{"structure": "additive", "num_inducing": int64(16)}, 3, 15, "frequencies", 3},
		{"vff", map[string]any{"structure": "additive", "num_inducing": int64(12)}, 3, 9, "frequencies", 2},           // tie 9/15: the smaller
		{"vff", map[string]any{"num_inducing": int64(30)}, 2, 25, "frequencies", 3},                                   // Kronecker (2f − 1)²: 1, 9, 25, 49
		{"vff", map[string]any{"num_inducing": int64(2)}, 2, 1, "frequencies", 1},                                     // below the second count
		{"avff", map[string]any{"num_inducing": int64(40)}, 2, 38, "frequencies", 10},                                 // 2·(2f − 1): 38, 42 (tie)
		{"bspline", map[string]any{"num_inducing": int64(30)}, 2, 25, "bases", 5},                                     // bases²: 16, 25, 36
		{"bspline", map[string]any{"num_inducing": int64(3)}, 2, 16, "bases", 4},                                      // the smallest set
		{"iff", map[string]any{"num_inducing": int64(21)}, 1, 20, "freqs_per_dim", 10},                                // 2·freqs_per_dim in 1-D
		{"vish", map[string]any{"num_inducing": int64(20)}, 2, 16, "max_level", 3},                                    // (ℓ+1)² on S²: 1, 4, 9, 16, 25
		{"odvff", map[string]any{"num_inducing": int64(14), "num_orthogonal": int64(5)}, 2, 14 + 5, "frequencies", 4}, // β = 2·(2f − 1) = 14
	} {
		t.Run(tc.method+"/"+strings.TrimPrefix(strings.ReplaceAll(strings.Trim(strings.Join(mapKeysValues(tc.raw), ","), "[]"), " ", ""), ""), func(t *testing.T) {
			m, err := Lookup(tc.method)
			if err != nil {
				t.Fatal(err)
			}
			p, err := m.Validate(tc.raw)
			if err != nil {
				t.Fatal(err)
			}
			if p.Has(tc.param) {
				t.Errorf("%s has its default %v although num_inducing chooses it", tc.param, p.values[tc.param])
			}
			plan, err := m.Plan(p, Shape{N: 300, D: tc.dim})
			if err != nil {
				t.Fatal(err)
			}
			if plan.M != tc.want {
				t.Errorf("Plan: M = %d, want %d", plan.M, tc.want)
			}
			model, err := Build(tc.method, tc.raw)
			if err != nil {
				t.Fatal(err)
			}
			res, err := model.Fit(context.Background(), reproData(1, 300, tc.dim), FitOptions{Iterations: 1, Seed: 1}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Extra["num_features"]; got != float64(tc.want) {
				t.Errorf("Fit: num_features = %v, want %d", got, tc.want)
			}
			if got := res.Extra["x_"+tc.param]; got != float64(tc.value) {
				t.Errorf("Fit: x_%s = %v, want %d", tc.param, got, tc.value)
			}
		})
	}
}

func mapKeysValues(m map[string]any) []string {
	var out []string
	for k, v := range m {
		if k == "num_inducing" {
			out = append(out, k+"="+strings.TrimSpace(strings.ReplaceAll(strings.ReplaceAll(fmtAny(v), "(", ""), ")", "")))
		}
	}
	return out
}

func fmtAny(v any) string {
	switch x := v.(type) {
	case int64:
		return itoa(int(x))
	}
	return ""
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var b []byte
	for ; i > 0; i /= 10 {
		b = append([]byte{byte('0' + i%10)}, b...)
	}
	return string(b)
}

// TestSizeRuleErrors: num_inducing beside the parameter it chooses is an
// error naming both; the spherical SE's usable levels cap VISH's choice,
// with a warning.
func TestSizeRuleErrors(t *testing.T) {
	vff, _ := Lookup("vff")
	if _, err := vff.Validate(map[string]any{"num_inducing": int64(10), "frequencies": int64(3)}); err == nil ||
		!strings.Contains(err.Error(), "num_inducing: method vff chooses frequencies from it; give num_inducing or frequencies, not both") {
		t.Errorf("both given: %v", err)
	}
	vish, _ := Lookup("vish")
	p, err := vish.Validate(map[string]any{"num_inducing": int64(100000)})
	if err != nil {
		t.Fatal(err)
	}
	plan, err := vish.Plan(p, Shape{N: 300, D: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Warnings) == 0 || !strings.Contains(plan.Warnings[0], "beyond the largest usable here") {
		t.Errorf("no warning of the usable-level cap: %q (M = %d)", plan.Warnings, plan.M)
	}
	model, err := Build("vish", map[string]any{"num_inducing": int64(100000)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := model.Fit(context.Background(), reproData(1, 100, 1), FitOptions{Iterations: 1}, nil); err != nil {
		t.Errorf("the capped level does not fit: %v", err)
	}
}

// TestDecoupledEvenSplit: a decoupled method's orthogonal set has as many
// inducing inputs as its base set unless num_orthogonal is given, so
// num_inducing alone sizes both (M = 2·num_inducing). Before, it defaulted
// to 100 whatever num_inducing was.
func TestDecoupledEvenSplit(t *testing.T) {
	for _, tc := range []struct {
		raw  map[string]any
		want int
	}{
		{map[string]any{"num_inducing": int64(12)}, 24},
		{map[string]any{"num_inducing": int64(12), "num_orthogonal": int64(5)}, 17},
	} {
		for _, name := range []string{"odvgp", "solvegp"} {
			model, err := Build(name, tc.raw)
			if err != nil {
				t.Fatal(err)
			}
			res, err := model.Fit(context.Background(), reproData(1, 200, 2), FitOptions{Iterations: 1, Seed: 1}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Extra["num_features"]; got != float64(tc.want) {
				t.Errorf("%s %v: num_features = %v, want %d", name, tc.raw, got, tc.want)
			}
		}
	}
}

// TestPlanTrainedNumbers: Plan.Params counts what a fit trains, for the
// ETA: SGPR on D = 3 with M = 10 trained inducing inputs: 3 lengthscales,
// the variance, the noise and 10·3 inputs = 35; SVGP adds q(u): 10 + 55;
// an exact GP 3 + 2; VFF with fixed features only its kernel and noise.
func TestPlanTrainedNumbers(t *testing.T) {
	for _, tc := range []struct {
		method string
		raw    map[string]any
		want   int
	}{
		{"sgpr", map[string]any{"num_inducing": int64(10)}, 35},
		{"sgpr", map[string]any{"num_inducing": int64(10), "train_inducing": false}, 5},
		{"svgp", map[string]any{"num_inducing": int64(10)}, 35 + 10 + 55},
		{"gpr", nil, 5},
		{"vff", map[string]any{"structure": "additive", "frequencies": int64(3)}, 2*3 + 1},
	} {
		m, _ := Lookup(tc.method)
		p, err := m.Validate(tc.raw)
		if err != nil {
			t.Fatal(err)
		}
		plan, err := m.Plan(p, Shape{N: 200, D: 3})
		if err != nil {
			t.Fatal(err)
		}
		if plan.Params != tc.want {
			t.Errorf("%s %v: Params = %d, want %d", tc.method, tc.raw, plan.Params, tc.want)
		}
	}
}
