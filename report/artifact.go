package report

import (
	"fmt"
	"image/color"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"sgplab/figures"
	"sgplab/internal/anyconv"
	"sgplab/results"
)

// loadArtifact reads one artifact of each run (absent ones are skipped).
func loadArtifact(q querier, runs []*run, name string) (map[string]results.Artifact, error) {
	out := map[string]results.Artifact{}
	for _, r := range runs {
		_, rows, err := q.Query(`SELECT name, rows, columns, data FROM artifacts WHERE run_id = ? AND name = ?`, r.ID, name)
		if err != nil {
			return nil, fmt.Errorf("report: reading artifact %s of run %s: %w", name, r.ID, err)
		}
		if len(rows) == 0 {
			continue
		}
		a, err := results.DecodeArtifact(anyconv.String(rows[0][0]), anyconv.Int64(rows[0][1]), anyconv.String(rows[0][2]), anyconv.String(rows[0][3]))
		if err != nil {
			return nil, fmt.Errorf("report: run %s: %w", r.ID, err)
		}
		out[r.ID] = a
	}
	return out, nil
}

// startArtifactFigure starts a figure that draws one run per panel from
// its artifact fs.Artifact: the figure, its panels in order, the run of
// each panel, those runs in panel order and their artifacts by run id.
func startArtifactFigure(fs FigureSpec, runs []*run, q querier, rc *renderCtx) (*figure, []string, map[string]*run, []*run, map[string]results.Artifact, error) {
	f := &figure{Figure: figures.Figure{Title: rc.title(firstNonEmpty(fs.Title, fs.Name)), Cols: fs.Columns}}
	used := usableRuns(f, fs, runs, rc)
	panels, byPanel := artifactPanels(f, fs, used, rc)
	list := panelRuns(panels, byPanel)
	arts, err := loadArtifact(q, list, fs.Artifact)
	return f, panels, byPanel, list, arts, err
}

// artifactPanels picks one run per panel value (the first in database
// order) and reports duplicates.
func artifactPanels(f *figure, fs FigureSpec, used []*run, rc *renderCtx) ([]string, map[string]*run) {
	byPanel := map[string]*run{}
	var pv []string
	for _, r := range used {
		pname := ""
		if fs.Panels != "" {
			pname = dimValue(r, fs.Panels)
		}
		if _, dup := byPanel[pname]; dup {
			f.warnings = append(f.warnings, fmt.Sprintf("several runs for panel %q; drawing the first (add a filter)", rc.label(pname)))
			continue
		}
		byPanel[pname] = r
		pv = append(pv, pname)
	}
	panels := orderValues(pv, fs.PanelOrder)
	if len(panels) == 0 {
		panels = []string{""}
	}
	return panels, byPanel
}

// newArtifactPlot is the plot of one panel of an artifact figure: titled
// by its panel value (by the figure's title when it is the only panel),
// x labelled "x" and y ylabel unless the figure says otherwise.
func newArtifactPlot(f *figure, fs FigureSpec, pname string, panels int, rc *renderCtx, ylabel string) *plot.Plot {
	p := figures.NewPlot()
	p.Title.Text = panelTitle(fs, pname, rc)
	if panels == 1 {
		p.Title.Text = f.Title
	}
	p.X.Label.Text, p.Y.Label.Text = firstNonEmpty(fs.XLabel, "x"), firstNonEmpty(fs.YLabel, ylabel)
	return p
}

func panelTitle(fs FigureSpec, pname string, rc *renderCtx) string {
	if l, ok := fs.PanelLabels[pname]; ok {
		return l
	}
	if fs.Panels == "" || fs.Panels == "dataset" || fs.Panels == "method" {
		return rc.label(pname)
	}
	if l, ok := rc.labels[pname]; ok {
		return l
	}
	return rc.label(dimLabel(fs.Panels)) + " = " + pname
}

