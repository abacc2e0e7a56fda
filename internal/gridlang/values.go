package gridlang

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"sgplab/internal/suggest"
)

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
// them a string with their values written in. {{ and }} write a brace.
func interpolate(s string, e env) (any, error) {
	if !strings.ContainsAny(s, "{}") {
		return s, nil
	}
	var b strings.Builder
	rest := s
	for {
		i := strings.IndexAny(rest, "{}")
		if i < 0 {
			b.WriteString(rest)
			break
		}
		if strings.HasPrefix(rest[i:], "{{") || strings.HasPrefix(rest[i:], "}}") {
			b.WriteString(rest[:i+1])
			rest = rest[i+2:]
			continue
		}
		if rest[i] == '}' {
			b.WriteString(rest[:i+1])
			rest = rest[i+1:]
			continue
		}
		j := strings.IndexByte(rest[i:], '}')
		if j < 0 {
			return nil, fmt.Errorf("%q: unclosed { (write {{ for a brace)", s)
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
