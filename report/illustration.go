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

	"sgplab/figures"
	"sgplab/illustrations"
)

// An illustration is a figure computed from first principles rather than
// from runs (kind = "illustration", illustration = NAME): a paper's
// conceptual drawing, regenerated exactly. Package illustrations computes
// it; the builder here draws it. Each is deterministic.
var illustrationBuilders = map[string]func(fs FigureSpec) (*figure, error){
	"iff-construction": buildIFFConstruction,
}

func illustrationNames() []string {
	var names []string
	for n := range illustrationBuilders {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func buildIllustration(fs FigureSpec, _ []*run, _ querier, rc *renderCtx) (*figure, error) {
	b, ok := illustrationBuilders[fs.Illustration]
	if !ok {
		return nil, fmt.Errorf("unknown illustration %q; valid: %s", fs.Illustration, strings.Join(illustrationNames(), ", "))
	}
	f, err := b(fs)
	if err != nil {
		return nil, err
	}
	if fs.Title != "" {
		f.Title = rc.title(fs.Title)
	}
	return f, nil
}

// The authors' notebook (fig1.ipynb): blue dashed mean, blue shading at
// alpha 0.4, 0.2, 0.1 for 1–3 sd, black samples fading as 1/(i+1), red
// stars for the inducing values.
var (
	illBlue = color.NRGBA{0x4C, 0x72, 0xB0, 0xff}
	illRed  = color.NRGBA{0xD0, 0x20, 0x20, 0xff}
)

const illSamples = 6

func buildIFFConstruction(fs FigureSpec) (*figure, error) {
	c := illustrations.NewIFFConstruction()
	truth, prior := c.Draws(illSamples, 7)
	f := &figure{Figure: figures.Figure{Title: "Figure 1: the IFF construction", Cols: 3}}
	type col struct {
		label                   string
		conditioned, integrated bool
	}
	cols := []col{{"(a) prior", false, false}, {"(b) Fourier features", true, false}, {"(c) IFF", true, true}}
	var top, bottom []*plot.Plot
	for _, cl := range cols {
		mean, variance := c.Moments(truth, cl.conditioned, cl.integrated)
		p := figures.NewPlot()
		p.Title.Text = cl.label + ": data domain"
		p.X.Label.Text, p.Y.Label.Text = "x", "f(x)"
		sd := make([]float64, len(variance))
		for i, v := range variance {
			sd[i] = math.Sqrt(math.Max(v, 0))
		}
		if err := addBands(p, c.X, mean, sd); err != nil {
			return nil, err
		}
		for i, w := range prior {
			if cl.conditioned {
				w = c.Condition(w, truth, cl.integrated)
			}
			if err := addLine(p, c.X, c.F(w), color.NRGBA{0, 0, 0, uint8(255 / (i + 1))}, 1, nil); err != nil {
				return nil, err
			}
		}
		if err := addLine(p, c.X, mean, illBlue, 1.5, []vg.Length{vg.Points(5), vg.Points(3)}); err != nil {
			return nil, err
		}
		if cl.conditioned {
			if err := addLine(p, c.X, c.F(truth), illRed, 1.2, nil); err != nil {
				return nil, err
			}
		}
		p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = -c.XMax, c.XMax, -3.6, 3.6
		top = append(top, p)

		q := figures.NewPlot()
		q.Title.Text = cl.label + ": frequency domain"
		q.X.Label.Text, q.Y.Label.Text = "ξ (cycles per unit length)", "Ff(ξ), box average of width ε"
		z, _ := c.Spectrum(truth)
		gmean := make([]float64, len(z))
		if cl.conditioned && cl.integrated {
			_, gmean = c.Spectrum(c.Condition(c.Zero(), truth, true))
		}
		if err := addBands(q, z, gmean, c.SpectrumSD(cl.conditioned, cl.integrated)); err != nil {
			return nil, err
		}
		for i, w := range prior {
			if cl.conditioned {
				w = c.Condition(w, truth, cl.integrated)
			}
			_, g := c.Spectrum(w)
			if err := addLine(q, z, g, color.NRGBA{0, 0, 0, uint8(255 / (i + 1))}, 1, nil); err != nil {
				return nil, err
			}
		}
		if err := addLine(q, z, gmean, illBlue, 1.5, []vg.Length{vg.Points(5), vg.Points(3)}); err != nil {
			return nil, err
		}
		if cl.conditioned {
			zs, us := c.FeatureValues(truth, cl.integrated)
			stars := make(plotter.XYs, len(zs))
			for i := range zs {
				stars[i] = plotter.XY{X: zs[i], Y: us[i]}
			}
			if err := addStars(q, stars); err != nil {
				return nil, err
			}
		}
		q.X.Min, q.X.Max = -c.XiMax, c.XiMax
		bottom = append(bottom, q)
	}
	f.Panels = append(top, bottom...)
	// One y range per row.
	for _, row := range [][]*plot.Plot{bottom} {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, p := range row {
			lo, hi = math.Min(lo, p.Y.Min), math.Max(hi, p.Y.Max)
		}
		for _, p := range row {
			p.Y.Min, p.Y.Max = lo, hi
		}
	}
	legend := plot.NewLegend()
	for _, e := range []struct {
		name string
		th   plot.Thumbnailer
	}{
		{"mean", figures.LineThumb(illBlue, []vg.Length{vg.Points(5), vg.Points(3)})},
		{"±1, 2, 3 sd", figures.PolyThumb(figures.Fade(illBlue, 0x66))},
		{"samples", figures.LineThumb(color.Black, nil)},
		{"the draw conditioned on", figures.LineThumb(illRed, nil)},
		{"feature values u", starThumb()},
	} {
		legend.Add(e.name, e.th)
	}
	figures.StyleLegend(&legend)
	f.Legend = &legend
	_, v0 := c.Moments(truth, true, true)
	_, vb := c.Moments(truth, true, false)
	mid := len(c.X) / 2
	f.describe = fmt.Sprintf("computed exactly on a fine frequency grid (Δ = ε/%d, ε = %g, %d features per sign up to |ξ| = %g; seed 7): "+
		"prior sd 1; after Fourier features the sd of f(0) is %.3f (→ 1 as Δ → 0); after IFF %.3f, the square root of the spectral mass "+
		"outside the features' band (1 − 2ε Σ s(z_m) = %.4f by the midpoint rule, the IFF trace term per point)",
		c.PerBox, c.Eps, c.Boxes, float64(c.Boxes)*c.Eps, math.Sqrt(vb[mid]), math.Sqrt(math.Max(v0[mid], 0)), c.OutsideMass())
	return f, nil
}

func addBands(p *plot.Plot, x, mean, sd []float64) error {
	for k := 3; k >= 1; k-- {
		poly := make(plotter.XYs, 0, 2*len(x))
		for i := range x {
			poly = append(poly, plotter.XY{X: x[i], Y: mean[i] - float64(k)*sd[i]})
		}
		for i := len(x) - 1; i >= 0; i-- {
			poly = append(poly, plotter.XY{X: x[i], Y: mean[i] + float64(k)*sd[i]})
		}
		pg, err := plotter.NewPolygon(poly)
		if err != nil {
			return err
		}
		// Nested shading: alpha 0.1, 0.2, 0.4 as the notebook, cumulative.
		pg.Color = figures.Fade(illBlue, []uint8{0x66, 0x33, 0x1a}[k-1])
		pg.LineStyle.Width = 0
		p.Add(pg)
	}
	return nil
}

func addLine(p *plot.Plot, x, y []float64, c color.Color, width float64, dashes []vg.Length) error {
	xy := make(plotter.XYs, len(x))
	for i := range x {
		xy[i] = plotter.XY{X: x[i], Y: y[i]}
	}
	l, err := plotter.NewLine(xy)
	if err != nil {
		return err
	}
	l.LineStyle = draw.LineStyle{Color: c, Width: vg.Points(width), Dashes: dashes}
	p.Add(l)
	return nil
}

// addStars draws red asterisks (a plus over a cross).
func addStars(p *plot.Plot, xy plotter.XYs) error {
	for _, shape := range []draw.GlyphDrawer{draw.PlusGlyph{}, draw.CrossGlyph{}} {
		s, err := plotter.NewScatter(xy)
		if err != nil {
			return err
		}
		s.GlyphStyle = draw.GlyphStyle{Color: illRed, Radius: vg.Points(4), Shape: shape}
		p.Add(s)
	}
	return nil
}

func starThumb() plot.Thumbnailer {
	return figures.Thumb(func(c *draw.Canvas) {
		for _, shape := range []draw.GlyphDrawer{draw.PlusGlyph{}, draw.CrossGlyph{}} {
			c.DrawGlyph(draw.GlyphStyle{Color: illRed, Radius: vg.Points(4), Shape: shape}, c.Center())
		}
	})
}
