package report

import (
	"math"
	"sort"
	"strings"
)

// joinSep separates the values of a joined dimension ("method+grid").
const joinSep = " · "

// NotApplicable is one [[report.not_applicable]]: methods that cannot run on
// some datasets by design (VOF beyond 1-D, exact GPR beyond memory). Their
// table cells read "n/a" with the reason instead of "missing".
type NotApplicable struct {
	Methods  []string `toml:"methods"`  // empty: every method
	Datasets []string `toml:"datasets"` // empty: every dataset
	Grids    []string `toml:"grids"`    // empty: every grid (read from a joined dimension, e.g. method+grid)
	Reason   string   `toml:"reason"`
}

// notApplicable returns the reason a table cell is not applicable, or "".
// The method and dataset are read from the row and column values, also
// from joined dimensions such as "method+grid".
func (rc *renderCtx) notApplicable(rowDim, rv, colDim, cv string) string {
	method, dataset, grid := "", "", ""
	for _, d := range []struct{ dim, v string }{{rowDim, rv}, {colDim, cv}} {
		if g, ok := dimPart(d.dim, d.v, "grid"); ok {
			grid = g
		}
		if m, ok := dimPart(d.dim, d.v, "method"); ok {
			method = m
		}
		if ds, ok := dimPart(d.dim, d.v, "dataset"); ok {
			dataset = ds
		}
	}
	for _, na := range rc.spec.Report.NotApplicable {
		if len(na.Methods) > 0 && (method == "" || !contains(na.Methods, method)) {
			continue
		}
		if len(na.Datasets) > 0 && (dataset == "" || !contains(na.Datasets, dataset)) {
			continue
		}
		if len(na.Grids) > 0 && (grid == "" || !contains(na.Grids, grid)) {
			continue
		}
		return na.Reason
	}
	return ""
}

// dimPart extracts the value of part (e.g. "method") from a value of dim,
// which is part itself or a joined dimension containing it.
func dimPart(dim, v, part string) (string, bool) {
	parts := strings.Split(dim, "+")
	vals := strings.Split(v, joinSep)
	if len(parts) != len(vals) {
		return "", false
	}
	for i, p := range parts {
		if p == part {
			return vals[i], true
		}
	}
	return "", false
}

// meanRankTable turns a table ranked within each column (rank_across =
// "rows": the rows, e.g. methods, ranked within each dataset) into the
// table of those ranks: one row per ranked entry, one column per context,
// then the mean rank over the contexts where the entry was ranked and their
// number. Rows are sorted by mean rank (ties by name); the best mean rank is
// marked. Cells keep their footnotes ("n/a" and why, or why missing).
//
// The mean rank of an entry counts only contexts where it ran: a method
// applicable on few datasets (VOF: 1-D only) is ranked over those, which the
// column "ranked on" makes visible.
func meanRankTable(base *builtTable) *builtTable {
	t := &builtTable{
		Spec: base.Spec, Title: base.Title, Cells: map[[2]string]*cell{},
		Footnotes: append([]string(nil), base.Footnotes...), digits: 1, labels: base.labels,
		rankDirection: base.Spec.Rank,
	}
	// Shown as plain numbers: the ranks themselves, no "(n)" suffix.
	t.Spec.Aggregate, t.Spec.Rank = "mean", ""
	const meanCol, countCol = "mean rank", "ranked on"
	t.Cols = append(append([]string(nil), base.Cols...), meanCol, countCol)
	rows := append([]string(nil), base.Rows...)
	mean := func(r string) float64 {
		if m, ok := base.MeanRank[r]; ok {
			return m
		}
		return math.Inf(1)
	}
	sort.SliceStable(rows, func(i, j int) bool {
		mi, mj := mean(rows[i]), mean(rows[j])
		if mi != mj {
			return mi < mj
		}
		return rows[i] < rows[j]
	})
	t.Rows = rows
	best := math.Inf(1)
	for _, r := range rows {
		best = math.Min(best, mean(r))
	}
	for _, r := range rows {
		n := 0
		for _, c := range base.Cols {
			bc := base.cell(r, c)
			nc := &cell{Row: r, Col: c, Value: math.NaN(), Stats: summarise(nil), Note: bc.Note, NA: bc.NA}
			switch {
			case bc.Rank > 0:
				nc.Value, nc.Stats, nc.Best = bc.Rank, summarise([]float64{bc.Rank}), bc.Rank == 1
				n++
			case !math.IsNaN(bc.Value):
				nc.Note = t.footnote("not ranked: fewer than two rows have a value in this column")
			}
			t.Cells[[2]string{r, c}] = nc
		}
		m := &cell{Row: r, Col: meanCol, Value: math.NaN(), Stats: summarise(nil)}
		if v := mean(r); !math.IsInf(v, 1) {
			m.Value, m.Stats, m.Best = v, summarise([]float64{v}), v == best
		}
		t.Cells[[2]string{r, meanCol}] = m
		cnt := &cell{Row: r, Col: countCol, Value: float64(n), Stats: summarise([]float64{float64(n)}), Count: true}
		t.Cells[[2]string{r, countCol}] = cnt
	}
	return t
}
