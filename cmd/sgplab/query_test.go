package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sgplab/results"
)

// queryFixture writes X.db (two done runs with metrics and traces) into a
// new working directory and returns the directory.
func queryFixture(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	t.Chdir(dir)
	s, err := results.Open("X.db")
	if err != nil {
		t.Fatal(err)
	}
	for i, method := range []string{"sgpr", "svgp"} {
		r := results.Run{ID: fmt.Sprintf("r%d", i), Grid: "g", Method: method, Dataset: "gp-sample",
			Status: results.StatusDone, Finished: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
			Params: []results.Param{{Name: "num_inducing", Value: "10"}}}
		m := []results.Metric{{Name: "rmse", Value: 0.1 * float64(i+1)}, {Name: "elbo", Value: 30}}
		tr := []results.TracePoint{{Iteration: 0, Objective: -50}, {Iteration: 500, Objective: -30}}
		if err := s.SaveRun(r, m, tr); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

// snapshot is the working directory's file names with the bytes of each
// (SQLite's -shm index aside, which readers write their read marks to).
func snapshot(t *testing.T, dir string) string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, e := range entries {
		b.WriteString(e.Name())
		if !strings.HasSuffix(e.Name(), "-shm") {
			data, _ := os.ReadFile(filepath.Join(dir, e.Name()))
			fmt.Fprintf(&b, " %x", data)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// TestQueryReadOnly runs the statements through `sgplab query`:
// each exits 1 naming what it refused and leaves the directory as it was
// (before: exit 0, every run deleted, metrics zeroed, runs dropped, new.db
// and the VACUUM INTO copy created). An empty SQL string exits 2; the
// README's queries still work.
func TestQueryReadOnly(t *testing.T) {
	dir := queryFixture(t)
	other := t.TempDir() // VACUUM INTO's "anywhere"
	run := func(sql string) (int, string) {
		var out, errb bytes.Buffer
		code := Main([]string{"query", "--db", "X.db", sql}, &out, &errb)
		return code, out.String() + errb.String()
	}
	run("SELECT 1") // a reader of a WAL database creates its -wal and -shm files once
	before := snapshot(t, dir)
	for _, c := range []struct {
		sql  string
		code int
		want string
	}{
		{"ATTACH DATABASE 'X.db' AS w; DELETE FROM w.runs", 1, `refuses attaching "X.db"`},
		{"ATTACH DATABASE 'X.db' AS w; UPDATE w.metrics SET value = 0", 1, `refuses attaching "X.db"`},
		{"ATTACH DATABASE 'X.db' AS w; DROP TABLE w.runs", 1, `refuses attaching "X.db"`},
		{"ATTACH 'new.db' AS n; CREATE TABLE n.t AS SELECT * FROM runs", 1, `refuses attaching "new.db"`},
		{"VACUUM INTO '" + filepath.Join(other, "anywhere.db") + "'", 1, "(ATTACH, or VACUUM, which attaches its target)"},
		{"PRAGMA writable_schema = ON", 1, "refuses PRAGMA writable_schema"},
		{"DELETE FROM runs", 1, "refuses DELETE from runs"},
		{"SELECT 1; UPDATE metrics SET value = 0", 1, "refuses UPDATE of metrics"},
		{"SELECT load_extension('libx')", 1, "refuses the function load_extension"},
		{"", 2, "the SQL is empty"},
		{"   ", 2, "the SQL is empty"},
		{"/* nothing */", 2, "no SQL statement to run"},
		{"SELECT method, AVG(value) AS rmse FROM run_metrics WHERE metric = 'rmse' GROUP BY method", 0, "sgpr     0.1"},
		{`
  SELECT p.num AS m, r.method, AVG(m.value) AS elbo
  FROM run_metrics m JOIN run_params_v p ON p.run_id = m.run_id AND p.param = 'num_inducing'
  JOIN runs r ON r.id = m.run_id
  WHERE m.metric = 'elbo' GROUP BY m, r.method ORDER BY r.method, m`, 0, "10  svgp      30"},
		{"SELECT iteration, objective FROM traces WHERE run_id = (SELECT id FROM runs WHERE method = 'svgp' LIMIT 1) AND iteration % 500 = 0", 0, "      500        -30"},
		{"SELECT id, method, dataset, split, error FROM runs WHERE status = 'failed'", 0, "id  method  dataset  split  error"},
		{"PRAGMA table_info(runs)", 0, "provenance"},
	} {
		code, out := run(c.sql)
		if code != c.code || !strings.Contains(out, c.want) {
			t.Errorf("sgplab query %q: exit %d, output %q; want exit %d and %q", c.sql, code, out, c.code, c.want)
		}
		if after := snapshot(t, dir); after != before {
			t.Fatalf("sgplab query %q changed %s", c.sql, dir)
		}
	}
	if entries, _ := os.ReadDir(other); len(entries) != 0 {
		t.Errorf("VACUUM INTO wrote %v", entries)
	}
}
