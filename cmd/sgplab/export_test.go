package main

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// exportConfig is a small real sweep: SGPR by L-BFGS (converges) and SVGP
// with 20 Adam steps (does not), storing predictions and Z.
const exportConfig = `name = "exp"
[[grid]]
name = "a"
methods = ["sgpr"]
datasets = ["gp-sample"]
splits = [0, 1]
iterations = 50
artifacts = ["predictions", "z"]
[grid.params]
num_inducing = NUM
lengthscales = [[0.3]]
[grid.dataset]
n = 60
n_test = 20

[[grid]]
name = "b"
methods = ["svgp"]
datasets = ["gp-sample"]
splits = [0]
iterations = 20
optimizer = "adam"
[grid.params]
num_inducing = 5
[grid.dataset]
n = 60
n_test = 20
`

// TestExportCLI: results export by grid (EXPERIMENT/GRID, which matched
// nothing before), by config (only the runs the current config expands
// to), and of hyperparameters, metrics, traces and artifacts as CSV and
// NPY; status counts the unconverged runs.
func TestExportCLI(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "r.db")
	cfg, other := filepath.Join(dir, "exp.toml"), filepath.Join(dir, "other.toml")
	config := strings.Replace(exportConfig, `name = "exp"`, `name = "exp"`+"\ndb = "+strconv.Quote(db), 1)
	os.WriteFile(cfg, []byte(strings.Replace(config, "NUM", "[4, 8]", 1)), 0o644)
	// Another experiment with a grid of the same name in the same database.
	os.WriteFile(other, []byte(strings.Replace(strings.Replace(config, `name = "exp"`, `name = "other"`, 1), "NUM", "3", 1)), 0o644)
	for _, c := range []string{cfg, other} {
		if code, out, errOut := sgplab("run", "--quiet", "--db", db, c); code != 0 {
			t.Fatalf("run %s: exit %d\n%s%s", c, code, out, errOut)
		}
	}
	// The config now sweeps one size: the M = 8 runs are stale.
	os.WriteFile(cfg, []byte(strings.Replace(config, "NUM", "[4]", 1)), 0o644)

	export := func(t *testing.T, args ...string) [][]string {
		t.Helper()
		code, out, errOut := sgplab(append([]string{"results", "export"}, args...)...)
		if code != 0 {
			t.Fatalf("export %v: exit %d\n%s", args, code, errOut)
		}
		rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		return rows
	}
	col := func(rows [][]string, name string) []string {
		j := slices.Index(rows[0], name)
		if j < 0 {
			t.Fatalf("no column %s in %v", name, rows[0])
		}
		var out []string
		for _, r := range rows[1:] {
			out = append(out, r[j])
		}
		return out
	}
	distinct := func(xs []string) []string { xs = slices.Clone(xs); slices.Sort(xs); return slices.Compact(xs) }

	for _, tc := range []struct {
		name      string
		args      []string
		runs      int      // distinct run ids
		grids     []string // distinct grid column values
		hasColumn string
	}{
		{"grid as EXPERIMENT/GRID", []string{"--db", db, "--grid", "exp/a"}, 4, []string{"a"}, "m.x_converged"},
		{"grid by its own name", []string{"--db", db, "--grid", "a"}, 6, []string{"a"}, ""},
		{"the config's current runs", []string{cfg}, 3, []string{"a", "b"}, ""},
		{"the config and a grid", []string{cfg, "--grid", "exp/b"}, 1, []string{"b"}, ""},
		{"hyperparameters", []string{cfg, "--what", "hyperparameters"}, 3, []string{"a", "b"}, "idx"},
		{"metrics", []string{"--db", db, "--long"}, 8, []string{"a", "b"}, "metric"},
		{"traces", []string{cfg, "--what", "traces", "--method", "svgp"}, 1, []string{"b"}, "objective"},
		{"predictions", []string{cfg, "--what", "predictions"}, 2, []string{"a"}, "var_y"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rows := export(t, tc.args...)
			if n := len(distinct(col(rows, "run_id"))); n != tc.runs {
				t.Errorf("%d runs, want %d", n, tc.runs)
			}
			if g := distinct(col(rows, "grid")); !slices.Equal(g, tc.grids) {
				t.Errorf("grids %v, want %v", g, tc.grids)
			}
			if tc.hasColumn != "" && !slices.Contains(rows[0], tc.hasColumn) {
				t.Errorf("no column %s in %v", tc.hasColumn, rows[0])
			}
		})
	}

	// Hyperparameters are fitted values, one row per entry.
	h := export(t, cfg, "--what", "hyperparameters", "--method", "sgpr")
	names := distinct(col(h, "name"))
	if !slices.Equal(names, []string{"kernel.lengthscales", "kernel.variance", "noise_variance"}) {
		t.Errorf("hyperparameter names %v", names)
	}
	// Convergence: SGPR by L-BFGS converged, SVGP after 20 Adam steps not.
	w := export(t, cfg)
	conv := map[string]string{}
	for i, m := range col(w, "method") {
		conv[m] += col(w, "m.x_converged")[i]
	}
	if conv["sgpr"] != "11" || conv["svgp"] != "0" {
		t.Errorf("x_converged by method %v, want sgpr 1 1 and svgp 0", conv)
	}
	code, out, _ := sgplab("status", "--db", db, cfg)
	if code != 0 || !strings.Contains(out, "unconverged") {
		t.Fatalf("status: exit %d\n%s", code, out)
	}
	seen := 0
	for _, line := range strings.Split(out, "\n") {
		// Columns: experiment grid profile total done failed interrupted running pending stale unconverged.
		if f := strings.Fields(line); len(f) == 11 && f[0] == "exp" {
			seen++
			if want := map[string]string{"a": "0", "b": "1"}[f[1]]; f[10] != want {
				t.Errorf("status: grid %s has %s unconverged, want %s\n%s", f[1], f[10], want, out)
			}
		}
	}
	if seen != 2 {
		t.Errorf("status shows %d grids of exp, want 2:\n%s", seen, out)
	}

	// NPY: one array per run and an index.
	npy := filepath.Join(dir, "npy")
	if code, out, errOut := sgplab("results", "export", cfg, "--what", "z", "--format", "npy", "-o", npy); code != 0 || !strings.Contains(out, "wrote 2 z array(s)") {
		t.Fatalf("npy: exit %d\n%s%s", code, out, errOut)
	}
	index, _ := os.ReadFile(filepath.Join(npy, "index.z.csv"))
	if rows, err := csv.NewReader(strings.NewReader(string(index))).ReadAll(); err != nil || len(rows) != 3 || rows[1][len(rows[1])-1] != "x0 set" {
		t.Errorf("index.z.csv: %v %v", rows, err)
	}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--db", db, "--what", "z", "--format", "npy"}, 1, "give -o DIR"},
		{[]string{"--db", db, "--format", "npy", "-o", npy}, 1, "npy holds arrays"},
		{[]string{"--db", db, "--long", "--what", "traces"}, 2, "--long is --what metrics"},
		{[]string{"--db", db, "--what", "q"}, 1, `no selected run has an artifact "q"`},
		{[]string{}, 2, "export needs --db"},
	} {
		code, _, errOut := sgplab(append([]string{"results", "export"}, tc.args...)...)
		if code != tc.code || !strings.Contains(errOut, tc.want) {
			t.Errorf("export %v: exit %d, want %d with %q\n%s", tc.args, code, tc.code, tc.want, errOut)
		}
	}
}
