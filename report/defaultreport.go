package report

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"sgplab/methods"
)

// A config without [[table]] and [[figure]] sections (an ad-hoc sweep)
// still gets a report, one that answers "which method, at what cost":
//
//   - per dataset, each test metric (NLPD, RMSE; accuracy for
//     classification) against the effective number of inducing variables M,
//     one line per method, exact GPR a horizontal reference line;
//   - per dataset, a Pareto front of test NLPD against training CPU time;
//   - per dataset, the optimiser's objective against iteration for one run
//     of each method (its largest M, lowest split);
//   - the same metrics against every other numeric parameter that varies
//     within a method;
//   - a summary table (summary.md, summary.csv) of every configuration.
//
// A parameter is an axis, a legend entry or a table column only when it
// varies within a method on a dataset: one that differs only between
// methods (a kernel, a jitter, an iteration count) is a method's setting,
// listed once in index.md.

// isExact reports whether a method is exact by its registration (an exact
// GP is drawn as a horizontal reference line against M); a method this
// build does not know is not.
func isExact(method string) bool {
	m, err := methods.Lookup(method)
	return err == nil && m.Exact
}

// sizeSources are where a run's effective number of inducing variables is
// read, the first found winning: the metric every sparse method records,
// the metric some feature methods record, then the parameters.
var sizeSources = []struct {
	metric bool
	name   string
}{
	{true, "num_features"}, {true, "x_num_inducing"}, {false, "num_inducing"}, {false, "num_features"},
}

// sizeParams set M; they are the M axis, never a series of their own.
var sizeParams = map[string]bool{"num_inducing": true, "num_features": true}

// sizeOf is a run's effective M and where it was read ("metric
// num_features", "parameter num_inducing").
func sizeOf(r *run) (float64, string, bool) {
	for _, s := range sizeSources {
		if s.metric {
			if v, ok := r.Metrics[s.name]; ok && !math.IsNaN(v) {
				return v, "metric " + s.name, true
			}
			continue
		}
		if v, err := strconv.ParseFloat(r.Params[s.name], 64); err == nil {
			return v, "parameter " + s.name, true
		}
	}
	return math.NaN(), "", false
}

// Convergence metrics: stored by runs whose trace was judged.
const (
	convergedMetric = "x_converged"  // 1 converged, 0 not
	relChangeMetric = "x_rel_change" // the relative objective change judged
)

// summaryMetrics are the metrics of the summary table, in this order, when
// any run has them.
var summaryMetrics = []string{"nlpd", "rmse", "accuracy", "auc", "coverage95", "elbo", "train_seconds", "x_train_cpu_seconds", relChangeMetric}

// quality is a test metric drawn against M and the other axes.
type quality struct {
	metric, name string // "nlpd", "test NLPD"
	lowerBetter  bool
}

var qualities = []quality{
	{"nlpd", "test NLPD", true}, {"rmse", "test RMSE", true}, {"accuracy", "test accuracy", false}, {"auc", "test AUC", false},
}

// costs are the training costs a Pareto figure puts on x, the first any run
// has winning.
var costs = []struct{ metric, name, short string }{
	{"x_train_cpu_seconds", "training CPU seconds", "training CPU time"},
	{"x_cpu_seconds", "CPU seconds (training and prediction)", "CPU time"},
	{"train_seconds", "training wall-clock seconds", "training time"},
}

// config is the runs of one method on one dataset with the same parameters:
// they differ only by split and seed.
type config struct {
	method, dataset string
	params          map[string]string // of its runs, file hashes left out
	runs            []*run
	m               float64 // mean effective M over its runs; NaN: none
	mSource         string
	series          int // index into defaultReport.series
}

// meanStd of the metric over the config's runs (NaN values left out).
func (c *config) meanStd(metric string) (mean, std float64, n int) {
	var xs []float64
	for _, r := range c.runs {
		if v, ok := r.Metrics[metric]; ok && !math.IsNaN(v) {
			xs = append(xs, v)
		}
	}
	s := summarise(xs)
	return s.Mean, s.Std, s.N
}

// unconverged counts the runs stored with x_converged = 0.
func (c *config) unconverged() int {
	n := 0
	for _, r := range c.runs {
		if v, ok := r.Metrics[convergedMetric]; ok && v == 0 {
			n++
		}
	}
	return n
}

// series is a method and the values of its distinguishing parameters: a
// line of the figures, an entry of their legends.
type series struct {
	method string
	label  string // "sgpr" or "sgpr lengthscales=[0.5]"
}

