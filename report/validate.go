package report

import (
	"fmt"
	"strings"

	"sgplab/figures"
	"sgplab/results"
)

// validator collects the problems of a Spec, each at the file:line of its
// key, and the names of tables and figures seen so far (they name output
// files, so they must be unique).
type validator struct {
	loc   *locator
	grids []string // the config's [[grid]] names
	names map[string]string
	errs  []error
}

// bad records a problem at key path.
func (v *validator) bad(path, format string, args ...any) {
	v.errs = append(v.errs, fmt.Errorf("%s: %s", v.loc.at(path), fmt.Sprintf(format, args...)))
}

// at is bad for the keys below path (".x", "" for path itself).
func (v *validator) at(path string) badFunc {
	return func(key, format string, args ...any) { v.bad(path+key, format, args...) }
}

// badFunc records a problem at a key below the table or figure checked.
type badFunc func(key, format string, args ...any)

// unique checks the name of a table or figure.
func (v *validator) unique(path, kind, name string) {
	switch {
	case name == "":
		v.bad(path, "%s needs a name", kind)
	case !nameRE.MatchString(name):
		v.bad(path+".name", "%s name %q must be letters, digits, '.', '_' or '-' (it names output files)", kind, name)
	case v.names[name] != "":
		v.bad(path+".name", "%s name %q is already used by a %s", kind, name, v.names[name])
	default:
		v.names[name] = kind
	}
}

// checkGrids returns grid and grids together, each a grid of the config.
func (v *validator) checkGrids(path, grid string, grids []string) []string {
	all := grids
	if grid != "" {
		all = append([]string{grid}, grids...)
	}
	if len(all) == 0 {
		v.bad(path, "give grid = \"NAME\" or grids = [...]; grids in this file: %s", list(v.grids))
	}
	for _, g := range all {
		if len(v.grids) > 0 && !contains(v.grids, g) {
			v.bad(path+".grid", "unknown grid %q; grids in this file: %s", g, list(v.grids))
		}
	}
	return all
}

// validate checks the tables and figures and fills in their defaults.
func (s *Spec) validate(loc *locator) []error {
	v := &validator{loc: loc, grids: s.Grids, names: map[string]string{}}
	for i := range s.Tables {
		v.table(fmt.Sprintf("table[%d]", i), &s.Tables[i])
	}
	for i := range s.Figures {
		v.figure(fmt.Sprintf("figure[%d]", i), &s.Figures[i])
	}
	return v.errs
}

