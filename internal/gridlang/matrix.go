package gridlang

import (
	"fmt"
	"reflect"
	"regexp"
	"strings"

	"sgplab/internal/suggest"
)

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
	combos, vars, ok := x.combinations(key, d, true)
	if !ok {
		return nil
	}
	type group struct {
		name string
		rows []*draft
	}
	var groups []*group
	byName := map[string]*group{}
	for _, c := range combos {
		name, _ := c.t["name"].(string)
		gr := byName[name]
		if gr == nil {
			gr = &group{name: name}
			byName[name] = gr
			groups = append(groups, gr)
		}
		gr.rows = append(gr.rows, c)
	}
	var out []*draft
	for _, gr := range groups {
		if g := x.rowsToIncludes(d, gr.rows, vars); g != nil {
			out = append(out, g)
		}
	}
	return out
}

// combinations lays each combination of d's matrix (its variants, then
// the when rules that match it) over d, skipped ones left out, in the
// order of the name's variables. With evaluate, or when d has a matrix or
// a let table, every combination's expressions are replaced by their
// values; a report section without either keeps its text as written.
func (x *expansion) combinations(key string, d *draft, evaluate bool) ([]*draft, []variable, bool) {
	vars, ok := x.matrix(key, d)
	if !ok {
		return nil, nil, false
	}
	vars = nameOrder(d.t["name"], vars)
	rules, ok := x.whens(d, vars)
	if !ok {
		return nil, nil, false
	}
	if _, hasWhen := d.t[keyWhen]; hasWhen && len(vars) == 0 {
		x.errorf(d.source(keyWhen), "when rules need a matrix to match")
		return nil, nil, false
	}
	if _, hasLet := d.t[keyLet]; hasLet || len(vars) > 0 {
		evaluate = true
	}
	var out []*draft
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
				return nil, nil, false
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
				return nil, nil, false
			}
		}
		if skip {
			continue
		}
		if evaluate && !x.evaluate(c, sc) {
			return nil, nil, false
		}
		out = append(out, c)
	}
	for _, r := range rules {
		if !r.used {
			x.res.Warnings = append(x.res.Warnings, Error{r.at, "matches no combination of the matrix"})
		}
	}
	return out, vars, true
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
