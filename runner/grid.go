package runner

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
	"sgplab/internal/anyconv"
	"sgplab/internal/gridlang"
	"sgplab/internal/tomlline"
)

// File is a parsed and structurally validated grid file (experiments/*.toml
// or paper_configs/*.toml). The runner owns the top-level keys name, title,
// description, db, profiles and grid; the report package owns table,
// figure, claim and report, which are accepted here and not inspected.
type File struct {
	Path        string
	Name        string // out/<Name>/ and the experiment name of every run
	Title       string
	Description string
	DB          string // results database; "" means out/<Name>/results.db
	Profiles    map[string]Profile
	Grids       []*Grid

	lines    tomlline.Index
	warnings []string         // from the grid language (Expand reports them)
	lang     *gridlang.Result // where the keys of expanded grids were written
}

// Profile is a named set of overrides (e.g. quick) applied to every grid.
type Profile struct {
	Name     string
	Note     string                    // what the profile reduces; shown in every output
	Override map[string]any            // grid keys replaced in every grid
	Grids    map[string]map[string]any // grid name → keys replaced in that grid only
	// Skip names the grids the profile does not run at all
	// ([profiles.quick.grids.NAME] skip = true), e.g. exact GPs on sets
	// too large for a quick profile; the note must say so.
	Skip map[string]bool
	// Jobs is the number of runs in flight when the command line gives
	// none (0: one). A profile of many small fits, each on one core,
	// sets 2 so that both cores work; the runs' results do not depend
	// on it.
	Jobs int
}

// Grid is one [[grid]] table.
type Grid struct {
	Name  string
	Index int // position in the file's [[grid]] array
	raw   map[string]any
}

// FullProfile is the implicit profile that changes nothing; QuickProfile
// is the reduced one make reproduce-* runs by default.
const (
	FullProfile  = "full"
	QuickProfile = "quick"
)

var (
	runnerTopKeys = []string{"name", "title", "description", "db", "profiles", "grid", "template"}
	reportTopKeys = []string{"table", "figure", "claim", "report"}
	nameRE        = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)
)

// kind is the shape a grid key accepts.
type kind int

const (
	kString  kind = iota // one string
	kStrings             // a string or a list of strings (expands)
	kInts                // an integer or a list of integers (expands)
	kFloats              // a number or a list of numbers (expands)
	kList                // a list of strings, not expanded
	kDur                 // a duration string such as "10m"
	kBytes               // a memory size string such as "2GiB"
	kTable               // a table
	kTables              // a table of tables
	kArray               // an array of tables
)

var gridKeys = map[string]kind{
	"name":          kString,
	"description":   kString,
	"methods":       kStrings,
	"datasets":      kStrings,
	"splits":        kInts,
	"seeds":         kInts,
	"iterations":    kInts,
	"optimizer":     kStrings,
	"learning_rate": kFloats,
	"batch_size":    kInts,
	"grad_tol":      kFloats,
	"ftol":          kFloats,
	"lbfgs_memory":  kInts,
	"stop_tol":      kFloats,
	"task":          kStrings,
	"metrics":       kList,
	"artifacts":     kList,
	"time_limit":    kDur,
	"mem_limit":     kBytes,
	"params":        kTable,
	"dataset":       kTable,
	"method":        kTables,
	"exclude":       kArray,
	"include":       kArray,
}

// overridable are the grid keys a profile may replace. include and exclude
// replace the grid's whole list (include = [] drops its added runs).
var overridable = []string{"methods", "datasets", "splits", "seeds", "iterations", "optimizer",
	"learning_rate", "batch_size", "grad_tol", "ftol", "lbfgs_memory", "stop_tol", "task", "metrics", "artifacts", "time_limit", "mem_limit", "params", "dataset",
	"include", "exclude"}

// Optimizers are the accepted values of the optimizer key.
var Optimizers = []string{"lbfgs", "adam"}

// Tasks are the accepted values of the task key.
var Tasks = []string{"regression", "classification"}

// Load reads and structurally validates a grid file: TOML syntax, unknown
// keys, value types and grid names. Method, dataset and parameter names are
// checked by Expand, which needs the registries.
func Load(path string) (*File, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, string(src))
}

