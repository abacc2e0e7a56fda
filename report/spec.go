package report

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"

	"sgplab/claims"
	"sgplab/results"
)

// Spec is the report part of a paper config: what to draw from the
// results of its grids.
type Spec struct {
	File        string // where the spec was loaded from (for messages)
	Name        string // paper/grid name (top-level `name`)
	Title       string
	Description string
	Grids       []string // names of the file's [[grid]] sections, in order
	// ProfileNotes are the notes of [profiles.NAME] saying what a reduced
	// profile reduces; they head the report of that profile.
	ProfileNotes map[string]string

	Tables  []TableSpec
	Figures []FigureSpec
	Claims  []claims.Claim
	Report  Meta
}

// Meta is the [report] section.
type Meta struct {
	Title string `toml:"title"` // overrides the top-level title in index.md
	Intro string `toml:"intro"` // Markdown paragraph put under the title
	// Labels maps raw values (method, dataset, metric or parameter names) to
	// display names, e.g. sgpr = "SGPR".
	Labels map[string]string `toml:"labels"`
	// Fetch maps a dataset name to how to obtain it, for footnotes of absent
	// cells; the default is "sgplab data fetch NAME".
	Fetch map[string]string `toml:"fetch"`
	// Derive defines per-run values computed by SQL at report time (see
	// DeriveSpec).
	Derive []claims.Derive `toml:"derive"`
	// NotApplicable marks table cells of methods that cannot run on a
	// dataset (by design, not by failure): shown as "n/a" with the reason.
	NotApplicable []NotApplicable `toml:"not_applicable"`
}

// TableSpec is one [[table]].
type TableSpec struct {
	Name string `toml:"name"`
	// Kind is "cells" (default: one aggregate per cell) or "mean_rank": the
	// rows are ranked within each column by the one metric (e.g. methods
	// within each dataset), and the table shows those ranks with each row's
	// mean rank, rows sorted by it (see rank.go).
	Kind    string   `toml:"kind"`
	Title   string   `toml:"title"`
	Caption string   `toml:"caption"`
	Grid    string   `toml:"grid"`
	GridSet []string `toml:"grids"`
	Rows    string   `toml:"rows"`
	Columns string   `toml:"columns"`
	Metric  string   `toml:"metric"`
	// Metrics lists several metrics; then "metric" may be used as rows or
	// columns.
	Metrics   []string `toml:"metrics"`
	Aggregate string   `toml:"aggregate"` // mean_std (default) | mean | median | min | max | last
	// Rank is "lower" or "higher" (which is better) to rank the entries of
	// RankAcross within each row (or column).
	Rank string `toml:"rank"`
	// RankAcross is "columns" (rank the columns within each row) or "rows";
	// the default ranks whichever of rows/columns is "method", else columns.
	RankAcross  string         `toml:"rank_across"`
	Digits      *int           `toml:"digits"` // decimals; default 3
	Filter      map[string]any `toml:"filter"`
	RowOrder    []string       `toml:"row_order"`
	ColumnOrder []string       `toml:"column_order"`
	Paper       []PaperValue   `toml:"paper"`

	filter filterSet
}

// PaperValue is a number the paper reports for one cell.
type PaperValue struct {
	Row    string   `toml:"row"`
	Column string   `toml:"column"`
	Value  float64  `toml:"value"`
	Std    *float64 `toml:"std"`
	Note   string   `toml:"note"`
}

