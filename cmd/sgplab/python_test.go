package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"sgplab/results"
)

// TestPythonReadsResults runs docs/examples/read_results.py (the example of
// docs/results.md) on a fresh sweep when python3 is on the PATH
// ($SGPLAB_PYTHON names another interpreter, e.g. one with pandas): it must
// exit 0, count the runs, flag the unconverged SVGP fit and print every
// fitted hyperparameter exactly as the Go store reads it. pandas is
// optional; when the interpreter has it, the DataFrame part must run too.
func TestPythonReadsResults(t *testing.T) {
	python := os.Getenv("SGPLAB_PYTHON")
	if python == "" {
		var err error
		if python, err = exec.LookPath("python3"); err != nil {
			t.Skip("python3 is not on the PATH: docs/examples/read_results.py is not run (set SGPLAB_PYTHON to an interpreter to run it)")
		}
	}
	dir := t.TempDir()
	db := filepath.Join(dir, "r.db")
	cfg := filepath.Join(dir, "py.toml")
	os.WriteFile(cfg, []byte(strings.Replace(exportConfig, "NUM", "[4, 8]", 1)), 0o644)
	if code, out, errOut := sgplab("run", "--quiet", "--db", db, cfg); code != 0 {
		t.Fatalf("run: exit %d\n%s%s", code, out, errOut)
	}
	cmd := exec.Command(python, filepath.Join("..", "..", "docs", "examples", "read_results.py"), db)
	outb, err := cmd.CombinedOutput()
	out := string(outb)
	if err != nil {
		t.Fatalf("%s docs/examples/read_results.py: %v\n%s", python, err, out)
	}
	for _, want := range []string{"schema version " + strconv.Itoa(results.SchemaVersion), "runs: 5 (5 done, 0 failed)", "unconverged runs: 1", "svgp on gp-sample split 0: 20 iterations"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	store, err := results.OpenReadOnly(db)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	runs, err := store.Runs(results.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	number := `(-?[0-9.]+(?:e[-+]?[0-9]+)?)`
	for _, r := range runs {
		line := regexp.MustCompile(`(?m)^hyperparameters of ` + r.ID + ` \(` + r.Method + `\): (.*)$`).FindStringSubmatch(out)
		if line == nil || len(r.Hyper) == 0 {
			t.Errorf("run %s: no hyperparameters printed (Go reads %d entries)", r.ID, len(r.Hyper))
			continue
		}
		for _, h := range r.Hyper {
			m := regexp.MustCompile(regexp.QuoteMeta(h.Name) + ` = \[?((?:` + number + `(?:, )?)+)\]?`).FindStringSubmatch(line[1])
			if m == nil {
				t.Errorf("run %s: %s not printed in %q", r.ID, h.Name, line[1])
				continue
			}
			vals := strings.Split(m[1], ", ")
			if h.Index >= len(vals) {
				t.Errorf("run %s: %s[%d] missing in %q", r.ID, h.Name, h.Index, m[1])
				continue
			}
			if v, err := strconv.ParseFloat(vals[h.Index], 64); err != nil || v != h.Value {
				t.Errorf("run %s: Python read %s[%d] = %s, Go %v", r.ID, h.Name, h.Index, vals[h.Index], h.Value)
			}
		}
	}
	if exec.Command(python, "-c", "import pandas").Run() == nil {
		for _, want := range []string{"wide table: 5 done runs", "hyperparameters: 5 runs x 3 names"} {
			if !strings.Contains(out, want) {
				t.Errorf("pandas part: output lacks %q:\n%s", want, out)
			}
		}
	} else if !strings.Contains(out, "pandas not installed") {
		t.Errorf("without pandas the script should say so:\n%s", out)
	}
}