// Parse is Load on file contents; path is used in error messages and to
// resolve relative paths in the file.
func Parse(path, src string) (*File, error) {
	var raw map[string]any
	md, err := toml.Decode(src, &raw)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return nil, Errors{{File: path, Line: pe.Position.Line, Key: pe.LastKey, Msg: "TOML syntax: " + pe.Message}}
		}
		return nil, Errors{{File: path, Msg: err.Error()}}
	}
	lines := tomlline.Scan(src)
	// Templates, matrices, derived values and profile patterns expand
	// first: everything below (and every run id) sees plain grids.
	lang, lerrs := gridlang.Expand(raw, md)
	f := &File{Path: path, lines: lang.Lines(lines), Profiles: map[string]Profile{}, lang: lang}
	var es Errors
	for _, e := range lerrs {
		es = append(es, &Error{File: path, Line: lines.Line(e.Key), Key: e.Key, Msg: e.Msg})
	}
	if len(es) > 0 {
		return nil, es
	}
	for _, w := range lang.Warnings {
		f.warnings = append(f.warnings, fmt.Sprintf("%s:%d: %s: %s", path, lines.Line(w.Key), w.Key, w.Msg))
	}
	raw = lang.Raw
	valid := append(append([]string(nil), runnerTopKeys...), reportTopKeys...)
	for _, k := range sortedKeys(raw) {
		if !contains(valid, k) {
			f.errorf(&es, k, "unknown key; valid top-level keys: %s", strings.Join(valid, ", "))
		}
	}
	f.Name = f.str(&es, raw, "", "name")
	switch {
	case f.Name == "" && raw["name"] == nil:
		f.errorf(&es, "name", "missing: every grid file needs a name (used for out/<name>/)")
	case f.Name != "" && !nameRE.MatchString(f.Name):
		f.errorf(&es, "name", "%q is not a valid name (letters, digits, '_', '.', '-')", f.Name)
	}
	f.Title = f.str(&es, raw, "", "title")
	f.Description = f.str(&es, raw, "", "description")
	f.DB = f.str(&es, raw, "", "db")

	grids, ok := raw["grid"].([]map[string]any)
	if !ok && raw["grid"] != nil {
		f.errorf(&es, "grid", "must be an array of tables ([[grid]]), got %s", typeName(raw["grid"]))
	}
	if len(grids) == 0 {
		f.errorf(&es, "grid", "empty: the file defines no [[grid]], so there is nothing to run")
	}
	seen := map[string]int{}
	for i, g := range grids {
		key := fmt.Sprintf("grid[%d]", i)
		f.checkTable(&es, key, g, gridKeys)
		name, _ := g["name"].(string)
		if name == "" {
			f.errorf(&es, key, "grid has no name")
		} else if j, dup := seen[name]; dup {
			f.errorf(&es, key+".name", "grid name %q already used by grid[%d]", name, j)
		} else if !nameRE.MatchString(name) {
			f.errorf(&es, key+".name", "%q is not a valid name (letters, digits, '_', '.', '-')", name)
		}
		seen[name] = i
		for j, sub := range asArray(g["exclude"]) {
			f.checkFilter(&es, fmt.Sprintf("%s.exclude[%d]", key, j), sub)
		}
		for j, sub := range asArray(g["include"]) {
			f.checkFilter(&es, fmt.Sprintf("%s.include[%d]", key, j), sub)
		}
		f.Grids = append(f.Grids, &Grid{Name: name, Index: i, raw: g})
	}
	f.parseProfiles(&es, raw["profiles"], seen)
	return f, es.err()
}