// FigureSpec is one [[figure]].
type FigureSpec struct {
	Name  string `toml:"name"`
	Title string `toml:"title"`
	Kind  string `toml:"kind"` // line | scatter | band | heatmap | trace | pareto | matrix | curve | field | terms | dots | illustration
	// Illustration names the computed drawing of an "illustration" figure
	// (a paper's conceptual figure regenerated from first principles, not
	// from runs; e.g. "iff-construction"). Such a figure has no grids.
	Illustration string   `toml:"illustration"`
	Grid         string   `toml:"grid"`
	GridSet      []string `toml:"grids"`
	X            string   `toml:"x"`
	Y            string   `toml:"y"`
	// Z is the colour of a heatmap (metric:NAME); X and Y are then its axes.
	Z         string         `toml:"z"`
	Series    string         `toml:"series"`
	Panels    string         `toml:"panels"`
	Band      string         `toml:"band"`      // std | 2std | minmax | none
	Aggregate string         `toml:"aggregate"` // mean (default) | median | min | max
	LogX      bool           `toml:"logx"`
	LogY      bool           `toml:"logy"`
	XLabel    string         `toml:"xlabel"`
	YLabel    string         `toml:"ylabel"`
	ZLabel    string         `toml:"zlabel"`
	Caption   string         `toml:"caption"`
	Paper     string         `toml:"paper"`
	Filter    map[string]any `toml:"filter"`
	Columns   int            `toml:"columns"` // panels per row; default up to 3
	Width     float64        `toml:"width"`   // cm per panel; default 12
	Height    float64        `toml:"height"`  // cm per panel; default 9
	// PanelOrder lists panel values first, in this order (others follow sorted).
	PanelOrder []string `toml:"panel_order"`
	// PanelLabels titles panels by their raw value, for this figure only
	// (before [report.labels]); "" is the panel of runs without the parameter.
	PanelLabels map[string]string `toml:"panel_labels"`
	// Artifact is the per-run array a "matrix" figure draws (e.g.
	// "kernel_matrix") or the predictive curve of a "curve" figure (default
	// "predictions", columns x0, mean, var_f, var_y).
	Artifact string `toml:"artifact"`
	// ReferenceArtifact, for "matrix": drawn as one more panel from the first
	// run (e.g. the exact kernel). For "curve": the points drawn over each
	// curve (default "train", columns x0, y; "none" draws none).
	ReferenceArtifact string `toml:"reference_artifact"`
	// ReferenceMethod, for "line" and "band": runs of this method are not a
	// series but a dashed horizontal line per panel at their mean y (e.g. the
	// exact log marginal likelihood above ELBO curves).
	ReferenceMethod string `toml:"reference_method"`
	// SeriesStyle fixes a series' colour and line style where the paper
	// does, by the series' raw value: "blue", "green dashed", "#1f77b4 dotted".
	SeriesStyle map[string]string `toml:"series_style"`
	// ZMin and ZMax fix the colour scale of a "matrix" figure (both 0: the
	// data range).
	ZMin float64 `toml:"zmin"`
	ZMax float64 `toml:"zmax"`
	// Lines, for "terms": the artifact's columns drawn against its x0, one
	// line each (labels from [report.labels], styles from series_style
	// keyed by column), e.g. the terms of a predictive variance.
	Lines []string `toml:"lines"`
	// RowOrder and SeriesOrder, for "dots": the rows (values of y, top
	// first) and series in this order (others follow sorted).
	RowOrder    []string `toml:"row_order"`
	SeriesOrder []string `toml:"series_order"`

	filter filterSet
}

// file is the whole paper config as far as this package reads it; the
// runner's keys are decoded by the runner.
type file struct {
	Name        string     `toml:"name"`
	Title       string     `toml:"title"`
	Description string     `toml:"description"`
	Grid        []gridName `toml:"grid"`
	Profiles    map[string]struct {
		Note string `toml:"note"`
	} `toml:"profiles"`
	Table  []TableSpec   `toml:"table"`
	Figure []FigureSpec  `toml:"figure"`
	Claim  []claims.Spec `toml:"claim"`
	Report Meta          `toml:"report"`
}

type gridName struct {
	Name string `toml:"name"`
}

// Sections owned by this package; unknown keys elsewhere belong to the runner.
var ownSections = map[string]reflect.Type{
	"table":  reflect.TypeOf(TableSpec{}),
	"figure": reflect.TypeOf(FigureSpec{}),
	"claim":  reflect.TypeOf(claims.Spec{}),
	"report": reflect.TypeOf(Meta{}),
}

