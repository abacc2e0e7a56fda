package report

import (
	"fmt"
	"image/color"
	"math"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"sgplab/figures"
)

// figure is a figure being drawn for the report: the figures.Figure and
// what index.md says about it.
type figure struct {
	figures.Figure
	describe string // one sentence on what the points are, for index.md
	warnings []string
	styles   map[string]figures.Style // fixed series styles (FigureSpec.SeriesStyle)
	// The panel being drawn: points whose mean is ≤ 0 on a log y axis, and
	// the smallest positive value drawn (where they go).
	clamped []clampedPoint
	floor   float64
	// fronts lists each panel's Pareto front ("pareto" figures), for index.md.
	fronts []string
}

// point is one aggregated point of a series with its band.
type point struct {
	x, y               float64
	ylo, yhi, xlo, xhi float64
	n                  int
	// clamped: y ≤ 0 on a log y axis; drawn at the panel's floor with its
	// own marker rather than dropped.
	clamped bool
}

type xyBand []point

func (b xyBand) Len() int                        { return len(b) }
func (b xyBand) XY(i int) (float64, float64)     { return b[i].x, b[i].y }
func (b xyBand) YError(i int) (float64, float64) { return b[i].y - b[i].ylo, b[i].yhi - b[i].y }
func (b xyBand) XError(i int) (float64, float64) { return b[i].x - b[i].xlo, b[i].xhi - b[i].x }
func (b xyBand) hasYErr() bool                   { return anyPos(b, func(p point) float64 { return p.yhi - p.ylo }) }
func (b xyBand) hasXErr() bool                   { return anyPos(b, func(p point) float64 { return p.xhi - p.xlo }) }
func anyPos(b xyBand, f func(point) float64) bool {
	for _, p := range b {
		if f(p) > 0 {
			return true
		}
	}
	return false
}

// bandOf returns the centre and band of a sample.
func bandOf(xs []float64, agg, band string) (c, lo, hi float64) {
	s := summarise(xs)
	c = s.pick(agg)
	switch band {
	case "std":
		return c, c - s.Std, c + s.Std
	case "2std":
		return c, c - 2*s.Std, c + 2*s.Std
	case "minmax":
		return c, s.Min, s.Max
	}
	return c, c, c
}

func bandName(band string) string {
	switch band {
	case "std":
		return "±1 sample std"
	case "2std":
		return "±2 sample std"
	case "minmax":
		return "min–max"
	}
	return ""
}

// dimFunc returns a run's value of dim, "" for every run when dim is unset.
func dimFunc(dim string) func(*run) string {
	return func(r *run) string {
		if dim == "" {
			return ""
		}
		return dimValue(r, dim)
	}
}

