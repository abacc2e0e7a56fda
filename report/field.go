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
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/recorder"

	"sgplab/figures"
	"sgplab/results"
)

// fieldGrid adapts the runner's 2-D grid artifact ("field": x0 fastest) to
// plotter.GridXYZ for the column z.
type fieldGrid struct {
	x, y []float64 // distinct grid coordinates, increasing
	z    []float64 // row-major: z[r·len(x) + c] at (x[c], y[r])
}

func newFieldGrid(a results.Artifact, col string) (fieldGrid, error) {
	x0, err1 := a.Column("x0")
	x1, err2 := a.Column("x1")
	z, err3 := a.Column(col)
	if err := firstErr(err1, err2, err3); err != nil {
		return fieldGrid{}, err
	}
	nx := 1
	for nx < len(x0) && x0[nx] > x0[nx-1] {
		nx++
	}
	if len(x0)%nx != 0 || len(x0)/nx < 2 || nx < 2 {
		return fieldGrid{}, fmt.Errorf("artifact %q is not a regular grid with x0 varying fastest (%d rows)", a.Name, len(x0))
	}
	g := fieldGrid{x: x0[:nx], z: z}
	for r := 0; r < len(x0)/nx; r++ {
		g.y = append(g.y, x1[r*nx])
	}
	return g, nil
}

func (g fieldGrid) Dims() (c, r int)   { return len(g.x), len(g.y) }
func (g fieldGrid) Z(c, r int) float64 { return g.z[r*len(g.x)+c] }
func (g fieldGrid) X(c int) float64    { return g.x[c] }
func (g fieldGrid) Y(r int) float64    { return g.y[r] }

