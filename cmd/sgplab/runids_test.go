package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"sgplab/datasets"
	"sgplab/internal/testhelp"
)

var updateRunIDs = flag.Bool("update", false, "rewrite testdata/runids from the code as it is")

// runIDLine is the start of a --dry-run line: a run id.
var runIDLine = regexp.MustCompile(`^[0-9a-f]{16}\b`)

// TestDryRunIDsPinned runs `sgplab run --dry-run` on every experiment and
// paper config under both profiles and compares the run ids, in order,
// with testdata/runids: a run's id is the hash of its canonical spec, so a
// change in how methods name or default their parameters (or how grids
// expand) would silently fork every stored result. A profile a file does
// not define pins the exit status and the error instead. Regenerate with
// go test ./cmd/sgplab/ -run TestDryRunIDsPinned -update.
func TestDryRunIDsPinned(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, dir := range []string{"experiments", "paper_configs"} {
		ps, err := filepath.Glob(filepath.Join(root, dir, "*.toml"))
		if err != nil || len(ps) == 0 {
			t.Fatalf("no configs in %s: %v", dir, err)
		}
		paths = append(paths, ps...)
	}
	golden := filepath.Join(root, "cmd", "sgplab", "testdata", "runids")
	// experiments/csv.toml reads out/example-csv/example.csv relative to the
	// working directory (its sha256 is part of every run id): generate it
	// in a scratch directory, as `make example-csv` does.
	work := t.TempDir()
	t.Chdir(work)
	if _, err := datasets.WriteExampleCSV(filepath.Join("out", "example-csv")); err != nil {
		t.Fatal(err)
	}
	// An empty data directory: the ids never depend on which files are
	// present, and the test must not either; nor on this machine's memory,
	// which the methods' memory estimates are checked against.
	dataDir := filepath.Join(work, "data")
	t.Setenv("SGPLAB_MEMORY", "1e18")
	if *updateRunIDs {
		if err := os.MkdirAll(golden, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range paths {
		for _, prof := range []string{"quick", "full"} {
			name := filepath.Base(filepath.Dir(p)) + "-" + strings.TrimSuffix(filepath.Base(p), ".toml") + "." + prof + ".txt"
			t.Run(name, func(t *testing.T) {
				var out, errb bytes.Buffer
				code := Main([]string{"run", "--dry-run", "--profile", prof, "--data-dir", dataDir, "--db", filepath.Join(work, "none.db"), p}, &out, &errb)
				var got strings.Builder
				if code != 0 {
					// Only the error's gist: its path prefix is the machine's.
					msg := strings.ReplaceAll(strings.TrimSpace(errb.String()), root+string(filepath.Separator), "")
					got.WriteString("exit " + strconv.Itoa(code) + ": " + msg + "\n")
				}
				for _, line := range strings.Split(out.String(), "\n") {
					if id := runIDLine.FindString(line); id != "" {
						got.WriteString(id + "\n")
					}
				}
				path := filepath.Join(golden, name)
				if *updateRunIDs {
					if err := os.WriteFile(path, []byte(got.String()), 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				want, err := os.ReadFile(path)
				if err != nil {
					t.Fatalf("%v (a new config: go test ./cmd/sgplab/ -run TestDryRunIDsPinned -update)", err)
				}
				if got.String() != string(want) {
					n, gl, wl := testhelp.FirstDiff(got.String(), string(want))
					t.Fatalf("line %d: got %q, pinned %q (%d lines, pinned %d)", n, gl, wl,
						strings.Count(got.String(), "\n")+1, strings.Count(string(want), "\n")+1)
				}
			})
		}
	}
}
