package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDryRunChecksMethodsUpFront runs the repros of issue 27 §2 through
// the CLI: what a method declares is checked against the registry's
// dataset shapes at --dry-run, before anything runs.
func TestDryRunChecksMethodsUpFront(t *testing.T) {
	t.Setenv("SGPLAB_MEMORY", "64e9") // the verdicts must not depend on this machine
	dir := t.TempDir()
	for _, c := range []struct {
		name, grid string
		code       int
		want       []string // in stderr
	}{
		{"vff on yacht", `methods = ["vff", "sgpr"]
datasets = ["yacht"]
iterations = 2
`, 1, []string{"g.toml:4: grid[0].methods: dataset yacht (N ≤ 308, D = 6): method vff needs at least 12.6 EB", "M = 887503681"}},
		{"iff on yacht", `methods = ["iff"]
datasets = ["yacht"]
iterations = 2
`, 1, []string{"method iff handles inputs of at most 2 dimension(s); the data have 6"}},
		{"M above N", `methods = ["sgpr"]
datasets = ["gp-sample"]
iterations = 2
[grid.params]
num_inducing = 100000
[grid.dataset]
n = 50
`, 0, []string{"warning: ", "dataset gp-sample (N = 50, D = 1): method sgpr: num_inducing = 100000 exceeds the 50 training rows: M is capped at N"}},
		{"bad value", `methods = ["bspline"]
datasets = ["yacht"]
iterations = 2
[grid.params]
bases = 0
`, 1, []string{"g.toml:8: grid[0].params.bases: method bspline, parameter \"bases\": 0 is out of range: want ≥ 4"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, "g.toml")
			src := "name = \"g\"\n[[grid]]\nname = \"g\"\n" + c.grid
			if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			var out, errb bytes.Buffer
			code := Main([]string{"run", "--dry-run", "--data-dir", dir, "--db", filepath.Join(dir, "none.db"), path}, &out, &errb)
			if code != c.code {
				t.Errorf("exit %d, want %d; stderr %s", code, c.code, errb.String())
			}
			msg := strings.ReplaceAll(errb.String(), dir+string(filepath.Separator), "")
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("stderr %q\nwant it to contain %q", msg, w)
				}
			}
		})
	}
}