// matrixGrid adapts an artifact to plotter.GridXYZ: column j at x_j, row i
// at y_i, taken from the column names when they are numbers.
type matrixGrid struct {
	a      results.Artifact
	coords []float64
}

func newMatrixGrid(a results.Artifact) matrixGrid {
	g := matrixGrid{a: a, coords: make([]float64, len(a.Columns))}
	for j, c := range a.Columns {
		v, err := strconv.ParseFloat(c, 64)
		if err != nil || len(a.Columns) != a.Rows {
			for k := range g.coords {
				g.coords[k] = float64(k)
			}
			return g
		}
		g.coords[j] = v
	}
	return g
}

func (g matrixGrid) Dims() (c, r int)   { return len(g.a.Columns), g.a.Rows }
func (g matrixGrid) Z(c, r int) float64 { return g.a.At(r, c) }
func (g matrixGrid) X(c int) float64    { return g.coords[c] }
func (g matrixGrid) Y(r int) float64 {
	if r < len(g.coords) {
		return g.coords[r]
	}
	return float64(r)
}

// buildMatrix draws one heat map per run of a matrix artifact, on a common
// colour scale, plus an optional reference panel.
func buildMatrix(fs FigureSpec, runs []*run, q querier, rc *renderCtx) (*figure, error) {
	f, panels, byPanel, list, arts, err := startArtifactFigure(fs, runs, q, rc)
	if err != nil {
		return nil, err
	}
	type tile struct {
		title string
		a     *results.Artifact
	}
	var tiles []tile
	for _, p := range panels {
		t := tile{title: panelTitle(fs, p, rc)}
		if r := byPanel[p]; r != nil {
			if a, ok := arts[r.ID]; ok {
				t.a = &a
			} else {
				f.warnings = append(f.warnings, fmt.Sprintf("run %s (panel %s) stored no artifact %q; list it under the grid's artifacts", r.ID, t.title, fs.Artifact))
			}
		}
		tiles = append(tiles, t)
	}
	if fs.ReferenceArtifact != "" && len(list) > 0 {
		ref, err := loadArtifact(q, list[:1], fs.ReferenceArtifact)
		if err != nil {
			return nil, err
		}
		t := tile{title: rc.label(fs.ReferenceArtifact)}
		if a, ok := ref[list[0].ID]; ok {
			t.a = &a
		} else {
			f.warnings = append(f.warnings, fmt.Sprintf("run %s stored no reference artifact %q", list[0].ID, fs.ReferenceArtifact))
		}
		tiles = append(tiles, t)
	}
	zmin, zmax := fs.ZMin, fs.ZMax
	if zmin == 0 && zmax == 0 {
		zmin, zmax = math.Inf(1), math.Inf(-1)
		for _, t := range tiles {
			if t.a == nil {
				continue
			}
			for _, v := range t.a.Data {
				if !math.IsNaN(v) {
					zmin, zmax = math.Min(zmin, v), math.Max(zmax, v)
				}
			}
		}
	}
	cmap := figures.ColourScale(zmin, zmax)
	pal := cmap.Palette(256)
	for _, t := range tiles {
		p := figures.NewBarePlot() // no grid lines over the image
		p.Title.Text = t.title
		if len(tiles) == 1 {
			p.Title.Text = f.Title
		}
		p.X.Label.Text, p.Y.Label.Text = fs.XLabel, fs.YLabel
		if t.a == nil {
			addNoData(p, FigureSpec{})
			f.Panels = append(f.Panels, p)
			continue
		}
		g := newMatrixGrid(*t.a)
		h := plotter.NewHeatMap(g, pal)
		h.Min, h.Max = zmin, zmax
		h.Underflow, h.Overflow = pal.Colors()[0], pal.Colors()[len(pal.Colors())-1]
		h.NaN = color.Gray{Y: 0xd8}
		p.Add(h)
		// Matrix orientation: row 0 at the top, as the paper's images.
		p.Y.Scale = figures.ReverseScale{}
		p.Y.Tick.Marker = figures.ReversedTicks{}
		f.Panels = append(f.Panels, p)
	}
	f.Colorbar = figures.ColourBar(cmap, firstNonEmpty(fs.ZLabel, rc.label(fs.Artifact)))
	f.describe = fmt.Sprintf("one heat map per run of the per-run array %q (colour on a common scale %.3g…%.3g)", fs.Artifact, zmin, zmax)
	if fs.ReferenceArtifact != "" {
		f.describe += fmt.Sprintf(", and %q of the first run as the last panel", fs.ReferenceArtifact)
	}
	return f, nil
}

