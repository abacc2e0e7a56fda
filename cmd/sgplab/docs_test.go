package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// errParsed stops a documented command once its flags parsed.
var errParsed = errors.New("parsed")

// subcommands are the words the commands with sub-commands accept first.
var subcommands = map[string][]string{
	"sgplab data":    {"list", "fetch", "example-csv"},
	"sgplab results": {"export", "merge", "prune"},
}

// TestDocumentedCommandsParse: every `sgplab …` command shown in the
// README, docs/*.md, paper_configs/README.md and the commands' --help
// examples names a command, flags it has, a sub-command it knows, and
// repository files that exist. Nothing runs: the flag parser hands the
// command line to parsedHook and stops.
func TestDocumentedCommandsParse(t *testing.T) {
	root := filepath.Join("..", "..")
	docs, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	docs = append(docs, filepath.Join(root, "README.md"), filepath.Join(root, "paper_configs", "README.md"))
	type shown struct{ where, line string }
	var cmds []shown
	for _, path := range docs {
		for _, c := range docCommands(t, path) {
			cmds = append(cmds, shown{c.where, c.line})
		}
	}
	for name, ex := range examples {
		for i, l := range strings.Split(ex, "\n") {
			if c, ok := commandIn(l); ok {
				cmds = append(cmds, shown{fmt.Sprintf("sgplab %s --help example %d", name, i+1), c})
			}
		}
	}
	if len(cmds) < 30 {
		t.Fatalf("found only %d documented commands; the extraction is broken", len(cmds))
	}
	defer func() { parsedHook = nil }()
	for _, c := range cmds {
		args, err := shellWords(c.line)
		if err != nil {
			t.Errorf("%s: %q: %v", c.where, c.line, err)
			continue
		}
		var got []string
		var gotCmd string
		parsedHook = func(command string, pos []string) error {
			gotCmd, got = command, pos
			return errParsed
		}
		var stderr strings.Builder
		code := Main(args, io.Discard, &stderr)
		if slices.Contains(args, "--help") || slices.Contains(args, "-h") {
			if code != 0 {
				t.Errorf("%s: %q exits %d", c.where, c.line, code)
			}
			continue
		}
		if gotCmd == "" {
			t.Errorf("%s: %q does not parse (exit %d): %s", c.where, c.line, code, firstLine(stderr.String()))
			continue
		}
		if subs, ok := subcommands[gotCmd]; ok && (len(got) == 0 || !slices.Contains(subs, got[0])) {
			t.Errorf("%s: %q: %s wants one of %v first", c.where, c.line, gotCmd, subs)
		}
		for _, p := range got {
			if (strings.HasPrefix(p, "experiments/") || strings.HasPrefix(p, "paper_configs/")) && !placeholder(p) {
				if _, err := os.Stat(filepath.Join(root, p)); err != nil {
					t.Errorf("%s: %q names %s, which the repository does not have", c.where, c.line, p)
				}
			}
		}
	}
}

type docCommand struct{ where, line string }

// docCommands returns the sgplab command lines of a Markdown file: those
// in fenced code blocks (a line continued by \ or by an open quote joined
// to the next) and those in inline code spans (a paragraph's lines joined,
// since a span may wrap), without placeholders (…, ..., <name>).
func docCommands(t *testing.T, path string) []docCommand {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []docCommand
	add := func(n int, text string) {
		if cmd, ok := commandIn(text); ok {
			out = append(out, docCommand{fmt.Sprintf("%s:%d", path, n), cmd})
		}
	}
	lines := strings.Split(string(b), "\n")
	var para []string
	paraStart := 0
	flush := func() {
		parts := strings.Split(strings.Join(para, " "), "`")
		for i := 1; i < len(parts); i += 2 {
			add(paraStart, parts[i])
		}
		para = nil
	}
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if !strings.HasPrefix(strings.TrimSpace(line), "```") {
			if strings.TrimSpace(line) == "" {
				flush()
			} else {
				if para == nil {
					paraStart = i + 1
				}
				para = append(para, line)
			}
			continue
		}
		flush()
		for i++; i < len(lines) && !strings.HasPrefix(strings.TrimSpace(lines[i]), "```"); i++ {
			start, cmd := i+1, lines[i]
			// Only a command continues, and never past the closing fence
			// (prose in a block may hold a lone apostrophe).
			for strings.Contains(cmd, "sgplab ") && i+1 < len(lines) && !strings.HasPrefix(strings.TrimSpace(lines[i+1]), "```") &&
				(strings.HasSuffix(cmd, "\\") || openQuote(cmd)) {
				i++
				cmd = strings.TrimSuffix(cmd, "\\") + " " + strings.TrimSpace(lines[i])
			}
			for _, c := range strings.Split(cmd, "&&") {
				add(start, c)
			}
		}
	}
	flush()
	return out
}

// openQuote reports whether s ends inside a quoted string.
func openQuote(s string) bool {
	_, open := scanQuotes(s, "")
	return open
}

// scanQuotes returns the index of the first rune of s outside quotes that
// is one of stops (len(s) when none is), and whether s ends inside a
// quoted string.
func scanQuotes(s, stops string) (stop int, open bool) {
	var quote rune
	for i, r := range s {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '\'' || r == '"':
			quote = r
		case strings.ContainsRune(stops, r):
			return i, false
		}
	}
	return len(s), quote != 0
}

// commandIn returns the sgplab command a line of text shows, from
// "sgplab" to the end of the command (a comment, pipe, redirection or
// another command ends it), with environment assignments before it
// dropped; ok is false for a line without one or with a placeholder.
func commandIn(s string) (string, bool) {
	s = strings.TrimSpace(s)
	for _, p := range []string{"$ ", "bin/"} {
		s = strings.TrimPrefix(s, p)
	}
	fields := strings.Fields(s)
	for len(fields) > 0 && strings.Contains(fields[0], "=") && !strings.HasPrefix(fields[0], "-") {
		fields = fields[1:]
		s = strings.Join(fields, " ")
	}
	s = strings.TrimPrefix(s, "bin/")
	if !strings.HasPrefix(s, "sgplab ") {
		return "", false
	}
	if strings.Contains(s, "…") || strings.Contains(s, "...") || strings.Contains(s, "<") {
		return "", false
	}
	// Cut at an unquoted comment, pipe, redirection, ; or &.
	stop, _ := scanQuotes(s, "#|>;&")
	return strings.TrimSpace(s[:stop]), true
}

// shellWords splits a command line as sh would for plain words, single-
// and double-quoted strings, without expansions; the leading "sgplab" is
// dropped.
func shellWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	var quote rune
	for _, r := range s {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unterminated %c quote", quote)
	}
	if inWord {
		words = append(words, cur.String())
	}
	if len(words) == 0 || words[0] != "sgplab" {
		return nil, fmt.Errorf("not an sgplab command")
	}
	return words[1:], nil
}

// placeholder reports whether a path's name stands for the reader's own
// file (CONFIG.toml, X.toml, GRID.toml): its name is in capitals.
func placeholder(path string) bool {
	name := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	return name == strings.ToUpper(name)
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}