// Load reads a paper config and decodes and validates its [[table]],
// [[figure]], [[claim]] and [report] sections.
func Load(path string) (Spec, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Spec{}, fmt.Errorf("report: %w", err)
	}
	return Parse(path, string(b))
}

// Parse is Load for a config already in memory; name is used in
// messages.
func Parse(name, src string) (Spec, error) {
	var f file
	md, err := toml.Decode(src, &f)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return Spec{}, fmt.Errorf("%s:%d: %s", name, pe.Position.Line, pe.Message)
		}
		return Spec{}, fmt.Errorf("%s: %w", name, err)
	}
	loc := newLocator(name, src)
	var errs []error
	for _, k := range md.Undecoded() {
		if len(k) < 2 {
			continue
		}
		t, ok := ownSections[k[0]]
		if !ok {
			continue
		}
		path := k.String()
		if k[0] == "table" && len(k) >= 3 && k[1] == "paper" {
			t = reflect.TypeOf(PaperValue{})
			errs = append(errs, fmt.Errorf("%s: unknown key %q in [[table.paper]]; valid keys: %s",
				loc.firstUnindexed(path), k[2], strings.Join(validKeys(t), ", ")))
			continue
		}
		if k[0] == "report" && k[1] == "derive" && len(k) >= 3 {
			errs = append(errs, fmt.Errorf("%s: unknown key %q in [[report.derive]]; valid keys: %s",
				loc.firstUnindexed(path), k[2], strings.Join(validKeys(reflect.TypeOf(claims.Derive{})), ", ")))
			continue
		}
		if isMapKey(t, k[1]) {
			continue // values inside [x.filter] / [report.labels] are checked below
		}
		errs = append(errs, fmt.Errorf("%s: unknown key %q in [%s]; valid keys: %s",
			loc.firstUnindexed(path), k[1], sectionHeader(k[0]), strings.Join(validKeys(t), ", ")))
	}
	spec := Spec{
		File: name, Name: f.Name, Title: f.Title, Description: f.Description,
		Tables: f.Table, Figures: f.Figure, Report: f.Report,
	}
	for name, p := range f.Profiles {
		if spec.ProfileNotes == nil {
			spec.ProfileNotes = map[string]string{}
		}
		spec.ProfileNotes[name] = p.Note
	}
	for _, g := range f.Grid {
		spec.Grids = append(spec.Grids, g.Name)
	}
	errs = append(errs, spec.validate(loc)...)
	errs = append(errs, located(loc, "claim", checkClaims(f.Claim))...)
	errs = append(errs, located(loc, "report.derive", claims.CheckDerived(spec.Report.Derive))...)
	// Claims compile once everything they may refer to is validated.
	var compileErrs []claims.FieldError
	spec.Claims, compileErrs = compileClaims(f.Claim, spec.Name, spec.Report.Derive)
	errs = append(errs, located(loc, "claim", compileErrs)...)
	if len(errs) > 0 {
		return Spec{}, errors.Join(errs...)
	}
	return spec, nil
}

func sectionHeader(s string) string {
	if s == "report" {
		return s
	}
	return "[" + s + "]"
}

func isMapKey(t reflect.Type, key string) bool {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Tag.Get("toml") != key {
			continue
		}
		// A map, or a list of maps (a claim's ratio = [{ … }, { … }]).
		if k := f.Type.Kind(); k == reflect.Map || k == reflect.Slice && f.Type.Elem().Kind() == reflect.Map {
			return true
		}
	}
	return false
}

func validKeys(t reflect.Type) []string {
	var keys []string
	for i := 0; i < t.NumField(); i++ {
		if k := t.Field(i).Tag.Get("toml"); k != "" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}

var (
	nameRE         = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)
	tableDims      = "method, dataset, split, seed, metric, profile, grid, param:NAME, or several joined by + (method+grid)"
	aggregates     = []string{"mean_std", "mean", "median", "min", "max", "last"}
	figAggregates  = []string{"mean", "median", "min", "max"}
	figureKinds    = []string{"line", "scatter", "band", "heatmap", "trace", "matrix", "curve", "field", "pareto", "terms", "dots", "illustration"}
	tableKinds     = []string{"cells", "mean_rank"}
	bands          = []string{"std", "2std", "minmax", "none"}
	rankDirections = []string{"lower", "higher"}
)