// buildFigure groups the runs into panels and series and draws them.
func buildFigure(fs FigureSpec, runs []*run, traces map[string][]tracePoint, rc *renderCtx) (*figure, error) {
	f := &figure{Figure: figures.Figure{Title: rc.title(firstNonEmpty(fs.Title, fs.Name)), Cols: fs.Columns}}
	used := usableRuns(f, fs, runs, rc)
	panelOf, seriesOf := dimFunc(fs.Panels), dimFunc(fs.Series)
	var refs []*run // runs of the reference method: a line, not a series
	if fs.ReferenceMethod != "" {
		var rest []*run
		for _, r := range used {
			if r.Method == fs.ReferenceMethod {
				refs = append(refs, r)
			} else {
				rest = append(rest, r)
			}
		}
		used = rest
	}
	var pv, sv []string
	for _, r := range used {
		pv = append(pv, panelOf(r))
		sv = append(sv, seriesOf(r))
	}
	panels := orderValues(pv, fs.PanelOrder)
	if len(panels) == 0 {
		panels = []string{""}
	}
	series := orderValues(sv, nil)
	seriesIdx := map[string]int{}
	for i, s := range series {
		seriesIdx[s] = i
	}
	xlabel := firstNonEmpty(fs.XLabel, rc.label(dimLabel(fs.X)))
	ylabel := firstNonEmpty(fs.YLabel, rc.label(dimLabel(fs.Y)))
	if fs.Kind == "trace" {
		xlabel = firstNonEmpty(fs.XLabel, map[string]string{"iteration": "iteration", "elapsed": "elapsed time (s)"}[fs.X])
		ylabel = firstNonEmpty(fs.YLabel, "training objective")
	}
	if fs.Kind == "heatmap" {
		return buildHeatmap(f, fs, used, panels, panelOf, xlabel, ylabel, rc)
	}
	f.Legend = nil
	styles, err := figures.ParseStyles(fs.SeriesStyle)
	if err != nil {
		return nil, err
	}
	f.styles = styles
	legendAdded := map[string]bool{}
	legend := plot.NewLegend()
	for _, pname := range panels {
		p := figures.NewPlot()
		if len(panels) > 1 {
			p.Title.Text = rc.label(pname)
			if fs.Panels != "dataset" && fs.Panels != "method" {
				p.Title.Text = dimLabel(fs.Panels) + " = " + rc.label(pname)
			}
			if l, ok := fs.PanelLabels[pname]; ok {
				p.Title.Text = l
			}
		} else {
			// One panel: the title sits over the plot area alone, so a long
			// one is wrapped rather than clipped at the image's edges.
			p.Title.Text = figures.WrapTitle(f.Title, figures.MaxTitleRunes)
			if fs.Panels != "" && pname != "" {
				// Name the panel's value (e.g. the dataset) even when alone.
				l := rc.label(pname)
				if fl, ok := fs.PanelLabels[pname]; ok {
					l = fl
				}
				p.Title.Text += "\n" + l
			}
		}
		p.X.Label.Text, p.Y.Label.Text = xlabel, ylabel
		f.clamped, f.floor = nil, math.Inf(1)
		bySeries := map[string][]*run{}
		for _, r := range used {
			if panelOf(r) == pname {
				bySeries[seriesOf(r)] = append(bySeries[seriesOf(r)], r)
			}
		}
		for _, sname := range series {
			rs := bySeries[sname]
			if len(rs) == 0 {
				continue
			}
			i := seriesIdx[sname]
			thumbs, err := f.drawSeries(p, fs, rs, traces, i, pname, sname, rc)
			if err != nil {
				return nil, err
			}
			if sname != "" && !legendAdded[sname] && len(thumbs) > 0 {
				legend.Add(rc.label(sname), thumbs...)
				legendAdded[sname] = true
			}
		}
		if fs.Kind == "pareto" {
			var mine []*run
			for _, r := range used {
				if panelOf(r) == pname {
					mine = append(mine, r)
				}
			}
			th, err := f.drawFront(p, panelFront(fs, mine, seriesOf, rc), pname, rc)
			if err != nil {
				return nil, err
			}
			if th != nil && !legendAdded["\x00front"] {
				legend.Add("Pareto front", th)
				legendAdded["\x00front"] = true
			}
		}
		if th := f.drawClamped(p); th != nil && !legendAdded["\x00clamped"] {
			legend.Add("mean ≤ 0 (drawn at the floor)", th)
			legendAdded["\x00clamped"] = true
		}
		if len(refs) > 0 {
			var mine []*run
			for _, r := range refs {
				if fs.Panels == "" || panelOf(r) == pname {
					mine = append(mine, r)
				}
			}
			if th, ok := drawReference(p, fs, mine); ok && !legendAdded["\x00ref"] {
				legend.Add(rc.label(fs.ReferenceMethod), th)
				legendAdded["\x00ref"] = true
			}
		}
		if len(bySeries) == 0 {
			addNoData(p, fs)
		} else if fs.Kind == "scatter" || fs.Kind == "line" {
			// Lines keep their x range (a reference line spans it).
			if fs.Kind == "scatter" {
				padAxis(&p.X, fs.LogX)
			}
			padAxis(&p.Y, fs.LogY)
		}
		// A panel whose runs could not be drawn keeps the default range,
		// which a log axis cannot show.
		if fs.LogX && (p.X.Min <= 0 || p.X.Max <= 0) {
			p.X.Min, p.X.Max = 0.1, 10
		}
		if fs.LogY && (p.Y.Min <= 0 || p.Y.Max <= 0) {
			p.Y.Min, p.Y.Max = 0.1, 10
		}
		if fs.LogX {
			p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, figures.LogTicks{}
		}
		if fs.LogY {
			p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, figures.LogTicks{}
		}
		f.Panels = append(f.Panels, p)
	}
	if len(legendAdded) > 0 {
		figures.StyleLegend(&legend)
		f.Legend = &legend
	}
	f.describe = describeFigure(fs, rc)
	return f, nil
}

