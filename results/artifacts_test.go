package results

import (
	"database/sql"
	"math"
	"path/filepath"
	"strings"
	"testing"
)

func TestArtifactsRoundTripAndReplace(t *testing.T) {
	s := openTemp(t)
	r := sampleRun("a1")
	arts := []Artifact{
		{Name: "predictions", Columns: []string{"x", "mean"}, Rows: 3, Data: []float64{0, 1, 0.5, math.NaN(), 1, -2}},
		{Name: "kernel_matrix", Columns: []string{"0", "1"}, Rows: 2, Data: []float64{1, 0.25, 0.25, 1}},
	}
	if err := s.SaveRunArtifacts(r, sampleMetrics(2), sampleTrace(3), arts); err != nil {
		t.Fatal(err)
	}
	got, err := s.Artifacts("a1")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Name != "kernel_matrix" || got[1].Name != "predictions" {
		t.Fatalf("got %+v", got)
	}
	p := got[1]
	if p.Rows != 3 || p.At(2, 1) != -2 || !math.IsNaN(p.At(1, 1)) {
		t.Fatalf("predictions %+v", p)
	}
	mean, err := p.Column("mean")
	if err != nil || mean[0] != 1 {
		t.Fatalf("column: %v %v", mean, err)
	}
	if _, err := p.Column("nope"); err == nil || !strings.Contains(err.Error(), "columns") {
		t.Fatalf("missing column error = %v", err)
	}
	// Through SQL, as figures reads them.
	_, rows, err := s.Query("SELECT name, rows, columns, data FROM artifacts WHERE run_id = 'a1' AND name = 'kernel_matrix'")
	if err != nil || len(rows) != 1 {
		t.Fatalf("query: %v %v", rows, err)
	}
	k, err := DecodeArtifact(rows[0][0].(string), rows[0][1].(int64), rows[0][2].(string), rows[0][3].(string))
	if err != nil || k.At(0, 1) != 0.25 {
		t.Fatalf("decode: %+v %v", k, err)
	}
	// Re-saving the run (as MarkRunning does on a re-run) drops the old arrays.
	if err := s.MarkRunning(r); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Artifacts("a1"); len(got) != 0 {
		t.Fatalf("artifacts survived a re-save: %+v", got)
	}
}

func TestArtifactValidation(t *testing.T) {
	s := openTemp(t)
	tests := []struct {
		name string
		arts []Artifact
		want string
	}{
		{"shape", []Artifact{{Name: "a", Columns: []string{"x"}, Rows: 2, Data: []float64{1}}}, "1 values for 2 rows"},
		{"noname", []Artifact{{Columns: []string{"x"}, Rows: 1, Data: []float64{1}}}, "empty name"},
		{"nocols", []Artifact{{Name: "a"}}, "no columns"},
		{"twice", []Artifact{{Name: "a", Columns: []string{"x"}, Rows: 1, Data: []float64{1}}, {Name: "a", Columns: []string{"x"}, Rows: 1, Data: []float64{1}}}, "twice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := s.SaveRunArtifacts(sampleRun("v"), nil, nil, tt.arts)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
	if _, err := DecodeValues(make([]byte, 7)); err == nil {
		t.Fatal("7 bytes decoded")
	}
}

// A version-1 database (before artifacts) is migrated in place and keeps its runs.
func TestMigrationV1ToV2(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v1.db")
	raw, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(schemaV1 + "INSERT INTO schema_version VALUES (1, '2020'); PRAGMA user_version = 1;" +
		"INSERT INTO runs (id, method, dataset, split, seed, status) VALUES ('old', 'm', 'd', 0, 0, 'done');"); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if st, found, err := s.RunStatus("old"); err != nil || !found || st != StatusDone {
		t.Fatalf("old run: %v %v %v", st, found, err)
	}
	if err := s.SaveRunArtifacts(sampleRun("new"), nil, nil, []Artifact{{Name: "a", Columns: []string{"x"}, Rows: 1, Data: []float64{3}}}); err != nil {
		t.Fatal(err)
	}
	if a, err := s.Artifacts("new"); err != nil || len(a) != 1 || a[0].Data[0] != 3 {
		t.Fatalf("artifacts after migration: %+v %v", a, err)
	}
}

func TestMergeCopiesArtifacts(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src.db")
	s, err := Open(src)
	if err != nil {
		t.Fatal(err)
	}
	r := sampleRun("m1")
	if err := s.SaveRunArtifacts(r, nil, nil, []Artifact{{Name: "p", Columns: []string{"x", "y"}, Rows: 1, Data: []float64{1, 2}}}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	dst := filepath.Join(dir, "dst.db")
	if n, err := Merge(dst, src); err != nil || n != 1 {
		t.Fatalf("merge: %d %v", n, err)
	}
	d, err := Open(dst)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if a, err := d.Artifacts("m1"); err != nil || len(a) != 1 || a[0].At(0, 1) != 2 {
		t.Fatalf("merged artifacts: %+v %v", a, err)
	}
}