// buildCurve draws each run's predictive mean with a ±2 sd band of the
// latent function and the training points, one run per panel.
func buildCurve(fs FigureSpec, runs []*run, q querier, rc *renderCtx) (*figure, error) {
	f, panels, byPanel, list, preds, err := startArtifactFigure(fs, runs, q, rc)
	if err != nil {
		return nil, err
	}
	pointsName := fs.ReferenceArtifact
	var pts map[string]results.Artifact
	if pointsName != "none" {
		if pts, err = loadArtifact(q, list, pointsName); err != nil {
			return nil, err
		}
	}
	k := 2.0
	switch fs.Band {
	case "std":
		k = 1
	case "none":
		k = 0
	}
	legend := plot.NewLegend()
	legendDone := false
	ymin, ymax := math.Inf(1), math.Inf(-1)
	for _, pname := range panels {
		p := newArtifactPlot(f, fs, pname, len(panels), rc, "f(x)")
		r := byPanel[pname]
		a, ok := panelArtifact(f, fs, p, r, preds)
		if !ok {
			continue
		}
		x, err1 := a.Column("x0")
		mean, err2 := a.Column("mean")
		vf, err3 := a.Column("var_f")
		if err := firstErr(err1, err2, err3); err != nil {
			return nil, fmt.Errorf("run %s: %w", r.ID, err)
		}
		var line, lo, hi plotter.XYs
		for i := range x {
			if math.IsNaN(mean[i]) {
				continue
			}
			sd := k * math.Sqrt(math.Max(vf[i], 0))
			line = append(line, plotter.XY{X: x[i], Y: mean[i]})
			lo = append(lo, plotter.XY{X: x[i], Y: mean[i] - sd})
			hi = append(hi, plotter.XY{X: x[i], Y: mean[i] + sd})
			ymin, ymax = math.Min(ymin, mean[i]-sd), math.Max(ymax, mean[i]+sd)
		}
		var thumbs [3]plot.Thumbnailer
		if k > 0 && len(line) > 1 {
			poly := append(plotter.XYs{}, lo...)
			for i := len(hi) - 1; i >= 0; i-- {
				poly = append(poly, hi[i])
			}
			pg, err := plotter.NewPolygon(poly)
			if err != nil {
				return nil, err
			}
			pg.Color = figures.Fade(figures.SeriesColor(0), 0x50)
			pg.LineStyle.Width = 0
			p.Add(pg)
			thumbs[1] = pg
		}
		l, err := plotter.NewLine(line)
		if err != nil {
			return nil, err
		}
		l.LineStyle = figures.SeriesLine(0)
		l.LineStyle.Dashes = nil
		p.Add(l)
		thumbs[0] = l
		if tr, ok := pts[r.ID]; ok {
			tx, err1 := tr.Column("x0")
			ty, err2 := tr.Column("y")
			if err := firstErr(err1, err2); err != nil {
				return nil, fmt.Errorf("run %s: %w", r.ID, err)
			}
			var xy plotter.XYs
			for i := range tx {
				xy = append(xy, plotter.XY{X: tx[i], Y: ty[i]})
				ymin, ymax = math.Min(ymin, ty[i]), math.Max(ymax, ty[i])
			}
			sc, err := plotter.NewScatter(xy)
			if err != nil {
				return nil, err
			}
			sc.GlyphStyle.Color = color.Black
			sc.GlyphStyle.Radius = vg.Points(1.8)
			p.Add(sc)
			thumbs[2] = sc
		}
		if !legendDone {
			legend.Add("posterior mean", thumbs[0])
			if thumbs[1] != nil {
				legend.Add(fmt.Sprintf("±%g sd of f", k), thumbs[1])
			}
			if thumbs[2] != nil {
				legend.Add("training data", thumbs[2])
			}
			legendDone = true
		}
		f.Panels = append(f.Panels, p)
	}
	// One y range for every panel, so the panels compare at a glance.
	if !math.IsInf(ymin, 1) {
		pad := 0.05 * (ymax - ymin)
		for _, p := range f.Panels {
			p.Y.Min, p.Y.Max = ymin-pad, ymax+pad
		}
	}
	if legendDone {
		figures.StyleLegend(&legend)
		f.Legend = &legend
	}
	f.describe = fmt.Sprintf("per panel one run's predictive mean over its test inputs with a shaded ±%g sd band of the latent f (artifact %q)", k, fs.Artifact)
	if pointsName != "none" {
		f.describe += fmt.Sprintf(" and its training points (artifact %q)", pointsName)
	}
	return f, nil
}