func describeFigure(fs FigureSpec, rc *renderCtx) string {
	switch fs.Kind {
	case "scatter":
		return fmt.Sprintf("one point per finished run (%s profile)", rc.profile)
	case "trace":
		if fs.Band == "none" || fs.X == "elapsed" {
			return fmt.Sprintf("one line per run's optimiser trace (%s profile)", rc.profile)
		}
		return fmt.Sprintf("%s of the runs' traces at each iteration, band %s (%s profile)", fs.Aggregate, bandName(fs.Band), rc.profile)
	case "heatmap":
		return fmt.Sprintf("colour is the %s of %s over splits and seeds (%s profile)", fs.Aggregate, dimLabel(fs.Z), rc.profile)
	}
	s := fmt.Sprintf("%s over splits and seeds", fs.Aggregate)
	if fs.Kind == "pareto" {
		s = fmt.Sprintf("one point per %s and configuration: %s over splits and seeds; dashed: the Pareto front (lower is better on both axes)", dimLabel(fs.Series), fs.Aggregate)
	}
	if fs.Band != "none" {
		kind := "error bars"
		if fs.Kind == "band" {
			kind = "shaded band"
		}
		s += fmt.Sprintf(", %s %s", kind, bandName(fs.Band))
	}
	return s + fmt.Sprintf(" (%s profile)", rc.profile)
}

// padAxis leaves 4 % of an axis's range (of its logarithm on a log axis)
// free at both ends, so that no marker at the data's extremes is drawn on
// the frame.
func padAxis(a *plot.Axis, log bool) {
	lo, hi := a.Min, a.Max
	switch {
	case !(lo < hi):
	case log && lo > 0:
		f := math.Pow(hi/lo, 0.04)
		a.Min, a.Max = lo/f, hi*f
	case !log:
		pad := 0.04 * (hi - lo)
		a.Min, a.Max = lo-pad, hi+pad
	}
}

func addNoData(p *plot.Plot, fs FigureSpec) {
	l, err := plotter.NewLabels(plotter.XYLabels{XYs: plotter.XYs{{X: 0.5, Y: 0.5}}, Labels: []string{"no data (see index.md)"}})
	if err == nil {
		l.TextStyle[0].Font.Size = vg.Points(11)
		l.TextStyle[0].XAlign, l.TextStyle[0].YAlign = text.XCenter, text.YCenter
		p.Add(l)
	}
	if fs.LogX {
		p.X.Min, p.X.Max = 0.1, 10
	}
	if fs.LogY {
		p.Y.Min, p.Y.Max = 0.1, 10
	}
}

