package figures

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
)

// A config without [[table]] and [[figure]] sections (an ad-hoc sweep)
// still gets a report: a summary table of every headline metric by method
// × dataset × swept parameters (mean ± standard deviation over splits and
// seeds), and one figure per metric against each swept numeric parameter.

// defaultMetrics are the metrics the default report shows, in this order,
// when any run has them.
var defaultMetrics = []string{"elbo", "rmse", "nlpd", "accuracy", "auc", "coverage95", "train_seconds"}

// group is the runs that differ only by split and seed.
type group struct {
	method, dataset string
	params          []string // values of the swept parameters, in sweep order
	runs            []*run
}

// sweptParams are the run parameters whose values differ between runs,
// leaving out file hashes (they follow the file parameter).
func sweptParams(runs []*run) []string {
	vals := map[string]map[string]bool{}
	for _, r := range runs {
		for k, v := range r.Params {
			if strings.HasPrefix(k, "sha256.") {
				continue
			}
			if vals[k] == nil {
				vals[k] = map[string]bool{}
			}
			vals[k][v] = true
		}
	}
	var out []string
	for k, vs := range vals {
		if len(vs) > 1 {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// groupRuns groups runs by method, dataset and the swept parameters, in a
// stable order (numeric parameters sort numerically).
func groupRuns(runs []*run, swept []string) []*group {
	byKey := map[string]*group{}
	var out []*group
	for _, r := range runs {
		g := &group{method: r.Method, dataset: r.Dataset}
		for _, k := range swept {
			v, ok := r.Params[k]
			if !ok {
				v = "—"
			}
			g.params = append(g.params, v)
		}
		key := g.method + "\x00" + g.dataset + "\x00" + strings.Join(g.params, "\x00")
		if old, ok := byKey[key]; ok {
			old.runs = append(old.runs, r)
			continue
		}
		g.runs = []*run{r}
		byKey[key] = g
		out = append(out, g)
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.method != b.method {
			return a.method < b.method
		}
		if a.dataset != b.dataset {
			return a.dataset < b.dataset
		}
		for k := range a.params {
			if a.params[k] != b.params[k] {
				return lessValue(a.params[k], b.params[k])
			}
		}
		return false
	})
	return out
}

func lessValue(a, b string) bool {
	fa, errA := strconv.ParseFloat(a, 64)
	fb, errB := strconv.ParseFloat(b, 64)
	if errA == nil && errB == nil {
		return fa < fb
	}
	return a < b
}

// meanStd of the metric over a group's runs (NaN values left out).
func meanStd(rs []*run, metric string) (mean, std float64, n int) {
	var xs []float64
	for _, r := range rs {
		if v, ok := r.Metrics[metric]; ok && !math.IsNaN(v) {
			xs = append(xs, v)
		}
	}
	if len(xs) == 0 {
		return math.NaN(), math.NaN(), 0
	}
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	for _, x := range xs {
		std += (x - mean) * (x - mean)
	}
	if len(xs) > 1 {
		std = math.Sqrt(std / float64(len(xs)-1))
	}
	return mean, std, len(xs)
}

// defaultReport is what a config without tables and figures gets.
type defaultReport struct {
	metrics []string
	swept   []string
	groups  []*group
}

func newDefaultReport(runs []*run) *defaultReport {
	d := &defaultReport{swept: sweptParams(runs)}
	for _, m := range defaultMetrics {
		for _, r := range runs {
			if v, ok := r.Metrics[m]; ok && !math.IsNaN(v) {
				d.metrics = append(d.metrics, m)
				break
			}
		}
	}
	d.groups = groupRuns(runs, d.swept)
	return d
}

// markdown is the summary table: a row per group, a column per metric.
func (d *defaultReport) markdown(profile string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "### Summary (%s profile)\n\nMean ± standard deviation over splits and seeds (n runs); every done run of the config.\n\n", profile)
	head := append(append([]string{"method", "dataset"}, d.swept...), "n")
	head = append(head, d.metrics...)
	b.WriteString("| " + strings.Join(head, " | ") + " |\n|")
	for range head {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	for _, g := range d.groups {
		cells := append(append([]string{g.method, g.dataset}, g.params...), strconv.Itoa(len(g.runs)))
		for _, m := range d.metrics {
			mean, std, n := meanStd(g.runs, m)
			switch {
			case n == 0:
				cells = append(cells, "—")
			case n == 1:
				cells = append(cells, fmt.Sprintf("%.4g", mean))
			default:
				cells = append(cells, fmt.Sprintf("%.4g ± %.2g", mean, std))
			}
		}
		b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
	}
	b.WriteString("\n")
	return b.String()
}

// csv has mean, std and n columns per metric.
func (d *defaultReport) csv() ([]byte, error) {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	head := append(append([]string{"method", "dataset"}, d.swept...), "runs")
	for _, m := range d.metrics {
		head = append(head, m+"_mean", m+"_std", m+"_n")
	}
	w.Write(head)
	for _, g := range d.groups {
		row := append(append([]string{g.method, g.dataset}, g.params...), strconv.Itoa(len(g.runs)))
		for _, m := range d.metrics {
			mean, std, n := meanStd(g.runs, m)
			row = append(row, fmtFloat(mean), fmtFloat(std), strconv.Itoa(n))
		}
		w.Write(row)
	}
	w.Flush()
	return buf.Bytes(), w.Error()
}

func fmtFloat(v float64) string {
	if math.IsNaN(v) {
		return ""
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// numericSwept are the swept parameters whose values are all numbers.
func (d *defaultReport) numericSwept() []int {
	var out []int
	for k := range d.swept {
		ok := true
		for _, g := range d.groups {
			if v := g.params[k]; v != "—" {
				if _, err := strconv.ParseFloat(v, 64); err != nil {
					ok = false
				}
			}
		}
		if ok {
			out = append(out, k)
		}
	}
	return out
}

// figure draws metric against swept parameter k: one line per method,
// dataset and the other swept parameters, points at the mean, error bars
// of one standard deviation.
func (d *defaultReport) figure(metric string, k int, profile string) (*figure, error) {
	param := d.swept[k]
	type series struct {
		name string
		pts  plotter.XYs
		errs plotter.YErrors
	}
	var ss []*series
	byName := map[string]*series{}
	for _, g := range d.groups {
		x, err := strconv.ParseFloat(g.params[k], 64)
		if err != nil {
			continue // this group lacks the parameter (another method's)
		}
		mean, std, n := meanStd(g.runs, metric)
		if n == 0 {
			continue
		}
		name := g.method
		if len(d.datasetsOf()) > 1 {
			name += " " + g.dataset
		}
		for j, v := range g.params {
			if j != k && v != "—" {
				name += " " + d.swept[j] + "=" + v
			}
		}
		s := byName[name]
		if s == nil {
			s = &series{name: name}
			byName[name] = s
			ss = append(ss, s)
		}
		s.pts = append(s.pts, plotter.XY{X: x, Y: mean})
		if n < 2 {
			std = 0
		}
		s.errs = append(s.errs, struct{ Low, High float64 }{std, std})
	}
	p := newPlot()
	p.Title.Text = fmt.Sprintf("%s against %s (%s profile)", metric, param, profile)
	p.X.Label.Text = param
	p.Y.Label.Text = metric + " (mean ± std over splits)"
	legend := plot.NewLegend()
	styleLegend(&legend)
	for i, s := range ss {
		sort.Sort(byX{s.pts, s.errs})
		l, err := plotter.NewLine(s.pts)
		if err != nil {
			return nil, err
		}
		l.LineStyle = seriesLine(i)
		sc, err := plotter.NewScatter(s.pts)
		if err != nil {
			return nil, err
		}
		sc.GlyphStyle = seriesGlyph(i)
		eb, err := plotter.NewYErrorBars(struct {
			plotter.XYs
			plotter.YErrors
		}{s.pts, s.errs})
		if err != nil {
			return nil, err
		}
		eb.LineStyle.Color = seriesColor(i)
		p.Add(l, sc, eb)
		legend.Add(s.name, l, sc)
	}
	if len(ss) == 0 {
		p.Add(plotter.NewGrid())
	}
	return &figure{title: p.Title.Text, panels: []*plot.Plot{p}, legend: &legend,
		describe: fmt.Sprintf("%s against %s: one line per method (and other swept parameters), mean ± one standard deviation over splits and seeds (%s profile)", metric, param, profile)}, nil
}

func (d *defaultReport) datasetsOf() map[string]bool {
	out := map[string]bool{}
	for _, g := range d.groups {
		out[g.dataset] = true
	}
	return out
}

// byX sorts points and their error bars together by x.
type byX struct {
	pts  plotter.XYs
	errs plotter.YErrors
}

func (b byX) Len() int           { return len(b.pts) }
func (b byX) Less(i, j int) bool { return b.pts[i].X < b.pts[j].X }
func (b byX) Swap(i, j int) {
	b.pts[i], b.pts[j] = b.pts[j], b.pts[i]
	b.errs[i], b.errs[j] = b.errs[j], b.errs[i]
}

// writeDefault adds the default report of grids to index (files through
// write): the summary table as Markdown and CSV, and the figures.
func (rc *renderCtx) writeDefault(q querier, name string, grids []string, formats []string,
	write func(string, []byte) error, index *strings.Builder) error {
	all, err := loadRuns(q, name, grids)
	if err != nil {
		return err
	}
	var runs []*run
	for _, r := range all {
		if rc.usable(r) {
			runs = append(runs, r)
		}
	}
	index.WriteString("## Default report\n\nThis config has no [[table]] or [[figure]] sections, so the report summarises every done run: ")
	if len(runs) == 0 {
		index.WriteString("there are none yet.\n\n")
		return nil
	}
	d := newDefaultReport(runs)
	if len(d.swept) == 0 {
		index.WriteString("no parameter differs between the runs.\n\n")
	} else {
		fmt.Fprintf(index, "the swept parameters are %s.\n\n", strings.Join(d.swept, ", "))
	}
	md := d.markdown(rc.profile)
	c, err := d.csv()
	if err != nil {
		return fmt.Errorf("figures: summary: %w", err)
	}
	if err := write("summary.md", []byte(md)); err != nil {
		return err
	}
	if err := write("summary.csv", c); err != nil {
		return err
	}
	index.WriteString(md)
	index.WriteString("Files: [summary.md](summary.md), [summary.csv](summary.csv)\n\n")
	for _, k := range d.numericSwept() {
		for _, m := range d.metrics {
			fig, err := d.figure(m, k, rc.profile)
			if err != nil {
				return fmt.Errorf("figures: %s against %s: %w", m, d.swept[k], err)
			}
			base := "figure-" + m + "-vs-" + sanitizeName(d.swept[k])
			for _, f := range formats {
				data, err := fig.encode(f)
				if err != nil {
					return fmt.Errorf("figures: %s: %w", base, err)
				}
				if err := write(base+"."+f, data); err != nil {
					return err
				}
			}
			rc.writeIndexFigure(index, FigureSpec{Name: base}, fig, formats)
		}
	}
	return nil
}

// sanitizeName makes a parameter name usable in a file name.
func sanitizeName(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, s)
}
