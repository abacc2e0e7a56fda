package report

import (
	"strconv"
	"strings"
)

// locator maps TOML key paths to the line that defines them. The TOML
// decoder does not expose key positions, so the source is scanned once:
// array-of-tables elements are numbered, so that "figure[2].kind" names the
// kind key of the third [[figure]].
type locator struct {
	file  string
	lines map[string]int
}

func newLocator(file, src string) *locator {
	l := &locator{file: file, lines: make(map[string]int)}
	counts := make(map[string]int) // resolved array path → elements seen
	latest := make(map[string]int) // unresolved array path → latest element index
	header := ""                   // resolved path of the current table
	resolve := func(parts []string) string {
		var b strings.Builder
		plain := ""
		for i, p := range parts {
			if i > 0 {
				b.WriteByte('.')
				plain += "."
			}
			plain += p
			b.WriteString(p)
			if idx, ok := latest[plain]; ok {
				b.WriteString("[" + strconv.Itoa(idx) + "]")
			}
		}
		return b.String()
	}
	inString := ""    // closing delimiter of an open multi-line string
	openBrackets := 0 // unbalanced [ { of a multi-line value
	for n, raw := range strings.Split(src, "\n") {
		if inString != "" {
			if strings.Contains(raw, inString) {
				inString = ""
			}
			continue
		}
		line := strings.TrimSpace(stripComment(raw))
		if line == "" {
			continue
		}
		if openBrackets > 0 {
			openBrackets += bracketBalance(line)
			continue
		}
		switch {
		case strings.HasPrefix(line, "[["):
			name := strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(line, "[["), "]]"))
			parts := splitKey(name)
			parent := resolve(parts[:len(parts)-1])
			full := strings.Join(parts, ".")
			key := parent + "." + full
			idx := counts[key]
			counts[key] = idx + 1
			latest[full] = idx
			// Forget element indices of arrays nested below this one.
			for k := range latest {
				if strings.HasPrefix(k, full+".") {
					delete(latest, k)
				}
			}
			header = resolve(parts)
			l.set(header, n+1)
		case strings.HasPrefix(line, "["):
			name := strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(line, "["), "]"))
			header = resolve(splitKey(name))
			l.set(header, n+1)
		default:
			eq := strings.Index(line, "=")
			if eq < 0 {
				continue
			}
			key := strings.Join(splitKey(strings.TrimSpace(line[:eq])), ".")
			if header != "" {
				key = header + "." + key
			}
			l.set(key, n+1)
			value := strings.TrimSpace(line[eq+1:])
			for _, delim := range []string{`"""`, "'''"} {
				if strings.HasPrefix(value, delim) && !strings.Contains(value[3:], delim) {
					inString = delim
				}
			}
			if inString == "" {
				openBrackets = bracketBalance(value)
			}
		}
	}
	return l
}

// bracketBalance counts opening minus closing brackets and braces outside
// strings.
func bracketBalance(s string) int {
	quote, n := rune(0), 0
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
		case r == '"' || r == '\'':
			quote = r
		case r == '[' || r == '{':
			n++
		case r == ']' || r == '}':
			n--
		}
	}
	return n
}

func (l *locator) set(path string, line int) {
	if _, ok := l.lines[path]; !ok {
		l.lines[path] = line
	}
}

// at returns "file:line" for the key path, falling back to its parents and
// finally to the file name alone.
func (l *locator) at(path string) string {
	for p := path; p != ""; {
		if n, ok := l.lines[p]; ok {
			return l.file + ":" + strconv.Itoa(n)
		}
		i := strings.LastIndex(p, ".")
		if i < 0 {
			break
		}
		p = p[:i]
	}
	return l.file
}

// firstUnindexed finds the first line of a key path given without element
// indices (as the TOML decoder reports undecoded keys), e.g. "table.paper.vlue".
func (l *locator) firstUnindexed(path string) string {
	best := 0
	for k, n := range l.lines {
		if stripIndices(k) == path && (best == 0 || n < best) {
			best = n
		}
	}
	if best == 0 {
		return l.file
	}
	return l.file + ":" + strconv.Itoa(best)
}

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

// splitKey splits a dotted TOML key, dropping quotes and surrounding spaces.
func splitKey(s string) []string {
	var parts []string
	var cur strings.Builder
	quote := rune(0)
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '"' || r == '\'':
			quote = r
		case r == '.':
			parts = append(parts, strings.TrimSpace(cur.String()))
			cur.Reset()
		default:
			cur.WriteRune(r)
		}
	}
	return append(parts, strings.TrimSpace(cur.String()))
}

// stripComment removes a trailing # comment that is not inside a string.
func stripComment(s string) string {
	quote := rune(0)
	for i, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
		case r == '"' || r == '\'':
			quote = r
		case r == '#':
			return s[:i]
		}
	}
	return s
}
