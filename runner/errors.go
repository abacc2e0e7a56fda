package runner

import (
	"fmt"
	"sort"
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
	for _, old := range *es {
		if *old == *e {
			return
		}
	}
	*es = append(*es, e)
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
