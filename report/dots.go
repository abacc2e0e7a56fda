package report

import (
	"fmt"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"sgplab/figures"
)

// buildDots draws a dot plot: per panel, one row per value of fs.Y (a
// categorical dimension, ordered by fs.RowOrder), and in each row one
// marker per series at the aggregate of the metric fs.X over the runs,
// with error bars (fs.Band), the series offset vertically within the row.
// This is the layout of the UCI figures of Tiao et al. (2023, Figs. 7, 9).
func buildDots(fs FigureSpec, runs []*run, _ querier, rc *renderCtx) (*figure, error) {
	f := &figure{Figure: figures.Figure{Title: rc.title(firstNonEmpty(fs.Title, fs.Name)), Cols: fs.Columns}}
	used := usableRuns(f, fs, runs, rc)
	panelOf, seriesOf := dimFunc(fs.Panels), dimFunc(fs.Series)
	var pv, rv, sv []string
	for _, r := range used {
		pv, rv, sv = append(pv, panelOf(r)), append(rv, dimValue(r, fs.Y)), append(sv, seriesOf(r))
	}
	panels := orderValues(pv, fs.PanelOrder)
	if len(panels) == 0 {
		panels = []string{""}
	}
	rows := orderValues(rv, fs.RowOrder)
	series := orderValues(sv, fs.SeriesOrder)
	styles, err := figures.ParseStyles(fs.SeriesStyle)
	if err != nil {
		return nil, err
	}
	// Row i sits at y = len(rows) − i, so the first row is at the top.
	ticks := make([]plot.Tick, len(rows))
	rowY := map[string]float64{}
	for i, r := range rows {
		y := float64(len(rows) - i)
		rowY[r] = y
		ticks[i] = plot.Tick{Value: y, Label: rc.label(r)}
	}
	legend := plot.NewLegend()
	inLegend := map[string]bool{}
	k := 1.0
	if fs.Band == "none" {
		k = 0
	} else if fs.Band == "2std" {
		k = 2
	}
	for _, pname := range panels {
		p := figures.NewPlot()
		p.Title.Text = panelTitle(fs, pname, rc)
		if len(panels) == 1 {
			p.Title.Text = f.Title
		}
		p.X.Label.Text = firstNonEmpty(fs.XLabel, rc.label(dimLabel(fs.X)))
		p.Y.Label.Text = fs.YLabel
		p.Y.Tick.Marker = plot.ConstantTicks(ticks)
		p.Y.Min, p.Y.Max = 0.4, float64(len(rows))+0.6
		drawn := false
		for si, sname := range series {
			var pts plotter.XYs
			var errs plotter.XErrors
			for _, row := range rows {
				var xs []float64
				for _, r := range used {
					if panelOf(r) != pname || seriesOf(r) != sname || dimValue(r, fs.Y) != row {
						continue
					}
					if v, ok := numValue(r, fs.X); ok {
						xs = append(xs, v)
					}
				}
				if len(xs) == 0 {
					continue
				}
				st := summarise(xs)
				off := 0.0
				if len(series) > 1 {
					off = 0.5 * (float64(si)/float64(len(series)-1) - 0.5)
				}
				x := st.pick(fs.Aggregate)
				pts = append(pts, plotter.XY{X: x, Y: rowY[row] - off})
				errs = append(errs, struct{ Low, High float64 }{k * st.Std, k * st.Std})
			}
			if len(pts) == 0 {
				continue
			}
			sc, err := plotter.NewScatter(pts)
			if err != nil {
				return nil, err
			}
			c := color.Color(figures.SeriesColor(si))
			if s, ok := styles[sname]; ok {
				c = s.Color
			}
			sc.GlyphStyle = draw.GlyphStyle{Color: c, Radius: vg.Points(4), Shape: figures.Diamond{}}
			if k > 0 {
				eb, err := plotter.NewXErrorBars(struct {
					plotter.XYs
					plotter.XErrors
				}{pts, errs})
				if err != nil {
					return nil, err
				}
				eb.LineStyle.Color, eb.LineStyle.Width, eb.CapWidth = c, vg.Points(1), vg.Points(4)
				p.Add(eb)
			}
			p.Add(sc)
			drawn = true
			if !inLegend[sname] {
				legend.Add(rc.label(sname), sc)
				inLegend[sname] = true
			}
		}
		if !drawn {
			addNoData(p, fs)
		} else if p.X.Max > p.X.Min {
			pad := 0.06 * (p.X.Max - p.X.Min)
			p.X.Min, p.X.Max = p.X.Min-pad, p.X.Max+pad
		}
		f.Panels = append(f.Panels, p)
	}
	if len(inLegend) > 0 {
		figures.StyleLegend(&legend)
		f.Legend = &legend
	}
	band := "no error bars"
	if k > 0 {
		band = fmt.Sprintf("error bars ±%g std over splits", k)
	}
	f.describe = fmt.Sprintf("one marker per %s and row (%s): the %s of %s over splits and seeds, %s (%s profile)",
		dimLabel(fs.Series), dimLabel(fs.Y), fs.Aggregate, dimLabel(fs.X), band, rc.profile)
	return f, nil
}
