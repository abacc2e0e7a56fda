package report

import (
	"bytes"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"

	"sgplab/results"
)

const artifactConfig = `
name = "art"
[[grid]]
name = "k"
[[grid]]
name = "reg"
[[grid]]
name = "elbo"
[[grid]]
name = "cls"

[report.labels]
exact_kernel = "exact K"
"" = "exact GP"
gpr = "exact log ML"

[[figure]]
name = "fig-matrix"
kind = "matrix"
grid = "k"
panels = "param:a"
artifact = "kernel_matrix"
reference_artifact = "exact_kernel"
zmin = 0.0
zmax = 1.0
columns = 3

[[figure]]
name = "fig-curve"
kind = "curve"
grid = "reg"
panels = "param:a"
band = "2std"
panel_order = ["40", ""]
[figure.panel_labels]
"" = "exact GP (panel label)"

[[figure]]
name = "fig-field"
kind = "field"
grid = "cls"
panels = "param:max_level"

[[figure]]
name = "fig-ref"
kind = "line"
grid = "elbo"
x = "param:m"
y = "metric:elbo"
series = "param:cov"
reference_method = "gpr"
`

func artifactStore(t *testing.T) *results.Store {
	t.Helper()
	st, err := results.Open(filepath.Join(t.TempDir(), "a.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	save := func(id, grid, method string, params []results.Param, ms []results.Metric, arts ...results.Artifact) {
		r := results.Run{ID: id, Grid: grid, Method: method, Dataset: "toy", Status: results.StatusDone, Profile: "full",
			Started: t0, Finished: t0, Params: params}
		if err := st.SaveRunArtifacts(r, ms, nil, arts); err != nil {
			t.Fatal(err)
		}
	}
	n := 20
	mat := func(name string, ls float64) results.Artifact {
		a := results.Artifact{Name: name, Rows: n, Columns: make([]string, n)}
		for j := 0; j < n; j++ {
			a.Columns[j] = strconv.FormatFloat(-3+6*float64(j)/float64(n-1), 'g', -1, 64)
		}
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				d := 6 * float64(i-j) / float64(n-1)
				a.Data = append(a.Data, math.Exp(-d*d/(2*ls*ls)))
			}
		}
		return a
	}
	for i, a := range []string{"2", "10"} {
		save("k"+a, "k", "kernel-approx", []results.Param{{Name: "a", Value: a}}, nil,
			mat("kernel_matrix", 0.3+0.3*float64(i)), mat("exact_kernel", 0.2))
	}
	curve := func(shift float64) (results.Artifact, results.Artifact) {
		p := results.Artifact{Name: "predictions", Columns: []string{"x0", "y", "mean", "var_f", "var_y"}, Rows: 50}
		for i := 0; i < 50; i++ {
			x := -3 + 6*float64(i)/49
			p.Data = append(p.Data, x, 0, math.Sin(x)+shift, 0.01, 0.02)
		}
		tr := results.Artifact{Name: "train", Columns: []string{"x0", "y"}, Rows: 5, Data: []float64{-2, 1, -1, 0, 0, 0.5, 1, 1, 2, 0}}
		return p, tr
	}
	p1, t1 := curve(0)
	save("r40", "reg", "vof-trig", []results.Param{{Name: "a", Value: "40"}}, nil, p1, t1)
	p2, t2 := curve(0.5)
	save("rgp", "reg", "gpr", nil, nil, p2, t2)
	for _, m := range []int{11, 21, 31} {
		for _, cov := range []string{"dense", "diag"} {
			v := -1000.0 / float64(m)
			if cov == "diag" {
				v -= 5
			}
			save("e"+cov+strconv.Itoa(m), "elbo", "vof-hermite", []results.Param{{Name: "m", Value: strconv.Itoa(m)}, {Name: "cov", Value: cov}},
				[]results.Metric{{Name: "elbo", Value: v}})
		}
	}
	save("egpr", "elbo", "gpr", nil, []results.Metric{{Name: "elbo", Value: -20}})
	// A 2-D classifier: p = Φ(x0 + x1) on an 11 × 11 grid, x0 fastest.
	for _, l := range []string{"2", "14"} {
		f := results.Artifact{Name: "field", Columns: []string{"x0", "x1", "mean", "var_f", "p"}, Rows: 121}
		for r := 0; r < 11; r++ {
			for c := 0; c < 11; c++ {
				x0, x1 := -2+0.4*float64(c), -2+0.4*float64(r)
				f.Data = append(f.Data, x0, x1, x0+x1, 1, 0.5*math.Erfc(-(x0+x1)/math.Sqrt2))
			}
		}
		tr := results.Artifact{Name: "train", Columns: []string{"x0", "x1", "y"}, Rows: 3, Data: []float64{-1, -1, -1, 1, 1, 1, 0.5, 0, 1}}
		save("c"+l, "cls", "vish", []results.Param{{Name: "max_level", Value: l}}, nil, f, tr)
	}
	return st
}

