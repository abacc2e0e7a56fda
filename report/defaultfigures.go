package report

import (
	"fmt"
	"image/color"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"sgplab/figures"
)

// The default report's figures (see defaultreport.go): one file per
// dataset and question, its legend below the plot.

// namedFigure is a figure and its file name without extension.
type namedFigure struct {
	name string
	fig  *figure
}

// datasetFigures draws every figure of one dataset: the test metrics
// against M, against the other axes, the Pareto front and the traces.
func (d *defaultReport) datasetFigures(ds string, traced []tracedRun, traces map[string][]tracePoint, rc *renderCtx) []namedFigure {
	var out []namedFigure
	file := sanitizeName(ds)
	for _, q := range qualities {
		if f := d.againstM(ds, q, rc); f != nil {
			out = append(out, namedFigure{q.metric + "-vs-m-" + file, f})
		}
	}
	for _, ax := range d.axes {
		for _, q := range qualities {
			if f := d.againstParam(ds, q, ax, rc); f != nil {
				out = append(out, namedFigure{q.metric + "-vs-" + sanitizeName(ax) + "-" + file, f})
			}
		}
	}
	if f := d.pareto(ds, rc); f != nil {
		out = append(out, namedFigure{"pareto-" + file, f})
	}
	if f := d.traceFigure(ds, traced, traces, rc); f != nil {
		out = append(out, namedFigure{"trace-" + file, f})
	}
	return out
}

// dpoint is one configuration's point: the mean over its runs, a band of
// one sample standard deviation, hollow when one of its runs did not
// converge.
type dpoint struct {
	x, y, lo, hi float64
	hollow       bool
	tag          string // printed beside the point (Pareto: its M)
}

// pointOf is c's point for metric at x, false when no run has the metric.
func pointOf(c *config, metric string, x float64) (dpoint, bool) {
	mean, std, n := c.meanStd(metric)
	if n == 0 {
		return dpoint{}, false
	}
	return dpoint{x: x, y: mean, lo: mean - std, hi: mean + std, hollow: c.unconverged() > 0}, true
}

// lineSet is the series of one figure, in legend order.
type lineSet struct {
	keys   []string
	labels map[string]legendText
	style  map[string]int // series style index
	pts    map[string][]dpoint
}

func newLineSet() *lineSet {
	return &lineSet{labels: map[string]legendText{}, style: map[string]int{}, pts: map[string][]dpoint{}}
}

func (ls *lineSet) add(key string, label legendText, style int, p dpoint) {
	if _, ok := ls.pts[key]; !ok {
		ls.keys = append(ls.keys, key)
		ls.labels[key], ls.style[key] = label, style
	}
	ls.pts[key] = append(ls.pts[key], p)
}

// lineStyle says how a line set is drawn.
type lineStyle struct {
	// byM joins a series' points in order of their tag (M) rather than of
	// x (Pareto: cost need not grow with M).
	byM bool
	// errorBars of ±1 sample standard deviation in y.
	errorBars bool
	width     vg.Length // of the lines; 0: the series default
}

// draw adds every series to p and returns the legend entries and whether
// any point is hollow.
func (ls *lineSet) draw(p *plot.Plot, st lineStyle) ([]figures.LegendItem, bool, error) {
	var items []figures.LegendItem
	anyHollow := false
	for _, k := range ls.keys {
		pts := ls.pts[k]
		if st.byM {
			sort.SliceStable(pts, func(i, j int) bool { return lessValue(pts[i].tag, pts[j].tag) })
		} else {
			sort.SliceStable(pts, func(i, j int) bool { return pts[i].x < pts[j].x })
		}
		i := ls.style[k]
		xys := make(plotter.XYs, len(pts))
		for j, pt := range pts {
			xys[j] = plotter.XY{X: pt.x, Y: pt.y}
			anyHollow = anyHollow || pt.hollow
		}
		line, err := plotter.NewLine(xys)
		if err != nil {
			return nil, false, err
		}
		line.LineStyle = figures.SeriesLine(i)
		if st.width > 0 {
			line.LineStyle.Width = st.width
		}
		sc, err := plotter.NewScatter(xys)
		if err != nil {
			return nil, false, err
		}
		sc.GlyphStyle = markStyle(i, false)
		sc.GlyphStyleFunc = func(j int) draw.GlyphStyle { return markStyle(i, pts[j].hollow) }
		if st.errorBars {
			var bars []point
			for _, pt := range pts {
				if pt.hi > pt.lo {
					bars = append(bars, point{x: pt.x, y: pt.y, ylo: pt.lo, yhi: pt.hi})
				}
			}
			if len(bars) > 0 {
				eb, err := plotter.NewYErrorBars(xyBand(bars))
				if err != nil {
					return nil, false, err
				}
				eb.LineStyle.Color, eb.LineStyle.Width, eb.CapWidth = figures.SeriesColor(i), vg.Points(1), vg.Points(5)
				p.Add(eb)
			}
		}
		p.Add(line, sc)
		if tags := tagLabels(pts, figures.SeriesColor(i)); tags != nil {
			p.Add(tags)
		}
		items = append(items, ls.labels[k].item(line, sc))
	}
	return items, anyHollow, nil
}