// drawSeries adds one series to a panel and returns its legend thumbnails.
func (f *figure) drawSeries(p *plot.Plot, fs FigureSpec, rs []*run, traces map[string][]tracePoint, i int, panel, name string, rc *renderCtx) ([]plot.Thumbnailer, error) {
	where := strings.TrimSpace(strings.Join([]string{panel, name}, " "))
	if where != "" {
		where = " (" + where + ")"
	}
	switch fs.Kind {
	case "scatter":
		var pts plotter.XYs
		dropped := 0
		for _, r := range rs {
			x, okx := numValue(r, fs.X)
			y, oky := numValue(r, fs.Y)
			if !okx || !oky || (fs.LogX && x <= 0) || (fs.LogY && y <= 0) {
				dropped++
				continue
			}
			pts = append(pts, plotter.XY{X: x, Y: y})
		}
		f.warnDropped(dropped, len(rs), where, fs)
		if len(pts) == 0 {
			return nil, nil
		}
		s, err := plotter.NewScatter(pts)
		if err != nil {
			return nil, err
		}
		s.GlyphStyle = figures.SeriesGlyph(i)
		p.Add(s)
		return []plot.Thumbnailer{s}, nil
	case "trace":
		return f.drawTrace(p, fs, rs, traces, i, where)
	}
	all := f.aggregate(fs, rs, where)
	var pts points
	for _, pt := range all {
		if pt.clamped {
			c := figures.SeriesColor(i)
			if st, ok := f.styles[name]; ok {
				c = st.Color
			}
			f.clamped = append(f.clamped, clampedPoint{x: pt.x, y: pt.y, color: c, where: where})
			continue
		}
		pts = append(pts, pt)
		if pt.ylo > 0 {
			f.floor = math.Min(f.floor, pt.ylo)
		}
	}
	if len(pts) == 0 {
		return nil, nil
	}
	var thumbs []plot.Thumbnailer
	if fs.Kind == "band" && fs.Band != "none" && len(pts) > 1 {
		poly, err := bandPolygon(pts, fs.LogY)
		if err != nil {
			return nil, err
		}
		poly.Color = figures.Fade(figures.SeriesColor(i), 0x40)
		poly.LineStyle.Width = 0
		p.Add(poly)
		thumbs = append(thumbs, poly)
	}
	line, scatter, err := plotter.NewLinePoints(pts.xys())
	if err != nil {
		return nil, err
	}
	line.LineStyle = figures.SeriesLine(i)
	scatter.GlyphStyle = figures.SeriesGlyph(i)
	if st, ok := f.styles[name]; ok {
		line.LineStyle.Color, scatter.GlyphStyle.Color = st.Color, st.Color
		line.LineStyle.Dashes = st.Dashes
	}
	p.Add(line, scatter)
	thumbs = append(thumbs, line, scatter)
	if (fs.Kind == "line" || fs.Kind == "pareto") && fs.Band != "none" {
		if b := xyBand(pts); b.hasYErr() {
			eb, err := plotter.NewYErrorBars(b)
			if err != nil {
				return nil, err
			}
			eb.LineStyle.Color, eb.LineStyle.Width, eb.CapWidth = line.LineStyle.Color, vg.Points(1), vg.Points(5)
			p.Add(eb)
		}
		if b := xyBand(pts); b.hasXErr() {
			eb, err := plotter.NewXErrorBars(b)
			if err != nil {
				return nil, err
			}
			eb.LineStyle.Color, eb.LineStyle.Width, eb.CapWidth = line.LineStyle.Color, vg.Points(1), vg.Points(5)
			p.Add(eb)
		}
	}
	return thumbs, nil
}

type points []point

func (ps points) xys() plotter.XYs {
	out := make(plotter.XYs, len(ps))
	for i, p := range ps {
		out[i] = plotter.XY{X: p.x, Y: p.y}
	}
	return out
}

// aggregate groups a series' runs into points. With a parameter on x the
// runs sharing its value form a point; with a metric on x (e.g. training
// time) the runs sharing a configuration (all parameters but split and
// seed) form a point, with bands in both x and y.
func (f *figure) aggregate(fs FigureSpec, rs []*run, where string) points {
	xIsMetric := strings.HasPrefix(fs.X, "metric:")
	groups := map[string][]*run{}
	var keys []string
	for _, r := range rs {
		k := dimValue(r, fs.X)
		if xIsMetric {
			k = configKey(r)
		}
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], r)
	}
	sort.Strings(keys)
	var out points
	dropped := 0
	for _, k := range keys {
		var xs, ys []float64
		for _, r := range groups[k] {
			x, okx := numValue(r, fs.X)
			y, oky := numValue(r, fs.Y)
			if !okx || !oky {
				dropped++
				continue
			}
			xs = append(xs, x)
			ys = append(ys, y)
		}
		if len(xs) == 0 {
			continue
		}
		var pt point
		pt.n = len(xs)
		pt.y, pt.ylo, pt.yhi = bandOf(ys, fs.Aggregate, fs.Band)
		pt.x, pt.xlo, pt.xhi = bandOf(xs, fs.Aggregate, "none")
		if xIsMetric {
			pt.x, pt.xlo, pt.xhi = bandOf(xs, fs.Aggregate, fs.Band)
		}
		if fs.LogX && pt.x <= 0 {
			dropped += len(xs)
			continue
		}
		if fs.LogY && pt.y <= 0 {
			// Not dropped: drawn at the panel's floor with its own marker.
			pt.clamped = true
			pt.ylo, pt.yhi = pt.y, pt.y
		}
		// A positive quantity's error bar must not reach below zero: clip
		// it at the smallest value observed (on a log axis, the smallest
		// positive one).
		pt.ylo = math.Min(clipLow(pt.ylo, ys, fs.LogY), pt.y)
		pt.xlo = math.Min(clipLow(pt.xlo, xs, fs.LogX), pt.x)
		out = append(out, pt)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].x < out[j].x })
	f.warnDropped(dropped, len(rs), where, fs)
	return out
}

