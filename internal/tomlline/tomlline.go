// Package tomlline finds the line on which a TOML key is defined, so that
// a config's errors can say file:line. The TOML decoder reports positions
// only for syntax errors, not for keys, and not at all for the elements of
// arrays of tables; a light scan of the source recovers them, numbering
// the elements of arrays of tables ("figure[2].kind" is the kind of the
// third [[figure]]).
package tomlline

import (
	"strconv"
	"strings"
)

// Index maps resolved key paths ("grid[1].params.num_inducing") to the
// line (from 1) on which they are defined.
type Index map[string]int

// Line returns the line of path or of its nearest defined ancestor, 0 if
// none is defined.
func (ix Index) Line(path string) int {
	for path != "" {
		if l, ok := ix[path]; ok {
			return l
		}
		i := strings.LastIndexAny(path, ".[")
		if i < 0 {
			return 0
		}
		path = path[:i]
	}
	return 0
}

// Scan indexes the keys and table headers of a TOML document.
func Scan(src string) Index {
	ix := Index{}
	count := map[string]int{} // array-of-tables path → elements seen
	table := ""               // resolved path of the current table
	lines := strings.Split(src, "\n")
	for i := 0; i < len(lines); i++ {
		s := strings.TrimSpace(lines[i])
		if s == "" || s[0] == '#' {
			continue
		}
		if s[0] == '[' {
			isArray := strings.HasPrefix(s, "[[")
			end := strings.Index(s, "]")
			if end < 0 {
				continue
			}
			start := 1
			if isArray {
				start = 2
			}
			keys := splitKey(s[start:end])
			table = resolve(keys, isArray, count)
			ix[table] = i + 1
			continue
		}
		eq := keyValueSplit(s)
		if eq < 0 {
			continue
		}
		path := table
		for _, k := range splitKey(s[:eq]) {
			path = Join(path, k)
		}
		if _, dup := ix[path]; !dup {
			ix[path] = i + 1
		}
		// Skip the continuation lines of a multi-line value.
		depth, inML := scanValue(s[eq+1:], 0, "")
		for (depth > 0 || inML != "") && i+1 < len(lines) {
			i++
			depth, inML = scanValue(lines[i], depth, inML)
		}
	}
	return ix
}

// FirstUnindexed returns the first line of a key path written without
// element indices, as the TOML decoder reports undecoded keys
// ("table.paper.vlue" for any [[table.paper]]), 0 if none.
func (ix Index) FirstUnindexed(path string) int {
	best := 0
	for k, n := range ix {
		if stripIndices(k) == path && (best == 0 || n < best) {
			best = n
		}
	}
	return best
}

// stripIndices drops the element indices of a resolved path.
func stripIndices(p string) string {
	var b strings.Builder
	depth := 0
	for _, r := range p {
		switch {
		case r == '[':
			depth++
		case r == ']':
			depth--
		case depth == 0:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// resolve turns a header's dotted keys into a path with the current index of
// every enclosing array of tables, advancing the count for a [[header]].
func resolve(keys []string, isArray bool, count map[string]int) string {
	cur := ""
	for i, k := range keys {
		p := Join(cur, k)
		if i == len(keys)-1 && isArray {
			n := count[p]
			count[p] = n + 1
			for q := range count {
				if strings.HasPrefix(q, p+"[") {
					delete(count, q)
				}
			}
			p += "[" + strconv.Itoa(n) + "]"
		} else if n, ok := count[p]; ok {
			p += "[" + strconv.Itoa(n-1) + "]"
		}
		cur = p
	}
	return cur
}

// Join is the path of key b below path a ("" is the top level).
func Join(a, b string) string {
	if a == "" {
		return b
	}
	return a + "." + b
}

// splitKey splits a dotted TOML key, honouring quoted parts.
func splitKey(s string) []string {
	var out []string
	var b strings.Builder
	quote := byte(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			} else {
				b.WriteByte(c)
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '.':
			out = append(out, strings.TrimSpace(b.String()))
			b.Reset()
		default:
			b.WriteByte(c)
		}
	}
	return append(out, strings.TrimSpace(b.String()))
}

// keyValueSplit returns the index of the '=' separating key and value, or -1.
func keyValueSplit(s string) int {
	quote := byte(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '=':
			return i
		case c == '#':
			return -1
		}
	}
	return -1
}

// scanValue tracks bracket depth and multi-line strings across lines.
func scanValue(s string, depth int, inML string) (int, string) {
	for i := 0; i < len(s); i++ {
		if inML != "" {
			if strings.HasPrefix(s[i:], inML) {
				i += len(inML) - 1
				inML = ""
			} else if s[i] == '\\' && inML == `"""` {
				i++
			}
			continue
		}
		switch c := s[i]; c {
		case '#':
			return depth, ""
		case '[', '{':
			depth++
		case ']', '}':
			depth--
		case '"', '\'':
			triple := strings.Repeat(string(c), 3)
			if strings.HasPrefix(s[i:], triple) {
				inML = triple
				i += 2
				continue
			}
			for i++; i < len(s) && s[i] != c; i++ {
				if s[i] == '\\' && c == '"' {
					i++
				}
			}
		}
	}
	return depth, inML
}
