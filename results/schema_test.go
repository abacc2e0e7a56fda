package results

import (
	"database/sql"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
)

func TestMigrationFromEmpty(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.db")
	for range 2 { // the second Open finds the schema current and changes nothing
		s, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		_, rows, err := s.Query("PRAGMA user_version")
		if err != nil || rows[0][0].(int64) != SchemaVersion {
			t.Fatalf("user_version = %v, %v", rows, err)
		}
		_, rows, err = s.Query("SELECT version FROM schema_version ORDER BY version")
		if err != nil || len(rows) != len(migrations) {
			t.Fatalf("schema_version rows = %v, %v", rows, err)
		}
		_, rows, err = s.Query("PRAGMA journal_mode")
		if err != nil || rows[0][0] != "wal" {
			t.Fatalf("journal_mode = %v, %v", rows, err)
		}
		s.Close()
	}
}

func TestMigrationsOrdered(t *testing.T) {
	for i, m := range migrations {
		if m.version != i+1 {
			t.Fatalf("migration %d has version %d; steps must be 1, 2, … in order", i, m.version)
		}
	}
	if migrations[len(migrations)-1].version != SchemaVersion {
		t.Fatalf("last migration is %d, SchemaVersion is %d", migrations[len(migrations)-1].version, SchemaVersion)
	}
}

func TestConcurrentFirstOpen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "race.db")
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() {
			s, err := Open(path)
			if err == nil {
				err = s.Close()
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	s, err := OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, rows, _ := s.Query("SELECT count(*) FROM schema_version")
	if rows[0][0].(int64) != int64(len(migrations)) {
		t.Errorf("schema applied %v times", rows[0][0])
	}
}

func TestSchemaVersionChecks(t *testing.T) {
	dir := t.TempDir()
	newer := filepath.Join(dir, "newer.db")
	raw, err := sql.Open("sqlite3", newer)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec("PRAGMA user_version = 99"); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	empty := filepath.Join(dir, "empty.db")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		open func(string) (*Store, error)
		path string
		want string
	}{
		{"newer rw", Open, newer, "schema version 99, newer"},
		{"newer ro", OpenReadOnly, newer, "schema version 99, newer"},
		{"no schema ro", OpenReadOnly, empty, "not an sgplab results database"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := c.open(c.path)
			if err == nil {
				s.Close()
				t.Fatal("opened")
			}
			if !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), c.path) {
				t.Errorf("err = %v, want %q and the path", err, c.want)
			}
		})
	}
}

// TestMetricDocsInSync keeps the list in doc.go equal to MetricNames.
func TestMetricDocsInSync(t *testing.T) {
	src, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	var documented []string
	for _, m := range regexp.MustCompile(`(?m)^//   - ([a-z0-9_]+):`).FindAllSubmatch(src, -1) {
		documented = append(documented, string(m[1]))
	}
	want := SortedMetricNames()
	if !sort.StringsAreSorted(documented) || strings.Join(documented, ",") != strings.Join(want, ",") {
		t.Errorf("doc.go lists %v\nMetricNames has %v", documented, want)
	}
	for _, name := range []string{"elbo", "rmse", "mse", "nlpd", "test_loglik", "coverage95", "accuracy", "auc", "train_seconds", "iters_per_second"} {
		if err := CheckMetricName(name); err != nil {
			t.Errorf("required metric %s: %v", name, err)
		}
	}
	names := MetricNames()
	names["rmse"] = "changed"
	if MetricNames()["rmse"] == "changed" {
		t.Error("MetricNames exposes the internal map")
	}
}