// clipLow keeps the lower end of a band of values vs above zero when all
// of them are non-negative (log: above the smallest positive value).
func clipLow(lo float64, vs []float64, log bool) float64 {
	minV, minPos := math.Inf(1), math.Inf(1)
	for _, v := range vs {
		minV = math.Min(minV, v)
		if v > 0 {
			minPos = math.Min(minPos, v)
		}
	}
	switch {
	case log && lo <= 0 && !math.IsInf(minPos, 1):
		return minPos
	case !log && minV >= 0 && lo < 0:
		return 0
	}
	return lo
}

func (f *figure) warnDropped(dropped, total int, where string, fs FigureSpec) {
	if dropped == 0 {
		return
	}
	why := fmt.Sprintf("no numeric %s or %s", fs.X, fs.Y)
	if fs.LogX || fs.LogY {
		why += ", or not positive on a log axis"
	}
	f.warnings = append(f.warnings, fmt.Sprintf("%d of %d runs%s not drawn (%s)", dropped, total, where, why))
}

func configKey(r *run) string {
	keys := sortedKeys(r.Params)
	var b strings.Builder
	b.WriteString(r.Method + "|" + r.Dataset)
	for _, k := range keys {
		if k == "split" || k == "seed" {
			continue
		}
		b.WriteString("|" + k + "=" + r.Params[k])
	}
	return b.String()
}

func bandPolygon(pts points, logy bool) (*plotter.Polygon, error) {
	ring := make(plotter.XYs, 0, 2*len(pts))
	for _, p := range pts {
		ring = append(ring, plotter.XY{X: p.x, Y: p.yhi})
	}
	for i := len(pts) - 1; i >= 0; i-- {
		lo := pts[i].ylo
		if logy && lo <= 0 {
			lo = pts[i].y
		}
		ring = append(ring, plotter.XY{X: pts[i].x, Y: lo})
	}
	return plotter.NewPolygon(ring)
}

// drawTrace draws optimiser traces: the band over runs at each iteration, or
// one thin line per run (always for elapsed time, where runs do not share x).
func (f *figure) drawTrace(p *plot.Plot, fs FigureSpec, rs []*run, traces map[string][]tracePoint, i int, where string) ([]plot.Thumbnailer, error) {
	perRun := make([]plotter.XYs, 0, len(rs))
	missing := 0
	for _, r := range rs {
		tr := traces[r.ID]
		if len(tr) == 0 {
			missing++
			continue
		}
		var xy plotter.XYs
		offset, last := int64(0), int64(math.MinInt64)
		for _, t := range tr {
			// Iterations restart when a fit changes phase; keep x increasing.
			if t.Iteration+offset < last {
				offset = last
			}
			x := float64(t.Iteration + offset)
			last = t.Iteration + offset
			if fs.X == "elapsed" {
				x = t.Elapsed
			}
			if math.IsNaN(x) || math.IsNaN(t.Value) || (fs.LogX && x <= 0) || (fs.LogY && t.Value <= 0) {
				continue
			}
			xy = append(xy, plotter.XY{X: x, Y: t.Value})
		}
		if len(xy) > 0 {
			perRun = append(perRun, xy)
		}
	}
	if missing > 0 {
		f.warnings = append(f.warnings, fmt.Sprintf("%d of %d runs%s have no trace", missing, len(rs), where))
	}
	if len(perRun) == 0 {
		return nil, nil
	}
	if fs.X == "elapsed" || fs.Band == "none" || len(perRun) == 1 {
		var thumbs []plot.Thumbnailer
		for _, xy := range perRun {
			l, err := plotter.NewLine(xy)
			if err != nil {
				return nil, err
			}
			l.LineStyle = figures.SeriesLine(i)
			if len(perRun) > 1 {
				l.LineStyle.Width = vg.Points(1)
				l.LineStyle.Color = figures.Fade(figures.SeriesColor(i), 0xb0)
			}
			p.Add(l)
			thumbs = []plot.Thumbnailer{l}
		}
		return thumbs, nil
	}
	byX := map[float64][]float64{}
	for _, xy := range perRun {
		for _, pt := range xy {
			byX[pt.X] = append(byX[pt.X], pt.Y)
		}
	}
	var pts points
	for x, ys := range byX {
		var pt point
		pt.x, pt.n = x, len(ys)
		pt.y, pt.ylo, pt.yhi = bandOf(ys, fs.Aggregate, fs.Band)
		pts = append(pts, pt)
	}
	sort.Slice(pts, func(a, b int) bool { return pts[a].x < pts[b].x })
	poly, err := bandPolygon(pts, fs.LogY)
	if err != nil {
		return nil, err
	}
	poly.Color = figures.Fade(figures.SeriesColor(i), 0x40)
	poly.LineStyle.Width = 0
	l, err := plotter.NewLine(pts.xys())
	if err != nil {
		return nil, err
	}
	l.LineStyle = figures.SeriesLine(i)
	p.Add(poly, l)
	return []plot.Thumbnailer{poly, l}, nil
}