// defaultReport is what a config without tables and figures gets.
type defaultReport struct {
	configs  []*config // by dataset, method, distinguishing values, M
	datasets []string
	series   []series
	// distinct lists, per method, the parameters that vary within it on
	// some dataset (besides M and what M determines), sorted.
	distinct map[string][]string
	// axes are the numeric parameters distinct for some method.
	axes    []string
	metrics []string // of the summary table
	// converged: some run records x_converged.
	converged bool
	// settings are the parameters that differ between methods but not
	// within one: name → value → methods.
	settings map[string]map[string][]string
}

func newDefaultReport(runs []*run) *defaultReport {
	d := &defaultReport{distinct: map[string][]string{}}
	byKey := map[string]*config{}
	for _, r := range runs {
		k := sweepKey(r)
		c := byKey[k]
		if c == nil {
			c = &config{method: r.Method, dataset: r.Dataset, params: map[string]string{}}
			for n, v := range r.Params {
				if !strings.HasPrefix(n, "sha256.") {
					c.params[n] = v
				}
			}
			byKey[k] = c
			d.configs = append(d.configs, c)
		}
		c.runs = append(c.runs, r)
		if _, ok := r.Metrics[convergedMetric]; ok {
			d.converged = true
		}
	}
	for _, c := range d.configs {
		var ms []float64
		for _, r := range c.runs {
			if m, src, ok := sizeOf(r); ok {
				ms = append(ms, m)
				if c.mSource == "" {
					c.mSource = src
				}
			}
		}
		c.m = summarise(ms).Mean
	}
	d.findDistinct()
	d.findSettings()
	d.nameSeries()
	sort.SliceStable(d.configs, func(i, j int) bool {
		a, b := d.configs[i], d.configs[j]
		if a.dataset != b.dataset {
			return a.dataset < b.dataset
		}
		if a.series != b.series {
			return a.series < b.series
		}
		return a.m < b.m || (a.m == b.m && sweepKey(a.runs[0]) < sweepKey(b.runs[0]))
	})
	seen := map[string]bool{}
	for _, c := range d.configs {
		if !seen[c.dataset] {
			seen[c.dataset] = true
			d.datasets = append(d.datasets, c.dataset)
		}
	}
	sort.Strings(d.datasets)
	for _, m := range summaryMetrics {
		if d.anyRunHas(m) {
			d.metrics = append(d.metrics, m)
		}
	}
	return d
}

// sweepKey identifies a run's configuration: method, dataset and every
// parameter but split, seed and file hashes (which follow the file).
func sweepKey(r *run) string {
	var b strings.Builder
	b.WriteString(r.Method + "\x00" + r.Dataset)
	for _, k := range sortedKeys(r.Params) {
		if !strings.HasPrefix(k, "sha256.") {
			b.WriteString("\x00" + k + "=" + r.Params[k])
		}
	}
	return b.String()
}

func (d *defaultReport) anyExact() bool {
	for _, c := range d.configs {
		if isExact(c.method) {
			return true
		}
	}
	return false
}

func (d *defaultReport) anyRunHas(metric string) bool {
	for _, c := range d.configs {
		for _, r := range c.runs {
			if v, ok := r.Metrics[metric]; ok && !math.IsNaN(v) {
				return true
			}
		}
	}
	return false
}

// absent stands for a parameter a configuration does not have.
const absent = "\x00"

func paramOf(c *config, name string) string {
	if v, ok := c.params[name]; ok {
		return v
	}
	return absent
}

// findDistinct finds, per method, the parameters that vary between its
// configurations on one dataset, leaving out the M parameters and any
// parameter that only renames M (one value per M and one M per value, as
// frequencies does for VFF when M is recorded).
func (d *defaultReport) findDistinct() {
	type md struct{ method, dataset string }
	groups := map[md][]*config{}
	for _, c := range d.configs {
		k := md{c.method, c.dataset}
		groups[k] = append(groups[k], c)
	}
	distinct := map[string]map[string]bool{}
	for k, cs := range groups {
		names := map[string]bool{}
		for _, c := range cs {
			for n := range c.params {
				names[n] = true
			}
		}
		for n := range names {
			if sizeParams[n] {
				continue
			}
			vals := map[string]bool{}
			for _, c := range cs {
				vals[paramOf(c, n)] = true
			}
			if len(vals) < 2 || renamesM(cs, n) {
				continue
			}
			if distinct[k.method] == nil {
				distinct[k.method] = map[string]bool{}
			}
			distinct[k.method][n] = true
		}
	}
	axes := map[string]bool{}
	for m, ns := range distinct {
		d.distinct[m] = sortedKeys(ns)
		for n := range ns {
			if d.numericParam(m, n) {
				axes[n] = true
			}
		}
	}
	d.axes = sortedKeys(axes)
}

