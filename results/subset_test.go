package results

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// subsetFixture stores five runs with metrics, traces, parameters and
// artifacts: a1–a3 of experiment "exp" (a2 stored as "exp/g"), b1 of another
// experiment with the same grid name and c1 of another grid.
func subsetFixture(t *testing.T) *Store {
	t.Helper()
	s := openTemp(t)
	for _, r := range []struct{ id, grid, spec string }{
		{"a1", "g", `{"experiment":"exp","grid":"g"}`},
		{"a2", "exp/g", `{"experiment":"exp","grid":"g"}`},
		{"a3", "h", ``}, // no spec: attributed by grid name alone
		{"b1", "g", `{"experiment":"other","grid":"g"}`},
		{"c1", "other-grid", `{"experiment":"exp","grid":"other-grid"}`},
	} {
		run := sampleRun(r.id)
		run.Grid, run.Spec = r.grid, r.spec
		arts := []Artifact{{Name: "curve", Columns: []string{"x"}, Rows: 2, Data: []float64{1, 2}}}
		if err := s.SaveRunArtifacts(run, sampleMetrics(3), sampleTrace(4), arts); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func runIDs(t *testing.T, s *Store, table, col string) []string {
	t.Helper()
	_, rows, err := s.Query("SELECT DISTINCT " + col + " FROM " + table + " ORDER BY 1")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range rows {
		out = append(out, r[0].(string))
	}
	return out
}

func TestGridRuns(t *testing.T) {
	s := subsetFixture(t)
	tests := []struct {
		experiment string
		grids      []string
		want       []string
	}{
		{"exp", []string{"g", "h"}, []string{"a1", "a2", "a3"}},
		{"exp", []string{"g"}, []string{"a1", "a2"}},
		{"other", []string{"g"}, []string{"b1"}},
		{"", []string{"g"}, []string{"a1", "b1"}}, // no experiment: grid names as stored
		{"exp", nil, nil},
	}
	for _, tc := range tests {
		refs, err := s.GridRuns(tc.experiment, tc.grids)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range refs {
			got = append(got, r.ID)
			if r.Status != StatusDone || r.Profile != "quick" {
				t.Errorf("ref %+v", r)
			}
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("GridRuns(%q, %v) = %v, want %v", tc.experiment, tc.grids, got, tc.want)
		}
	}
}

func TestDeleteRuns(t *testing.T) {
	s := subsetFixture(t)
	n, err := s.DeleteRuns([]string{"a2", "b1", "absent"})
	if err != nil || n != 2 {
		t.Fatalf("DeleteRuns = %d, %v; want 2", n, err)
	}
	want := []string{"a1", "a3", "c1"}
	for _, tc := range []struct{ table, col string }{
		{"runs", "id"}, {"metrics", "run_id"}, {"traces", "run_id"}, {"run_params", "run_id"}, {"artifacts", "run_id"},
	} {
		if got := runIDs(t, s, tc.table, tc.col); !slices.Equal(got, want) {
			t.Errorf("%s holds %v after deleting, want %v", tc.table, got, want)
		}
	}
	if n, err := s.DeleteRuns([]string{"a2"}); err != nil || n != 0 {
		t.Errorf("deleting again = %d, %v; want 0", n, err)
	}
	if n, err := s.DeleteRuns(nil); err != nil || n != 0 {
		t.Errorf("deleting nothing = %d, %v", n, err)
	}
	ro, err := OpenReadOnly(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if _, err := ro.DeleteRuns([]string{"a1"}); !errors.Is(err, ErrReadOnly) {
		t.Errorf("read-only delete: %v", err)
	}
}

func TestSubset(t *testing.T) {
	s := subsetFixture(t)
	ro, err := OpenReadOnly(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	sub, err := ro.Subset([]string{"a1", "c1", "absent"})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if sub.Path() != s.Path() {
		t.Errorf("subset path %q, want %q", sub.Path(), s.Path())
	}
	want := []string{"a1", "c1"}
	for _, tc := range []struct{ table, col string }{
		{"runs", "id"}, {"metrics", "run_id"}, {"traces", "run_id"}, {"run_params", "run_id"}, {"artifacts", "run_id"},
		{"run_metrics", "run_id"}, {"run_params_v", "run_id"}, {"main.runs", "id"},
	} {
		if got := runIDs(t, sub, tc.table, tc.col); !slices.Equal(got, want) {
			t.Errorf("subset %s holds %v, want %v", tc.table, got, want)
		}
	}
	// Rows are copied whole: the run, its trace and its artifact read back
	// as stored.
	orig, _, err := s.Run("a1")
	if err != nil {
		t.Fatal(err)
	}
	got, ok, err := sub.Run("a1")
	if err != nil || !ok || got.Spec != orig.Spec || got.Seed != orig.Seed || !got.Finished.Equal(orig.Finished) {
		t.Errorf("subset run %+v, %v, %v; want %+v", got, ok, err, orig)
	}
	tr, err := sub.Trace("a1")
	if err != nil || len(tr) != 4 || tr[3].Phase != "natgrad" {
		t.Errorf("subset trace %+v, %v", tr, err)
	}
	arts, err := sub.Artifacts("c1")
	if err != nil || len(arts) != 1 || arts[0].At(1, 0) != 2 {
		t.Errorf("subset artifacts %+v, %v", arts, err)
	}
	if _, err := sub.DeleteRuns([]string{"a1"}); !errors.Is(err, ErrReadOnly) {
		t.Errorf("subset accepted a delete: %v", err)
	}
	// The file is untouched and an empty subset is empty.
	if got := runIDs(t, s, "runs", "id"); len(got) != 5 {
		t.Errorf("file holds %v after Subset", got)
	}
	empty, err := s.Subset(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer empty.Close()
	if got := runIDs(t, empty, "runs", "id"); len(got) != 0 {
		t.Errorf("empty subset holds %v", got)
	}
}

func TestOpenEmpty(t *testing.T) {
	path := filepath.Join(t.TempDir(), "none.db")
	s, err := OpenEmpty(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Path() != path {
		t.Errorf("path %q", s.Path())
	}
	if got := runIDs(t, s, "run_metrics", "run_id"); len(got) != 0 {
		t.Errorf("empty store holds %v", got)
	}
	if err := s.SaveRun(sampleRun("x"), nil, nil); !errors.Is(err, ErrReadOnly) {
		t.Errorf("empty store accepted a run: %v", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("OpenEmpty created %s: %v", path, err)
	}
}

// TestSubsetRefusesWrites: a report runs SQL from a config file on a
// Subset, so the copy is as read-only as `sgplab query`: nothing attaches a
// file, writes one, or changes the copy or the source.
func TestSubsetRefusesWrites(t *testing.T) {
	s := subsetFixture(t)
	dir := t.TempDir()
	sub, err := s.Subset([]string{"a1", "a2"})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	empty, err := OpenEmpty(filepath.Join(dir, "none.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer empty.Close()
	out := filepath.Join(dir, "out.db")
	for _, st := range []*Store{sub, empty} {
		for _, q := range []string{
			"ATTACH DATABASE '" + s.Path() + "' AS w",
			"ATTACH DATABASE '" + out + "' AS n",
			"VACUUM INTO '" + out + "'",
			"DELETE FROM runs",
			"UPDATE metrics SET value = 0",
			"DROP TABLE runs",
			"CREATE TABLE t (x)",
			"CREATE TEMP VIEW v AS SELECT 1",
			"PRAGMA writable_schema = ON",
			"SELECT load_extension('x')",
		} {
			if _, _, err := st.Query(q); err == nil {
				t.Errorf("%s: %q ran", st.Path(), q)
			}
		}
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a file was written: %v", err)
	}
	if got := runIDs(t, sub, "runs", "id"); !slices.Equal(got, []string{"a1", "a2"}) {
		t.Errorf("copy holds %v after the attempts", got)
	}
	if got := runIDs(t, s, "runs", "id"); len(got) != 5 {
		t.Errorf("source holds %v after the attempts", got)
	}
	if _, rows, err := sub.Query("SELECT count(*) FROM run_metrics"); err != nil || len(rows) != 1 {
		t.Errorf("a read of the copy: %v, %v", rows, err)
	}
}
