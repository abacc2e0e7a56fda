package report

import (
	"bytes"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sgplab/claims"
	"sgplab/internal/reporttest"
)

func TestRenderWritesEveryFigureKind(t *testing.T) {
	spec, err := Parse("demo.toml", reporttest.Config)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if dir := os.Getenv("FIGURES_OUT"); dir != "" {
		out = dir // for looking at the figures by eye
	}
	sum, err := Render(spec, reporttest.Store(t), out, Options{Formats: []string{"png", "svg", "pdf"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Warnings) != 0 {
		t.Errorf("warnings: %v", sum.Warnings)
	}
	written := map[string]bool{}
	for _, f := range sum.Files {
		written[filepath.Base(f)] = true
	}
	for _, f := range spec.Figures {
		for _, ext := range []string{"png", "svg", "pdf"} {
			name := f.Name + "." + ext
			if !written[name] {
				t.Errorf("%s not listed in the summary", name)
			}
			data, err := os.ReadFile(filepath.Join(out, name))
			if err != nil {
				t.Fatal(err)
			}
			switch ext {
			case "png":
				img, err := png.Decode(bytes.NewReader(data))
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if b := img.Bounds(); b.Dx() < 600 || b.Dy() < 400 {
					t.Errorf("%s is only %v", name, b)
				}
			case "svg":
				if !bytes.Contains(data, []byte("<svg")) || !bytes.Contains(data, []byte(xmlText(f.Title))) {
					t.Errorf("%s lacks <svg or its title %q", name, f.Title)
				}
			case "pdf":
				if !bytes.HasPrefix(data, []byte("%PDF")) {
					t.Errorf("%s is not a PDF", name)
				}
			}
		}
	}
	idx, err := os.ReadFile(filepath.Join(out, "index.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"![ELBO vs number of features](fig-line.png)", "**Paper:** VOF matches SGPR from M = 20.",
		"| SGPR beats SVGP on concrete | Table 1: 5.0 vs 5.25 | > 0 | 0.25 | reproduced: convergence not checked (the query declares no runs: runs_where or runs_query) |", "## Tables", "**Paper vs ours**"} {
		if !strings.Contains(string(idx), want) {
			t.Errorf("index.md lacks %q", want)
		}
	}
}

func xmlText(s string) string { return strings.NewReplacer("&", "&amp;", "<", "&lt;").Replace(s) }

// A figure without data still renders (with a "no data" note) and says why.
func TestRenderEmptyFigure(t *testing.T) {
	src := `name = "p"
[[grid]]
name = "g"
[[figure]]
name = "empty"
kind = "band"
grid = "g"
x = "param:num_inducing"
y = "metric:rmse"
logy = true
[[figure]]
name = "empty-heat"
kind = "heatmap"
grid = "g"
x = "method"
y = "dataset"
z = "metric:rmse"
`
	sum, out := renderPNG(t, src)
	if len(sum.Warnings) != 2 || !strings.Contains(sum.Warnings[0], "no finished full-profile runs of grid g") {
		t.Errorf("warnings %v", sum.Warnings)
	}
	for _, n := range []string{"empty.png", "empty-heat.png"} {
		data, err := os.ReadFile(filepath.Join(out, n))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := png.Decode(bytes.NewReader(data)); err != nil {
			t.Error(err)
		}
	}
}

func TestRenderOptionsErrors(t *testing.T) {
	spec, err := Parse("demo.toml", reporttest.Config)
	if err != nil {
		t.Fatal(err)
	}
	st := reporttest.Store(t)
	if _, err := Render(spec, st, t.TempDir(), Options{Formats: []string{"gif"}}); err == nil || !strings.Contains(err.Error(), `"gif"`) {
		t.Errorf("gif: %v", err)
	}
	if _, err := Render(spec, st, t.TempDir(), Options{Profile: "fast"}); err == nil || !strings.Contains(err.Error(), `"fast"`) {
		t.Errorf("profile: %v", err)
	}
	if _, err := Render(spec, nil, t.TempDir(), Options{}); err == nil {
		t.Error("nil store accepted")
	}
}

// renderPNG parses a config and renders it over the fixture store as PNG
// into a temporary directory.
func renderPNG(t *testing.T, src string) (Summary, string) {
	t.Helper()
	spec, err := Parse("p.toml", src)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	sum, err := Render(spec, reporttest.Store(t), out, Options{Formats: []string{"png"}})
	if err != nil {
		t.Fatal(err)
	}
	return sum, out
}

// Against a real database: the claims of the fixture reach their verdicts
// and quick runs do not leak into a full-profile claim.
func TestClaimsAgainstStore(t *testing.T) {
	sum, _ := renderFixture(t, Options{})
	want := []struct {
		verdict string
		value   float64
	}{{claims.Reproduced, 0.25}, {claims.Differs, 2.75}, {claims.NoData, math.NaN()}}
	if len(sum.Claims) != len(want) {
		t.Fatalf("claims %v", sum.Claims)
	}
	for i, w := range want {
		c := sum.Claims[i]
		if c.Verdict != w.verdict || (!math.IsNaN(w.value) && math.Abs(c.Value-w.value) > 1e-9) {
			t.Errorf("claim %d: %s %v (%s), want %s %v", i, c.Verdict, c.Value, c.Detail, w.verdict, w.value)
		}
	}
}