// heatGrid is a heatmap over categorical x and y values.
type heatGrid struct {
	z    [][]float64 // z[row][col]
	cols []string
	rows []string
}

func (g heatGrid) Dims() (c, r int)   { return len(g.cols), len(g.rows) }
func (g heatGrid) Z(c, r int) float64 { return g.z[r][c] }
func (g heatGrid) X(c int) float64    { return float64(c) }
func (g heatGrid) Y(r int) float64    { return float64(r) }

func buildHeatmap(f *figure, fs FigureSpec, used []*run, panels []string, panelOf func(*run) string, xlabel, ylabel string, rc *renderCtx) (*figure, error) {
	zmin, zmax := math.Inf(1), math.Inf(-1)
	var grids []heatGrid
	for _, pname := range panels {
		var xv, yv []string
		cells := map[[2]string][]float64{}
		for _, r := range used {
			if panelOf(r) != pname {
				continue
			}
			x, y := dimValue(r, fs.X), dimValue(r, fs.Y)
			if strings.HasPrefix(fs.X, "metric:") || strings.HasPrefix(fs.Y, "metric:") {
				return nil, fmt.Errorf("heatmap axes are categories (method, dataset, param:NAME …), not metrics")
			}
			xv, yv = append(xv, x), append(yv, y)
			if z, ok := numValue(r, fs.Z); ok {
				cells[[2]string{x, y}] = append(cells[[2]string{x, y}], z)
			}
		}
		g := heatGrid{cols: orderValues(xv, nil), rows: orderValues(yv, nil)}
		for _, y := range g.rows {
			row := make([]float64, len(g.cols))
			for j, x := range g.cols {
				row[j] = math.NaN()
				if zs := cells[[2]string{x, y}]; len(zs) > 0 {
					row[j] = summarise(zs).pick(fs.Aggregate)
					zmin, zmax = math.Min(zmin, row[j]), math.Max(zmax, row[j])
				}
			}
			g.z = append(g.z, row)
		}
		grids = append(grids, g)
	}
	cmap := figures.ColourScale(zmin, zmax)
	pal := cmap.Palette(256)
	for k, g := range grids {
		p := figures.NewBarePlot()
		p.Title.Text = f.Title
		if len(panels) > 1 {
			p.Title.Text = rc.label(panels[k])
		}
		p.X.Label.Text, p.Y.Label.Text = xlabel, ylabel
		if len(g.cols) == 0 || len(g.rows) == 0 {
			addNoData(p, FigureSpec{})
			f.Panels = append(f.Panels, p)
			continue
		}
		h := plotter.NewHeatMap(g, pal)
		h.Min, h.Max = zmin, zmax
		h.NaN = color.Gray{Y: 0xd8}
		p.Add(h)
		// Print each cell's value, white on dark cells.
		var xys plotter.XYs
		var labels []string
		var styles []text.Style
		for r := range g.rows {
			for c := range g.cols {
				z := g.z[r][c]
				if math.IsNaN(z) {
					xys, labels = append(xys, plotter.XY{X: float64(c), Y: float64(r)}), append(labels, "—")
				} else {
					xys, labels = append(xys, plotter.XY{X: float64(c), Y: float64(r)}), append(labels, strconv.FormatFloat(z, 'g', 3, 64))
				}
				st := text.Style{Color: color.Black, Font: font.From(plot.DefaultFont, vg.Points(8)), XAlign: text.XCenter, YAlign: text.YCenter, Handler: plot.DefaultTextHandler}
				if !math.IsNaN(z) && figures.Luminance(figures.ColourAt(cmap, z)) < 0.45 {
					st.Color = color.White
				}
				styles = append(styles, st)
			}
		}
		if l, err := plotter.NewLabels(plotter.XYLabels{XYs: xys, Labels: labels}); err == nil {
			l.TextStyle = styles
			p.Add(l)
		}
		p.X.Tick.Marker = categoryTicks(g.cols, rc)
		p.Y.Tick.Marker = categoryTicks(g.rows, rc)
		p.X.Min, p.X.Max = -0.5, float64(len(g.cols))-0.5
		p.Y.Min, p.Y.Max = -0.5, float64(len(g.rows))-0.5
		// Category labels without axis lines: the cells are the frame.
		for _, ax := range []*plot.Axis{&p.X, &p.Y} {
			ax.LineStyle.Width = 0
			ax.Tick.LineStyle.Width = 0
			ax.Tick.Length = vg.Points(2)
			ax.Padding = 0
		}
		f.Panels = append(f.Panels, p)
	}
	cb := plot.New()
	cb.HideX()
	cb.Y.Padding = 0
	cb.Y.Label.Text = firstNonEmpty(fs.ZLabel, rc.label(dimLabel(fs.Z)))
	cb.Y.Label.TextStyle.Font.Size = vg.Points(11)
	cb.Y.Tick.Label.Font.Size = vg.Points(9)
	cb.Add(&plotter.ColorBar{ColorMap: cmap, Vertical: true})
	f.Colorbar = cb
	f.describe = describeFigure(fs, rc)
	return f, nil
}

