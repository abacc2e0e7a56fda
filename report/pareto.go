package report

import (
	"fmt"
	"image/color"
	"math"
	"sort"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// A "pareto" figure is a "line" figure with a metric on both axes (e.g.
// training time against test NLPD): one point per series and configuration
// (mean over splits and seeds, error bars in x and y), the points of a
// series joined (e.g. a method's small and large approximation), and per
// panel the Pareto front — the points no other point beats in both x and y,
// lower being better on both — as a grey staircase. index.md lists each
// panel's front, cheapest first.

// frontPoint is one configuration's mean position and its label.
type frontPoint struct {
	x, y  float64
	label string
}

// paretoFront returns the non-dominated points (lower x and lower y better)
// sorted by x: walking by increasing x, a point joins when its y is below
// every cheaper point's. Ties in x keep the lower y.
func paretoFront(pts []frontPoint) []frontPoint {
	s := append([]frontPoint(nil), pts...)
	sort.SliceStable(s, func(i, j int) bool {
		if s[i].x != s[j].x {
			return s[i].x < s[j].x
		}
		return s[i].y < s[j].y
	})
	var front []frontPoint
	best := math.Inf(1)
	for _, p := range s {
		if p.y < best {
			front = append(front, p)
			best = p.y
		}
	}
	return front
}

// panelFront aggregates a panel's runs into one point per series and
// configuration (grid and all parameters but split and seed) and returns
// its Pareto front. A point is labelled by its series, its grid and the
// parameters that vary between the series' configurations (e.g. "sgpr
// [collapsed-large]" or "sgpr num_inducing=80").
func panelFront(fs FigureSpec, rs []*run, seriesOf func(*run) string, rc *renderCtx) []frontPoint {
	type acc struct {
		xs, ys       []float64
		series, grid string
		params       map[string]string
	}
	groups := map[string]*acc{}
	var keys []string
	for _, r := range rs {
		x, okx := numValue(r, fs.X)
		y, oky := numValue(r, fs.Y)
		if !okx || !oky || (fs.LogX && x <= 0) || (fs.LogY && y <= 0) {
			continue
		}
		k := seriesOf(r) + "\x00" + dimValue(r, "grid") + "\x00" + configKey(r)
		g, ok := groups[k]
		if !ok {
			g = &acc{series: seriesOf(r), grid: dimValue(r, "grid"), params: r.Params}
			groups[k] = g
			keys = append(keys, k)
		}
		g.xs = append(g.xs, x)
		g.ys = append(g.ys, y)
	}
	sort.Strings(keys)
	// What varies between the configurations of one series names its points.
	grids := map[string]map[string]bool{}
	vals := map[string]map[string]map[string]bool{}
	for _, k := range keys {
		g := groups[k]
		if grids[g.series] == nil {
			grids[g.series], vals[g.series] = map[string]bool{}, map[string]map[string]bool{}
		}
		grids[g.series][g.grid] = true
		for n, v := range g.params {
			if vals[g.series][n] == nil {
				vals[g.series][n] = map[string]bool{}
			}
			vals[g.series][n][v] = true
		}
	}
	pts := make([]frontPoint, 0, len(keys))
	for _, k := range keys {
		g := groups[k]
		label := rc.label(g.series)
		if len(grids[g.series]) > 1 && !strings.Contains(g.series, g.grid) {
			label += " [" + g.grid + "]"
		} else {
			for _, n := range sortedKeys(vals[g.series]) {
				if len(vals[g.series][n]) > 1 && n != "split" && n != "seed" {
					label += " " + n + "=" + g.params[n]
				}
			}
		}
		x, _, _ := bandOf(g.xs, fs.Aggregate, "none")
		y, _, _ := bandOf(g.ys, fs.Aggregate, "none")
		pts = append(pts, frontPoint{x: x, y: y, label: label})
	}
	return paretoFront(pts)
}

// drawFront adds the front as a grey dashed staircase (each point's y holds
// until the next cheaper-and-better point) and records it for index.md.
func (f *figure) drawFront(p *plot.Plot, front []frontPoint, panel string, rc *renderCtx) (plot.Thumbnailer, error) {
	if len(front) == 0 {
		return nil, nil
	}
	var xys plotter.XYs
	for i, pt := range front {
		if i > 0 {
			xys = append(xys, plotter.XY{X: pt.x, Y: front[i-1].y})
		}
		xys = append(xys, plotter.XY{X: pt.x, Y: pt.y})
	}
	line, err := plotter.NewLine(xys)
	if err != nil {
		return nil, err
	}
	line.LineStyle.Color = color.NRGBA{R: 0x60, G: 0x60, B: 0x60, A: 0xff}
	line.LineStyle.Width = vg.Points(1)
	line.LineStyle.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	p.Add(line)
	parts := make([]string, len(front))
	for i, pt := range front {
		parts[i] = fmt.Sprintf("%s (%.3g, %.3g)", pt.label, pt.x, pt.y)
	}
	where := "front"
	if panel != "" {
		where = "front on " + rc.label(panel)
	}
	f.fronts = append(f.fronts, where+": "+strings.Join(parts, " → "))
	return line, nil
}
