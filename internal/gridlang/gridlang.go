package gridlang

import (
	"fmt"
	"maps"
	"path"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"

	"sgplab/internal/suggest"
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
func (r *Result) Source(p string) string {
	rest := ""
	for q := p; q != ""; {
		if s, ok := r.Origin[q]; ok {
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
	x.profiles()
	delete(x.res.Raw, "template")
	for _, name := range sortedKeys(x.templateSrc) {
		if !x.used[name] {
			x.res.Warnings = append(x.res.Warnings, Error{"template." + name, "template " + strconv.Quote(name) + " is not extended by any grid"})
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

// draft is a table being assembled from several sources, with the source
// path of every key set (relative paths: "params.eps"; a key without an
// entry comes from its nearest ancestor's source).
type draft struct {
	t      map[string]any
	origin map[string]string
}

func newDraft() *draft { return &draft{t: map[string]any{}, origin: map[string]string{}} }

func (d *draft) clone() *draft {
	return &draft{t: deepClone(d.t).(map[string]any), origin: maps.Clone(d.origin)}
}

// merge lays src (defined at source path at) over d: tables merge key by
// key, any other value (lists, arrays of tables too) replaces d's. Keys
// in skip are left out at the top level.
func (d *draft) merge(src map[string]any, at string, skip ...string) {
	d.mergeAt(d.t, "", src, func(rel string) string { return join(at, rel) }, skip)
}

// mergeDraft lays another draft over d, each key keeping its source.
func (d *draft) mergeDraft(o *draft) {
	d.mergeAt(d.t, "", o.t, o.source, nil)
}

func (d *draft) mergeAt(dst map[string]any, rel string, src map[string]any, srcOf func(string) string, skip []string) {
	for _, k := range sortedKeys(src) {
		if rel == "" && contains(skip, k) {
			continue
		}
		v := src[k]
		r := join(rel, k)
		if sub, ok := v.(map[string]any); ok {
			if have, ok := dst[k].(map[string]any); ok {
				d.mergeAt(have, r, sub, srcOf, nil)
				continue
			}
		}
		// When rules accumulate: a grid's rules apply after those of the
		// templates it extends, each keeping its source.
		if add, ok := deepClone(v).([]map[string]any); ok && rel == "" && k == keyWhen {
			have, _ := dst[k].([]map[string]any)
			if len(have) == 0 {
				d.origin[keyWhen] = srcOf(keyWhen)
			}
			for i := range add {
				d.origin[fmt.Sprintf("%s[%d]", keyWhen, len(have)+i)] = srcOf(fmt.Sprintf("%s[%d]", keyWhen, i))
			}
			dst[k] = append(have, add...)
			continue
		}
		for o := range d.origin {
			if strings.HasPrefix(o, r+".") || strings.HasPrefix(o, r+"[") {
				delete(d.origin, o)
			}
		}
		dst[k] = deepClone(v)
		d.origin[r] = srcOf(r)
		// A table taken whole keeps the sources of its own keys.
		if sub, ok := v.(map[string]any); ok {
			d.recordAll(sub, r, srcOf)
		}
	}
}

func (d *draft) recordAll(t map[string]any, rel string, srcOf func(string) string) {
	for k, v := range t {
		r := join(rel, k)
		if s := srcOf(r); s != join(srcOf(rel), k) {
			d.origin[r] = s
		}
		if sub, ok := v.(map[string]any); ok {
			d.recordAll(sub, r, srcOf)
		}
	}
}

// source is the source path of the relative key path p.
func (d *draft) source(p string) string {
	rest := ""
	for q := p; q != ""; {
		if s, ok := d.origin[q]; ok {
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

// grids expands every [[grid]].
func (x *expansion) grids() {
	gs, ok := x.raw["grid"].([]map[string]any)
	if !ok {
		return // the runner reports a missing or malformed grid array
	}
	var out []map[string]any
	for j, g := range gs {
		key := fmt.Sprintf("grid[%d]", j)
		d := newDraft()
		failed := false
		for _, name := range x.extendsOf(key+"."+keyExtends, g[keyExtends]) {
			t := x.template(key+"."+keyExtends, name)
			if t == nil {
				failed = true
				continue
			}
			d.mergeDraft(t)
		}
		d.merge(g, key, keyExtends)
		if failed {
			continue
		}
		for _, eg := range x.expandGrid(key, d) {
			i := len(out)
			out = append(out, eg.t)
			x.res.Origin[fmt.Sprintf("grid[%d]", i)] = key
			for rel, src := range eg.origin {
				x.res.Origin[fmt.Sprintf("grid[%d].%s", i, rel)] = src
			}
			if n, ok := eg.t["name"].(string); ok {
				x.names = append(x.names, n)
			}
		}
	}
	x.res.Raw["grid"] = out
}

// variable is one matrix variable: its variants in order.
type variable struct {
	name     string
	variants []variant
}

type variant struct {
	name  string
	value any            // the value expressions see: the list element, or the variant's name
	set   map[string]any // grid keys a named variant sets
	at    string         // its source path
}

// matrix reads the matrix table at key: each variable a list of values or
// a table of named variants (tables of grid keys).
func (x *expansion) matrix(key string, d *draft) ([]variable, bool) {
	mv, ok := d.t[keyMatrix]
	if !ok {
		return nil, true
	}
	m, ok := mv.(map[string]any)
	if !ok || len(m) == 0 {
		x.errorf(d.source(keyMatrix), "want a table of variables (kernel = [\"se\", \"matern32\"], or [%s.matrix.VAR] of named variants), got %s", key, typeName(mv))
		return nil, false
	}
	var vars []variable
	good := true
	for _, name := range x.ordered(d, keyMatrix, m) {
		at := d.source(keyMatrix + "." + name)
		if name == "skip" || name == "set" {
			x.errorf(at, "%q cannot name a matrix variable: when rules use it", name)
			good = false
			continue
		}
		v := variable{name: name}
		switch val := m[name].(type) {
		case []any:
			for i, e := range val {
				if _, ok := fromTOML(e); !ok || isList(e) {
					x.errorf(fmt.Sprintf("%s[%d]", at, i), "a listed variant must be a number or a string, got %s; name variants in a table to set anything else", typeName(e))
					good = false
					continue
				}
				v.variants = append(v.variants, variant{name: format(e), value: e, at: at})
			}
		case string:
			// An expression giving the list of values.
			l, err := interpolate(val, &scope{x: x, vars: nil, let: nil})
			list, isL := l.([]any)
			if err != nil || !isL {
				if err == nil {
					err = fmt.Errorf("gives %s, not a list of variants", typeName(l))
				}
				x.errorf(at, "%v", err)
				good = false
				continue
			}
			for _, e := range list {
				v.variants = append(v.variants, variant{name: format(e), value: e, at: at})
			}
		case map[string]any:
			for _, vn := range x.ordered(d, keyMatrix+"."+name, val) {
				t, ok := val[vn].(map[string]any)
				if !ok {
					x.errorf(at+"."+vn, "a named variant is a table of grid keys, got %s", typeName(val[vn]))
					good = false
					continue
				}
				v.variants = append(v.variants, variant{name: vn, value: vn, set: t, at: at + "." + vn})
			}
		default:
			x.errorf(at, "want a list of variants or a table of named variants, got %s", typeName(val))
			good = false
			continue
		}
		if len(v.variants) == 0 {
			x.errorf(at, "no variants: the grid would have no runs")
			good = false
			continue
		}
		seen := map[string]bool{}
		for _, vr := range v.variants {
			if seen[vr.name] {
				x.errorf(at, "variant %q is listed twice", vr.name)
				good = false
			}
			seen[vr.name] = true
		}
		vars = append(vars, v)
	}
	return vars, good
}

// ordered lists the keys of table t (at relative path rel of d) in the
// order the file defines them.
func (x *expansion) ordered(d *draft, rel string, t map[string]any) []string {
	src := d.source(rel)
	var out []string
	seen := map[string]bool{}
	for _, k := range x.order[src] {
		if _, ok := t[k]; ok && !seen[k] {
			out = append(out, k)
			seen[k] = true
		}
	}
	for _, k := range sortedKeys(t) {
		if !seen[k] {
			out = append(out, k)
		}
	}
	return out
}

// when is one [[grid.when]] rule.
type when struct {
	at    string
	match map[string][]string // variable → variant names
	skip  bool
	set   map[string]any
	used  bool
}

func (x *expansion) whens(d *draft, vars []variable) ([]*when, bool) {
	wv, ok := d.t[keyWhen]
	if !ok {
		return nil, true
	}
	at := d.source(keyWhen)
	ws, ok := wv.([]map[string]any)
	if !ok {
		x.errorf(at, "want an array of tables ([[grid.when]]), got %s", typeName(wv))
		return nil, false
	}
	varNames := make([]string, len(vars))
	for i, v := range vars {
		varNames[i] = v.name
	}
	good := true
	var out []*when
	for i, w := range ws {
		wat := d.source(fmt.Sprintf("%s[%d]", keyWhen, i))
		r := &when{at: wat, match: map[string][]string{}}
		for _, k := range sortedKeys(w) {
			kat := wat + "." + k
			switch k {
			case "skip":
				b, ok := w[k].(bool)
				if !ok {
					x.errorf(kat, "want true or false, got %s", typeName(w[k]))
					good = false
				}
				r.skip = b
				continue
			case "set":
				t, ok := w[k].(map[string]any)
				if !ok {
					x.errorf(kat, "want a table of grid keys, got %s", typeName(w[k]))
					good = false
				}
				r.set = t
				continue
			}
			idx := -1
			for j, v := range vars {
				if v.name == k {
					idx = j
				}
			}
			if idx < 0 {
				x.errorf(kat, "not a matrix variable%s; a when rule matches variables (%s) and sets keys with set = { … } or skip = true",
					suggest.Hint(k, varNames), strings.Join(varNames, ", "))
				good = false
				continue
			}
			var names []string
			for _, e := range toList(w[k]) {
				names = append(names, format(e))
			}
			var valid []string
			for _, vr := range vars[idx].variants {
				valid = append(valid, vr.name)
			}
			for _, n := range names {
				if !contains(valid, n) {
					x.errorf(kat, "no variant %q of %s%s; variants: %s", n, k, suggest.Hint(n, valid), strings.Join(valid, ", "))
					good = false
				}
			}
			r.match[k] = names
		}
		if r.skip && r.set != nil {
			x.errorf(wat, "a rule either skips its combinations or sets keys in them, not both")
			good = false
		}
		if !r.skip && r.set == nil {
			x.errorf(wat, "a rule does nothing without set = { … } or skip = true")
			good = false
		}
		out = append(out, r)
	}
	return out, good
}

// expandGrid turns one merged grid into the runner's grids: one per
// distinct name of the matrix's combinations, the later combinations of
// a name becoming its include rows.
func (x *expansion) expandGrid(key string, d *draft) []*draft {
	vars, ok := x.matrix(key, d)
	if !ok {
		return nil
	}
	vars = nameOrder(d.t["name"], vars)
	rules, ok := x.whens(d, vars)
	if !ok {
		return nil
	}
	if _, hasWhen := d.t[keyWhen]; hasWhen && len(vars) == 0 {
		x.errorf(d.source(keyWhen), "when rules need a matrix to match")
		return nil
	}
	type group struct {
		name string
		rows []*draft
	}
	var groups []*group
	byName := map[string]*group{}
	for _, combo := range product(vars) {
		c := d.clone()
		for _, k := range []string{keyMatrix, keyWhen} {
			delete(c.t, k)
		}
		sc := &scope{x: x, vars: map[string]any{}}
		skip := false
		for i, v := range vars {
			vr := v.variants[combo[i]]
			sc.vars[v.name] = vr.value
			if vr.set != nil && !x.mergeSet(c, vr.set, vr.at) {
				return nil
			}
		}
		for _, r := range rules {
			if !r.matches(vars, combo) {
				continue
			}
			r.used = true
			if r.skip {
				skip = true
				break
			}
			if !x.mergeSet(c, r.set, r.at+".set") {
				return nil
			}
		}
		if skip {
			continue
		}
		if !x.evaluate(c, sc) {
			return nil
		}
		name, _ := c.t["name"].(string)
		gr := byName[name]
		if gr == nil {
			gr = &group{name: name}
			byName[name] = gr
			groups = append(groups, gr)
		}
		gr.rows = append(gr.rows, c)
	}
	for _, r := range rules {
		if !r.used {
			x.res.Warnings = append(x.res.Warnings, Error{r.at, "matches no combination of the matrix"})
		}
	}
	var out []*draft
	for _, gr := range groups {
		if g := x.rowsToIncludes(d, gr.rows, vars); g != nil {
			out = append(out, g)
		}
	}
	return out
}

// nameVarRE finds a variable written alone in braces in a grid's name.
var nameVarRE = regexp.MustCompile(`\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}`)

// nameOrder puts the variables the grid's name uses first, in the order
// the name uses them, then the others (its rows) as defined: the grids
// come in the order their names read, the first variable outermost.
func nameOrder(name any, vars []variable) []variable {
	s, _ := name.(string)
	var out []variable
	taken := make([]bool, len(vars))
	for _, m := range nameVarRE.FindAllStringSubmatch(s, -1) {
		for i, v := range vars {
			if v.name == m[1] && !taken[i] {
				out = append(out, v)
				taken[i] = true
			}
		}
	}
	for i, v := range vars {
		if !taken[i] {
			out = append(out, v)
		}
	}
	return out
}

// mergeSet lays a variant's or a rule's keys over a combination, after
// the templates it extends.
func (x *expansion) mergeSet(c *draft, set map[string]any, at string) bool {
	for _, name := range x.extendsOf(at+"."+keyExtends, set[keyExtends]) {
		t := x.template(at+"."+keyExtends, name)
		if t == nil {
			return false
		}
		c.mergeDraft(t)
	}
	c.merge(set, at, keyExtends)
	return true
}

func (r *when) matches(vars []variable, combo []int) bool {
	for i, v := range vars {
		names, ok := r.match[v.name]
		if ok && !contains(names, v.variants[combo[i]].name) {
			return false
		}
	}
	return true
}

// product lists the combinations of variant indices, the first variable
// outermost.
func product(vars []variable) [][]int {
	out := [][]int{{}}
	for _, v := range vars {
		var next [][]int
		for _, p := range out {
			for i := range v.variants {
				next = append(next, append(append([]int(nil), p...), i))
			}
		}
		out = next
	}
	return out
}

// includeKeys maps a grid key that may differ between the rows of one
// grid to the include key that sets it.
var includeKeys = map[string]string{
	"methods": "method", "datasets": "dataset", "splits": "split", "seeds": "seed",
	"iterations": "iterations", "optimizer": "optimizer", "learning_rate": "learning_rate",
	"batch_size": "batch_size", "grad_tol": "grad_tol", "stop_tol": "stop_tol", "task": "task",
	"metrics": "metrics", "artifacts": "artifacts", "time_limit": "time_limit", "mem_limit": "mem_limit",
}

// rowsToIncludes makes the first row the grid and each later row an
// include carrying what it changes.
func (x *expansion) rowsToIncludes(d *draft, rows []*draft, vars []variable) *draft {
	base := rows[0]
	if len(rows) == 1 {
		return base
	}
	name, _ := base.t["name"].(string)
	var inVars []string
	for _, v := range vars {
		inVars = append(inVars, "{"+v.name+"}")
	}
	if _, ok := base.t["exclude"]; ok {
		x.errorf(base.source("exclude"), "grid %q has rows (matrix variables its name does not use, which become its includes) and an exclude, which drops runs of the grid's own product only; put the variables in the name (%s) or skip combinations with when rules",
			name, strings.Join(inVars, ", "))
		return nil
	}
	var incs []map[string]any
	for ri, row := range rows[1:] {
		inc := map[string]any{}
		ok := true
		for _, k := range sortedKeys(union(base.t, row.t)) {
			bv, inBase := base.t[k]
			rv, inRow := row.t[k]
			if inBase && inRow && reflect.DeepEqual(bv, rv) {
				continue
			}
			switch {
			case !inRow:
				x.errorf(base.source(k), "grid %q: row %d of the matrix leaves out %s, which an include row cannot do; put the variables in the name (%s) to make a grid per combination", name, ri+1, k, strings.Join(inVars, ", "))
				ok = false
			case k == "params" || k == "dataset":
				bt, _ := bv.(map[string]any)
				rt, isT := rv.(map[string]any)
				if !isT {
					ok = false
					continue // the runner reports the type
				}
				diff := map[string]any{}
				for _, pk := range sortedKeys(union(bt, rt)) {
					pb, inB := bt[pk]
					pr, inR := rt[pk]
					switch {
					case !inR:
						x.errorf(base.source(k+"."+pk), "grid %q: row %d of the matrix leaves out %s.%s, which an include row cannot do; put the variables in the name (%s)", name, ri+1, k, pk, strings.Join(inVars, ", "))
						ok = false
					case !inB || !reflect.DeepEqual(pb, pr):
						diff[pk] = pr
					}
				}
				if len(diff) > 0 {
					if _, clash := inc[k]; clash {
						x.errorf(row.source(k), "grid %q: its rows differ in both datasets and dataset parameters; put the variables in the name (%s)", name, strings.Join(inVars, ", "))
						ok = false
					}
					inc[k] = diff
				}
			case includeKeys[k] != "":
				ik := includeKeys[k]
				if _, clash := inc[ik]; clash {
					x.errorf(row.source(k), "grid %q: its rows differ in both datasets and dataset parameters; put the variables in the name (%s)", name, strings.Join(inVars, ", "))
					ok = false
				}
				inc[ik] = rv
			default:
				x.errorf(row.source(k), "grid %q: the rows of its matrix differ in %s, which an include row cannot change; put the variables in the name (%s) to make a grid per combination", name, k, strings.Join(inVars, ", "))
				ok = false
			}
		}
		if !ok {
			return nil
		}
		incs = append(incs, inc)
	}
	g := base.clone()
	own := asArray(g.t["include"])
	all := append(incs, own...)
	for i := range own {
		if o, ok := g.origin[fmt.Sprintf("include[%d]", i)]; ok {
			g.origin[fmt.Sprintf("include[%d]", len(incs)+i)] = o
		} else {
			g.origin[fmt.Sprintf("include[%d]", len(incs)+i)] = g.source("include") + fmt.Sprintf("[%d]", i)
		}
	}
	for i := range incs {
		g.origin[fmt.Sprintf("include[%d]", i)] = d.source(keyMatrix)
	}
	delete(g.origin, "include")
	g.t["include"] = all
	return g
}

// evaluate replaces every expression in the draft's strings by its value
// and drops the let table.
func (x *expansion) evaluate(c *draft, sc *scope) bool {
	if lv, ok := c.t[keyLet]; ok {
		lt, isT := lv.(map[string]any)
		if !isT {
			x.errorf(c.source(keyLet), "want a table of named values, got %s", typeName(lv))
			return false
		}
		sc.let = lt
		sc.draft = c
		sc.done = map[string]any{}
	}
	delete(c.t, keyLet)
	n := len(x.errs)
	var walk func(v any, rel string) any
	walk = func(v any, rel string) any {
		switch t := v.(type) {
		case string:
			r, err := interpolate(t, sc)
			if err != nil {
				x.errorf(c.source(rel), "%v", err)
				return v
			}
			return r
		case map[string]any:
			for _, k := range sortedKeys(t) {
				t[k] = walk(t[k], join(rel, k))
			}
		case []any:
			for i := range t {
				t[i] = walk(t[i], fmt.Sprintf("%s[%d]", rel, i))
			}
		case []map[string]any:
			for i := range t {
				walk(t[i], fmt.Sprintf("%s[%d]", rel, i))
			}
		}
		return v
	}
	walk(c.t, "")
	return len(x.errs) == n
}

// scope is what an expression in one combination sees: the matrix
// variables' values and the let table's entries (evaluated on demand).
type scope struct {
	x     *expansion
	vars  map[string]any
	let   map[string]any
	draft *draft
	done  map[string]any
	stack []string
}

func (s *scope) lookup(name string) (any, error) {
	if v, ok := s.vars[name]; ok {
		e, _ := fromTOML(v)
		return e, nil
	}
	if v, ok := s.done[name]; ok {
		return v, nil
	}
	raw, ok := s.let[name]
	if !ok {
		return nil, fmt.Errorf("%q is not defined%s; defined: %s", name, suggest.Hint(name, s.names()), strings.Join(s.names(), ", "))
	}
	for i, n := range s.stack {
		if n == name {
			return nil, fmt.Errorf("let %s refers to itself: %s", name, strings.Join(append(s.stack[i:], name), " → "))
		}
	}
	s.stack = append(s.stack, name)
	defer func() { s.stack = s.stack[:len(s.stack)-1] }()
	v := raw
	if str, isStr := raw.(string); isStr {
		var err error
		if v, err = interpolate(str, s); err != nil {
			return nil, fmt.Errorf("let %s: %w", name, err)
		}
	}
	e, ok := fromTOML(v)
	if !ok {
		return nil, fmt.Errorf("let %s: want a number, a string or a list, got %s", name, typeName(v))
	}
	s.done[name] = e
	return e, nil
}

func (s *scope) names() []string {
	var out []string
	for k := range s.vars {
		out = append(out, k)
	}
	for k := range s.let {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// interpolate evaluates the {expressions} of s: a string that is one
// expression becomes its value (a number or a list), one with text around
// them a string with their values written in.
func interpolate(s string, e env) (any, error) {
	if !strings.Contains(s, "{") {
		return s, nil
	}
	var b strings.Builder
	rest := s
	for {
		i := strings.IndexByte(rest, '{')
		if i < 0 {
			b.WriteString(rest)
			break
		}
		j := strings.IndexByte(rest[i:], '}')
		if j < 0 {
			return nil, fmt.Errorf("%q: unclosed {", s)
		}
		v, err := eval(rest[i+1:i+j], e)
		if err != nil {
			return nil, fmt.Errorf("{%s}: %w", rest[i+1:i+j], err)
		}
		if i == 0 && i+j+1 == len(rest) && b.Len() == 0 {
			return toTOML(v), nil
		}
		if isList(v) {
			return nil, fmt.Errorf("{%s} is a list, which cannot be written into the text %q", rest[i+1:i+j], s)
		}
		b.WriteString(rest[:i])
		b.WriteString(format(toTOML(v)))
		rest = rest[i+j+1:]
	}
	return b.String(), nil
}

// format writes a variant or expression value as it appears in a name.
func format(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	return fmt.Sprint(v)
}

// profiles merges every profile's glob entries ([profiles.quick.grids."fig2-*"])
// into the grids they match.
func (x *expansion) profiles() {
	ps, ok := x.raw["profiles"].(map[string]any)
	if !ok {
		return
	}
	outPs := maps.Clone(ps)
	for _, pn := range sortedKeys(ps) {
		p, ok := ps[pn].(map[string]any)
		if !ok {
			continue
		}
		gs, ok := p["grids"].(map[string]any)
		if !ok {
			continue
		}
		at := "profiles." + pn + ".grids"
		out := map[string]any{}
		var globs []string
		for _, k := range x.order[at] {
			if _, ok := gs[k]; ok && isGlob(k) {
				globs = append(globs, k)
			}
		}
		for _, k := range sortedKeys(gs) {
			if isGlob(k) && !contains(globs, k) {
				globs = append(globs, k)
			}
		}
		for _, k := range sortedKeys(gs) {
			if !isGlob(k) {
				out[k] = deepClone(gs[k])
				x.res.Origin[at+"."+k] = at + "." + k
			}
		}
		for _, g := range globs {
			if _, err := path.Match(g, ""); err != nil {
				x.errorf(at+"."+g, "bad pattern: %v", err)
				continue
			}
			if _, ok := gs[g].(map[string]any); !ok {
				x.errorf(at+"."+g, "must be a table of grid keys, got %s", typeName(gs[g]))
				continue
			}
			if !slices.ContainsFunc(x.names, func(n string) bool { m, _ := path.Match(g, n); return m }) {
				x.errorf(at+"."+g, "pattern %q matches no grid%s; grids: %s", g, suggest.Hint(g, x.names), strings.Join(x.names, ", "))
			}
		}
		// Per grid: the patterns it matches in file order, then its own
		// entry, each laid over the last.
		for _, name := range x.names {
			d := newDraft()
			first := ""
			for _, g := range globs {
				t, ok := gs[g].(map[string]any)
				if m, _ := path.Match(g, name); ok && m {
					d.merge(t, at+"."+g)
					if first == "" {
						first = at + "." + g
					}
				}
			}
			if first == "" {
				continue
			}
			if t, ok := gs[name].(map[string]any); ok {
				d.merge(t, at+"."+name)
				first = at + "." + name
			}
			out[name] = d.t
			x.res.Origin[at+"."+name] = first
			for rel, src := range d.origin {
				x.res.Origin[at+"."+name+"."+rel] = src
			}
		}
		np := maps.Clone(p)
		np["grids"] = out
		outPs[pn] = np
	}
	x.res.Raw["profiles"] = outPs
}

func isGlob(s string) bool { return strings.ContainsAny(s, "*?[") }

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

func typeName(v any) string {
	switch x := v.(type) {
	case string:
		return fmt.Sprintf("string %q", x)
	case int64:
		return fmt.Sprintf("integer %d", x)
	case float64:
		return fmt.Sprintf("number %v", x)
	case bool:
		return fmt.Sprintf("boolean %v", x)
	case []any:
		return "a list"
	case map[string]any:
		return "a table"
	case []map[string]any:
		return "an array of tables"
	case nil:
		return "nothing"
	}
	return fmt.Sprintf("%T", v)
}
