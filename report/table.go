package report

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// cell is one aggregated table entry.
type cell struct {
	Row, Col string
	Stats    stats
	Value    float64 // the aggregate shown; NaN when absent
	Rank     float64 // 0 when not ranked
	Best     bool
	Note     int  // footnote number, 0 for none
	NA       bool // not applicable by design ([[report.not_applicable]])
	Count    bool // a count: printed as an integer
}

// paperRow is one of the paper's numbers beside ours.
type paperRow struct {
	PaperValue
	Ours      *cell
	Diff, Rel float64 // ours − paper and (ours − paper)/|paper|; NaN when ours is absent
}

// builtTable is a table ready to be written in any format.
type builtTable struct {
	Spec      TableSpec
	Title     string // with the profile label
	Rows      []string
	Cols      []string
	Cells     map[[2]string]*cell
	MeanRank  map[string]float64 // mean rank of each ranked entry, when ranked
	Footnotes []string
	Paper     []paperRow
	// rankDirection is the source table's rank ("lower"/"higher") in a
	// mean_rank table, whose own cells are ranks.
	rankDirection string
	digits        int
	labels        map[string]string
}

func (t *builtTable) cell(r, c string) *cell { return t.Cells[[2]string{r, c}] }

func (t *builtTable) label(v string) string {
	if l, ok := t.labels[v]; ok {
		return l
	}
	return v
}

// footnote returns the number of a footnote, adding it when new.
func (t *builtTable) footnote(text string) int {
	for i, f := range t.Footnotes {
		if f == text {
			return i + 1
		}
	}
	t.Footnotes = append(t.Footnotes, text)
	return len(t.Footnotes)
}

// obs is one metric value of one run.
type obs struct {
	run    *run
	metric string
	value  float64
}

func obsDim(o obs, dim string) string {
	if dim == "metric" {
		return o.metric
	}
	return dimValue(o.run, dim)
}

func buildTable(ts TableSpec, runs []*run, rc *renderCtx) *builtTable {
	t := &builtTable{
		Spec: ts, Cells: map[[2]string]*cell{}, digits: 3, labels: rc.labels,
		Title: rc.title(firstNonEmpty(ts.Title, ts.Name)),
	}
	if ts.Digits != nil {
		t.digits = *ts.Digits
	}
	metrics := ts.Metrics
	if allowed, ok := ts.filter["metric"]; ok {
		metrics = intersect(metrics, allowed)
	}
	// Observations from usable runs, and every filtered run for explaining gaps.
	var filtered []*run
	groups := map[[2]string][]obs{}
	var rowVals, colVals []string
	for _, r := range runs {
		if !ts.filter.matches(r) {
			continue
		}
		filtered = append(filtered, r)
		if !rc.usable(r) {
			continue
		}
		for _, m := range metrics {
			v, ok := r.Metrics[m]
			if !ok || math.IsNaN(v) {
				continue
			}
			o := obs{run: r, metric: m, value: v}
			k := [2]string{obsDim(o, ts.Rows), obsDim(o, ts.Columns)}
			groups[k] = append(groups[k], o)
			rowVals = append(rowVals, k[0])
			colVals = append(colVals, k[1])
		}
	}
	for _, p := range ts.Paper {
		rowVals = append(rowVals, p.Row)
		colVals = append(colVals, p.Column)
	}
	// The dimension that is "metric" always lists every requested metric.
	if ts.Rows == "metric" {
		rowVals = append(rowVals, metrics...)
	}
	if ts.Columns == "metric" {
		colVals = append(colVals, metrics...)
	}
	rowOrder, colOrder := ts.RowOrder, ts.ColumnOrder
	if ts.Rows == "metric" && len(rowOrder) == 0 {
		rowOrder = metrics
	}
	if ts.Columns == "metric" && len(colOrder) == 0 {
		colOrder = metrics
	}
	t.Rows = orderValues(rowVals, rowOrder)
	t.Cols = orderValues(colVals, colOrder)

	for _, rv := range t.Rows {
		for _, cv := range t.Cols {
			k := [2]string{rv, cv}
			os := groups[k]
			c := &cell{Row: rv, Col: cv, Value: math.NaN(), Stats: summarise(nil)}
			t.Cells[k] = c
			if len(os) == 0 {
				if why := rc.notApplicable(ts.Rows, rv, ts.Columns, cv); why != "" {
					c.NA, c.Note = true, t.footnote("not applicable: "+why)
					continue
				}
				c.Note = t.footnote(rc.explainMissing(filtered, ts.Rows, rv, ts.Columns, cv, metrics))
				continue
			}
			xs := make([]float64, len(os))
			for i, o := range os {
				xs[i] = o.value
			}
			c.Stats = summarise(xs)
			switch ts.Aggregate {
			case "last":
				latest := os[0]
				for _, o := range os[1:] {
					if o.run.Finished > latest.run.Finished {
						latest = o
					}
				}
				c.Value = latest.value
			case "mean_std":
				c.Value = c.Stats.Mean
			default:
				c.Value = c.Stats.pick(ts.Aggregate)
			}
			if note := pooledNote(os, ts); note != "" {
				c.Note = t.footnote(note)
			}
		}
	}
	if ts.Rank != "" {
		t.rank()
	}
	for _, p := range ts.Paper {
		pr := paperRow{PaperValue: p, Ours: t.cell(p.Row, p.Column), Diff: math.NaN(), Rel: math.NaN()}
		if pr.Ours != nil && !math.IsNaN(pr.Ours.Value) {
			pr.Diff = pr.Ours.Value - p.Value
			if p.Value != 0 {
				pr.Rel = pr.Diff / math.Abs(p.Value)
			}
		}
		t.Paper = append(t.Paper, pr)
	}
	if ts.Kind == "mean_rank" {
		return meanRankTable(t)
	}
	return t
}