// tagLabels prints each point's tag to its upper right, nil when none has one.
func tagLabels(pts []dpoint, c color.Color) *plotter.Labels {
	var xys plotter.XYs
	var tags []string
	for _, pt := range pts {
		if pt.tag != "" {
			xys = append(xys, plotter.XY{X: pt.x, Y: pt.y})
			tags = append(tags, pt.tag)
		}
	}
	if len(tags) == 0 {
		return nil
	}
	l, err := plotter.NewLabels(plotter.XYLabels{XYs: xys, Labels: tags})
	if err != nil {
		return nil
	}
	for i := range l.TextStyle {
		l.TextStyle[i] = text.Style{Color: c, Font: font.From(plot.DefaultFont, vg.Points(7)),
			XAlign: text.XLeft, YAlign: text.YBottom, Handler: plot.DefaultTextHandler}
	}
	l.Offset = vg.Point{X: vg.Points(3), Y: vg.Points(2)}
	return l
}

// hollowItem is the legend entry explaining hollow markers.
func hollowItem() figures.LegendItem {
	s, _ := plotter.NewScatter(plotter.XYs{{}})
	s.GlyphStyle = draw.GlyphStyle{Color: color.Gray{Y: 0x40}, Radius: vg.Points(3.5), Shape: figures.Mark{Hollow: true}}
	return figures.LegendItem{Label: "hollow: a run did not converge", Thumbs: []plot.Thumbnailer{s}}
}

// markStyle is series i's marker: filled, or hollow (white inside) for a
// point with an unconverged run.
func markStyle(i int, hollow bool) draw.GlyphStyle {
	return draw.GlyphStyle{Color: figures.SeriesColor(i), Radius: vg.Points(3.5), Shape: figures.Mark{Shape: i % 4, Hollow: hollow}}
}

// legendText is a legend label: a name (a method's, through
// [report.labels]) and the detail that tells entries apart.
type legendText struct{ name, detail string }

func (t legendText) String() string {
	if t.detail == "" {
		return t.name
	}
	return t.name + " " + t.detail
}

// with appends to the detail.
func (t legendText) with(s string) legendText {
	t.detail = strings.TrimSpace(t.detail + " " + s)
	return t
}

// item is the legend entry; shortening spares the detail.
func (t legendText) item(thumbs ...plot.Thumbnailer) figures.LegendItem {
	keep := 0
	if t.detail != "" {
		keep = utf8.RuneCountInString(t.detail) + 1
	}
	return figures.LegendItem{Label: t.String(), Keep: keep, Thumbs: thumbs}
}

// seriesLabel is a series' legend label: its method and the values of the
// method's distinguishing parameters but except.
func (d *defaultReport) seriesLabel(c *config, except string, rc *renderCtx) legendText {
	return legendText{name: rc.label(c.method), detail: strings.Join(d.distinctPairs(c, except), " ")}
}

// capitalize upper-cases the first letter.
func capitalize(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[n:]
}

// newSingle is a one-panel figure titled in words.
func newSingle(title string) (*figure, *plot.Plot) {
	f := &figure{Figure: figures.Figure{Title: title}}
	p := figures.NewPlot()
	p.Title.Text = figures.WrapTitle(title, figures.MaxTitleRunes)
	f.Panels = []*plot.Plot{p}
	return f, p
}

