package gridlang

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
	"sgplab/internal/anyconv"
	"sgplab/internal/suggest"
	"sgplab/internal/tomlline"
)

// Error is a mistake in the language's constructs, at the key path in the
// source file where it was written ("grid[2].extends").
type Error struct {
	Key string
	Msg string
}

func (e Error) Error() string { return e.Key + ": " + e.Msg }

// Result is a grid file with its constructs expanded.
type Result struct {
	// Raw is the file as plain grids: no template, every [[grid]] one grid
	// of the runner (a matrix's grids in order), extends, matrix, when and
	// let gone, expressions replaced by their values, and every profile's
	// grids table keyed by grid name (glob entries merged into the grids
	// they match).
	Raw map[string]any
	// Origin maps the key paths of Raw that the expansion made or moved
	// ("grid[5].params.eps") to where the source defines them
	// ("grid[2].let.ew"); Source looks them up.
	Origin map[string]string
	// Warnings are doubtful constructs that still expand (a template no
	// grid extends, a when rule that matches no combination).
	Warnings []Error
}

// Source returns the source key path of a key path of Raw: the origin of
// its nearest ancestor the expansion recorded, with the rest appended.
func (r *Result) Source(p string) string { return sourceOf(r.Origin, p) }

// sourceOf is the origin of p's nearest ancestor in origin (p itself
// included), with the rest of p appended; p when none is recorded.
func sourceOf(origin map[string]string, p string) string {
	rest := ""
	for q := p; q != ""; {
		if s, ok := origin[q]; ok {
			return s + rest
		}
		i := strings.LastIndexAny(q, ".[")
		if i < 0 {
			break
		}
		rest = q[i:] + rest
		q = q[:i]
	}
	return p
}

// Keys of a grid (or template) that the expansion consumes.
const (
	keyExtends = "extends"
	keyMatrix  = "matrix"
	keyWhen    = "when"
	keyLet     = "let"
)

// Expand expands the constructs of a decoded grid file. md is the
// decoder's metadata, whose key order fixes the order of a matrix's
// combinations. The input is not modified.
func Expand(raw map[string]any, md toml.MetaData) (*Result, []Error) {
	x := &expansion{
		raw:       raw,
		order:     keyOrder(raw, md.Keys()),
		res:       &Result{Raw: maps.Clone(raw), Origin: map[string]string{}},
		templates: map[string]*draft{},
		used:      map[string]bool{},
	}
	x.readTemplates()
	x.grids()
	x.sections()
	x.profiles()
	delete(x.res.Raw, "template")
	for _, name := range sortedKeys(x.templateSrc) {
		if !x.used[name] {
			x.res.Warnings = append(x.res.Warnings, Error{"template." + name, "template " + strconv.Quote(name) + " is not extended by any grid or report section"})
		}
	}
	return x.res, x.errs
}

type expansion struct {
	raw         map[string]any
	order       map[string][]string
	res         *Result
	errs        []Error
	templateSrc map[string]map[string]any
	templates   map[string]*draft // resolved, extends applied
	resolving   []string          // the extends chain being resolved
	used        map[string]bool
	names       []string // the expanded grids' names, in order
}

func (x *expansion) errorf(key, format string, args ...any) {
	x.errs = append(x.errs, Error{key, fmt.Sprintf(format, args...)})
}

func (x *expansion) readTemplates() {
	v, ok := x.raw["template"]
	if !ok {
		return
	}
	t, ok := v.(map[string]any)
	if !ok {
		x.errorf("template", "must be a table of named templates ([template.NAME]), got %s", typeName(v))
		return
	}
	x.templateSrc = map[string]map[string]any{}
	for name, tv := range t {
		tt, ok := tv.(map[string]any)
		if !ok {
			x.errorf("template."+name, "must be a table of grid keys, got %s", typeName(tv))
			continue
		}
		x.templateSrc[name] = tt
	}
}

