package runner

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Error is a validation error located in a grid file.
type Error struct {
	File string
	Line int    // 0 when unknown
	Key  string // resolved key path, e.g. grid[0].params.num_inducing
	Msg  string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	b.WriteString(": ")
	if e.Key != "" {
		fmt.Fprintf(&b, "%s: ", e.Key)
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Errors collects every validation error of a file, so one pass shows them all.
type Errors []*Error

func (es Errors) Error() string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.Error()
	}
	return strings.Join(parts, "\n")
}

func (es Errors) err() error {
	if len(es) == 0 {
		return nil
	}
	return es
}

// errorf records an error at key (whose line is looked up in the file).
// The same error found twice (a value checked for each method of a grid)
// is recorded once.
func (f *File) errorf(es *Errors, key, format string, args ...any) {
	e := &Error{File: f.Path, Line: f.lines.Line(key), Key: key, Msg: fmt.Sprintf(format, args...)}
	// A key of a grid the grid language made is shown where it was
	// written (a template, a variant, a rule), with the grid it is in.
	if src := f.sourceKey(key); src != key {
		e.Key = src
		if g := f.gridOf(key); g != "" && !strings.Contains(e.Msg, strconv.Quote(g)) {
			e.Msg = fmt.Sprintf("in grid %q: %s", g, e.Msg)
		}
	}
	for _, old := range *es {
		if *old == *e {
			return
		}
	}
	*es = append(*es, e)
}

// sourceKey is the key path where key of an expanded grid was written.
func (f *File) sourceKey(key string) string {
	if f.lang == nil {
		return key
	}
	return f.lang.Source(key)
}

// gridOf names the expanded grid a key path ("grid[3].params.x") is in.
func (f *File) gridOf(key string) string {
	var i int
	if _, err := fmt.Sscanf(key, "grid[%d]", &i); err != nil {
		return ""
	}
	gs, _ := f.lang.Raw["grid"].([]map[string]any)
	if i < 0 || i >= len(gs) {
		return ""
	}
	name, _ := gs[i]["name"].(string)
	return name
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