// valueAxis sets a numeric axis: logarithmic when the values span a factor
// of at least logFrom, ticks at the values themselves when there are few.
func valueAxis(ax *plot.Axis, xs []float64, logFrom float64) {
	lo, hi := math.Inf(1), math.Inf(-1)
	distinct := map[float64]bool{}
	for _, x := range xs {
		lo, hi = math.Min(lo, x), math.Max(hi, x)
		distinct[x] = true
	}
	log := lo > 0 && hi/lo >= logFrom
	if log {
		ax.Scale = plot.LogScale{}
		ax.Tick.Marker = figures.LogTicks{}
		// A little room either side, so end points are not on the frame.
		ax.Min, ax.Max = lo/math.Pow(hi/lo, 0.04), hi*math.Pow(hi/lo, 0.04)
	}
	if len(distinct) >= 2 && len(distinct) <= 8 {
		var ticks plot.ConstantTicks
		for _, x := range sortedFloats(distinct) {
			ticks = append(ticks, plot.Tick{Value: x, Label: figures.FormatTick(x)})
		}
		ax.Tick.Marker = ticks
	}
}

func sortedFloats(m map[float64]bool) []float64 {
	out := make([]float64, 0, len(m))
	for x := range m {
		out = append(out, x)
	}
	sort.Float64s(out)
	return out
}

// againstM draws a test metric against the effective M on one dataset:
// a line per series, exact methods as horizontal lines; nil when no sparse
// configuration has both.
func (d *defaultReport) againstM(ds string, q quality, rc *renderCtx) *figure {
	ls := newLineSet()
	var xs []float64
	var refs []*config
	noM := map[string]bool{}
	sources := map[string]map[string]bool{}
	for _, c := range d.configs {
		if c.dataset != ds {
			continue
		}
		if isExact(c.method) {
			refs = append(refs, c)
			continue
		}
		if math.IsNaN(c.m) {
			if _, _, n := c.meanStd(q.metric); n > 0 {
				noM[rc.label(c.method)] = true
			}
			continue
		}
		pt, ok := pointOf(c, q.metric, c.m)
		if !ok {
			continue
		}
		ls.add(strconv.Itoa(c.series), d.seriesLabel(c, "", rc), c.series, pt)
		xs = append(xs, c.m)
		if sources[c.mSource] == nil {
			sources[c.mSource] = map[string]bool{}
		}
		sources[c.mSource][rc.label(c.method)] = true
	}
	if len(ls.keys) == 0 {
		return nil
	}
	f, p := newSingle(rc.title(fmt.Sprintf("%s against inducing variables — %s", capitalize(q.name), rc.label(ds))))
	p.X.Label.Text = "inducing variables M"
	p.Y.Label.Text = q.name + betterNote(q.lowerBetter)
	valueAxis(&p.X, xs, 4)
	items, hollow, err := ls.draw(p, lineStyle{errorBars: true})
	if err != nil {
		f.warnings = append(f.warnings, err.Error())
	}
	refItems, refNames := d.drawRefs(p, refs, q.metric, xs, rc)
	padY(p)
	f.Below = append(items, refItems...)
	if hollow {
		f.Below = append(f.Below, hollowItem())
	}
	var src []string
	for _, s := range sortedKeys(sources) {
		src = append(src, fmt.Sprintf("%s for %s", s, strings.Join(sortedKeys(sources[s]), ", ")))
	}
	caption := fmt.Sprintf("One line per method and value of the parameters that vary within it; each point is the mean over splits and seeds, error bars ±1 sample standard deviation (%s profile). M is the effective number of inducing variables: %s.",
		rc.profile, strings.Join(src, "; "))
	if len(refNames) > 0 {
		caption += fmt.Sprintf(" Dashed horizontal lines: exact %s (mean over splits, shaded ±1 sample standard deviation).", strings.Join(refNames, ", "))
	}
	if len(noM) > 0 {
		caption += fmt.Sprintf(" Not drawn: %s (no M recorded: neither metric num_features or x_num_inducing nor parameter num_inducing or num_features).", strings.Join(sortedKeys(noM), ", "))
	}
	caption += d.hollowNote(hollow)
	f.describe = caption
	return f
}