func categoryTicks(vals []string, rc *renderCtx) plot.ConstantTicks {
	ticks := make(plot.ConstantTicks, len(vals))
	for i, v := range vals {
		ticks[i] = plot.Tick{Value: float64(i), Label: rc.label(v)}
	}
	return ticks
}

type clampedPoint struct {
	x, y  float64
	color color.NRGBA // the series' colour
	where string
}

// drawClamped draws the panel's points whose mean is ≤ 0 on a log y axis
// as hollow down-triangles at a third of the smallest positive value
// drawn, and says so in the warnings; it returns the legend thumbnail.
func (f *figure) drawClamped(p *plot.Plot) plot.Thumbnailer {
	if len(f.clamped) == 0 {
		return nil
	}
	floor := f.floor / 3
	if math.IsInf(f.floor, 1) {
		floor = 1
	}
	var first *plotter.Scatter
	for _, c := range f.clamped {
		s, err := plotter.NewScatter(plotter.XYs{{X: c.x, Y: floor}})
		if err != nil {
			continue
		}
		s.GlyphStyle = draw.GlyphStyle{Color: c.color, Radius: vg.Points(4), Shape: figures.DownTriangle{}}
		p.Add(s)
		if first == nil {
			first = s
		}
		f.warnings = append(f.warnings, fmt.Sprintf("point at x = %.4g%s has mean %.3g ≤ 0 on a log axis: drawn as ▽ at %.3g", c.x, c.where, c.y, floor))
	}
	if first == nil {
		return nil
	}
	if p.Y.Min >= p.Y.Max { // nothing else in the panel: give the log axis a range
		p.Y.Min, p.Y.Max = floor/10, floor*10
	}
	return first
}