func (s *Spec) validate(loc *locator) []error {
	var errs []error
	bad := func(path, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", loc.at(path), fmt.Sprintf(format, args...)))
	}
	names := make(map[string]string)
	unique := func(path, kind, name string) {
		switch {
		case name == "":
			bad(path, "%s needs a name", kind)
		case !nameRE.MatchString(name):
			bad(path+".name", "%s name %q must be letters, digits, '.', '_' or '-' (it names output files)", kind, name)
		case names[name] != "":
			bad(path+".name", "%s name %q is already used by a %s", kind, name, names[name])
		default:
			names[name] = kind
		}
	}
	checkGrids := func(path, grid string, grids []string) []string {
		all := grids
		if grid != "" {
			all = append([]string{grid}, grids...)
		}
		if len(all) == 0 {
			bad(path, "give grid = \"NAME\" or grids = [...]; grids in this file: %s", list(s.Grids))
		}
		for _, g := range all {
			if len(s.Grids) > 0 && !contains(s.Grids, g) {
				bad(path+".grid", "unknown grid %q; grids in this file: %s", g, list(s.Grids))
			}
		}
		return all
	}
	for i := range s.Tables {
		t := &s.Tables[i]
		p := fmt.Sprintf("table[%d]", i)
		unique(p, "table", t.Name)
		t.GridSet = checkGrids(p, t.Grid, t.GridSet)
		t.Grid = ""
		if t.Metric != "" && len(t.Metrics) > 0 {
			bad(p+".metric", "give metric or metrics, not both")
		}
		if t.Metric != "" {
			t.Metrics = []string{t.Metric}
		}
		if len(t.Metrics) == 0 {
			bad(p, "table %q needs a metric", t.Name)
		}
		for _, m := range t.Metrics {
			if err := results.CheckMetricName(m); err != nil {
				bad(p+".metric", "%v", err)
			}
		}
		for _, d := range []struct{ key, v string }{{"rows", t.Rows}, {"columns", t.Columns}} {
			if err := checkDim(d.v, false); err != nil {
				bad(p+"."+d.key, "%s: %v", d.key, err)
			}
		}
		if t.Rows != "" && t.Rows == t.Columns {
			bad(p+".columns", "rows and columns are both %q", t.Rows)
		}
		if len(t.Metrics) > 1 && t.Rows != "metric" && t.Columns != "metric" {
			bad(p+".metrics", "several metrics need rows = \"metric\" or columns = \"metric\"")
		}
		if t.Aggregate == "" {
			t.Aggregate = "mean_std"
		} else if !contains(aggregates, t.Aggregate) {
			bad(p+".aggregate", "unknown aggregate %q; valid: %s", t.Aggregate, list(aggregates))
		}
		if t.Kind == "" {
			t.Kind = "cells"
		}
		if !contains(tableKinds, t.Kind) {
			bad(p+".kind", "unknown table kind %q; valid: %s", t.Kind, list(tableKinds))
		}
		if t.Kind == "mean_rank" {
			if t.Rank == "" {
				bad(p+".rank", "a mean_rank table needs rank = \"lower\" or \"higher\"")
			}
			if len(t.Metrics) != 1 {
				bad(p+".metric", "a mean_rank table ranks one metric")
			}
			if t.RankAcross == "columns" {
				bad(p+".rank_across", "a mean_rank table ranks its rows within each column (rank_across = \"rows\")")
			}
			t.RankAcross = "rows"
		}
		if t.Rank != "" && !contains(rankDirections, t.Rank) {
			bad(p+".rank", "unknown rank %q; valid: %s (which is better)", t.Rank, list(rankDirections))
		}
		switch t.RankAcross {
		case "":
			t.RankAcross = "columns"
			if t.Rows == "method" {
				t.RankAcross = "rows"
			}
		case "rows", "columns":
		default:
			bad(p+".rank_across", "unknown rank_across %q; valid: rows, columns", t.RankAcross)
		}
		if t.Digits != nil && (*t.Digits < 0 || *t.Digits > 12) {
			bad(p+".digits", "digits = %d is outside 0…12", *t.Digits)
		}
		var err error
		if t.filter, err = parseFilter(t.Filter); err != nil {
			bad(p+".filter", "%v", err)
		}
		for j, pv := range t.Paper {
			pp := fmt.Sprintf("%s.paper[%d]", p, j)
			if pv.Row == "" || pv.Column == "" {
				bad(pp, "a [[table.paper]] entry needs row and column")
			}
			if pv.Std != nil && *pv.Std < 0 {
				bad(pp+".std", "std %g is negative", *pv.Std)
			}
		}
	}
	for i := range s.Figures {
		f := &s.Figures[i]
		p := fmt.Sprintf("figure[%d]", i)
		unique(p, "figure", f.Name)
		if f.Kind == "illustration" {
			if _, ok := illustrations[f.Illustration]; !ok {
				bad(p+".illustration", "unknown illustration %q; valid: %s", f.Illustration, list(illustrationNames()))
			}
			if f.Grid != "" || len(f.GridSet) > 0 || f.X != "" || f.Y != "" || f.Series != "" {
				bad(p, "an illustration is computed, not drawn from runs: grid, x, y and series are not used")
			}
			continue
		} else if f.Illustration != "" {
			bad(p+".illustration", "illustration is only for kind = \"illustration\"")
		}
		f.GridSet = checkGrids(p, f.Grid, f.GridSet)
		f.Grid = ""
		if !contains(figureKinds, f.Kind) {
			bad(p+".kind", "unknown figure kind %q; valid kinds: %s", f.Kind, list(figureKinds))
		}
		switch f.Kind {
		case "trace":
			if f.X == "" {
				f.X = "iteration"
			}
			if f.Y == "" {
				f.Y = "objective"
			}
			if f.X != "iteration" && f.X != "elapsed" {
				bad(p+".x", "a trace figure has x = \"iteration\" or \"elapsed\", not %q", f.X)
			}
			if f.Y != "objective" {
				bad(p+".y", "a trace figure plots y = \"objective\", not %q", f.Y)
			}
		case "field":
			// The runner's 2-D grid artifact: colour z (default p), the
			// contour at the middle of the colour scale, training points.
			if f.Artifact == "" {
				f.Artifact = "field"
			}
			if f.Z == "" {
				f.Z = "p"
			}
			if f.ReferenceArtifact == "" {
				f.ReferenceArtifact = "train"
			}
			if f.X != "" || f.Y != "" || f.Series != "" {
				bad(p, "a field figure draws one run per panel from its artifact; x, y and series are not used (use panels and filter)")
			}
			if f.ZMin > f.ZMax {
				bad(p+".zmin", "zmin %g > zmax %g", f.ZMin, f.ZMax)
			}
		case "matrix", "curve":
			if f.Kind == "matrix" && f.Artifact == "" {
				bad(p+".artifact", "a matrix figure needs artifact = \"NAME\" (a per-run array the grid stores, e.g. kernel_matrix)")
			}
			if f.Kind == "curve" && f.Artifact == "" {
				f.Artifact = "predictions"
			}
			if f.Kind == "curve" && f.ReferenceArtifact == "" {
				f.ReferenceArtifact = "train"
			}
			if f.X != "" || f.Y != "" || f.Series != "" {
				bad(p, "a %s figure draws one run per panel from its artifact; x, y and series are not used (use panels and filter)", f.Kind)
			}
			if f.ZMin > f.ZMax {
				bad(p+".zmin", "zmin %g > zmax %g", f.ZMin, f.ZMax)
			}
		case "dots":
			// Categorical rows (y), a metric along x, one marker per series.
			if !strings.HasPrefix(f.X, "metric:") || len(f.X) == len("metric:") {
				bad(p+".x", "a dots figure needs x = \"metric:NAME\", got %q", f.X)
			}
			if err := checkDim(f.Y, true); err != nil || strings.HasPrefix(f.Y, "metric:") {
				bad(p+".y", "a dots figure needs y = a categorical dimension (param:NAME, grid, method, dataset), got %q", f.Y)
			}
		case "terms":
			// Columns of a per-run 1-D artifact as lines; the reference
			// artifact's x0 values (e.g. inducing inputs) as dashed verticals.
			if f.Artifact == "" {
				bad(p+".artifact", "a terms figure needs artifact = \"NAME\" (a per-run array with an x0 column, e.g. variance_terms)")
			}
			if len(f.Lines) == 0 {
				bad(p+".lines", "a terms figure needs lines = [\"COLUMN\", …], the artifact's columns to draw")
			}
			if f.X != "" || f.Y != "" || f.Series != "" {
				bad(p, "a terms figure draws one run per panel from its artifact; x, y and series are not used (use panels, filter and lines)")
			}
		case "heatmap":
			for _, d := range []struct{ key, v string }{{"x", f.X}, {"y", f.Y}} {
				if err := checkDim(d.v, true); err != nil {
					bad(p+"."+d.key, "%s: %v", d.key, err)
				}
			}
			if !strings.HasPrefix(f.Z, "metric:") || len(f.Z) == len("metric:") {
				bad(p+".z", "a heatmap needs z = \"metric:NAME\" (the colour), got %q", f.Z)
			}
		case "pareto":
			// Cost against quality: both axes are metrics, lower is better.
			for _, d := range []struct{ key, v string }{{"x", f.X}, {"y", f.Y}} {
				if !strings.HasPrefix(d.v, "metric:") || len(d.v) == len("metric:") {
					bad(p+"."+d.key, "a pareto figure needs %s = \"metric:NAME\" (lower is better), got %q", d.key, d.v)
				}
			}
			if f.ReferenceMethod != "" {
				bad(p+".reference_method", "a pareto figure draws every method as points; reference_method is for line and band figures")
			}
		case "line", "band", "scatter":
			if err := checkDim(f.X, true); err != nil {
				bad(p+".x", "x: %v", err)
			}
			if !strings.HasPrefix(f.Y, "metric:") || len(f.Y) == len("metric:") {
				bad(p+".y", "y must be \"metric:NAME\", got %q", f.Y)
			}
		}
		for _, d := range []struct{ key, v string }{{"x", f.X}, {"y", f.Y}, {"z", f.Z}} {
			if m, ok := strings.CutPrefix(d.v, "metric:"); ok && m != "" {
				if err := results.CheckMetricName(m); err != nil {
					bad(p+"."+d.key, "%v", err)
				}
			}
		}
		if f.Kind != "heatmap" && f.Kind != "field" && f.Z != "" {
			bad(p+".z", "z is only used by heatmaps and field figures (the column of the grid artifact)")
		}
		for _, d := range []struct{ key, v string }{{"series", f.Series}, {"panels", f.Panels}} {
			if d.v == "" {
				continue
			}
			if err := checkDim(d.v, false); err != nil {
				bad(p+"."+d.key, "%s: %v", d.key, err)
			}
		}
		if f.Band == "" {
			f.Band = "std"
		} else if !contains(bands, f.Band) {
			bad(p+".band", "unknown band %q; valid: %s", f.Band, list(bands))
		}
		if f.Aggregate == "" {
			f.Aggregate = "mean"
		} else if !contains(figAggregates, f.Aggregate) {
			bad(p+".aggregate", "unknown aggregate %q; valid: %s", f.Aggregate, list(figAggregates))
		}
		if f.Columns < 0 || f.Width < 0 || f.Height < 0 {
			bad(p, "columns, width and height must be positive")
		}
		var err error
		if f.filter, err = parseFilter(f.Filter); err != nil {
			bad(p+".filter", "%v", err)
		}
		if _, err := parseSeriesStyles(f.SeriesStyle); err != nil {
			bad(p+".series_style", "%v", err)
		}
	}
	return errs
}