// padY leaves 4 % of the y range free above and below the data, so that
// no point, bar or reference line lies on the frame.
func padY(p *plot.Plot) {
	lo, hi := p.Y.Min, p.Y.Max
	if !(lo < hi) {
		return
	}
	pad := 0.04 * (hi - lo)
	p.Y.Min, p.Y.Max = lo-pad, hi+pad
}

func betterNote(lower bool) string {
	if lower {
		return " (lower is better)"
	}
	return " (higher is better)"
}

// hollowNote is the caption's sentence on convergence, empty when no run
// records it.
func (d *defaultReport) hollowNote(hollow bool) string {
	switch {
	case !d.converged:
		return ""
	case hollow:
		return " Hollow markers: at least one of the point's runs did not converge (x_converged = 0; see the summary table)."
	}
	return " Every run drawn converged (x_converged = 1)."
}

// drawRefs draws the exact methods' configurations as horizontal lines
// over the x range xs, with a faint band of ±1 sample standard deviation.
func (d *defaultReport) drawRefs(p *plot.Plot, refs []*config, metric string, xs []float64, rc *renderCtx) ([]figures.LegendItem, []string) {
	if len(xs) == 0 {
		return nil, nil
	}
	// Across the panel's x range (set by the lines already drawn).
	lo, hi := p.X.Min, p.X.Max
	if !(lo < hi) {
		lo, hi = xs[0], xs[0]
		for _, x := range xs {
			lo, hi = math.Min(lo, x), math.Max(hi, x)
		}
	}
	var items []figures.LegendItem
	var names []string
	for _, c := range refs {
		mean, std, n := c.meanStd(metric)
		if n == 0 {
			continue
		}
		i := c.series
		if n > 1 && std > 0 {
			band, err := plotter.NewPolygon(plotter.XYs{{X: lo, Y: mean - std}, {X: hi, Y: mean - std}, {X: hi, Y: mean + std}, {X: lo, Y: mean + std}})
			if err == nil {
				band.Color = figures.Fade(figures.SeriesColor(i), 0x30)
				band.LineStyle.Width = 0
				p.Add(band)
			}
		}
		l, err := plotter.NewLine(plotter.XYs{{X: lo, Y: mean}, {X: hi, Y: mean}})
		if err != nil {
			continue
		}
		l.LineStyle = draw.LineStyle{Color: figures.SeriesColor(i), Width: vg.Points(1.5), Dashes: []vg.Length{vg.Points(6), vg.Points(3)}}
		p.Add(l)
		items = append(items, d.seriesLabel(c, "", rc).with("(exact)").item(l))
		names = append(names, d.seriesLabel(c, "", rc).String())
	}
	return items, names
}

// againstParam draws a test metric against a parameter that varies within
// some method, for the methods where it does; nil when none ran on ds.
func (d *defaultReport) againstParam(ds string, q quality, ax string, rc *renderCtx) *figure {
	// M is part of a series when it varies within the method on ds.
	ms := map[string]map[float64]bool{}
	for _, c := range d.configs {
		if c.dataset == ds && !math.IsNaN(c.m) {
			if ms[c.method] == nil {
				ms[c.method] = map[float64]bool{}
			}
			ms[c.method][c.m] = true
		}
	}
	// A line per method, its other distinguishing values and (where it
	// varies) M, in the order of the configurations.
	type skey struct {
		method, rest string
		m            float64
	}
	var keys []skey
	byKey := map[skey][]dpoint{}
	labels := map[skey]legendText{}
	var xs []float64
	for _, c := range d.configs {
		if c.dataset != ds || !isDistinct(d.distinct[c.method], ax) {
			continue
		}
		x, err := strconv.ParseFloat(c.params[ax], 64)
		if err != nil {
			continue
		}
		pt, ok := pointOf(c, q.metric, x)
		if !ok {
			continue
		}
		label := d.seriesLabel(c, ax, rc)
		k := skey{method: c.method, rest: strings.Join(d.distinctValues(c, ax), "\x00")}
		if len(ms[c.method]) > 1 {
			k.m = c.m
			label = label.with("M=" + strconv.FormatFloat(c.m, 'g', -1, 64))
		}
		if _, ok := byKey[k]; !ok {
			keys = append(keys, k)
			labels[k] = label
		}
		byKey[k] = append(byKey[k], pt)
		xs = append(xs, x)
	}
	if len(keys) == 0 {
		return nil
	}
	ls := newLineSet()
	for i, k := range keys {
		for _, pt := range byKey[k] {
			ls.add(fmt.Sprint(i), labels[k], i, pt)
		}
	}
	f, p := newSingle(rc.title(fmt.Sprintf("%s against %s — %s", capitalize(q.name), ax, rc.label(ds))))
	p.X.Label.Text = ax
	p.Y.Label.Text = q.name + betterNote(q.lowerBetter)
	valueAxis(&p.X, xs, 20)
	items, hollow, err := ls.draw(p, lineStyle{errorBars: true})
	if err != nil {
		f.warnings = append(f.warnings, err.Error())
	}
	padY(p)
	f.Below = items
	if hollow {
		f.Below = append(f.Below, hollowItem())
	}
	var methods []string
	for _, m := range sortedKeys(d.distinct) {
		if isDistinct(d.distinct[m], ax) {
			methods = append(methods, rc.label(m))
		}
	}
	f.describe = fmt.Sprintf("%s varies within %s; one line per method and value of its other varying parameters (and M where it varies); each point is the mean over splits and seeds, error bars ±1 sample standard deviation (%s profile).%s",
		ax, strings.Join(methods, ", "), rc.profile, d.hollowNote(hollow))
	return f
}