func (f *File) parseProfiles(es *Errors, v any, grids map[string]int) {
	if v == nil {
		return
	}
	profiles, ok := v.(map[string]any)
	if !ok {
		f.errorf(es, "profiles", "must be a table of profiles ([profiles.quick]), got %s", typeName(v))
		return
	}
	overKinds := map[string]kind{}
	for _, k := range overridable {
		overKinds[k] = gridKeys[k]
	}
	for _, name := range sortedKeys(profiles) {
		key := "profiles." + name
		if name != FullProfile && name != QuickProfile {
			f.errorf(es, key, "unknown profile %q; valid profiles: %s, %s", name, QuickProfile, FullProfile)
			continue
		}
		p, ok := profiles[name].(map[string]any)
		if !ok {
			f.errorf(es, key, "must be a table, got %s", typeName(profiles[name]))
			continue
		}
		f.checkTable(es, key, p, map[string]kind{"note": kString, "override": kTable, "grids": kTables, "jobs": kInts})
		prof := Profile{Name: name, Note: f.str(es, p, key, "note"), Grids: map[string]map[string]any{}, Skip: map[string]bool{}}
		if v, ok := p["jobs"]; ok {
			switch n := v.(type) {
			case int64:
				if n < 1 {
					f.errorf(es, key+".jobs", "%d: want at least 1 run in flight", n)
				}
				prof.Jobs = int(n)
			case []any:
				f.errorf(es, key+".jobs", "want one number of runs in flight, not a list")
			}
		}
		if o, ok := p["override"].(map[string]any); ok {
			f.checkTable(es, key+".override", o, overKinds)
			prof.Override = o
		}
		if gs, ok := p["grids"].(map[string]any); ok {
			for _, g := range sortedKeys(gs) {
				gk := key + ".grids." + g
				if _, ok := grids[g]; !ok {
					f.errorf(es, gk, "no grid named %q; grids: %s", g, strings.Join(sortedKeys(grids), ", "))
					continue
				}
				if t, ok := gs[g].(map[string]any); ok {
					if v, ok := t["skip"]; ok {
						skip, isBool := v.(bool)
						if !isBool {
							f.errorf(es, gk+".skip", "want true or false, got %s", typeName(v))
						}
						prof.Skip[g] = skip
						t = maps.Clone(t)
						delete(t, "skip")
					}
					f.checkTable(es, gk, t, overKinds)
					prof.Grids[g] = t
				}
			}
		}
		if name != FullProfile && prof.Note == "" {
			f.errorf(es, key+".note", "missing: a reduced profile must say what it reduces (shown in every output)")
		}
		f.Profiles[name] = prof
	}
}

// ProfileNames lists the profiles a file accepts (always including full).
func (f *File) ProfileNames() []string {
	names := sortedKeys(f.Profiles)
	if _, ok := f.Profiles[FullProfile]; !ok {
		names = append([]string{FullProfile}, names...)
	}
	return names
}

// Profile returns the named profile; full is always defined.
func (f *File) Profile(name string) (Profile, error) {
	if p, ok := f.Profiles[name]; ok {
		return p, nil
	}
	if name == FullProfile || name == "" {
		return Profile{Name: FullProfile}, nil
	}
	return Profile{}, &Error{File: f.Path, Key: "profiles", Msg: fmt.Sprintf("no profile %q; defined profiles: %s", name, strings.Join(f.ProfileNames(), ", "))}
}

// Grid returns the grid with the given name.
func (f *File) Grid(name string) (*Grid, bool) {
	for _, g := range f.Grids {
		if g.Name == name {
			return g, true
		}
	}
	return nil, false
}

func (f *File) str(es *Errors, t map[string]any, prefix, k string) string {
	v, ok := t[k]
	if !ok {
		return ""
	}
	s, ok := v.(string)
	if !ok {
		f.errorf(es, tomlline.Join(prefix, k), "want a string, got %s", typeName(v))
	}
	return s
}

// checkTable reports unknown keys and values of the wrong shape.
func (f *File) checkTable(es *Errors, prefix string, t map[string]any, kinds map[string]kind) {
	valid := sortedKeys(kinds)
	for _, k := range sortedKeys(t) {
		key := tomlline.Join(prefix, k)
		kd, ok := kinds[k]
		if !ok {
			f.errorf(es, key, "unknown key; valid keys: %s", strings.Join(valid, ", "))
			continue
		}
		if msg := checkKind(kd, t[k]); msg != "" {
			f.errorf(es, key, "%s", msg)
			continue
		}
		f.checkChoices(es, key, k, t[k])
	}
}

func (f *File) checkChoices(es *Errors, key, k string, v any) {
	var choices []string
	switch k {
	case "optimizer":
		choices = Optimizers
	case "task":
		choices = Tasks
	default:
		return
	}
	for _, s := range toList(v) {
		if !contains(choices, s.(string)) {
			f.errorf(es, key, "%q is not one of: %s", s, strings.Join(choices, ", "))
		}
	}
}

