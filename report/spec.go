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
	"sgplab/internal/gridlang"
	"sgplab/internal/tomlline"
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
	// PaperColumns and PaperRows are the paper's numbers as its table
	// prints them: one row per line, ["row", cell, cell, …], a cell being
	// a number, "value ± std" (then "; note" if any) or "" (no number).
	// They add to Paper after its [[table.paper]] cells.
	PaperColumns []string `toml:"paper_columns"`
	PaperRows    [][]any  `toml:"paper_rows"`
	// PaperOrder is the order the "paper vs ours" listing takes the
	// rows' cells in: "rows" (row by row, the default) or "columns".
	PaperOrder string `toml:"paper_order"`

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
	Name        string `toml:"name"`
	Title       string `toml:"title"`
	Description string `toml:"description"`
	Profiles    map[string]struct {
		Note string `toml:"note"`
	} `toml:"profiles"`
	Table  []TableSpec   `toml:"table"`
	Figure []FigureSpec  `toml:"figure"`
	Claim  []claims.Spec `toml:"claim"`
	Report Meta          `toml:"report"`
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

// decodeExpanded decodes the expanded file's report sections as the TOML
// decoder decodes them from a file that writes them out. A value of the
// wrong type is reported at the line of its source key.
func decodeExpanded(lang *gridlang.Result, loc *locator) (file, toml.MetaData, error) {
	var f file
	text, md, err := lang.Decode(&f, "name", "title", "description", "profiles", "table", "figure", "claim", "report")
	if err == nil {
		return f, md, nil
	}
	// A value of the wrong type: the key on the written-out line is the
	// expanded key path.
	if m := typeErrRE.FindStringSubmatch(err.Error()); m != nil {
		line, _ := strconv.Atoi(m[1])
		path := ""
		for k, n := range tomlline.Scan(text) {
			if n == line && len(k) > len(path) {
				path = k
			}
		}
		return file{}, toml.MetaData{}, fmt.Errorf("%s: %s: %s", loc.at(path), path, m[2])
	}
	return file{}, toml.MetaData{}, fmt.Errorf("%s: %w", loc.file, err)
}

// typeErrRE reads the TOML decoder's error for a value of the wrong type.
var typeErrRE = regexp.MustCompile(`^toml: line (\d+) \(last key "[^"]*"\): (.*)$`)

// Parse is Load for a config already in memory; name is used in
// messages.
func Parse(name, src string) (Spec, error) {
	var raw map[string]any
	md, err := toml.Decode(src, &raw)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return Spec{}, fmt.Errorf("%s:%d: %s", name, pe.Position.Line, pe.Message)
		}
		return Spec{}, fmt.Errorf("%s: %w", name, err)
	}
	// Templates, matrices and derived values of grids and report sections
	// expand first: the sections decode from the file as written out, and
	// every error points at the source key (the locator maps the expanded
	// key paths to their sources' lines).
	srcLines := tomlline.Scan(src)
	lang, lerrs := gridlang.Expand(raw, md)
	if len(lerrs) > 0 {
		srcLoc := &locator{file: name, ix: srcLines}
		var errs []error
		for _, e := range lerrs {
			errs = append(errs, fmt.Errorf("%s: %s: %s", srcLoc.at(e.Key), e.Key, e.Msg))
		}
		return Spec{}, errors.Join(errs...)
	}
	loc := &locator{file: name, ix: lang.Lines(srcLines)}
	f, md, err := decodeExpanded(lang, loc)
	if err != nil {
		return Spec{}, err
	}
	var errs []error
	seen := map[string]bool{} // a template's unknown key comes once per section that extends it
	for _, k := range md.Undecoded() {
		if len(k) < 2 || seen[k.String()] {
			continue
		}
		seen[k.String()] = true
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
	// The grids are those the runner runs (a matrix names one grid per
	// combination).
	gs, _ := lang.Raw["grid"].([]map[string]any)
	for _, g := range gs {
		if n, ok := g["name"].(string); ok {
			spec.Grids = append(spec.Grids, n)
		}
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
	tableKinds     = []string{"cells", "mean_rank"}
	bands          = []string{"std", "2std", "minmax", "none"}
	rankDirections = []string{"lower", "higher"}
)

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

// locator says where a key of the config is written: "file:line", or the
// file alone when the key is not written (a default, a missing key).
type locator struct {
	file string
	ix   tomlline.Index
}

func (l *locator) format(line int) string {
	if line == 0 {
		return l.file
	}
	return l.file + ":" + strconv.Itoa(line)
}

// at is the place of the key path or of its nearest written ancestor.
func (l *locator) at(path string) string { return l.format(l.ix.Line(path)) }

// firstUnindexed is the first place of a key path given without element
// indices, as the TOML decoder reports undecoded keys.
func (l *locator) firstUnindexed(path string) string { return l.format(l.ix.FirstUnindexed(path)) }