// pareto draws test NLPD (else RMSE) against the training cost on one
// dataset, one point per configuration, with the Pareto front; nil when no
// configuration has both.
func (d *defaultReport) pareto(ds string, rc *renderCtx) *figure {
	var mine []*config
	for _, c := range d.configs {
		if c.dataset == ds {
			mine = append(mine, c)
		}
	}
	has := func(metric string) bool {
		for _, c := range mine {
			if _, _, n := c.meanStd(metric); n > 0 {
				return true
			}
		}
		return false
	}
	var q quality
	for _, cand := range qualities[:2] { // lower is better on both axes
		if has(cand.metric) {
			q = cand
			break
		}
	}
	ci := -1
	for i, c := range costs {
		if has(c.metric) {
			ci = i
			break
		}
	}
	if q.metric == "" || ci < 0 {
		return nil
	}
	cost := costs[ci]
	ls := newLineSet()
	var xs []float64
	var fps []frontPoint
	for _, c := range mine {
		x, _, nx := c.meanStd(cost.metric)
		if nx == 0 {
			continue
		}
		pt, ok := pointOf(c, q.metric, x)
		if !ok {
			continue
		}
		label := d.seriesLabel(c, "", rc)
		if !math.IsNaN(c.m) {
			pt.tag = strconv.FormatFloat(c.m, 'g', -1, 64)
			label = label.with("M=" + pt.tag)
		}
		ls.add(strconv.Itoa(c.series), d.seriesLabel(c, "", rc), c.series, pt)
		xs = append(xs, x)
		fps = append(fps, frontPoint{x: x, y: pt.y, label: label.String()})
	}
	if len(ls.keys) == 0 {
		return nil
	}
	f, p := newSingle(rc.title(fmt.Sprintf("%s against %s — %s", capitalize(q.name), cost.short, rc.label(ds))))
	p.X.Label.Text = cost.name
	p.Y.Label.Text = q.name + betterNote(true)
	valueAxis(&p.X, xs, 10)
	p.X.Tick.Marker = figures.LinearTicks{} // costs are not round numbers: no ticks at the values
	if _, log := p.X.Scale.(plot.LogScale); log {
		p.X.Tick.Marker = figures.LogTicks{}
	}
	items, hollow, err := ls.draw(p, lineStyle{byM: true, width: vg.Points(1)})
	if err != nil {
		f.warnings = append(f.warnings, err.Error())
	}
	f.Below = items
	padY(p)
	front := paretoFront(fps)
	if th, err := f.drawFront(p, front, "", rc); err == nil && th != nil {
		f.Below = append(f.Below, figures.LegendItem{Label: "Pareto front", Thumbs: []plot.Thumbnailer{th}})
	}
	if hollow {
		f.Below = append(f.Below, hollowItem())
	}
	f.describe = fmt.Sprintf("One point per configuration: mean %s against mean %s (metric %s) over splits and seeds; a method's points are joined in order of M, printed beside each point; grey dashed: the Pareto front, the configurations no other beats on both cost and %s (%s profile).%s",
		q.name, cost.name, cost.metric, q.name, rc.profile, d.hollowNote(hollow))
	return f
}

