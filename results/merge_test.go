package results

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// shard writes runs into a new database at dir/name.
func shard(t *testing.T, dir, name string, runs ...Run) string {
	t.Helper()
	path := filepath.Join(dir, name)
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i, r := range runs {
		m := sampleMetrics(3)
		m[0].Value = float64(i) + 0.5
		if r.Status == StatusRunning {
			m = nil
		}
		if err := s.SaveRun(r, m, sampleTrace(4)); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

func runAt(id, status string, finished time.Time) Run {
	r := sampleRun(id)
	r.Status, r.Finished = status, finished
	r.Host = fmt.Sprintf("%s@%d", status, finished.Unix())
	return r
}

// stored is one copy of a run for the merge tests: its status, when it
// finished (relative to t0; ignored for running), its result (rmse) and
// its train_seconds, from which the measured metrics (times, load, peak
// RSS) that differ between executions are made.
type stored struct {
	status     string
	finishedAt time.Duration
	rmse       float64
	secs       float64
}

// save writes the copy c of run id (experiment exp, grid grid) into a new
// database dir/name, with a trace whose length tells the copies apart.
func (c stored) save(t *testing.T, dir, name, id string) string {
	t.Helper()
	r := sampleRun(id)
	r.Status = c.status
	r.Finished = time.Time{}
	if c.status != StatusRunning {
		r.Finished = t0.Add(c.finishedAt)
	}
	r.Host = fmt.Sprintf("%s+%v", c.status, c.finishedAt)
	var m []Metric
	if c.status != StatusRunning && c.status != StatusInterrupted {
		m = []Metric{{"rmse", c.rmse}, {"train_seconds", c.secs}, {"iters_per_second", 100 / c.secs}, {"x_load_avg_1m", c.secs / 7},
			{"x_peak_rss_bytes", 1e8 * c.secs}}
	}
	path := filepath.Join(dir, name)
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.SaveRun(r, m, sampleTrace(len(name)+int(c.finishedAt/time.Minute))); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestMergeStatusOrder: of two copies of one run a merge keeps the one
// with the higher status (done > failed > interrupted = running), the
// later-finished one of equal non-done statuses, dst's of two identical
// done copies, and reports two differing done copies as a conflict unless a
// Prefer rule settles it. The first case is the repro: a done run
// offered again as an interrupted copy that finished later.
func TestMergeStatusOrder(t *testing.T) {
	const h = time.Hour
	done := func(at time.Duration, rmse float64) stored { return stored{StatusDone, at, rmse, 1 + at.Hours()} }
	for _, c := range []struct {
		name     string
		dst, src stored
		prefer   Prefer
		want     string // "dst", "src" or "conflict"
		report   MergeReport
	}{
		{"done kept over a later interrupted copy", done(0, 0.1), stored{StatusInterrupted, h, 0, 0}, "", "dst", MergeReport{Lesser: 1}},
		{"done kept over a running copy", done(0, 0.1), stored{StatusRunning, 0, 0, 0}, "", "dst", MergeReport{Lesser: 1}},
		{"done kept over a later failed copy", done(0, 0.1), stored{StatusFailed, h, 0.3, 1}, "", "dst", MergeReport{Lesser: 1}},
		{"failed replaced by an earlier done copy", stored{StatusFailed, h, 0.3, 1}, done(0, 0.1), "", "src", MergeReport{Replaced: 1}},
		{"interrupted replaced by done", stored{StatusInterrupted, h, 0, 0}, done(0, 0.1), "", "src", MergeReport{Replaced: 1}},
		{"failed kept over a later interrupted copy", stored{StatusFailed, 0, 0.3, 1}, stored{StatusInterrupted, h, 0, 0}, "", "dst", MergeReport{Lesser: 1}},
		{"interrupted replaced by an earlier failed copy", stored{StatusInterrupted, h, 0, 0}, stored{StatusFailed, 0, 0.3, 1}, "", "src", MergeReport{Replaced: 1}},
		{"interrupted replaced by a later interrupted copy", stored{StatusInterrupted, 0, 0, 0}, stored{StatusInterrupted, h, 0, 0}, "", "src", MergeReport{Replaced: 1}},
		{"interrupted kept over an earlier interrupted copy", stored{StatusInterrupted, h, 0, 0}, stored{StatusInterrupted, 0, 0, 0}, "", "dst", MergeReport{}},
		{"running replaced by interrupted", stored{StatusRunning, 0, 0, 0}, stored{StatusInterrupted, h, 0, 0}, "", "src", MergeReport{Replaced: 1}},
		{"failed replaced by a later failed copy", stored{StatusFailed, 0, 0.3, 1}, stored{StatusFailed, h, 0.4, 2}, "", "src", MergeReport{Replaced: 1}},
		{"identical done copies: dst kept", done(0, 0.1), done(h, 0.1), "", "dst", MergeReport{}},
		{"identical done copies: dst kept whatever the rule", done(0, 0.1), done(h, 0.1), PreferNewer, "dst", MergeReport{}},
		{"differing done copies conflict", done(0, 0.1), done(h, 0.2), "", "conflict", MergeReport{}},
		{"newer: later src taken", done(0, 0.1), done(h, 0.2), PreferNewer, "src", MergeReport{Replaced: 1, Resolved: 1}},
		{"newer: earlier src not taken", done(h, 0.1), done(0, 0.2), PreferNewer, "dst", MergeReport{Resolved: 1}},
		{"older: earlier src taken", done(h, 0.1), done(0, 0.2), PreferOlder, "src", MergeReport{Replaced: 1, Resolved: 1}},
		{"older: later src not taken", done(0, 0.1), done(h, 0.2), PreferOlder, "dst", MergeReport{Resolved: 1}},
		{"dst: kept", done(0, 0.1), done(h, 0.2), PreferDst, "dst", MergeReport{Resolved: 1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			dst := c.dst.save(t, dir, "dst.db", "r1")
			src := c.src.save(t, dir, "source.db", "r1")
			want := map[string]stored{"dst": c.dst, "src": c.src, "conflict": c.dst}[c.want]
			wantTrace := map[string]int{"dst": len("dst.db"), "src": len("source.db"), "conflict": len("dst.db")}[c.want] +
				int(want.finishedAt/time.Minute)

			rep, err := MergeWith(dst, MergeOptions{Prefer: c.prefer}, src)
			var ce *ConflictError
			switch {
			case c.want == "conflict":
				if !errors.As(err, &ce) || len(ce.Conflicts) != 1 || ce.Conflicts[0].ID != "r1" {
					t.Fatalf("err = %v, want a conflict on run r1", err)
				}
			case err != nil:
				t.Fatal(err)
			case rep != c.report:
				t.Errorf("report = %+v, want %+v", rep, c.report)
			}

			s, err := OpenReadOnly(dst)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			r, _, err := s.Run("r1")
			if err != nil {
				t.Fatal(err)
			}
			if r.Status != want.status || r.Host != fmt.Sprintf("%s+%v", want.status, want.finishedAt) {
				t.Errorf("stored copy: %s from %s, want %s", r.Status, r.Host, c.want)
			}
			m, _ := s.Metrics("r1")
			tr, _ := s.Trace("r1")
			if len(tr) != wantTrace {
				t.Errorf("trace has %d points, want %d (%s's)", len(tr), wantTrace, c.want)
			}
			if want.status == StatusDone && (len(m) != 5 || m[1].Name != "rmse" || m[1].Value != want.rmse) {
				t.Errorf("metrics = %v, want %s's with rmse %g", m, c.want, want.rmse)
			}
		})
	}
}

// TestMergeNeverLowersStatus: whichever order two copies are merged in,
// the merged status is the higher one.
func TestMergeNeverLowersStatus(t *testing.T) {
	rank := map[string]int{StatusRunning: 1, StatusInterrupted: 1, StatusFailed: 2, StatusDone: 3}
	statuses := []string{StatusRunning, StatusInterrupted, StatusFailed, StatusDone}
	for _, a := range statuses {
		for _, b := range statuses {
			for _, order := range [][2]int{{0, 1}, {1, 0}} {
				dir := t.TempDir()
				copies := [2]string{
					stored{a, time.Hour, 0.1, 1}.save(t, dir, "a.db", "r1"),
					stored{b, 2 * time.Hour, 0.1, 2}.save(t, dir, "b.db", "r1"),
				}
				out := filepath.Join(dir, "out.db")
				if _, err := Merge(out, copies[order[0]], copies[order[1]]); err != nil {
					t.Fatalf("%s, %s: %v", a, b, err)
				}
				s, err := OpenReadOnly(out)
				if err != nil {
					t.Fatal(err)
				}
				st, _, err := s.RunStatus("r1")
				s.Close()
				if err != nil || rank[st] != max(rank[a], rank[b]) {
					t.Errorf("merge of %s and %s (order %v) stored %s (%v)", a, b, order, st, err)
				}
			}
		}
	}
}

func TestMergeIdempotent(t *testing.T) {
	dir := t.TempDir()
	later := t0.Add(time.Hour)
	a := shard(t, dir, "a.db", runAt("r1", StatusDone, t0), runAt("r2", StatusDone, t0), runAt("r3", StatusRunning, time.Time{}))
	b := shard(t, dir, "b.db", runAt("r1", StatusDone, t0.Add(-time.Hour)), runAt("r3", StatusDone, later), runAt("r4", StatusFailed, t0))
	dst := filepath.Join(dir, "out", "merged.db")

	rep, err := MergeWith(dst, MergeOptions{}, a, b)
	if err != nil {
		t.Fatal(err)
	}
	// a: r1 r2 r3 new; b: r1 the same result (kept), r3 done (replaces running), r4 new.
	if want := (MergeReport{Added: 4, Replaced: 1}); rep != want {
		t.Errorf("first merge: %+v, want %+v", rep, want)
	}
	for i := range 2 {
		again, err := MergeWith(dst, MergeOptions{}, a, b, a)
		if err != nil {
			t.Fatal(err)
		}
		if again.Written() != 0 || again.Lesser != 2 {
			t.Errorf("merge %d again: %+v, want nothing written and a's running r3 twice lesser", i+2, again)
		}
	}
	s, err := OpenReadOnly(dst)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, rows, err := s.Query(`SELECT (SELECT count(*) FROM runs), (SELECT count(*) FROM metrics),
		(SELECT count(*) FROM traces), (SELECT count(*) FROM run_params)`)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(rows[0]); got != "[4 12 16 16]" {
		t.Errorf("row counts runs/metrics/traces/params = %s, want [4 12 16 16]", got)
	}
	for id, wantHost := range map[string]string{
		"r1": fmt.Sprintf("done@%d", t0.Unix()),
		"r3": fmt.Sprintf("done@%d", later.Unix()),
		"r4": fmt.Sprintf("failed@%d", t0.Unix()),
	} {
		r, _, err := s.Run(id)
		if err != nil || r.Host != wantHost {
			t.Errorf("run %s comes from %q (%v), want %q", id, r.Host, err, wantHost)
		}
	}
	m, _ := s.Metrics("r3")
	if len(m) != 3 || m[0].Value != 1.5 {
		t.Errorf("r3 metrics = %v, want b's", m)
	}
}

// TestMergeConflictReport: differing done copies are all reported, by run
// id, with both databases and the metrics that differ, and nothing is
// merged: an existing destination keeps its runs and a new one is removed.
func TestMergeConflictReport(t *testing.T) {
	dir := t.TempDir()
	a := shard(t, dir, "a.db", runAt("r1", StatusDone, t0), runAt("r2", StatusDone, t0), runAt("r3", StatusDone, t0))
	b := shard(t, dir, "b.db", runAt("r0", StatusDone, t0), runAt("r2", StatusDone, t0), runAt("r1", StatusDone, t0))
	// r1: 0.5 in a, 2.5 in b; r2: 1.5 in both.
	fresh := filepath.Join(dir, "fresh.db")
	_, err := Merge(fresh, a, b)
	var ce *ConflictError
	if !errors.As(err, &ce) {
		t.Fatalf("err = %v, want a *ConflictError", err)
	}
	if len(ce.Conflicts) != 1 {
		t.Fatalf("conflicts = %+v, want r1 only", ce.Conflicts)
	}
	c := ce.Conflicts[0]
	if c.ID != "r1" || c.Copies[0].Source != a || c.Copies[1].Source != b || c.Diff != "accuracy 0.5 vs 2.5" {
		t.Errorf("conflict = %+v", c)
	}
	for _, want := range []string{"run r1 (vish-table1 sgpr kin40k split=3 seed=9223372036854775813)", "accuracy 0.5 vs 2.5", a, b, "nothing merged"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if _, err := os.Stat(fresh); !os.IsNotExist(err) {
		t.Errorf("a conflicting merge left the new destination behind (%v)", err)
	}
	existing := shard(t, dir, "existing.db", runAt("e1", StatusDone, t0))
	if _, err := Merge(existing, a, b); !errors.As(err, &ce) {
		t.Fatalf("err = %v, want a *ConflictError", err)
	}
	s, err := OpenReadOnly(existing)
	if err != nil {
		t.Fatal(err)
	}
	_, rows, err := s.Query("SELECT id FROM runs")
	s.Close()
	if err != nil || len(rows) != 1 {
		t.Errorf("destination after a conflicting merge holds %v (%v), want only e1", rows, err)
	}
}

func TestResultDiff(t *testing.T) {
	nan := func() float64 { var z float64; return z / z }()
	for _, c := range []struct {
		a, b []Metric
		want string
	}{
		{[]Metric{{"rmse", 1}, {"train_seconds", 3}, {"x_cpu_seconds", 1}}, []Metric{{"rmse", 1}, {"train_seconds", 4}, {"iters_per_second", 9}}, ""},
		{[]Metric{{"rmse", nan}}, []Metric{{"rmse", nan}}, ""},
		{[]Metric{{"rmse", 1}}, []Metric{{"rmse", 1.0000000000000002}}, "rmse 1 vs 1.0000000000000002"},
		{[]Metric{{"rmse", 1}}, []Metric{{"rmse", nan}}, "rmse 1 vs NaN"},
		{[]Metric{{"rmse", 1}, {"x_gap", 2}}, []Metric{{"rmse", 1}, {"elbo", 2}}, "elbo only in the second, x_gap only in the first"},
		{[]Metric{{"a", 1}, {"b", 1}, {"c", 1}, {"d", 1}}, []Metric{{"a", 2}, {"b", 2}, {"c", 2}, {"d", 2}}, "a 1 vs 2, b 1 vs 2, c 1 vs 2 and 1 more"},
	} {
		if got := resultDiff(c.a, c.b); got != c.want {
			t.Errorf("resultDiff(%v, %v) = %q, want %q", c.a, c.b, got, c.want)
		}
	}
}

// TestMergeForeign: databases holding different experiments (the spec's
// experiment) under one grid name are refused unless AllowForeign; other
// grid names, and a grid the destination already holds for both, merge.
func TestMergeForeign(t *testing.T) {
	dir := t.TempDir()
	exp := func(id, experiment, grid string) Run {
		r := runAt(id, StatusDone, t0)
		r.Grid = grid
		r.Spec = fmt.Sprintf(`{"experiment":%q,"grid":%q,"id":%q}`, experiment, grid, id)
		return r
	}
	demo := shard(t, dir, "demo.db", exp("d1", "demo", "m-sweep"), exp("d2", "demo", "table"))
	csv := shard(t, dir, "csv.db", exp("c1", "csv", "m-sweep"))
	other := shard(t, dir, "other.db", exp("o1", "other", "own-grid"), runAt("n1", StatusDone, t0))

	out := filepath.Join(dir, "out.db")
	_, err := Merge(out, demo, csv)
	var fe *ForeignError
	if !errors.As(err, &fe) || len(fe.Grids) != 1 {
		t.Fatalf("err = %v, want a *ForeignError for grid m-sweep", err)
	}
	if g := fe.Grids[0]; g != (ForeignGrid{Grid: "m-sweep", Experiment: "csv", Source: csv, Other: "demo", OtherSource: demo}) {
		t.Errorf("foreign grid = %+v", g)
	}
	if !strings.Contains(err.Error(), `grid "m-sweep": experiment "csv" in `+csv+`, experiment "demo" in `+demo) {
		t.Errorf("error does not name the grid, both experiments and both files: %v", err)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a refused merge left %s behind", out)
	}
	if n, err := Merge(out, demo, other); err != nil || n != 4 {
		t.Fatalf("merge of experiments with distinct grid names: %d, %v", n, err)
	}
	if _, err := Merge(out, csv); !errors.As(err, &fe) || fe.Grids[0].OtherSource != out {
		t.Fatalf("merging csv into the demo database: %v, want a *ForeignError naming %s", err, out)
	}
	rep, err := MergeWith(out, MergeOptions{AllowForeign: true}, csv)
	if err != nil || rep.Added != 1 {
		t.Fatalf("merge with AllowForeign: %+v, %v", rep, err)
	}
	// out now holds both under m-sweep; adding either again is no new mix.
	if _, err := Merge(out, demo, csv); err != nil {
		t.Errorf("re-merging experiments the destination already mixes: %v", err)
	}
}

func TestMergeErrors(t *testing.T) {
	dir := t.TempDir()
	a := shard(t, dir, "a.db", runAt("r1", StatusDone, t0))
	for _, c := range []struct {
		name string
		dst  string
		srcs []string
		opt  MergeOptions
		want string
	}{
		{"missing source", filepath.Join(dir, "m.db"), []string{filepath.Join(dir, "nope.db")}, MergeOptions{}, "nope.db does not exist"},
		{"source is destination", a, []string{a}, MergeOptions{}, "is the destination"},
		{"bad destination", filepath.Join(a, "x.db"), []string{a}, MergeOptions{}, "cannot create directory"},
		{"bad rule", filepath.Join(dir, "m.db"), []string{a}, MergeOptions{Prefer: "latest"}, `unknown merge rule "latest": use newer, older or dst`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := MergeWith(c.dst, c.opt, c.srcs...)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want %q", err, c.want)
			}
		})
	}
	if fi, err := os.Stat(a); err != nil || fi.Size() == 0 {
		t.Errorf("source damaged: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "m.db")); !os.IsNotExist(err) {
		t.Errorf("a refused merge created its destination (%v)", err)
	}
}