// buildField draws, per run, a heat map of one column of the 2-D grid
// artifact (default "field", column z, default "p"), the contour z = level
// (0.5 for a probability: the decision boundary) and the training points
// coloured by label (reference_artifact, default "train"; "none" omits
// them).
func buildField(fs FigureSpec, runs []*run, q querier, rc *renderCtx) (*figure, error) {
	f, panels, byPanel, list, fields, err := startArtifactFigure(fs, runs, q, rc)
	if err != nil {
		return nil, err
	}
	var pts map[string]results.Artifact
	if fs.ReferenceArtifact != "none" {
		if pts, err = loadArtifact(q, list, fs.ReferenceArtifact); err != nil {
			return nil, err
		}
	}
	zmin, zmax := fs.ZMin, fs.ZMax
	if zmin == 0 && zmax == 0 {
		zmin, zmax = math.Inf(1), math.Inf(-1)
		for _, a := range fields {
			if z, err := a.Column(fs.Z); err == nil {
				for _, v := range z {
					if !math.IsNaN(v) {
						zmin, zmax = math.Min(zmin, v), math.Max(zmax, v)
					}
				}
			}
		}
		if math.IsInf(zmin, 1) {
			zmin, zmax = 0, 1
		}
	}
	level := (zmin + zmax) / 2
	cmap := figures.ColourScale(zmin, zmax)
	pal := cmap.Palette(256)
	legend := plot.NewLegend()
	legendDone := false
	for _, pname := range panels {
		p := figures.NewBarePlot()
		p.Title.Text = panelTitle(fs, pname, rc)
		if len(panels) == 1 {
			p.Title.Text = f.Title
		}
		p.X.Label.Text, p.Y.Label.Text = firstNonEmpty(fs.XLabel, "x₁"), firstNonEmpty(fs.YLabel, "x₂")
		r := byPanel[pname]
		a, ok := panelArtifact(f, fs, p, r, fields)
		if !ok {
			continue
		}
		g, err := newFieldGrid(a, fs.Z)
		if err != nil {
			return nil, fmt.Errorf("run %s: %w", r.ID, err)
		}
		h := plotter.NewHeatMap(g, pal)
		h.Min, h.Max = zmin, zmax
		h.NaN = color.Gray{Y: 0xd8}
		p.Add(h)
		c := plotter.NewContour(g, []float64{level}, nil)
		c.LineStyles = []draw.LineStyle{{Color: color.Black, Width: vg.Points(1.6)}}
		p.Add(orderedContour{c})
		if tr, ok := pts[r.ID]; ok {
			tx, err1 := tr.Column("x0")
			ty, err2 := tr.Column("x1")
			lab, err3 := tr.Column("y")
			if err := firstErr(err1, err2, err3); err != nil {
				return nil, fmt.Errorf("run %s: %w", r.ID, err)
			}
			var pos, neg plotter.XYs
			for i := range tx {
				if lab[i] > 0 {
					pos = append(pos, plotter.XY{X: tx[i], Y: ty[i]})
				} else {
					neg = append(neg, plotter.XY{X: tx[i], Y: ty[i]})
				}
			}
			// +1: black circles (they sit where p is high: light colours);
			// −1: white squares outlined in black (where p is low: dark).
			for k, xy := range []plotter.XYs{pos, neg} {
				if len(xy) == 0 {
					continue
				}
				styles := []draw.GlyphStyle{{Shape: draw.CircleGlyph{}, Color: color.Black, Radius: vg.Points(2)}}
				if k == 1 {
					styles = []draw.GlyphStyle{{Shape: draw.BoxGlyph{}, Color: color.Black, Radius: vg.Points(2.6)},
						{Shape: draw.BoxGlyph{}, Color: color.White, Radius: vg.Points(1.7)}}
				}
				for i, st := range styles {
					sc, err := plotter.NewScatter(xy)
					if err != nil {
						return nil, err
					}
					sc.GlyphStyle = st
					p.Add(sc)
					if i == 0 && !legendDone {
						legend.Add([]string{"label +1 (black circles)", "label −1 (white squares)"}[k], sc)
					}
				}
			}
			if !legendDone {
				edge, err := plotter.NewLine(plotter.XYs{{X: 0, Y: 0}, {X: 1, Y: 0}})
				if err != nil {
					return nil, err
				}
				edge.LineStyle = c.LineStyles[0]
				legend.Add(fmt.Sprintf("%s = %.3g", fs.Z, level), edge)
				legendDone = true
			}
		}
		// The data's box, not the heat map's padding, sets the view.
		p.X.Min, p.X.Max = g.x[0], g.x[len(g.x)-1]
		p.Y.Min, p.Y.Max = g.y[0], g.y[len(g.y)-1]
		f.Panels = append(f.Panels, p)
	}
	if legendDone {
		figures.StyleLegend(&legend)
		f.Legend = &legend
	}
	f.Colorbar = figures.ColourBar(cmap, firstNonEmpty(fs.ZLabel, rc.label(fs.Z)))
	f.describe = fmt.Sprintf("per panel one run's %q column of the 2-D grid artifact %q as a heat map (common scale %.3g…%.3g), the contour %s = %.3g", fs.Z, fs.Artifact, zmin, zmax, fs.Z, level)
	if fs.ReferenceArtifact != "none" {
		f.describe += fmt.Sprintf(" and the training points by label (artifact %q)", fs.ReferenceArtifact)
	}
	return f, nil
}

// orderedContour strokes a contour's paths in a fixed order. gonum's
// Contour joins the level's segments through maps and strokes the paths in
// map order, so two renderings of one grid list the same SVG paths in a
// different order; recording the strokes and sorting them makes a report
// byte-for-byte reproducible. Each stroke sets its own style before it, so
// the groups (style…, stroke) can be reordered freely.
type orderedContour struct{ *plotter.Contour }

func (o orderedContour) Plot(c draw.Canvas, p *plot.Plot) {
	var rec recorder.Canvas
	o.Contour.Plot(draw.Canvas{Canvas: &rec, Rectangle: c.Rectangle}, p)
	type group struct {
		actions []recorder.Action
		key     string
	}
	var groups []group
	start := 0
	for i, a := range rec.Actions {
		if _, ok := a.(*recorder.Stroke); !ok {
			continue
		}
		var key strings.Builder
		for _, b := range rec.Actions[start : i+1] {
			key.WriteString(b.Call())
		}
		groups = append(groups, group{rec.Actions[start : i+1], key.String()})
		start = i + 1
	}
	sort.SliceStable(groups, func(i, j int) bool { return groups[i].key < groups[j].key })
	for _, g := range groups {
		for _, a := range g.actions {
			a.ApplyTo(c)
		}
	}
	for _, a := range rec.Actions[start:] {
		a.ApplyTo(c)
	}
}