// usableRuns keeps the finished runs of the reported profile that pass the
// figure's filter, warning on f when none does.
func usableRuns(f *figure, fs FigureSpec, runs []*run, rc *renderCtx) []*run {
	var used []*run
	for _, r := range runs {
		if rc.usable(r) && fs.filter.matches(r) {
			used = append(used, r)
		}
	}
	if len(used) == 0 {
		f.warnings = append(f.warnings, fmt.Sprintf("no finished %s-profile runs of grid %s in %s; run %s",
			rc.profile, strings.Join(fs.GridSet, ", "), rc.db, rc.runCommand()))
	}
	return used
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// drawReference draws the mean y of runs as a dashed horizontal line over
// the panel's x range and returns its legend thumbnail.
func drawReference(p *plot.Plot, fs FigureSpec, refs []*run) (plot.Thumbnailer, bool) {
	var ys []float64
	for _, r := range refs {
		if v, ok := numValue(r, fs.Y); ok {
			ys = append(ys, v)
		}
	}
	if len(ys) == 0 || math.IsInf(p.X.Min, 0) || p.X.Max < p.X.Min {
		return nil, false
	}
	x0, x1 := p.X.Min, p.X.Max
	if x0 == x1 {
		// A panel with one x (a profile that runs one size): span the
		// range gonum's axis widens a single value to, x ± 1.
		x0, x1 = x0-1, x1+1
	}
	y := summarise(ys).pick(fs.Aggregate)
	l, err := plotter.NewLine(plotter.XYs{{X: x0, Y: y}, {X: x1, Y: y}})
	if err != nil {
		return nil, false
	}
	l.LineStyle.Color = color.Black
	l.LineStyle.Width = vg.Points(1.2)
	l.LineStyle.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
	p.Add(l)
	return l, true
}

// panelRuns lists the run of each panel, in panel order.
func panelRuns(panels []string, byPanel map[string]*run) []*run {
	var list []*run
	for _, p := range panels {
		if r := byPanel[p]; r != nil {
			list = append(list, r)
		}
	}
	return list
}

// panelArtifact returns the artifact of the panel's run r; when there is
// none it adds p to f as a "no data" panel (warning when the run exists
// but stored no such artifact) and reports false.
func panelArtifact(f *figure, fs FigureSpec, p *plot.Plot, r *run, arts map[string]results.Artifact) (results.Artifact, bool) {
	if r != nil {
		if a, ok := arts[r.ID]; ok {
			return a, true
		}
		f.warnings = append(f.warnings, fmt.Sprintf("run %s (panel %s) stored no artifact %q; list it under the grid's artifacts", r.ID, p.Title.Text, fs.Artifact))
	}
	addNoData(p, FigureSpec{})
	f.Panels = append(f.Panels, p)
	return results.Artifact{}, false
}