// checkClaims checks every claim (setting default kinds); the keys of the
// problems are "[i]" and the claim's key.
func checkClaims(specs []claims.Spec) []claims.FieldError {
	var errs []claims.FieldError
	for i := range specs {
		errs = append(errs, indexed(i, specs[i].Check())...)
	}
	return errs
}

// compileClaims compiles the checked claims of config experiment, which
// may use its derived values; the problems are keyed as by checkClaims.
func compileClaims(specs []claims.Spec, experiment string, derived []claims.Derive) ([]claims.Claim, []claims.FieldError) {
	var (
		out  []claims.Claim
		errs []claims.FieldError
	)
	for i, s := range specs {
		c, fe := claims.Compile(s, experiment, derived)
		errs = append(errs, indexed(i, fe)...)
		out = append(out, c)
	}
	return out, errs
}

func indexed(i int, fes []claims.FieldError) []claims.FieldError {
	for j := range fes {
		fes[j].Key = fmt.Sprintf("[%d]%s", i, fes[j].Key)
	}
	return fes
}

// located prefixes each error with the file:line of its key below section.
func located(loc *locator, section string, fes []claims.FieldError) []error {
	var errs []error
	for _, e := range fes {
		errs = append(errs, fmt.Errorf("%s: %s", loc.at(section+e.Key), e.Msg))
	}
	return errs
}