// extendsOf reads an extends value: one template name or a list of them.
func (x *expansion) extendsOf(key string, v any) []string {
	switch e := v.(type) {
	case nil:
		return nil
	case string:
		return []string{e}
	case []any:
		var out []string
		for _, n := range e {
			s, ok := n.(string)
			if !ok {
				x.errorf(key, "want a template name or a list of them, got %s", typeName(n))
				return nil
			}
			out = append(out, s)
		}
		return out
	}
	x.errorf(key, "want a template name or a list of them, got %s", typeName(v))
	return nil
}

// template returns the named template with its own extends applied, nil
// (after an error at key) when it does not exist or extends itself.
func (x *expansion) template(key, name string) *draft {
	if d, ok := x.templates[name]; ok {
		return d
	}
	src, ok := x.templateSrc[name]
	if !ok {
		valid := sortedKeys(x.templateSrc)
		if len(valid) == 0 {
			x.errorf(key, "no template %q: the file defines no [template.NAME]", name)
		} else {
			x.errorf(key, "no template %q%s; templates: %s", name, suggest.Hint(name, valid), strings.Join(valid, ", "))
		}
		return nil
	}
	for i, r := range x.resolving {
		if r == name {
			x.errorf("template."+name+"."+keyExtends, "cyclic extends: %s", strings.Join(append(x.resolving[i:], name), " → "))
			return nil
		}
	}
	x.used[name] = true
	x.resolving = append(x.resolving, name)
	defer func() { x.resolving = x.resolving[:len(x.resolving)-1] }()
	d := newDraft()
	at := "template." + name
	for _, parent := range x.extendsOf(at+"."+keyExtends, src[keyExtends]) {
		p := x.template(at+"."+keyExtends, parent)
		if p == nil {
			return nil
		}
		d.mergeDraft(p)
	}
	d.merge(src, at, keyExtends)
	x.templates[name] = d
	return d
}

// extended is the table g (written at key) laid over the templates it
// extends; false after an error.
func (x *expansion) extended(key string, g map[string]any) (*draft, bool) {
	d := newDraft()
	good := true
	for _, name := range x.extendsOf(key+"."+keyExtends, g[keyExtends]) {
		t := x.template(key+"."+keyExtends, name)
		if t == nil {
			good = false
			continue
		}
		d.mergeDraft(t)
	}
	d.merge(g, key, keyExtends)
	return d, good
}

// grids expands every [[grid]].
func (x *expansion) grids() {
	gs, ok := x.raw["grid"].([]map[string]any)
	if !ok {
		return // the runner reports a missing or malformed grid array
	}
	var out []map[string]any
	for j, g := range gs {
		key := fmt.Sprintf("grid[%d]", j)
		d, ok := x.extended(key, g)
		if !ok {
			continue
		}
		for _, eg := range x.expandGrid(key, d) {
			out = append(out, x.place("grid", len(out), key, eg))
			if n, ok := eg.t["name"].(string); ok {
				x.names = append(x.names, n)
			}
		}
	}
	x.res.Raw["grid"] = out
}

// place records the origins of the expanded table e, element i of the
// array at path, made from the source table at key, and returns it.
func (x *expansion) place(path string, i int, key string, e *draft) map[string]any {
	at := fmt.Sprintf("%s[%d]", path, i)
	x.res.Origin[at] = key
	for rel, src := range e.origin {
		x.res.Origin[at+"."+rel] = src
	}
	return e.t
}

// reportSections are the arrays of report sections that, as grids, may
// extend templates, and have a matrix (one section per combination, in
// order), when rules and let values; their expressions are evaluated
// only in a section with a matrix or a let table, so that text without
// them keeps its braces.
var reportSections = [][]string{{"claim"}, {"figure"}, {"table"}, {"report", "derive"}}

// sections expands every report section.
func (x *expansion) sections() {
	for _, path := range reportSections {
		parent, src := x.res.Raw, x.raw
		for _, p := range path[:len(path)-1] {
			t, ok := src[p].(map[string]any)
			if !ok {
				parent = nil
				break
			}
			src = t
			c := maps.Clone(t) // the input is not modified
			parent[p] = c
			parent = c
		}
		last := path[len(path)-1]
		if parent == nil {
			continue
		}
		ss, ok := src[last].([]map[string]any)
		if !ok {
			continue // the report reports a malformed section
		}
		at := strings.Join(path, ".")
		var out []map[string]any
		for j, s := range ss {
			key := fmt.Sprintf("%s[%d]", at, j)
			d, ok := x.extended(key, s)
			if !ok {
				continue
			}
			combos, _, ok := x.combinations(key, d, false)
			if !ok {
				continue
			}
			for _, c := range combos {
				out = append(out, x.place(at, len(out), key, c))
			}
		}
		parent[last] = out
	}
}

