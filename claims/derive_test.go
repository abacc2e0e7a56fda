package claims

import (
	"math"
	"strings"
	"testing"

	"sgplab/internal/reporttest"
)

func TestTransformValue(t *testing.T) {
	nan := math.NaN()
	for _, c := range []struct {
		name    string
		in, out float64
	}{
		{"", -2, -2}, {"abs", -2, 2}, {"log10", 1000, 3}, {"log10", -1, nan}, {"log10", 0, nan},
		{"log10abs", -0.01, -2}, {"log10abs", 0, nan},
	} {
		got := transformValue(c.name, c.in)
		if math.IsNaN(c.out) != math.IsNaN(got) || !math.IsNaN(got) && math.Abs(got-c.out) > 1e-12 {
			t.Errorf("%s(%v) = %v, want %v", c.name, c.in, got, c.out)
		}
	}
}

// TestDeriveValues: a metric keeps every row (NaN where the value is not a
// number, after the transform); a parameter is rounded to its digits, kept
// as text when the query gives text, and left out when it is no number.
func TestDeriveValues(t *testing.T) {
	st := reporttest.Store(t)
	const sweepRun = "SELECT id FROM runs WHERE grid = 'demo/sweep' AND method = 'sgpr' AND profile = 'full'"
	for _, c := range []struct {
		name string
		d    Derive
		want map[string]Value // by run; only the runs of one sweep configuration
	}{
		{"metric with transform", Derive{Name: "x_l", As: "metric", Transform: "log10",
			Query: "SELECT run_id, num FROM run_params WHERE name = 'num_inducing' AND run_id IN (" + sweepRun + ")"},
			map[string]Value{"8": {Metric: math.Log10(8)}, "64": {Metric: math.Log10(64)}}},
		{"metric not a number", Derive{Name: "x_t", As: "metric",
			Query: "SELECT run_id, 'n/a' FROM run_params WHERE name = 'num_inducing' AND run_id IN (" + sweepRun + ")"},
			map[string]Value{"8": {Metric: math.NaN()}}},
		{"parameter rounded", Derive{Name: "third", As: "param", Digits: 2,
			Query: "SELECT run_id, num / 3.0 FROM run_params WHERE name = 'num_inducing' AND run_id IN (" + sweepRun + ")"},
			map[string]Value{"8": {Param: "2.7"}, "64": {Param: "21"}}},
		{"parameter default 3 digits", Derive{Name: "third", As: "param",
			Query: "SELECT run_id, num / 3.0 FROM run_params WHERE name = 'num_inducing' AND run_id IN (" + sweepRun + ")"},
			map[string]Value{"8": {Param: "2.67"}}},
		{"parameter as text", Derive{Name: "variant", As: "param",
			Query: "SELECT run_id, 'm' || value FROM run_params WHERE name = 'num_inducing' AND run_id IN (" + sweepRun + ")"},
			map[string]Value{"16": {Param: "m16"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			vals, err := c.d.Values(st, "full", false)
			if err != nil {
				t.Fatal(err)
			}
			// Each run of the configuration appears once per lengthscale: 4 values of M × 4 lengthscales.
			if len(vals) != 16 {
				t.Errorf("%d values, want 16", len(vals))
			}
			_, rows, err := st.Query("SELECT run_id, value FROM run_params WHERE name = 'num_inducing'")
			if err != nil {
				t.Fatal(err)
			}
			m := map[string]string{}
			for _, r := range rows {
				m[r[0].(string)] = r[1].(string)
			}
			for _, v := range vals {
				w, ok := c.want[m[v.Run]]
				if !ok {
					continue
				}
				if v.Param != w.Param || !(v.Metric == w.Metric || math.IsNaN(v.Metric) && math.IsNaN(w.Metric)) {
					t.Errorf("run %s (M = %s): %+v, want %+v", v.Run, m[v.Run], v, w)
				}
			}
		})
	}
	// A parameter whose value is NULL is left out.
	vals, err := Derive{Name: "p", As: "param", Query: "SELECT id, NULL FROM runs"}.Values(st, "full", false)
	if err != nil || len(vals) != 0 {
		t.Errorf("NULL parameters: %v, %v; want none", vals, err)
	}
	for _, c := range []struct{ query, want string }{
		{"SELECT nope FROM nowhere", `derived metric "x_bad"`},
		{"SELECT run_id FROM run_metrics", "2 columns"},
	} {
		_, err := Derive{Name: "x_bad", As: "metric", Query: c.query}.Values(st, "full", false)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("query %q: error %v, want it to contain %q", c.query, err, c.want)
		}
	}
}

// TestCheckDerived: each problem names the derived value's index and key.
func TestCheckDerived(t *testing.T) {
	ds := []Derive{
		{Name: "elbo", Query: "q"},
		{Name: "x_a", As: "table", Query: "q"},
		{Name: "x_b"},
		{Name: "x_c", Query: "q"}, {Name: "x_c", Query: "q"},
		{Query: "q"},
		{Name: "x_d", Transform: "ln", Query: "q"},
		{Name: "p", As: "param", Digits: 40, Query: "q"},
		{Name: "a b", As: "param", Query: "q"},
	}
	want := []string{
		`[0].name: a derived metric "elbo" must be an extension name starting with "x_", so it never shadows a stored metric`,
		`[1].as: unknown as = "table"; valid: metric, param`,
		`[2].query: a derived value needs a query returning (run_id, value)`,
		`[4].name: metric "x_c" is derived twice`,
		`[5]: a derived value needs a name`,
		`[6].transform: unknown transform "ln"; valid: log10, log10abs, abs`,
		`[7].digits: digits = 40 is outside 0…17`,
		`[8].name: parameter name "a b" must be letters, digits, '.', '_' or '-'`,
	}
	var got []string
	for _, e := range CheckDerived(ds) {
		got = append(got, e.Key+": "+e.Msg)
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if ds[0].As != "metric" {
		t.Errorf("default as = %q, want metric", ds[0].As)
	}
}