// checkFilter validates an include/exclude table: its values must be
// scalars, lists of scalars, or (for params/dataset) tables.
func (f *File) checkFilter(es *Errors, prefix string, t map[string]any) {
	for _, k := range sortedKeys(t) {
		v := t[k]
		switch k {
		case "method", "split", "seed":
			if msg := checkKind(map[string]kind{"method": kStrings, "split": kInts, "seed": kInts}[k], v); msg != "" {
				f.errorf(es, tomlline.Join(prefix, k), "%s", msg)
			}
			continue
		case "include", "exclude", "name", "methods", "datasets", "splits", "seeds":
			f.errorf(es, tomlline.Join(prefix, k), "not allowed here; use method, dataset, split, seed, a fit setting or a parameter name")
			continue
		case "params", "dataset":
			if _, ok := v.(map[string]any); ok {
				continue
			}
		}
		if kd, ok := gridKeys[k]; ok && kd != kTable && kd != kTables && kd != kArray {
			if msg := checkKind(kd, v); msg != "" {
				f.errorf(es, tomlline.Join(prefix, k), "%s", msg)
			}
			continue
		}
		if _, ok := v.(map[string]any); ok {
			f.errorf(es, tomlline.Join(prefix, k), "a parameter value cannot be a table")
		}
	}
}

func checkKind(kd kind, v any) string {
	switch kd {
	case kString:
		if _, ok := v.(string); !ok {
			return "want a string, got " + typeName(v)
		}
	case kStrings, kList:
		for _, e := range toList(v) {
			if _, ok := e.(string); !ok {
				return "want a string or a list of strings, got " + typeName(v)
			}
		}
		if len(toList(v)) == 0 {
			return "empty list: the grid would have no runs"
		}
		if d := firstDup(toList(v)); d != "" {
			return "value " + d + " is listed twice (would duplicate runs)"
		}
	case kInts:
		for _, e := range toList(v) {
			if _, ok := e.(int64); !ok {
				return "want an integer or a list of integers, got " + typeName(v)
			}
		}
		if len(toList(v)) == 0 {
			return "empty list: the grid would have no runs"
		}
		if d := firstDup(toList(v)); d != "" {
			return "value " + d + " is listed twice (would duplicate runs)"
		}
	case kFloats:
		for _, e := range toList(v) {
			if _, ok := anyconv.Float(e); !ok {
				return "want a number or a list of numbers, got " + typeName(v)
			}
		}
		if len(toList(v)) == 0 {
			return "empty list: the grid would have no runs"
		}
	case kDur:
		s, ok := v.(string)
		if !ok {
			return "want a duration string such as \"10m\" or \"1h30m\", got " + typeName(v)
		}
		if d, err := time.ParseDuration(s); err != nil || d <= 0 {
			return fmt.Sprintf("%q is not a positive duration such as \"10m\" or \"1h30m\"", s)
		}
	case kBytes:
		s, ok := v.(string)
		if !ok {
			return "want a memory size string such as \"2GiB\" or \"512MiB\", got " + typeName(v)
		}
		if b, err := ParseBytes(s); err != nil {
			return err.Error()
		} else if b <= 0 {
			return fmt.Sprintf("memory size %q is not positive", s)
		}
	case kTable:
		if _, ok := v.(map[string]any); !ok {
			return "want a table, got " + typeName(v)
		}
	case kTables:
		t, ok := v.(map[string]any)
		if !ok {
			return "want a table of tables ([grid.method.NAME]), got " + typeName(v)
		}
		for k, e := range t {
			if _, ok := e.(map[string]any); !ok {
				return fmt.Sprintf("%s: want a table, got %s", k, typeName(e))
			}
		}
	case kArray:
		// An empty list (include = []) is an empty array of tables.
		if l, ok := v.([]any); ok && len(l) == 0 {
			return ""
		}
		if _, ok := v.([]map[string]any); !ok {
			return "want an array of tables ([[...]]), got " + typeName(v)
		}
	}
	return ""
}

func firstDup(xs []any) string {
	seen := map[string]bool{}
	for _, x := range xs {
		k := fmt.Sprint(x)
		if seen[k] {
			return k
		}
		seen[k] = true
	}
	return ""
}

// toList returns v as a list: a TOML array as is, a scalar as one element.
func toList(v any) []any {
	switch x := v.(type) {
	case []any:
		return x
	case nil:
		return nil
	}
	return []any{v}
}

func asArray(v any) []map[string]any {
	a, _ := v.([]map[string]any)
	return a
}

// typeName describes a decoded value for an error message.
func typeName(v any) string { return anyconv.TypeName(v) }

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}
