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
		{[]string{"run", "--shard", "3/2", bad}, 1, "unknown method"},
		{[]string{"query", "--db", filepath.Join(dir, "none.db"), "SELECT 1"}, 1, "none.db"},
		{[]string{"results", "merge", filepath.Join(dir, "none.db"), "-o", filepath.Join(dir, "out.db")}, 1, "cannot merge"},
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