// renamesM reports whether parameter n and M determine each other over cs.
func renamesM(cs []*config, n string) bool {
	byVal, byM := map[string]float64{}, map[float64]string{}
	for _, c := range cs {
		if math.IsNaN(c.m) {
			return false
		}
		v := paramOf(c, n)
		if m, ok := byVal[v]; ok && m != c.m {
			return false
		}
		if w, ok := byM[c.m]; ok && w != v {
			return false
		}
		byVal[v], byM[c.m] = c.m, v
	}
	return true
}

// numericParam: every configuration of method m has a number for n.
func (d *defaultReport) numericParam(m, n string) bool {
	for _, c := range d.configs {
		if c.method != m {
			continue
		}
		if _, err := strconv.ParseFloat(paramOf(c, n), 64); err != nil {
			return false
		}
	}
	return true
}

// findSettings collects the parameters that two or more methods share with
// different values, none of which varies within a method: the settings a
// reader must know before comparing the methods.
func (d *defaultReport) findSettings() {
	d.settings = map[string]map[string][]string{}
	vals := map[string]map[string]map[string]bool{} // name → value → method
	for _, c := range d.configs {
		for n, v := range c.params {
			if sizeParams[n] || isDistinct(d.distinct[c.method], n) {
				continue
			}
			if vals[n] == nil {
				vals[n] = map[string]map[string]bool{}
			}
			if vals[n][v] == nil {
				vals[n][v] = map[string]bool{}
			}
			vals[n][v][c.method] = true
		}
	}
	for n, byVal := range vals {
		if len(byVal) < 2 || sameMethods(byVal) {
			continue // one value, or one per dataset shared by every method
		}
		d.settings[n] = map[string][]string{}
		for v, ms := range byVal {
			d.settings[n][v] = sortedKeys(ms)
		}
	}
}

// sameMethods: every value is used by the same methods.
func sameMethods(byVal map[string]map[string]bool) bool {
	var first string
	for _, ms := range byVal {
		k := strings.Join(sortedKeys(ms), ",")
		if first == "" {
			first = k
		} else if k != first {
			return false
		}
	}
	return true
}

func isDistinct(names []string, n string) bool {
	for _, x := range names {
		if x == n {
			return true
		}
	}
	return false
}

// nameSeries gives every configuration its series: its method and the
// values of the method's distinguishing parameters, in a stable order.
func (d *defaultReport) nameSeries() {
	type key struct{ method, vals string }
	idx := map[key]int{}
	var keys []key
	var labels []string
	for _, c := range d.configs {
		k := key{c.method, strings.Join(d.distinctValues(c, ""), "\x00")}
		if _, ok := idx[k]; !ok {
			idx[k] = -1
			keys = append(keys, k)
			labels = append(labels, strings.Join(append([]string{c.method}, d.distinctPairs(c, "")...), " "))
		}
	}
	order := make([]int, len(keys))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool {
		ka, kb := keys[order[a]], keys[order[b]]
		if ka.method != kb.method {
			return ka.method < kb.method
		}
		va, vb := strings.Split(ka.vals, "\x00"), strings.Split(kb.vals, "\x00")
		for i := range va {
			if i < len(vb) && va[i] != vb[i] {
				return lessValue(va[i], vb[i])
			}
		}
		return false
	})
	for rank, i := range order {
		idx[keys[i]] = rank
		d.series = append(d.series, series{method: keys[i].method, label: labels[i]})
	}
	for _, c := range d.configs {
		c.series = idx[key{c.method, strings.Join(d.distinctValues(c, ""), "\x00")}]
	}
}

// distinctValues are the values of c's distinguishing parameters (but
// except), in name order.
func (d *defaultReport) distinctValues(c *config, except string) []string {
	var out []string
	for _, n := range d.distinct[c.method] {
		if n != except {
			out = append(out, paramOf(c, n))
		}
	}
	return out
}

