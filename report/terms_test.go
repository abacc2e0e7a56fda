package report

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sgplab/results"
)

const termsConfig = `
name = "terms"
[[grid]]
name = "t"
[[grid]]
name = "u"

[report.labels]
var_h = "Var h"
base_cov = "Q C Q"
inducing_inputs = "inducing inputs"
"M = 128" = "M = 128 (label)"

[[figure]]
name = "fig-terms"
kind = "terms"
grid = "t"
panels = "param:k"
artifact = "variance_terms"
reference_artifact = "inducing_inputs"
lines = ["var_h", "base_cov"]
[figure.series_style]
base_cov = "orange dashed"

[[figure]]
name = "fig-dots"
kind = "dots"
grid = "u"
x = "metric:rmse"
y = "param:row"
series = "param:cfg"
panels = "dataset"
row_order = ["second", "first"]
series_order = ["M = 256", "M = 128"]
band = "std"
[figure.series_style]
"M = 128" = "red"
"M = 256" = "blue"
`

func termsStore(t *testing.T) *results.Store {
	t.Helper()
	st, err := results.Open(filepath.Join(t.TempDir(), "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	save := func(r results.Run, ms []results.Metric, arts ...results.Artifact) {
		r.Status, r.Profile, r.Started, r.Finished = results.StatusDone, "full", t0, t0
		if r.Dataset == "" {
			r.Dataset = "toy"
		}
		if err := st.SaveRunArtifacts(r, ms, nil, arts); err != nil {
			t.Fatal(err)
		}
	}
	for i, k := range []string{"a", "b"} {
		vt := results.Artifact{Name: "variance_terms", Columns: []string{"x0", "var_h", "base_cov"}, Rows: 41}
		for j := 0; j < 41; j++ {
			x := -2 + 0.1*float64(j)
			vt.Data = append(vt.Data, x, 1-math.Exp(-x*x), 0.2*float64(i+1))
		}
		z := results.Artifact{Name: "inducing_inputs", Columns: []string{"x0", "set"}, Rows: 2, Data: []float64{-1, 0, 1, 0}}
		save(results.Run{ID: "t" + k, Grid: "t", Method: "svgp", Params: []results.Param{{Name: "k", Value: k}}}, nil, vt, z)
	}
	// Two datasets, two rows, two configurations, two splits each.
	for _, ds := range []string{"yacht", "energy"} {
		for _, row := range []string{"first", "second"} {
			for _, cfg := range []string{"M = 128", "M = 256"} {
				for s, v := range []float64{1, 3} {
					if cfg == "M = 256" {
						v += 10
					}
					id := ds + row + cfg + string(rune('0'+s))
					save(results.Run{ID: id, Grid: "u", Method: "svgp", Dataset: ds, Split: s,
						Params: []results.Param{{Name: "row", Value: row}, {Name: "cfg", Value: cfg}}},
						[]results.Metric{{Name: "rmse", Value: v}})
				}
			}
		}
	}
	return st
}

func TestRenderTermsAndDots(t *testing.T) {
	spec, err := Parse("terms.toml", termsConfig)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if dir := os.Getenv("FIGURES_OUT"); dir != "" {
		out = dir
	}
	sum, err := Render(spec, termsStore(t), out, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Warnings) != 0 {
		t.Errorf("warnings: %v", sum.Warnings)
	}
	for name, want := range map[string][]string{
		"fig-terms": {"k = a", "k = b", "Var h", "Q C Q", "inducing inputs"},
		"fig-dots":  {"yacht", "energy", "first", "second", "M = 128 (label)", "M = 256"},
	} {
		svg, err := os.ReadFile(filepath.Join(out, name+".svg"))
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range want {
			if !strings.Contains(string(svg), w) {
				t.Errorf("%s.svg lacks %q", name, w)
			}
		}
	}
	idx, _ := os.ReadFile(filepath.Join(out, "index.md"))
	for _, w := range []string{"columns var_h, base_cov of the per-run array \"variance_terms\"", "error bars ±1 std over splits"} {
		if !strings.Contains(string(idx), w) {
			t.Errorf("index.md lacks %q:\n%s", w, idx)
		}
	}
}

// TestDotsRange: every marker's mean ± std lies inside its panel's x range
// (mean 2 ± √2 and 12 ± √2 here), and rows are placed top first.
func TestDotsRange(t *testing.T) {
	spec, err := Parse("terms.toml", termsConfig)
	if err != nil {
		t.Fatal(err)
	}
	var fs FigureSpec
	for _, f := range spec.Figures {
		if f.Name == "fig-dots" {
			fs = f
		}
	}
	runs, err := loadRuns(termsStore(t), "", fs.GridSet)
	if err != nil {
		t.Fatal(err)
	}
	rc := &renderCtx{spec: &spec, profile: "full", labels: map[string]string{}}
	f, err := buildDots(fs, runs, nil, rc)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Panels) != 2 {
		t.Fatalf("%d panels, want 2", len(f.Panels))
	}
	for _, p := range f.Panels {
		lo, hi := 2-math.Sqrt2, 12+math.Sqrt2
		if !(p.X.Min < lo && p.X.Max > hi) {
			t.Errorf("panel %s: x range [%g, %g] does not hold [%g, %g]", p.Title.Text, p.X.Min, p.X.Max, lo, hi)
		}
		if p.Y.Min >= 1 || p.Y.Max <= 2 {
			t.Errorf("panel %s: y range [%g, %g] does not hold both rows", p.Title.Text, p.Y.Min, p.Y.Max)
		}
	}
}

func TestTermsDotsSpecErrors(t *testing.T) {
	for _, tt := range []struct{ fig, want string }{
		{"kind = \"terms\"\ngrid = \"k\"\nlines = [\"a\"]", "needs artifact"},
		{"kind = \"terms\"\ngrid = \"k\"\nartifact = \"v\"", "needs lines"},
		{"kind = \"terms\"\ngrid = \"k\"\nartifact = \"v\"\nlines = [\"a\"]\nx = \"param:a\"", "x, y and series are not used"},
		{"kind = \"dots\"\ngrid = \"k\"\nx = \"param:a\"\ny = \"param:b\"", "x = \"metric:NAME\""},
		{"kind = \"dots\"\ngrid = \"k\"\nx = \"metric:rmse\"\ny = \"metric:nlpd\"", "categorical"},
	} {
		_, err := Parse("bad.toml", "name = \"b\"\n[[grid]]\nname = \"k\"\n[[figure]]\nname = \"f\"\n"+tt.fig+"\n")
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: err = %v, want %q", tt.fig, err, tt.want)
		}
	}
}