func (v *validator) table(p string, t *TableSpec) {
	bad := v.at(p)
	v.unique(p, "table", t.Name)
	t.GridSet = v.checkGrids(p, t.Grid, t.GridSet)
	t.Grid = ""
	if t.Metric != "" && len(t.Metrics) > 0 {
		bad(".metric", "give metric or metrics, not both")
	}
	if t.Metric != "" {
		t.Metrics = []string{t.Metric}
	}
	if len(t.Metrics) == 0 {
		bad("", "table %q needs a metric", t.Name)
	}
	for _, m := range t.Metrics {
		if err := results.CheckMetricName(m); err != nil {
			bad(".metric", "%v", err)
		}
	}
	for _, d := range []struct{ key, v string }{{"rows", t.Rows}, {"columns", t.Columns}} {
		if err := checkDim(d.v, false); err != nil {
			bad("."+d.key, "%s: %v", d.key, err)
		}
	}
	if t.Rows != "" && t.Rows == t.Columns {
		bad(".columns", "rows and columns are both %q", t.Rows)
	}
	if len(t.Metrics) > 1 && t.Rows != "metric" && t.Columns != "metric" {
		bad(".metrics", "several metrics need rows = \"metric\" or columns = \"metric\"")
	}
	if t.Aggregate == "" {
		t.Aggregate = "mean_std"
	} else if !contains(aggregates, t.Aggregate) {
		bad(".aggregate", "unknown aggregate %q; valid: %s", t.Aggregate, list(aggregates))
	}
	if t.Kind == "" {
		t.Kind = "cells"
	}
	if !contains(tableKinds, t.Kind) {
		bad(".kind", "unknown table kind %q; valid: %s", t.Kind, list(tableKinds))
	}
	if t.Kind == "mean_rank" {
		if t.Rank == "" {
			bad(".rank", "a mean_rank table needs rank = \"lower\" or \"higher\"")
		}
		if len(t.Metrics) != 1 {
			bad(".metric", "a mean_rank table ranks one metric")
		}
		if t.RankAcross == "columns" {
			bad(".rank_across", "a mean_rank table ranks its rows within each column (rank_across = \"rows\")")
		}
		t.RankAcross = "rows"
	}
	if t.Rank != "" && !contains(rankDirections, t.Rank) {
		bad(".rank", "unknown rank %q; valid: %s (which is better)", t.Rank, list(rankDirections))
	}
	switch t.RankAcross {
	case "":
		t.RankAcross = "columns"
		if t.Rows == "method" {
			t.RankAcross = "rows"
		}
	case "rows", "columns":
	default:
		bad(".rank_across", "unknown rank_across %q; valid: rows, columns", t.RankAcross)
	}
	if t.Digits != nil && (*t.Digits < 0 || *t.Digits > 12) {
		bad(".digits", "digits = %d is outside 0…12", *t.Digits)
	}
	var err error
	if t.filter, err = parseFilter(t.Filter); err != nil {
		bad(".filter", "%v", err)
	}
	for j, pv := range t.Paper {
		bad := v.at(fmt.Sprintf("%s.paper[%d]", p, j))
		if pv.Row == "" || pv.Column == "" {
			bad("", "a [[table.paper]] entry needs row and column")
		}
		if pv.Std != nil && *pv.Std < 0 {
			bad(".std", "std %g is negative", *pv.Std)
		}
	}
}

// figure checks a figure: what its kind requires (figureKind.check), then
// what every figure drawn from runs shares.
func (v *validator) figure(p string, f *FigureSpec) {
	bad := v.at(p)
	v.unique(p, "figure", f.Name)
	kind, known := figureKinds[f.Kind]
	if known && kind.computed {
		kind.check(f, bad)
		return
	}
	if f.Illustration != "" {
		bad(".illustration", "illustration is only for kind = \"illustration\"")
	}
	f.GridSet = v.checkGrids(p, f.Grid, f.GridSet)
	f.Grid = ""
	if !known {
		bad(".kind", "unknown figure kind %q; valid kinds: %s", f.Kind, list(figureKindNames))
	} else if kind.check != nil {
		kind.check(f, bad)
	}
	for _, d := range []struct{ key, v string }{{"x", f.X}, {"y", f.Y}, {"z", f.Z}} {
		if m, ok := strings.CutPrefix(d.v, "metric:"); ok && m != "" {
			if err := results.CheckMetricName(m); err != nil {
				bad("."+d.key, "%v", err)
			}
		}
	}
	if !kind.usesZ && f.Z != "" {
		bad(".z", "z is only used by heatmaps and field figures (the column of the grid artifact)")
	}
	for _, d := range []struct{ key, v string }{{"series", f.Series}, {"panels", f.Panels}} {
		if d.v == "" {
			continue
		}
		if err := checkDim(d.v, false); err != nil {
			bad("."+d.key, "%s: %v", d.key, err)
		}
	}
	if f.Band == "" {
		f.Band = "std"
	} else if !contains(bands, f.Band) {
		bad(".band", "unknown band %q; valid: %s", f.Band, list(bands))
	}
	if f.Aggregate == "" {
		f.Aggregate = "mean"
	} else if !contains(figAggregates, f.Aggregate) {
		bad(".aggregate", "unknown aggregate %q; valid: %s", f.Aggregate, list(figAggregates))
	}
	if f.Columns < 0 || f.Width < 0 || f.Height < 0 {
		bad("", "columns, width and height must be positive")
	}
	var err error
	if f.filter, err = parseFilter(f.Filter); err != nil {
		bad(".filter", "%v", err)
	}
	if _, err := figures.ParseStyles(f.SeriesStyle); err != nil {
		bad(".series_style", "%v", err)
	}
}
