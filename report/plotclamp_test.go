package report

import (
	"math"
	"os"
	"strings"
	"testing"
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