func TestRenderArtifactFigures(t *testing.T) {
	spec, err := Parse("art.toml", artifactConfig)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if dir := os.Getenv("FIGURES_OUT"); dir != "" {
		out = dir
	}
	sum, err := Render(spec, artifactStore(t), out, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Warnings) != 0 {
		t.Errorf("warnings: %v", sum.Warnings)
	}
	for _, name := range []string{"fig-matrix", "fig-curve", "fig-field", "fig-ref"} {
		data, err := os.ReadFile(filepath.Join(out, name+".png"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := png.Decode(bytes.NewReader(data)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		svg, err := os.ReadFile(filepath.Join(out, name+".svg"))
		if err != nil {
			t.Fatal(err)
		}
		// Panel titles and legend entries name what they show.
		want := map[string][]string{
			"fig-matrix": {"a = 2", "a = 10", "exact K"},
			"fig-curve":  {"a = 40", "exact GP (panel label)", "training data", "±2 sd of f"},
			"fig-ref":    {"exact log ML", "dense", "diag"},
			"fig-field":  {"max_level = 2", "max_level = 14", "label +1 (black circles)", "label −1 (white squares)", "p = 0.5"},
		}[name]
		for _, w := range want {
			if !strings.Contains(string(svg), w) {
				t.Errorf("%s.svg lacks %q", name, w)
			}
		}
	}
	idx, _ := os.ReadFile(filepath.Join(out, "index.md"))
	if !strings.Contains(string(idx), "per-run array \"kernel_matrix\"") {
		t.Errorf("index.md does not describe the matrix figure:\n%s", idx)
	}
}

func TestArtifactFigureSpecErrors(t *testing.T) {
	tests := []struct{ fig, want string }{
		{"kind = \"matrix\"\ngrid = \"k\"", "needs artifact"},
		{"kind = \"curve\"\ngrid = \"k\"\nx = \"param:a\"", "x, y and series are not used"},
		{"kind = \"matrix\"\ngrid = \"k\"\nartifact = \"q\"\nzmin = 2.0\nzmax = 1.0", "zmin"},
		{"kind = \"field\"\ngrid = \"k\"\ny = \"metric:p\"", "x, y and series are not used"},
	}
	for _, tt := range tests {
		_, err := Parse("bad.toml", "name = \"b\"\n[[grid]]\nname = \"k\"\n[[figure]]\nname = \"f\"\n"+tt.fig+"\n")
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: err = %v, want %q", tt.fig, err, tt.want)
		}
	}
}

func TestMatrixGridCoordinates(t *testing.T) {
	a := results.Artifact{Name: "m", Rows: 2, Columns: []string{"-1", "1"}, Data: []float64{1, 2, 3, 4}}
	g := newMatrixGrid(a)
	if c, r := g.Dims(); c != 2 || r != 2 || g.X(1) != 1 || g.Y(0) != -1 || g.Z(1, 0) != 2 {
		t.Fatalf("grid %v %v %v %v", g.X(1), g.Y(0), g.Z(1, 0), g.coords)
	}
	b := results.Artifact{Name: "m", Rows: 1, Columns: []string{"p", "q"}, Data: []float64{1, 2}}
	if g := newMatrixGrid(b); g.X(1) != 1 {
		t.Fatalf("non-numeric columns should index, got %v", g.coords)
	}
}

// TestDrawReferenceSpansPanel: the reference line spans the panel's x range,
// also when every run of the panel has the same x (a quick profile that runs
// one size), where it once was silently left out.
func TestDrawReferenceSpansPanel(t *testing.T) {
	ref := []*run{{Method: "gpr", Metrics: map[string]float64{"elbo": 2984}}}
	tests := []struct {
		name   string
		xs     []float64
		refs   []*run
		ok     bool
		x0, x1 float64
	}{
		{"several x", []float64{11, 41}, ref, true, 11, 41},
		{"one x", []float64{41}, ref, true, 40, 42},
		{"no reference run", []float64{11, 41}, nil, false, 0, 0},
	}
	for _, tt := range tests {
		p := plot.New()
		var pts plotter.XYs
		for _, x := range tt.xs {
			pts = append(pts, plotter.XY{X: x, Y: 2300})
		}
		s, err := plotter.NewScatter(pts)
		if err != nil {
			t.Fatal(err)
		}
		p.Add(s)
		th, ok := drawReference(p, FigureSpec{Y: "metric:elbo"}, tt.refs)
		if ok != tt.ok {
			t.Errorf("%s: drawn = %v, want %v", tt.name, ok, tt.ok)
			continue
		}
		if !ok {
			continue
		}
		l := th.(*plotter.Line)
		want := plotter.XYs{{X: tt.x0, Y: 2984}, {X: tt.x1, Y: 2984}}
		if len(l.XYs) != 2 || l.XYs[0] != want[0] || l.XYs[1] != want[1] {
			t.Errorf("%s: line %v, want %v", tt.name, l.XYs, want)
		}
	}
}