// rank ranks the entries (columns within each row, or rows within each
// column); ties share the average rank and absent cells are not ranked.
func (t *builtTable) rank() {
	lowerBetter := t.Spec.Rank == "lower"
	outer, inner := t.Rows, t.Cols
	byCols := t.Spec.RankAcross == "columns"
	if !byCols {
		outer, inner = t.Cols, t.Rows
	}
	sum := map[string]float64{}
	count := map[string]int{}
	for _, o := range outer {
		var cs []*cell
		for _, in := range inner {
			c := t.cell(o, in)
			if !byCols {
				c = t.cell(in, o)
			}
			if !math.IsNaN(c.Value) {
				cs = append(cs, c)
			}
		}
		if len(cs) < 2 {
			continue
		}
		sort.SliceStable(cs, func(i, j int) bool {
			if lowerBetter {
				return cs[i].Value < cs[j].Value
			}
			return cs[i].Value > cs[j].Value
		})
		for i := 0; i < len(cs); {
			j := i
			for j+1 < len(cs) && cs[j+1].Value == cs[i].Value {
				j++
			}
			r := float64(i+j)/2 + 1
			for k := i; k <= j; k++ {
				cs[k].Rank = r
				cs[k].Best = i == 0
				entry := cs[k].Col
				if !byCols {
					entry = cs[k].Row
				}
				sum[entry] += r
				count[entry]++
			}
			i = j + 1
		}
	}
	if len(count) > 0 {
		t.MeanRank = map[string]float64{}
		for e, n := range count {
			t.MeanRank[e] = sum[e] / float64(n)
		}
	}
}

// pooledNote warns when a cell averages runs that differ in a parameter the
// table neither shows nor filters on (e.g. two values of num_inducing).
func pooledNote(os []obs, ts TableSpec) string {
	vals := map[string]map[string]bool{}
	for _, o := range os {
		for name, v := range o.run.Params {
			if vals[name] == nil {
				vals[name] = map[string]bool{}
			}
			vals[name][v] = true
		}
	}
	var parts []string
	names := make([]string, 0, len(vals))
	for n := range vals {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		dim := "param:" + n
		if ts.Rows == dim || ts.Columns == dim || len(ts.filter[dim]) == 1 || n == "split" || n == "seed" {
			continue
		}
		present := 0
		for _, o := range os {
			if _, ok := o.run.Params[n]; ok {
				present++
			}
		}
		if len(vals[n]) > 1 || present != len(os) {
			var vs []string
			for v := range vals[n] {
				vs = append(vs, v)
			}
			parts = append(parts, fmt.Sprintf("%s ∈ {%s}", n, strings.Join(orderValues(vs, nil), ", ")))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "pools runs that differ in " + strings.Join(parts, "; ") + " — add a [table.filter] to separate them"
}

// text of a cell: "mean ± std" or the aggregate, or "—" when absent.
func (t *builtTable) cellText(c *cell) string {
	if c.NA {
		return "n/a"
	}
	if math.IsNaN(c.Value) {
		return "—"
	}
	if c.Count {
		return strconv.FormatFloat(c.Value, 'f', 0, 64)
	}
	if t.Spec.Aggregate == "mean_std" {
		return fmtNum(c.Stats.Mean, t.digits) + " ± " + fmtNum(c.Stats.Std, t.digits)
	}
	return fmtNum(c.Value, t.digits)
}

// fmtNum prints with fixed decimals, switching to exponent form when that
// would hide the number (very large, or smaller than the last decimal).
func fmtNum(v float64, digits int) string {
	switch {
	case math.IsNaN(v):
		return "—"
	case math.IsInf(v, 0):
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	a := math.Abs(v)
	if a >= 1e6 || (a != 0 && a < 0.5*math.Pow(10, -float64(digits))) {
		return strconv.FormatFloat(v, 'e', max(digits-1, 1), 64)
	}
	return strconv.FormatFloat(v, 'f', digits, 64)
}

func fmtRank(r float64) string { return strconv.FormatFloat(r, 'f', -1, 64) }

func firstNonEmpty(xs ...string) string {
	for _, x := range xs {
		if x != "" {
			return x
		}
	}
	return ""
}

func intersect(xs, allowed []string) []string {
	var out []string
	for _, x := range xs {
		if contains(allowed, x) {
			out = append(out, x)
		}
	}
	return out
}
