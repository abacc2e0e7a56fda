package results

import (
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

func TestMergeIdempotent(t *testing.T) {
	dir := t.TempDir()
	later := t0.Add(time.Hour)
	a := shard(t, dir, "a.db", runAt("r1", StatusDone, t0), runAt("r2", StatusDone, t0), runAt("r3", StatusRunning, time.Time{}))
	b := shard(t, dir, "b.db", runAt("r3", StatusDone, later), runAt("r4", StatusFailed, t0), runAt("r1", StatusDone, t0.Add(-time.Hour)))
	dst := filepath.Join(dir, "out", "merged.db")

	added, err := Merge(dst, a, b)
	if err != nil {
		t.Fatal(err)
	}
	// a: r1 r2 r3 new; b: r3 finished later (replaces), r4 new, r1 older (kept).
	if added != 5 {
		t.Errorf("first merge added %d, want 5", added)
	}
	for i := range 2 {
		again, err := Merge(dst, a, b, a)
		if err != nil {
			t.Fatal(err)
		}
		if again != 0 {
			t.Errorf("merge %d again added %d, want 0", i+2, again)
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
	if len(m) != 3 || m[0].Value != 0.5 {
		t.Errorf("r3 metrics = %v, want b's", m)
	}
}

func TestMergeErrors(t *testing.T) {
	dir := t.TempDir()
	a := shard(t, dir, "a.db", runAt("r1", StatusDone, t0))
	for _, c := range []struct {
		name string
		dst  string
		srcs []string
		want string
	}{
		{"missing source", filepath.Join(dir, "m.db"), []string{filepath.Join(dir, "nope.db")}, "nope.db does not exist"},
		{"source is destination", a, []string{a}, "is the destination"},
		{"bad destination", filepath.Join(a, "x.db"), []string{a}, "cannot create directory"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Merge(c.dst, c.srcs...)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want %q", err, c.want)
			}
		})
	}
	if fi, err := os.Stat(a); err != nil || fi.Size() == 0 {
		t.Errorf("source damaged: %v", err)
	}
}
