package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// pruneConfig is a grid file with a report; version 1 sweeps m over 1, 2, 3
// on n = 50 points, version 2 (the current one) m over 1, 2 on n = 60, so
// every run of version 1 is stale under version 2.
func pruneConfig(ms string, n int) string {
	return fmt.Sprintf(`name = "prune"
[[grid]]
name = "g"
methods = ["cli-test-mean"]
datasets = ["gp-sample"]
splits = [0, 1]
iterations = 1
[grid.params]
m = %s
[grid.dataset]
n = %d
n_test = 20

[[table]]
name = "table-m"
title = "RMSE by m"
grid = "g"
rows = "param:m"
columns = "method"
metric = "rmse"

[[claim]]
text = "every current run is reported"
query = "SELECT COUNT(*) FROM runs r JOIN run_metrics m ON m.run_id = r.id WHERE m.metric = 'rmse'"
expect = "= 4"
`, ms, n)
}

func TestReportAndPruneIgnoreStaleRuns(t *testing.T) {
	dir := t.TempDir()
	v1 := filepath.Join(dir, "v1", "prune.toml")
	cur := filepath.Join(dir, "prune.toml")
	os.MkdirAll(filepath.Dir(v1), 0o755)
	os.WriteFile(v1, []byte(pruneConfig("[1, 2, 3]", 50)), 0o644)
	os.WriteFile(cur, []byte(pruneConfig("[1, 2]", 60)), 0o644)
	run := func(args ...string) string {
		t.Helper()
		var out, errb bytes.Buffer
		if code := Main(args, &out, &errb); code != 0 {
			t.Fatalf("sgplab %v: exit %d\n%s%s", args, code, out.String(), errb.String())
		}
		return out.String() + errb.String()
	}
	count := func(db string) string {
		t.Helper()
		return run("query", "--db", db, "--format", "csv", "SELECT COUNT(*) AS n FROM runs")
	}
	// Old and current runs come from two shards merged into one database.
	oldDB, curDB, merged := filepath.Join(dir, "old.db"), filepath.Join(dir, "cur.db"), filepath.Join(dir, "merged.db")
	run("run", "--quiet", "--db", oldDB, v1)
	run("run", "--quiet", "--db", curDB, cur)
	run("results", "merge", oldDB, curDB, "-o", merged)
	if s := count(merged); !strings.Contains(s, "n\n10") {
		t.Fatalf("merged database: %s", s)
	}

	// status counts the stale runs beside the current ones.
	st := run("status", "--db", merged, cur)
	if !strings.Contains(st, "stale") || !regexp.MustCompile(`prune\s+g\s+full\s+4\s+4\s+0\s+0\s+0\s+0\s+6`).MatchString(st) {
		t.Errorf("status does not show 4 done and 6 stale:\n%s", st)
	}

	out := filepath.Join(dir, "report")
	s := run("report", "--db", merged, "--out", out, "--formats", "svg", cur)
	if !strings.Contains(s, "4 of 4 done") || !strings.Contains(s, "6 stale run(s) ignored") {
		t.Errorf("report output:\n%s", s)
	}
	idx, err := os.ReadFile(filepath.Join(out, "index.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"exactly the 4 run(s)", "6 stale run(s)", "`sgplab results prune --profile full --db " + merged,
		"| every current run is reported | ", "| = 4 | 4 | reproduced: convergence not checked"} {
		if !strings.Contains(string(idx), want) {
			t.Errorf("index.md lacks %q:\n%s", want, idx)
		}
	}
	table, err := os.ReadFile(filepath.Join(out, "table-m.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(table), "\n3,") || !strings.Contains(string(table), "\n2,") {
		t.Errorf("table has a row for the stale m = 3 or lacks m = 2:\n%s", table)
	}

	// Prune: the dry run deletes nothing; the real one exactly the stale runs.
	s = run("results", "prune", "--dry-run", "--db", merged, cur)
	if !strings.Contains(s, "would delete 6 stale run(s)") || strings.Count(s, "grid g, profile full") != 6 {
		t.Errorf("dry run:\n%s", s)
	}
	if s := count(merged); !strings.Contains(s, "n\n10") {
		t.Fatalf("dry run deleted runs: %s", s)
	}
	s = run("results", "prune", "--db", merged, cur)
	if !strings.Contains(s, "deleted 6 stale run(s)") || !strings.Contains(s, "4 run(s) of its grids are current") {
		t.Errorf("prune:\n%s", s)
	}
	left := run("query", "--db", merged, "--format", "csv", "SELECT id FROM runs ORDER BY id")
	want := run("query", "--db", curDB, "--format", "csv", "SELECT id FROM runs ORDER BY id")
	if left != want {
		t.Errorf("after pruning the database holds\n%s\nwant the current runs\n%s", left, want)
	}
	orphans := run("query", "--db", merged, "--format", "csv", `SELECT
		(SELECT COUNT(*) FROM metrics WHERE run_id NOT IN (SELECT id FROM runs)) +
		(SELECT COUNT(*) FROM traces WHERE run_id NOT IN (SELECT id FROM runs)) +
		(SELECT COUNT(*) FROM run_params WHERE run_id NOT IN (SELECT id FROM runs)) AS n`)
	if !strings.Contains(orphans, "n\n0") {
		t.Errorf("rows of deleted runs remain: %s", orphans)
	}
	if s := run("results", "prune", "--db", merged, cur); !strings.Contains(s, "deleted 0 stale run(s)") {
		t.Errorf("second prune:\n%s", s)
	}
	if s := run("report", "--db", merged, "--out", out, "--formats", "svg", cur); !strings.Contains(s, "0 stale run(s) ignored") {
		t.Errorf("report after pruning:\n%s", s)
	}
}

// A report before anything ran says what is missing and how to run it.
func TestReportWithoutDatabase(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "prune.toml")
	os.WriteFile(cfg, []byte(pruneConfig("[1, 2]", 60)), 0o644)
	out := filepath.Join(dir, "report")
	db := filepath.Join(dir, "none.db")
	var stdout, stderr bytes.Buffer
	if code := Main([]string{"report", "--db", db, "--out", out, "--formats", "svg", cfg}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
	if _, err := os.Stat(db); err == nil {
		t.Error("report created the database")
	}
	idx, err := os.ReadFile(filepath.Join(out, "index.md"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "0 done, 0 failed, 0 unfinished (interrupted or running), 4 not run yet. `sgplab run --profile full --db " + db; !strings.Contains(string(idx), want) {
		t.Errorf("index.md lacks %q:\n%s", want, idx)
	}
	var o, e bytes.Buffer
	if code := Main([]string{"results", "prune", "--db", db, cfg}, &o, &e); code != 1 || !strings.Contains(e.String(), "nothing to prune") {
		t.Errorf("prune without a database: exit %d, %s%s", code, o.String(), e.String())
	}
}
