package results

import (
	"database/sql"
	"math"
	"path/filepath"
	"reflect"
	"testing"
)

func sampleHyper() []Hyperparameter {
	return []Hyperparameter{
		{"kernel.lengthscales", 0, 0.5}, {"kernel.lengthscales", 1, 2.25}, {"kernel.lengthscales", 2, math.NaN()},
		{"kernel.variance", 0, 1.5}, {"noise_variance", 0, 0.01},
	}
}

func sameHyper(a, b []Hyperparameter) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || a[i].Index != b[i].Index ||
			!(a[i].Value == b[i].Value || math.IsNaN(a[i].Value) && math.IsNaN(b[i].Value)) {
			return false
		}
	}
	return true
}

// TestHyperparameters: a run's hyperparameters are written with it (one
// row per entry, NaN as NULL), read back by Run, Runs and
// Hyperparameters, replaced when the run is saved again, deleted with it,
// and joined to the run by the run_hyperparameters view.
func TestHyperparameters(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "h.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r := sampleRun("a")
	r.Hyper = sampleHyper()
	if err := s.SaveRun(r, []Metric{{ConvergedMetric, 1}, {RelChangeMetric, 2e-7}, {"iterations", 40}}, nil); err != nil {
		t.Fatal(err)
	}
	got, _, err := s.Run("a")
	if err != nil || !sameHyper(got.Hyper, r.Hyper) {
		t.Fatalf("Run: %v, %v; want %v", got.Hyper, err, r.Hyper)
	}
	runs, err := s.Runs(Filter{})
	if err != nil || len(runs) != 1 || !sameHyper(runs[0].Hyper, r.Hyper) {
		t.Fatalf("Runs: %+v, %v", runs, err)
	}
	_, rows, err := s.Query("SELECT method, name, idx, value FROM run_hyperparameters WHERE run_id = 'a' AND name = 'kernel.lengthscales' ORDER BY idx")
	if err != nil {
		t.Fatal(err)
	}
	want := [][]any{{"sgpr", "kernel.lengthscales", int64(0), 0.5}, {"sgpr", "kernel.lengthscales", int64(1), 2.25}, {"sgpr", "kernel.lengthscales", int64(2), nil}}
	if !reflect.DeepEqual(rows, want) {
		t.Errorf("view rows %v, want %v", rows, want)
	}
	_, rows, err = s.Query("SELECT status, iterations, converged, rel_change FROM run_convergence WHERE run_id = 'a'")
	if err != nil || !reflect.DeepEqual(rows, [][]any{{StatusDone, 40.0, 1.0, 2e-7}}) {
		t.Errorf("run_convergence %v, %v", rows, err)
	}
	r.Hyper = r.Hyper[3:]
	if err := s.SaveRun(r, nil, nil); err != nil {
		t.Fatal(err)
	}
	if h, err := s.Hyperparameters("a"); err != nil || !sameHyper(h, r.Hyper) {
		t.Errorf("after re-saving: %v, %v; want %v", h, err, r.Hyper)
	}
	if _, err := s.DeleteRuns([]string{"a"}); err != nil {
		t.Fatal(err)
	}
	if n := tableRows(t, s, "hyperparameters"); n != 0 {
		t.Errorf("%d hyperparameter rows left after deleting the run", n)
	}
}

func tableRows(t *testing.T, s *Store, table string) int64 {
	t.Helper()
	_, rows, err := s.Query("SELECT count(*) FROM " + table)
	if err != nil {
		t.Fatal(err)
	}
	return rows[0][0].(int64)
}

// writeV3 creates a database at schema version 3 holding one run, as a
// build before the hyperparameters table left it.
func writeV3(t *testing.T, path string) {
	t.Helper()
	raw, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	for _, m := range migrations[:3] {
		if _, err := raw.Exec(m.sql); err != nil {
			t.Fatal(err)
		}
	}
	for _, q := range []string{
		"PRAGMA user_version = 3",
		"INSERT INTO runs (id, grid, method, dataset, split, seed, status) VALUES ('old', 'g', 'sgpr', 'toy', 0, 0, 'done')",
		"INSERT INTO metrics (run_id, name, value) VALUES ('old', 'rmse', 0.5)",
	} {
		if _, err := raw.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
}

// TestHyperparametersOlderDatabase: a version-3 database is read
// read-only as it is (no hyperparameters, no error; a report's Subset of
// it works), and opening it for writing migrates it to the current version with its
// runs kept.
func TestHyperparametersOlderDatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v3.db")
	writeV3(t, path)
	ro, err := OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	r, found, err := ro.Run("old")
	if err != nil || !found || r.Hyper != nil {
		t.Fatalf("read-only v3: %+v, %v, %v", r, found, err)
	}
	if _, err := ro.Runs(Filter{}); err != nil {
		t.Fatal(err)
	}
	sub, err := ro.Subset([]string{"old"})
	if err != nil {
		t.Fatal(err)
	}
	if n := tableRows(t, sub, "runs"); n != 1 {
		t.Errorf("subset of a v3 database holds %d runs, want 1", n)
	}
	sub.Close()
	ro.Close()

	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, rows, err := s.Query("PRAGMA user_version")
	if err != nil || rows[0][0].(int64) != SchemaVersion {
		t.Fatalf("version after migration %v, %v", rows, err)
	}
	if n := tableRows(t, s, "runs"); n != 1 {
		t.Errorf("%d runs after migration, want 1", n)
	}
	n := sampleRun("new")
	n.Hyper = sampleHyper()
	if err := s.SaveRun(n, nil, nil); err != nil {
		t.Fatal(err)
	}
	if h, err := s.Hyperparameters("new"); err != nil || !sameHyper(h, n.Hyper) {
		t.Errorf("migrated database: %v, %v", h, err)
	}
}

// TestMergeCopiesHyperparameters: merged runs keep their hyperparameters.
func TestMergeCopiesHyperparameters(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "a.db")
	s, err := Open(src)
	if err != nil {
		t.Fatal(err)
	}
	r := sampleRun("a")
	r.Hyper = sampleHyper()
	if err := s.SaveRun(r, nil, nil); err != nil {
		t.Fatal(err)
	}
	s.Close()
	dst := filepath.Join(dir, "m.db")
	if _, err := Merge(dst, src); err != nil {
		t.Fatal(err)
	}
	m, err := OpenReadOnly(dst)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if h, err := m.Hyperparameters("a"); err != nil || !sameHyper(h, r.Hyper) {
		t.Errorf("merged: %v, %v; want %v", h, err, r.Hyper)
	}
}
