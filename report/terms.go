package report

import (
	"fmt"
	"math"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"sgplab/figures"
	"sgplab/results"
)

// buildTerms draws, per panel (one run each), the artifact's columns
// fs.Lines against its x0 column, on a common y range, and the x0 values
// of fs.ReferenceArtifact (e.g. inducing inputs) as dashed verticals.
func buildTerms(fs FigureSpec, runs []*run, q querier, rc *renderCtx) (*figure, error) {
	f, panels, byPanel, list, arts, err := startArtifactFigure(fs, runs, q, rc)
	if err != nil {
		return nil, err
	}
	var refs map[string]results.Artifact
	if fs.ReferenceArtifact != "" && fs.ReferenceArtifact != "none" {
		if refs, err = loadArtifact(q, list, fs.ReferenceArtifact); err != nil {
			return nil, err
		}
	}
	styles, err := figures.ParseStyles(fs.SeriesStyle)
	if err != nil {
		return nil, err
	}
	legend := plot.NewLegend()
	inLegend := map[string]bool{}
	ymin, ymax := math.Inf(1), math.Inf(-1)
	type vline struct {
		p  *plot.Plot
		xs []float64
	}
	var verticals []vline
	for _, pname := range panels {
		p := newArtifactPlot(f, fs, pname, len(panels), rc, "variance")
		r := byPanel[pname]
		a, ok := panelArtifact(f, fs, p, r, arts)
		if !ok {
			continue
		}
		x, err := a.Column("x0")
		if err != nil {
			return nil, fmt.Errorf("run %s: %w", r.ID, err)
		}
		for i, name := range fs.Lines {
			y, err := a.Column(name)
			if err != nil {
				return nil, fmt.Errorf("run %s: %w (lines = [%s])", r.ID, err, strings.Join(fs.Lines, ", "))
			}
			var xy plotter.XYs
			for j := range x {
				if math.IsNaN(y[j]) {
					continue
				}
				xy = append(xy, plotter.XY{X: x[j], Y: y[j]})
				ymin, ymax = math.Min(ymin, y[j]), math.Max(ymax, y[j])
			}
			if len(xy) < 2 {
				continue
			}
			l, err := plotter.NewLine(xy)
			if err != nil {
				return nil, err
			}
			l.LineStyle = figures.SeriesLine(i)
			if st, ok := styles[name]; ok {
				l.LineStyle.Color, l.LineStyle.Dashes = st.Color, st.Dashes
			}
			l.LineStyle.Width = vg.Points(1.8)
			p.Add(l)
			if !inLegend[name] {
				legend.Add(rc.label(name), l)
				inLegend[name] = true
			}
		}
		if ref, ok := refs[r.ID]; ok {
			zx, err := ref.Column("x0")
			if err != nil {
				return nil, fmt.Errorf("run %s: %s: %w", r.ID, fs.ReferenceArtifact, err)
			}
			verticals = append(verticals, vline{p: p, xs: zx})
		}
		f.Panels = append(f.Panels, p)
	}
	if !math.IsInf(ymin, 1) {
		pad := 0.05 * (ymax - ymin)
		if pad == 0 {
			pad = 0.05 * math.Max(math.Abs(ymax), 1)
		}
		for _, p := range f.Panels {
			p.Y.Min, p.Y.Max = ymin-pad, ymax+pad
		}
		for _, v := range verticals {
			for _, x := range v.xs {
				l, err := plotter.NewLine(plotter.XYs{{X: x, Y: ymin - pad}, {X: x, Y: ymax + pad}})
				if err != nil {
					return nil, err
				}
				l.LineStyle.Color = figures.Grey
				l.LineStyle.Width = vg.Points(0.8)
				l.LineStyle.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
				v.p.Add(l)
				if !inLegend["\x00ref"] {
					legend.Add(rc.label(fs.ReferenceArtifact), l)
					inLegend["\x00ref"] = true
				}
			}
		}
	}
	if len(inLegend) > 0 {
		figures.StyleLegend(&legend)
		f.Legend = &legend
	}
	f.describe = fmt.Sprintf("per panel one run's columns %s of the per-run array %q against its input x0", strings.Join(fs.Lines, ", "), fs.Artifact)
	if len(verticals) > 0 {
		f.describe += fmt.Sprintf("; dashed verticals at the x0 of %q", fs.ReferenceArtifact)
	}
	return f, nil
}