// tracedRun is the run whose trace stands for a method on a dataset.
type tracedRun struct {
	c   *config
	run *run
}

// traceRuns picks, per dataset and method, one run: of the configuration
// with the largest M (the first in order on ties or without M), the one
// with the lowest split, then seed.
func (d *defaultReport) traceRuns() map[string][]tracedRun {
	best := map[[2]string]*config{}
	var order [][2]string
	for _, c := range d.configs {
		k := [2]string{c.dataset, c.method}
		b, ok := best[k]
		if !ok {
			order = append(order, k)
		}
		if !ok || (!math.IsNaN(c.m) && (math.IsNaN(b.m) || c.m > b.m)) {
			best[k] = c
		}
	}
	sort.SliceStable(order, func(i, j int) bool {
		if order[i][0] != order[j][0] {
			return order[i][0] < order[j][0]
		}
		return order[i][1] < order[j][1]
	})
	out := map[string][]tracedRun{}
	for _, k := range order {
		c := best[k]
		r := c.runs[0]
		for _, x := range c.runs[1:] {
			if x.Split < r.Split || (x.Split == r.Split && x.Seed < r.Seed) {
				r = x
			}
		}
		out[k[0]] = append(out[k[0]], tracedRun{c: c, run: r})
	}
	return out
}

// traceFigure draws, per method, the objective of its traced run against
// iteration, one panel each (the methods' objectives differ in scale).
func (d *defaultReport) traceFigure(ds string, traced []tracedRun, traces map[string][]tracePoint, rc *renderCtx) *figure {
	var with []tracedRun
	for _, t := range traced {
		if len(traces[t.run.ID]) > 0 {
			with = append(with, t)
		}
	}
	if len(with) == 0 {
		return nil
	}
	f := &figure{Figure: figures.Figure{Title: rc.title("Training objective against iteration — " + rc.label(ds))}}
	f.Cols = min(len(with), 3)
	if len(with) == 4 {
		f.Cols = 2 // 2 × 2 rather than 3 + 1
	}
	f.PanelW, f.PanelH = 9*vg.Centimeter, 6.5*vg.Centimeter
	var which []string
	spec := FigureSpec{Kind: "trace", X: "iteration", Band: "none"}
	for _, t := range with {
		p := figures.NewPlot()
		p.X.Label.Text, p.Y.Label.Text = "iteration", "objective"
		p.Title.TextStyle.Font.Size = vg.Points(10)
		what := "split " + strconv.FormatInt(t.run.Split, 10)
		if t.run.Seed != 0 {
			what += ", seed " + strconv.FormatInt(t.run.Seed, 10)
		}
		if !math.IsNaN(t.c.m) {
			what = "M = " + strconv.FormatFloat(t.c.m, 'g', -1, 64) + ", " + what
		}
		if v, ok := t.run.Metrics[convergedMetric]; ok && v == 0 {
			what += ", not converged"
		}
		p.Title.Text = d.seriesLabel(t.c, "", rc).String() + "\n" + what
		if _, err := f.drawTrace(p, spec, []*run{t.run}, traces, t.c.series, ""); err != nil {
			f.warnings = append(f.warnings, err.Error())
		}
		f.Panels = append(f.Panels, p)
		which = append(which, d.seriesLabel(t.c, "", rc).String()+" "+what)
	}
	if len(f.Panels) == 1 {
		f.Panels[0].Title.Text = figures.WrapTitle(f.Title, figures.MaxTitleRunes) + "\n" + f.Panels[0].Title.Text
	}
	what := "its ELBO"
	for _, t := range with {
		if isExact(t.c.method) {
			what += ", or the log marginal likelihood for exact GPR"
			break
		}
	}
	f.describe = fmt.Sprintf("The objective each method maximises (%s) against optimiser iteration, for one run per method: the configuration with the largest M, the lowest split (%s; %s profile).",
		what, strings.Join(which, "; "), rc.profile)
	return f
}