func union(a, b map[string]any) map[string]any {
	out := maps.Clone(a)
	if out == nil {
		out = map[string]any{}
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

func deepClone(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = deepClone(e)
		}
		return out
	case []any:
		// An inline array of tables (exclude = [{ … }, { … }]) is an
		// array of tables, as [[grid.exclude]] decodes.
		tables := make([]map[string]any, 0, len(x))
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = deepClone(e)
			if t, ok := out[i].(map[string]any); ok {
				tables = append(tables, t)
			}
		}
		if len(x) > 0 && len(tables) == len(x) {
			return tables
		}
		return out
	case []map[string]any:
		out := make([]map[string]any, len(x))
		for i, e := range x {
			out[i] = deepClone(e).(map[string]any)
		}
		return out
	}
	return v
}

func toList(v any) []any {
	if l, ok := v.([]any); ok {
		return l
	}
	return []any{v}
}

func isList(v any) bool {
	_, ok := v.([]any)
	return ok
}

func asArray(v any) []map[string]any {
	a, _ := v.([]map[string]any)
	return a
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// typeName describes a decoded value for an error message.
func typeName(v any) string { return anyconv.TypeName(v) }

// expandedPrefixes are the key paths of the source that the expansion
// replaces: their lines are those of the expanded keys' sources.
var expandedPrefixes = []string{"grid[", "template.", "claim[", "figure[", "table[", "report.derive["}

// Lines indexes the key paths of Raw at the lines of the source keys they
// came from (src indexes the source), so that every error about an
// expanded grid or report section points at what to edit. Keys the
// expansion leaves alone keep their own lines.
func (r *Result) Lines(src tomlline.Index) tomlline.Index {
	ix := tomlline.Index{}
	for k, n := range src {
		if !slices.ContainsFunc(expandedPrefixes, func(p string) bool { return strings.HasPrefix(k, p) }) {
			ix[k] = n
		}
	}
	var walk func(p string, v any)
	walk = func(p string, v any) {
		if n := src.Line(r.Source(p)); n > 0 {
			ix[p] = n
		}
		switch t := v.(type) {
		case map[string]any:
			for k, e := range t {
				walk(p+"."+k, e)
			}
		case []map[string]any:
			for i, e := range t {
				walk(fmt.Sprintf("%s[%d]", p, i), e)
			}
		}
	}
	for _, k := range []string{"grid", "claim", "figure", "table"} {
		for i, g := range asArray(r.Raw[k]) {
			walk(fmt.Sprintf("%s[%d]", k, i), g)
		}
	}
	if rep, ok := r.Raw["report"].(map[string]any); ok {
		for i, d := range asArray(rep["derive"]) {
			walk(fmt.Sprintf("report.derive[%d]", i), d)
		}
	}
	if ps, ok := r.Raw["profiles"].(map[string]any); ok {
		walk("profiles", ps)
	}
	return ix
}

// Decode decodes the expanded file into v as the TOML decoder decodes a
// file that writes it out: the top-level keys of Raw given (all when none)
// are encoded and decoded again, so that v cannot tell an expanded section
// from a written one. It returns the written-out text with the decoder's
// metadata (its Undecoded keys are those of the text, without indices).
func (r *Result) Decode(v any, keys ...string) (string, toml.MetaData, error) {
	keep := r.Raw
	if len(keys) > 0 {
		keep = map[string]any{}
		for _, k := range keys {
			if e, ok := r.Raw[k]; ok {
				keep[k] = e
			}
		}
	}
	var buf bytes.Buffer
	if err := toml.NewEncoder(&buf).Encode(keep); err != nil {
		return "", toml.MetaData{}, fmt.Errorf("writing out the expanded file: %w", err)
	}
	md, err := toml.Decode(buf.String(), v)
	return buf.String(), md, err
}
