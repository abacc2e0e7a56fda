package report

import (
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"sgplab/claims"
	"sgplab/internal/reporttest"
)

func TestApplyDerived(t *testing.T) {
	spec, err := Parse("derive.toml", reporttest.DeriveConfig)
	if err != nil {
		t.Fatal(err)
	}
	st := reporttest.Store(t)
	runs, err := loadRuns(st, "demo", []string{"fig3", "sweep"})
	if err != nil {
		t.Fatal(err)
	}
	if err := applyDerived(spec.Report.Derive, st, "full", false, runs); err != nil {
		t.Fatal(err)
	}
	maxSecs := map[string]float64{}
	for _, r := range runs {
		if s, ok := r.Metrics["train_seconds"]; ok {
			maxSecs[r.Dataset] = math.Max(maxSecs[r.Dataset], s)
		}
	}
	checked := 0
	for _, r := range runs {
		if r.Grid != "fig3" {
			continue
		}
		want := r.Metrics["elbo"] - 1000*r.Metrics["rmse"]
		if got := r.Metrics["x_gap"]; math.Abs(got-want) > 1e-9*math.Abs(want) {
			t.Errorf("run %s: x_gap = %v, want %v", r.ID, got, want)
		}
		if got, want := r.Metrics["x_time_norm"], r.Metrics["train_seconds"]/maxSecs[r.Dataset]; math.Abs(got-want) > 1e-12 {
			t.Errorf("run %s: x_time_norm = %v, want %v", r.ID, got, want)
		}
		m, _ := strconv.ParseFloat(r.Params["num_inducing"], 64)
		rounded, _ := strconv.ParseFloat(strconv.FormatFloat(m/3, 'g', 2, 64), 64) // digits = 2
		if got, want := r.Params["log_m"], strconv.FormatFloat(rounded, 'g', -1, 64); got != want {
			t.Errorf("run %s: log_m = %q, want %q", r.ID, got, want)
		}
		if got, want := r.Params["variant"], r.Method+"-"+r.Dataset; got != want {
			t.Errorf("run %s: variant = %q, want %q", r.ID, got, want)
		}
		checked++
	}
	if checked != 48 {
		t.Errorf("checked %d fig3 runs, want 48", checked)
	}
}

// Derived values must respect the report's profile: the fixture's fig3 runs
// are all full-profile, so a quick report derives nothing for them.
func TestApplyDerivedProfileScoped(t *testing.T) {
	spec, err := Parse("derive.toml", reporttest.DeriveConfig)
	if err != nil {
		t.Fatal(err)
	}
	st := reporttest.Store(t)
	runs, err := loadRuns(st, "demo", []string{"fig3"})
	if err != nil {
		t.Fatal(err)
	}
	if err := applyDerived(spec.Report.Derive, st, "quick", false, runs); err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		if _, ok := r.Metrics["x_gap"]; ok {
			t.Fatalf("run %s (profile %q) got a derived value in a quick report", r.ID, r.Profile)
		}
	}
}

func TestRenderWithDerived(t *testing.T) {
	spec, err := Parse("derive.toml", reporttest.DeriveConfig)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	sum, err := Render(spec, reporttest.Store(t), out, Options{Formats: []string{"svg"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Warnings) != 0 {
		t.Errorf("warnings: %v", sum.Warnings)
	}
	idx, err := os.ReadFile(filepath.Join(out, "index.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(idx), "- `metric:x_gap`: elbo minus 1000 times rmse") {
		t.Errorf("index.md does not document the derived metric:\n%s", idx)
	}
	heat, err := os.ReadFile(filepath.Join(out, "heat-derived.svg"))
	if err != nil {
		t.Fatal(err)
	}
	// 8/3 = 2.666… → "2.7" with two significant digits.
	for _, want := range []string{">2.7<", ">5.3<", ">11<", ">21<"} {
		if !strings.Contains(string(heat), want) {
			t.Errorf("heatmap lacks the derived category %s", want)
		}
	}
}

func TestDeriveErrors(t *testing.T) {
	head := "name = \"demo\"\n[[grid]]\nname = \"g\"\n"
	cases := []struct {
		name, body, want string
	}{
		{"stable metric name", "[[report.derive]]\nname = \"elbo\"\nquery = \"SELECT 1, 2\"\n", "must be an extension name"},
		{"bad kind", "[[report.derive]]\nname = \"x_a\"\nas = \"table\"\nquery = \"SELECT 1, 2\"\n", "unknown as"},
		{"no query", "[[report.derive]]\nname = \"x_a\"\n", "needs a query"},
		{"twice", "[[report.derive]]\nname = \"x_a\"\nquery = \"q\"\n[[report.derive]]\nname = \"x_a\"\nquery = \"q\"\n", "derived twice"},
		{"unknown key", "[[report.derive]]\nname = \"x_a\"\nquery = \"q\"\nexpr = \"a-b\"\n", `unknown key "expr" in [[report.derive]]`},
		{"no name", "[[report.derive]]\nquery = \"q\"\n", "needs a name"},
		{"bad transform", "[[report.derive]]\nname = \"x_a\"\ntransform = \"ln\"\nquery = \"q\"\n", "unknown transform"},
		{"bad digits", "[[report.derive]]\nname = \"p\"\nas = \"param\"\ndigits = 40\nquery = \"q\"\n", "digits"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("bad.toml", head+c.body)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want it to contain %q", err, c.want)
			}
			if !strings.Contains(err.Error(), "bad.toml") {
				t.Errorf("error %v does not name the file", err)
			}
		})
	}
}

func TestApplyDerivedQueryErrors(t *testing.T) {
	st := reporttest.Store(t)
	runs, err := loadRuns(st, "demo", []string{"fig3"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ query, want string }{
		{"SELECT nope FROM nowhere", "x_bad"},
		{"SELECT run_id FROM run_metrics", "2 columns"},
	} {
		err := applyDerived([]claims.Derive{{Name: "x_bad", As: "metric", Query: c.query}}, st, "full", false, runs)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("query %q: error %v, want it to contain %q", c.query, err, c.want)
		}
	}
}