// distinctPairs are "name=value" of c's distinguishing parameters (but
// except); a parameter the configuration lacks is "name unset".
func (d *defaultReport) distinctPairs(c *config, except string) []string {
	var out []string
	for _, n := range d.distinct[c.method] {
		if n == except {
			continue
		}
		if v := paramOf(c, n); v == absent {
			out = append(out, n+" unset")
		} else {
			out = append(out, n+"="+v)
		}
	}
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

// columns are the parameter columns of the summary: every parameter
// distinct for some method.
func (d *defaultReport) columns() []string {
	all := map[string]bool{}
	for _, ns := range d.distinct {
		for _, n := range ns {
			all[n] = true
		}
	}
	return sortedKeys(all)
}

// row is one configuration's cells; missing values are "" (CSV) and the
// caller draws them as it likes.
type row struct {
	params []string // per column; "" when the configuration lacks it
	m      string
	runs   int
	uncon  string // unconverged runs, when known
	stats  [][3]float64
}

func (d *defaultReport) row(c *config, cols []string) row {
	r := row{runs: len(c.runs)}
	for _, n := range cols {
		v := c.params[n]
		r.params = append(r.params, v)
	}
	if !math.IsNaN(c.m) {
		r.m = strconv.FormatFloat(c.m, 'g', -1, 64)
	}
	if d.converged {
		r.uncon = strconv.Itoa(c.unconverged())
	}
	for _, m := range d.metrics {
		mean, std, n := c.meanStd(m)
		r.stats = append(r.stats, [3]float64{mean, std, float64(n)})
	}
	return r
}

// markdown is the summary table: a row per configuration, a column per
// metric; absent values are "—".
func (d *defaultReport) markdown(rc *renderCtx) string {
	var b strings.Builder
	fmt.Fprintf(&b, "### Summary (%s profile)\n\nOne row per configuration: mean ± sample standard deviation over splits and seeds (runs: how many). M is the effective number of inducing variables (%s).", rc.profile, d.sizeNote())
	if d.converged {
		b.WriteString(" Unconverged: runs stored with x_converged = 0 (x_rel_change is the relative change of the objective the convergence rule judged).")
	}
	b.WriteString("\n\n")
	cols := d.columns()
	head := append(append([]string{"dataset", "method"}, cols...), "M", "runs")
	if d.converged {
		head = append(head, "unconverged")
	}
	head = append(head, d.metrics...)
	b.WriteString("| " + strings.Join(head, " | ") + " |\n|")
	for range head {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	dash := func(s string) string {
		if s == "" {
			return "—"
		}
		return mdEscape(s)
	}
	for _, c := range d.configs {
		r := d.row(c, cols)
		cells := []string{rc.label(c.dataset), rc.label(c.method)}
		for _, v := range r.params {
			cells = append(cells, dash(v))
		}
		cells = append(cells, dash(r.m), strconv.Itoa(r.runs))
		if d.converged {
			u := r.uncon
			if u != "0" {
				u = "**" + u + "**"
			}
			cells = append(cells, u)
		}
		for _, s := range r.stats {
			switch {
			case s[2] == 0:
				cells = append(cells, "—")
			case s[2] == 1:
				cells = append(cells, fmt.Sprintf("%.4g", s[0]))
			default:
				cells = append(cells, fmt.Sprintf("%.4g ± %.2g", s[0], s[1]))
			}
		}
		b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
	}
	b.WriteString("\n")
	return b.String()
}

// csv has mean, std and n columns per metric; a missing value is an empty
// cell, so that every numeric column parses as numbers (pandas, R).
func (d *defaultReport) csv() ([]byte, error) {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	cols := d.columns()
	head := append(append([]string{"dataset", "method"}, cols...), "m", "m_source", "runs")
	if d.converged {
		head = append(head, "unconverged")
	}
	for _, m := range d.metrics {
		head = append(head, m+"_mean", m+"_std", m+"_n")
	}
	if err := w.Write(head); err != nil {
		return nil, err
	}
	for _, c := range d.configs {
		r := d.row(c, cols)
		rec := append(append([]string{c.dataset, c.method}, r.params...), r.m, strings.TrimPrefix(strings.TrimPrefix(c.mSource, "metric "), "parameter "), strconv.Itoa(r.runs))
		if d.converged {
			rec = append(rec, r.uncon)
		}
		for _, s := range r.stats {
			std := s[1]
			if s[2] < 2 {
				std = math.NaN() // one run has no spread
			}
			rec = append(rec, fmtFloat(s[0]), fmtFloat(std), strconv.Itoa(int(s[2])))
		}
		if err := w.Write(rec); err != nil {
			return nil, err
		}
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

// sizeNote says where M was read, per method: "metric num_features for
// sgpr, svgp; parameter num_features for vof-trig; none for vff".
func (d *defaultReport) sizeNote() string {
	bySource := map[string]map[string]bool{}
	for _, c := range d.configs {
		if isExact(c.method) {
			continue
		}
		src := c.mSource
		if src == "" {
			src = "not recorded"
		}
		if bySource[src] == nil {
			bySource[src] = map[string]bool{}
		}
		bySource[src][c.method] = true
	}
	var parts []string
	for _, src := range sortedKeys(bySource) {
		parts = append(parts, src+" for "+strings.Join(sortedKeys(bySource[src]), ", "))
	}
	if len(parts) == 0 {
		return "no sparse method ran"
	}
	return strings.Join(parts, "; ")
}

// writeSettings lists the parameters that differ between methods only.
func (d *defaultReport) writeSettings(b *strings.Builder, rc *renderCtx) {
	if len(d.settings) == 0 {
		return
	}
	b.WriteString("**Settings that differ between methods** (fixed within each method, so not an axis; compare the methods with them in mind):\n\n")
	for _, n := range sortedKeys(d.settings) {
		byVal := d.settings[n]
		vals := sortedKeys(byVal)
		sort.SliceStable(vals, func(i, j int) bool { return lessValue(vals[i], vals[j]) })
		var parts []string
		for _, v := range vals {
			parts = append(parts, fmt.Sprintf("%s (%s)", mdEscape(v), strings.Join(labelAll(rc, byVal[v]), ", ")))
		}
		fmt.Fprintf(b, "- %s: %s\n", n, strings.Join(parts, "; "))
	}
	b.WriteString("\n")
}

func labelAll(rc *renderCtx, vs []string) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = rc.label(v)
	}
	return out
}

// writeDefault adds the default report of grids to index (files through
// write): the figures per dataset, then the summary table as Markdown and
// CSV.
func (rc *renderCtx) writeDefault(q querier, name string, grids []string, formats []string,
	write func(string, []byte) error, index *strings.Builder) ([]string, error) {
	all, err := loadRuns(q, name, grids)
	if err != nil {
		return nil, err
	}
	var runs []*run
	for _, r := range all {
		if rc.usable(r) {
			runs = append(runs, r)
		}
	}
	index.WriteString("## Default report\n\nThis config has no [[table]] or [[figure]] sections, so the report shows every done run: ")
	if len(runs) == 0 {
		index.WriteString("there are none yet.\n\n")
		return nil, nil
	}
	d := newDefaultReport(runs)
	ref := ""
	if d.anyExact() {
		ref = " (exact GPR as a reference line)"
	}
	fmt.Fprintf(index, "per dataset, the test metrics against the number of inducing variables M%s, a Pareto front of test NLPD against training cost and the optimiser traces; then a summary table of every configuration.", ref)
	var vary []string
	for _, m := range sortedKeys(d.distinct) {
		vary = append(vary, fmt.Sprintf("%s (%s)", strings.Join(d.distinct[m], ", "), rc.label(m)))
	}
	if len(vary) > 0 {
		fmt.Fprintf(index, " Besides M, parameters that vary within a method: %s.", strings.Join(vary, "; "))
	}
	index.WriteString("\n\n")
	d.writeSettings(index, rc)
	traceRuns := d.traceRuns()
	var picked []*run
	for _, ds := range d.datasets {
		for _, tr := range traceRuns[ds] {
			picked = append(picked, tr.run)
		}
	}
	traces, err := loadTraces(q, picked)
	if err != nil {
		return nil, err
	}
	var warnings []string
	for _, ds := range d.datasets {
		fmt.Fprintf(index, "### %s\n\n", rc.label(ds))
		figs := d.datasetFigures(ds, traceRuns[ds], traces, rc)
		for _, nf := range figs {
			base := nf.name
			for _, f := range formats {
				data, err := nf.fig.Encode(f)
				if err != nil {
					return nil, fmt.Errorf("report: %s: %w", base, err)
				}
				if err := write(base+"."+f, data); err != nil {
					return nil, err
				}
			}
			rc.writeIndexFigureAt(index, "####", FigureSpec{Name: base}, nf.fig, formats)
			for _, w := range nf.fig.warnings {
				warnings = append(warnings, base+": "+w)
			}
		}
	}
	md := d.markdown(rc)
	c, err := d.csv()
	if err != nil {
		return nil, fmt.Errorf("report: summary: %w", err)
	}
	if err := write("summary.md", []byte(md)); err != nil {
		return nil, err
	}
	if err := write("summary.csv", c); err != nil {
		return nil, err
	}
	index.WriteString(md)
	index.WriteString("Files: [summary.md](summary.md), [summary.csv](summary.csv)\n\n")
	return warnings, nil
}

// sanitizeName makes a parameter or dataset name usable in a file name.
func sanitizeName(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, s)
}
