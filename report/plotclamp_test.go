package report

import (
	"math"
	"os"
	"strings"
	"testing"

	"gonum.org/v1/plot"

	"sgplab/results"
)

// A log-y figure of a quantity whose means are negative keeps every point
// (drawn at the floor and reported), names its single panel, and takes the
// paper's series colours.
func TestLogAxisKeepsNonPositivePoints(t *testing.T) {
	cfg := `
name = "demo"
[[grid]]
name = "fig3"
[[figure]]
name = "neg"
kind = "line"
grid = "fig3"
x = "param:num_inducing"
y = "metric:elbo"
series = "method"
panels = "dataset"
filter = { dataset = "gp-sample" }
logy = true
band = "2std"
series_style = { sgpr = "blue", vof = "green dashed" }
`
	sum, out := renderPNG(t, cfg)
	clamped := 0
	for _, w := range sum.Warnings {
		if strings.Contains(w, "not drawn") {
			t.Errorf("a point was dropped: %s", w)
		}
		if strings.Contains(w, "drawn as ▽") {
			clamped++
		}
	}
	if clamped != 8 { // 2 methods × 4 M, every ELBO mean < 0
		t.Errorf("%d clamped points reported, want 8: %v", clamped, sum.Warnings)
	}
	if _, err := os.Stat(out + "/neg.png"); err != nil {
		t.Error(err)
	}
}

func TestClipLow(t *testing.T) {
	cases := []struct {
		lo   float64
		vs   []float64
		log  bool
		want float64
	}{
		{-0.5, []float64{0.1, 1, 2}, false, 0},   // positive quantity: not below zero
		{-0.5, []float64{-1, 1, 2}, false, -0.5}, // signed quantity: unchanged
		{0.05, []float64{0.1, 1}, false, 0.05},
		{-0.5, []float64{0.1, 1, 2}, true, 0.1}, // log axis: smallest positive value
		{-0.5, []float64{-1, 0.2}, true, 0.2},
		{0.05, []float64{0.1, 1}, true, 0.05},
	}
	for _, c := range cases {
		if got := clipLow(c.lo, c.vs, c.log); got != c.want && !(math.IsNaN(got) && math.IsNaN(c.want)) {
			t.Errorf("clipLow(%v, %v, %v) = %v, want %v", c.lo, c.vs, c.log, got, c.want)
		}
	}
}

// A positive mean below the smallest positive value (one run negative) must
// keep its error bar inside (0, y]: gonum draws y − |low|.
func TestLogBandStaysPositive(t *testing.T) {
	mk := func(y float64, split int64) *run {
		return &run{Split: split, Params: map[string]string{"m": "1"}, Metrics: map[string]float64{"g": y}}
	}
	f := &figure{}
	fs := FigureSpec{X: "param:m", Y: "metric:g", LogY: true, Band: "2std", Aggregate: "mean"}
	pts := f.aggregate(fs, []*run{mk(-0.001, 0), mk(0.0012, 1)}, "")
	if len(pts) != 1 {
		t.Fatalf("%d points", len(pts))
	}
	p := pts[0]
	if !(p.ylo > 0 && p.ylo <= p.y && p.yhi >= p.y) {
		t.Errorf("band [%g, %g] around %g", p.ylo, p.yhi, p.y)
	}
}

func TestPadAxis(t *testing.T) {
	cases := []struct {
		lo, hi         float64
		log            bool
		wantLo, wantHi float64
	}{
		{0, 100, false, -4, 104},
		{-120, -20, false, -124, -16},
		{1, 1e4, true, 1 / math.Pow(1e4, 0.04), 1e4 * math.Pow(1e4, 0.04)},
		{5, 5, false, 5, 5},  // one value: left to gonum
		{0, 10, true, 0, 10}, // no log range to pad
	}
	for _, c := range cases {
		a := plot.Axis{Min: c.lo, Max: c.hi}
		padAxis(&a, c.log)
		if math.Abs(a.Min-c.wantLo) > 1e-9*math.Abs(c.wantLo)+1e-12 || math.Abs(a.Max-c.wantHi) > 1e-9*math.Abs(c.wantHi)+1e-12 {
			t.Errorf("padAxis(%v, %v, log %v) = [%v, %v], want [%v, %v]", c.lo, c.hi, c.log, a.Min, a.Max, c.wantLo, c.wantHi)
		}
	}
}

// A scatter panel leaves room around its extreme points: none is drawn on
// the frame.
func TestScatterPointsOffTheFrame(t *testing.T) {
	var runs []*run
	for i, xy := range [][2]float64{{200, -450}, {600, -150}, {1000, -120}} {
		runs = append(runs, &run{Split: int64(i), Method: "m", Status: results.StatusDone, Profile: "full", Metrics: map[string]float64{"ips": xy[0], "elbo": xy[1]}})
	}
	fs := FigureSpec{Name: "s", Kind: "scatter", X: "metric:ips", Y: "metric:elbo", Series: "method"}
	f, err := buildRunsFigure(fs, runs, nil, &renderCtx{spec: &Spec{}, profile: "full"})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Panels) != 1 {
		t.Fatalf("%d panels", len(f.Panels))
	}
	p := f.Panels[0]
	if !(p.X.Min < 200 && p.X.Max > 1000 && p.Y.Min < -450 && p.Y.Max > -120) {
		t.Errorf("axes x [%v, %v], y [%v, %v]: an extreme point lies on the frame", p.X.Min, p.X.Max, p.Y.Min, p.Y.Max)
	}
}

// A line panel's y range leaves room above its highest point and a
// reference line (VOF's exact GP sat on the frame).
func TestLinePointsOffTheFrame(t *testing.T) {
	var runs []*run
	for i, m := range []string{"11", "41"} {
		runs = append(runs, &run{Split: 0, Method: "vof", Status: results.StatusDone, Profile: "full",
			Params: map[string]string{"m": m}, Metrics: map[string]float64{"elbo": 2265 + 40*float64(i)}})
	}
	runs = append(runs, &run{Method: "gpr", Status: results.StatusDone, Profile: "full", Params: map[string]string{"m": "11"}, Metrics: map[string]float64{"elbo": 2984}})
	fs := FigureSpec{Name: "l", Kind: "line", X: "param:m", Y: "metric:elbo", Series: "method", ReferenceMethod: "gpr", Aggregate: "mean", Band: "none"}
	f, err := buildRunsFigure(fs, runs, nil, &renderCtx{spec: &Spec{}, profile: "full"})
	if err != nil {
		t.Fatal(err)
	}
	p := f.Panels[0]
	if !(p.Y.Min < 2265 && p.Y.Max > 2984) {
		t.Errorf("y [%v, %v]: the lowest point or the reference line lies on the frame", p.Y.Min, p.Y.Max)
	}
}
