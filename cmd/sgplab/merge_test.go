package main

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sgplab/results"
)

// mergeCopy writes one copy of run "r1" of experiment exp, grid "g", into a
// new database dir/name and returns its path.
func mergeCopy(t *testing.T, dir, name, exp, status string, finished time.Time, rmse float64, tracePoints int) string {
	t.Helper()
	s, err := results.Open(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r := results.Run{ID: "r1", Grid: "g", Spec: fmt.Sprintf(`{"experiment":%q,"grid":"g"}`, exp),
		Method: "svgp", Dataset: "gp-sample", Status: status, Started: finished.Add(-time.Second), Finished: finished}
	var m []results.Metric
	if status == results.StatusDone {
		m = []results.Metric{{Name: "rmse", Value: rmse}, {Name: "elbo", Value: 33.9}, {Name: "train_seconds", Value: float64(tracePoints)}}
	}
	trace := make([]results.TracePoint, tracePoints)
	for i := range trace {
		trace[i] = results.TracePoint{Iteration: i, Objective: -float64(i)}
	}
	if err := s.SaveRun(r, m, trace); err != nil {
		t.Fatal(err)
	}
	return s.Path()
}

func storedRun(t *testing.T, db string) string {
	t.Helper()
	s, err := results.OpenReadOnly(db)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, rows, err := s.Query(`SELECT status, (SELECT count(*) FROM metrics), (SELECT count(*) FROM traces),
		(SELECT value FROM metrics WHERE name = 'rmse') FROM runs`)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprint(rows)
}

// TestMergeCLI runs `sgplab results merge` on the repro (a done run
// and an interrupted copy of it that finished later: before, the copy
// replaced it, "merged 1 new or updated runs", exit 0) and on conflicts and
// foreign grids, which exit 1 with what to do.
func TestMergeCLI(t *testing.T) {
	t1 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	t2 := t1.Add(5 * time.Second)
	for _, c := range []struct {
		name       string
		a, b       func(t *testing.T, dir string) string
		flags      []string
		code       int
		want       string // in stdout+stderr
		wantStored string
	}{
		{"issue repro: done kept over a later interrupted copy",
			func(t *testing.T, dir string) string {
				return mergeCopy(t, dir, "A.db", "long", results.StatusDone, t1, 0.0789, 30001)
			},
			func(t *testing.T, dir string) string {
				return mergeCopy(t, dir, "B.db", "long", results.StatusInterrupted, t2, 0, 7510)
			},
			nil, 0, "merged 1 new and 0 updated runs into M.db; kept 1 run(s) over a copy with a lesser status (done > failed > interrupted, running)\n",
			"[[done 3 30001 0.0789]]"},
		{"interrupted then done",
			func(t *testing.T, dir string) string {
				return mergeCopy(t, dir, "B.db", "long", results.StatusInterrupted, t2, 0, 7510)
			},
			func(t *testing.T, dir string) string {
				return mergeCopy(t, dir, "A.db", "long", results.StatusDone, t1, 0.0789, 30001)
			},
			nil, 0, "merged 1 new and 1 updated runs into M.db\n", "[[done 3 30001 0.0789]]"},
		{"identical done copies",
			func(t *testing.T, dir string) string {
				return mergeCopy(t, dir, "A.db", "long", results.StatusDone, t1, 0.0789, 30001)
			},
			func(t *testing.T, dir string) string {
				return mergeCopy(t, dir, "B.db", "long", results.StatusDone, t2, 0.0789, 30000)
			},
			nil, 0, "merged 1 new and 0 updated runs into M.db\n", "[[done 3 30001 0.0789]]"},
		{"differing done copies conflict",
			func(t *testing.T, dir string) string {
				return mergeCopy(t, dir, "A.db", "long", results.StatusDone, t1, 0.0789, 30001)
			},
			func(t *testing.T, dir string) string {
				return mergeCopy(t, dir, "B.db", "long", results.StatusDone, t2, 0.0791, 30001)
			},
			nil, 1, "run r1 (g svgp gp-sample split=0 seed=0): rmse 0.0789 vs 0.0791", "no M.db"},
		{"conflict settled by --prefer newer",
			func(t *testing.T, dir string) string {
				return mergeCopy(t, dir, "A.db", "long", results.StatusDone, t1, 0.0789, 30001)
			},
			func(t *testing.T, dir string) string {
				return mergeCopy(t, dir, "B.db", "long", results.StatusDone, t2, 0.0791, 30000)
			},
			[]string{"--prefer", "newer"}, 0, "merged 1 new and 1 updated runs into M.db; settled 1 done run(s) with different metrics by --prefer newer\n",
			"[[done 3 30000 0.0791]]"},
		{"bad --prefer",
			func(t *testing.T, dir string) string {
				return mergeCopy(t, dir, "A.db", "long", results.StatusDone, t1, 0.0789, 30001)
			},
			func(t *testing.T, dir string) string {
				return mergeCopy(t, dir, "B.db", "long", results.StatusDone, t2, 0.0791, 30000)
			},
			[]string{"--prefer", "latest"}, 2, `--prefer "latest": want newer, older or dst`, "no M.db"},
		{"foreign experiments under one grid name",
			func(t *testing.T, dir string) string {
				return mergeCopy(t, dir, "A.db", "long", results.StatusDone, t1, 0.0789, 30001)
			},
			func(t *testing.T, dir string) string {
				s, err := results.Open(filepath.Join(dir, "B.db"))
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				r := results.Run{ID: "other", Grid: "g", Spec: `{"experiment":"short","grid":"g"}`, Method: "sgpr", Dataset: "gp-sample", Status: results.StatusDone}
				if err := s.SaveRun(r, nil, nil); err != nil {
					t.Fatal(err)
				}
				return s.Path()
			},
			nil, 1, `grid "g": experiment "short" in`, "no M.db"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			t.Chdir(dir)
			a, b := c.a(t, dir), c.b(t, dir)
			var out, errb bytes.Buffer
			code := Main(append([]string{"results", "merge", a, b, "-o", "M.db"}, c.flags...), &out, &errb)
			all := out.String() + errb.String()
			t.Logf("sgplab results merge A.db B.db -o M.db %s\n%s(exit %d)", strings.Join(c.flags, " "), all, code)
			if code != c.code || !strings.Contains(all, c.want) {
				t.Errorf("exit %d, output %q; want exit %d and %q", code, all, c.code, c.want)
			}
			if c.code == 1 && !strings.Contains(all, "--prefer newer") && !strings.Contains(all, "--allow-foreign") {
				t.Errorf("a refused merge does not say how to go on: %q", all)
			}
			got := "no M.db"
			if _, err := results.OpenReadOnly("M.db"); err == nil {
				got = storedRun(t, "M.db")
			}
			if got != c.wantStored {
				t.Errorf("M.db holds %s, want %s", got, c.wantStored)
			}
		})
	}
}

// TestMergeCLIAllowForeign: --allow-foreign merges the runs a foreign grid
// check refused.
func TestMergeCLIAllowForeign(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	t1 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	a := mergeCopy(t, dir, "A.db", "long", results.StatusDone, t1, 0.0789, 3)
	s, err := results.Open(filepath.Join(dir, "B.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SaveRun(results.Run{ID: "other", Grid: "g", Spec: `{"experiment":"short"}`, Method: "sgpr", Dataset: "gp-sample", Status: results.StatusDone}, nil, nil); err != nil {
		t.Fatal(err)
	}
	s.Close()
	var out, errb bytes.Buffer
	if code := Main([]string{"results", "merge", "--allow-foreign", a, s.Path(), "-o", "M.db"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if want := "merged 2 new and 0 updated runs into M.db\n"; out.String() != want {
		t.Errorf("stdout %q, want %q", out.String(), want)
	}
}
