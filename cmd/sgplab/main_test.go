package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCLIErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.toml")
	os.WriteFile(bad, []byte("name = \"b\"\n[[grid]]\nname = \"g\"\nmethods = [\"nosuch\"]\ndatasets = [\"gp-sample\"]\niterations = 1\n"), 0o644)
	cases := []struct {
		args []string
		code int
		want string
	}{
		{nil, 2, "Commands:"},
		{[]string{"frobnicate"}, 2, "unknown command \"frobnicate\"; commands:"},
		{[]string{"run", "--help"}, 0, "Usage: sgplab run"},
		{[]string{"query"}, 2, "Usage: sgplab query"},
		{[]string{"methods", "nosuch"}, 1, "unknown method \"nosuch\"; valid methods:"},
		{[]string{"run", "--dry-run", bad}, 1, "bad.toml:4: grid[0].methods: unknown method \"nosuch\""},
		{[]string{"run", "--shard", "3/2", bad}, 2, "invalid --shard \"3/2\""}, // the command line before the grid
		{[]string{"query", "--db", filepath.Join(dir, "none.db"), "SELECT 1"}, 1, "none.db"},
		{[]string{"results", "merge", filepath.Join(dir, "none.db"), "-o", filepath.Join(dir, "out.db")}, 1, "cannot merge"},
		// Usage errors say what was wrong, not just the synopsis.
		{[]string{"results", "merge", filepath.Join(dir, "a.db")}, 2, "merge needs -o OUT.db"},
		{[]string{"results", "export"}, 2, "export needs --db"},
		{[]string{"results", "frobnicate"}, 2, "unknown subcommand \"frobnicate\"; want export, merge or prune"},
		{[]string{"data", "frobnicate"}, 2, "unknown subcommand \"frobnicate\"; want list, fetch or example-csv"},
		{[]string{"data", "fetch"}, 2, "fetch needs dataset names"},
		{[]string{"query", "SELECT 1"}, 2, "--db is required"},
		{[]string{"query", "--db", "x.db", "SELECT", "1"}, 2, "want exactly one SQL statement"},
		{[]string{"report", "a.toml", "b.toml"}, 2, "want exactly one config file, got 2"},
	}
	for _, c := range cases {
		var out, errb bytes.Buffer
		code := Main(c.args, &out, &errb)
		all := out.String() + errb.String()
		if code != c.code || !strings.Contains(all, c.want) {
			t.Errorf("sgplab %v: exit %d, output %q; want exit %d and %q", c.args, code, all, c.code, c.want)
		}
	}
}

// TestHelp checks that every subcommand's --help prints its usage, examples
// and flags on stdout and exits 0.
func TestHelp(t *testing.T) {
	for _, c := range commands {
		for _, flag := range []string{"--help", "-h"} {
			var out, errb bytes.Buffer
			code := Main([]string{c.name, flag}, &out, &errb)
			s := out.String()
			if code != 0 || errb.Len() != 0 {
				t.Errorf("sgplab %s %s: exit %d, stderr %q", c.name, flag, code, errb.String())
			}
			for _, want := range []string{"Usage: sgplab " + c.name, "Examples:\n  sgplab " + c.name, "Flags:"} {
				if !strings.Contains(s, want) {
					t.Errorf("sgplab %s %s does not print %q:\n%s", c.name, flag, want, s)
				}
			}
		}
	}
	// A usage error still goes to stderr with exit 2.
	var out, errb bytes.Buffer
	if code := Main([]string{"run", "--no-such-flag"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "Usage: sgplab run") || out.Len() != 0 {
		t.Errorf("bad flag: exit %d, stdout %q, stderr %q", code, out.String(), errb.String())
	}
}