// checkDim validates a grouping dimension; numeric allows metric:NAME,
// used on figure axes.
func checkDim(d string, numeric bool) error {
	if parts := strings.Split(d, "+"); len(parts) > 1 {
		for _, part := range parts {
			if part == "metric" || strings.HasPrefix(part, "metric:") {
				return fmt.Errorf("dimension %q: a metric cannot be joined with +", d)
			}
			if err := checkDim(part, false); err != nil {
				return fmt.Errorf("dimension %q: %w", d, err)
			}
		}
		return nil
	}
	switch {
	case d == "method", d == "dataset", d == "split", d == "seed", d == "profile", d == "grid":
		return nil
	case d == "metric" && !numeric:
		return nil
	case strings.HasPrefix(d, "param:") && len(d) > len("param:"):
		return nil
	case numeric && strings.HasPrefix(d, "metric:") && len(d) > len("metric:"):
		return nil
	case d == "":
		return errors.New("missing")
	}
	valid := tableDims
	if numeric {
		valid = "method, dataset, split, seed, profile, grid, param:NAME, metric:NAME"
	}
	return fmt.Errorf("unknown dimension %q; valid: %s", d, valid)
}

// filterSet restricts runs: dimension → allowed values.
type filterSet map[string][]string

func parseFilter(m map[string]any) (filterSet, error) {
	if len(m) == 0 {
		return nil, nil
	}
	fs := make(filterSet)
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		dim := k
		switch k {
		case "method", "dataset", "split", "seed", "metric", "profile":
		default:
			if !strings.HasPrefix(k, "param:") {
				dim = "param:" + k
			}
		}
		var vals []string
		switch v := m[k].(type) {
		case []any:
			for _, x := range v {
				s, err := scalarString(x)
				if err != nil {
					return nil, fmt.Errorf("filter %s: %v", k, err)
				}
				vals = append(vals, s)
			}
		default:
			s, err := scalarString(v)
			if err != nil {
				return nil, fmt.Errorf("filter %s: %v", k, err)
			}
			vals = []string{s}
		}
		fs[dim] = vals
	}
	return fs, nil
}

func scalarString(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64), nil
	case bool:
		return strconv.FormatBool(x), nil
	}
	return "", fmt.Errorf("value %v (%T) is not a string, number or boolean", v, v)
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func list(xs []string) string {
	if len(xs) == 0 {
		return "(none)"
	}
	return strings.Join(xs, ", ")
}
