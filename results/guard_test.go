package results

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// scratchDB writes a database X.db with a few runs into a new directory,
// makes that the working directory (so relative ATTACH and VACUUM INTO
// paths land there) and returns the directory and the database's path.
func scratchDB(t testing.TB) (dir, db string) {
	t.Helper()
	dir = t.TempDir()
	t.Chdir(dir)
	db = filepath.Join(dir, "X.db")
	s, err := Open(db)
	if err != nil {
		t.Fatal(err)
	}
	for i, method := range []string{"sgpr", "svgp", "sgpr"} {
		r := sampleRun(fmt.Sprintf("r%d", i))
		r.Method = method
		if err := s.SaveRun(r, sampleMetrics(18), sampleTrace(20)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return dir, db
}

// dirState is the listing of dir with the bytes of each file, but for
// SQLite's shared-memory index (-shm), which every reader of a WAL
// database writes its read marks to.
func dirState(t testing.TB, dir string) string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, e := range entries {
		fmt.Fprintf(&b, "%s", e.Name())
		if !e.IsDir() && !strings.HasSuffix(e.Name(), "-shm") {
			data, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, " %d %x", len(data), data)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// openQueryStore opens db read-only, as `sgplab query` does, and runs a
// first query (a reader of a WAL database creates its -wal and -shm files).
func openQueryStore(t testing.TB, db string) *Store {
	t.Helper()
	s, err := OpenReadOnly(db)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if _, _, err := s.Query("SELECT count(*) FROM runs"); err != nil {
		t.Fatal(err)
	}
	return s
}

// refusedStatements are the statements and every other kind of
// write, each of which a read-only store must refuse before it changes a
// file.
var refusedStatements = []string{
	// The repros.
	"ATTACH DATABASE 'X.db' AS w; DELETE FROM w.runs",
	"ATTACH DATABASE 'X.db' AS w; UPDATE w.metrics SET value = 0",
	"ATTACH DATABASE 'X.db' AS w; DROP TABLE w.runs",
	"ATTACH 'new.db' AS n",
	"ATTACH 'new.db' AS n; CREATE TABLE n.t AS SELECT * FROM runs",
	"VACUUM INTO 'copy.db'",
	"VACUUM INTO '%DIR%/sub.db'",
	"PRAGMA writable_schema = ON",
	// Writes to the main database.
	"DELETE FROM runs",
	"UPDATE runs SET status = 'failed'",
	"UPDATE metrics SET value = 0",
	"INSERT INTO metrics (run_id, name, value) VALUES ('r0', 'x_new', 1)",
	"REPLACE INTO runs (id, method, dataset, split, seed, status) VALUES ('r0', 'm', 'd', 0, 0, 'done')",
	"WITH gone AS (SELECT id FROM runs) DELETE FROM runs WHERE id IN gone",
	"DROP TABLE runs",
	"DROP VIEW run_metrics",
	"DROP INDEX runs_grid",
	"CREATE TABLE t (x)",
	"CREATE TEMP TABLE t (x)",
	"CREATE VIEW v AS SELECT 1",
	"CREATE INDEX i ON runs (host)",
	"CREATE TRIGGER tr AFTER INSERT ON runs BEGIN DELETE FROM runs; END",
	"CREATE VIRTUAL TABLE f USING fts4 (x)",
	"ALTER TABLE runs ADD COLUMN z",
	"ALTER TABLE runs RENAME TO old_runs",
	"VACUUM",
	"REINDEX",
	"ANALYZE",
	"BEGIN IMMEDIATE",
	"SAVEPOINT s",
	"DETACH DATABASE temp",
	// Pragmas that set something.
	"PRAGMA writable_schema = 1; UPDATE sqlite_master SET sql = 'x' WHERE name = 'runs'",
	"PRAGMA user_version = 99",
	"PRAGMA journal_mode = DELETE",
	"PRAGMA query_only = 0; DELETE FROM runs",
	"PRAGMA foreign_keys = OFF",
	"PRAGMA wal_checkpoint(TRUNCATE)",
	"PRAGMA incremental_vacuum",
	"PRAGMA optimize",
	"PRAGMA temp_store_directory = '/tmp'",
	// A harmless statement first does not let a write through after it.
	"SELECT 1; DELETE FROM runs",
	"SELECT count(*) FROM runs; ATTACH 'new.db' AS n",
	// Functions that reach outside the database.
	"SELECT load_extension('./libx.so')",
	"SELECT fts3_tokenizer('simple')",
}

// TestReadOnlyStoreRefusesWrites runs each statement through Query on a
// store opened read-only: each is refused with an error, and the database's
// directory (listing, database and WAL bytes) is unchanged. Before the
// guard, ATTACH of the database itself deleted, updated and dropped its
// runs, ATTACH created new.db, VACUUM INTO wrote a copy anywhere and
// PRAGMA writable_schema = ON succeeded.
func TestReadOnlyStoreRefusesWrites(t *testing.T) {
	dir, db := scratchDB(t)
	s := openQueryStore(t, db)
	before := dirState(t, dir)
	for _, q := range refusedStatements {
		q = strings.ReplaceAll(q, "%DIR%", dir)
		_, _, err := s.Query(q)
		if err == nil {
			t.Errorf("%s: no error", q)
		} else if !errors.Is(err, errReadOnlyQuery) {
			t.Errorf("%s: %v, want the guard's refusal", q, err)
		} else if !strings.Contains(err.Error(), "read-only and refuses") {
			t.Errorf("%s: error does not explain: %v", q, err)
		}
		if after := dirState(t, dir); after != before {
			t.Fatalf("%s changed %s:\nbefore\n%.400s\nafter\n%.400s", q, dir, before, after)
		}
	}
	_, rows, err := s.Query("SELECT (SELECT count(*) FROM runs), (SELECT count(*) FROM metrics WHERE value = 0)")
	if err != nil || fmt.Sprint(rows) != "[[3 0]]" {
		t.Errorf("after the refused statements: %v %v, want 3 runs, no zeroed metric", rows, err)
	}
}

// TestReadOnlyStoreErrorNamesRefusal: the error says what was refused.
func TestReadOnlyStoreErrorNamesRefusal(t *testing.T) {
	_, db := scratchDB(t)
	s := openQueryStore(t, db)
	for q, want := range map[string]string{
		"ATTACH 'new.db' AS n":           `refuses attaching "new.db"`,
		"VACUUM INTO '/tmp/anywhere.db'": `refuses attaching "/tmp/anywhere.db" (ATTACH, or VACUUM, which attaches its target)`,
		"PRAGMA writable_schema = ON":    "refuses PRAGMA writable_schema (not an informational pragma)",
		"PRAGMA user_version = 99":       "refuses PRAGMA user_version = 99 (only reading it)",
		"DELETE FROM runs":               "refuses DELETE from runs",
		"DROP TABLE runs":                "refuses changing the schema",
		"CREATE VIEW v AS SELECT 1":      "refuses changing the schema",
		"ATTACH 'X.db' AS w":             `refuses attaching "X.db"`,
		"SELECT load_extension('x')":     "refuses the function load_extension",
	} {
		if _, _, err := s.Query(q); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", q, err, want)
		}
	}
	// ATTACH is implemented by an internal function that SQL cannot call.
	if _, _, err := s.Query("SELECT sqlite_attach('new.db', 'n', NULL)"); err == nil || !strings.Contains(err.Error(), "no such function") {
		t.Errorf("sqlite_attach: %v, want no such function", err)
	}
	if _, err := os.Stat("new.db"); !os.IsNotExist(err) {
		t.Errorf("new.db exists (%v)", err)
	}
}

// TestReadOnlyStoreReads: what a reader needs keeps working: the README's
// queries, views, recursive CTEs, math and JSON functions, informational
// pragmas and their table-valued forms, several statements in one string.
func TestReadOnlyStoreReads(t *testing.T) {
	dir, db := scratchDB(t)
	s := openQueryStore(t, db)
	before := dirState(t, dir)
	for _, c := range []struct{ q, want string }{
		{"SELECT method, AVG(value) AS rmse FROM run_metrics WHERE metric = 'rmse' GROUP BY method", "[[sgpr 1.6] [svgp 1.6]]"},
		{`SELECT p.num AS m, r.method, AVG(m.value) AS elbo
		  FROM run_metrics m JOIN run_params_v p ON p.run_id = m.run_id AND p.param = 'num_inducing'
		  JOIN runs r ON r.id = m.run_id
		  WHERE m.metric = 'elbo' GROUP BY m, r.method ORDER BY r.method, m`, "[[100 sgpr 0.4] [100 svgp 0.4]]"},
		{"SELECT iteration, objective FROM traces WHERE run_id = (SELECT id FROM runs WHERE method = 'svgp' LIMIT 1) AND iteration % 5 = 0", "[[0 -1000] [5 -166.66666666666666] [10 -90.9090909090909] [0 -83.33333333333333] [5 -58.8235294117647]]"},
		{"SELECT id, method, dataset, split, error FROM runs WHERE status = 'failed'", "[]"},
		{"SELECT count(*) FROM run_params_v", "[[12]]"},
		{"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 5) SELECT sum(x) FROM c", "[[15]]"},
		{"SELECT round(ln(exp(2)), 9), sqrt(16), power(2, 10)", "[[2 4 1024]]"},
		{"SELECT json_extract(spec, '$.m') FROM runs LIMIT 1", "[[100]]"},
		{"SELECT name FROM pragma_table_info('metrics') ORDER BY cid", "[[run_id] [name] [value]]"},
		{"PRAGMA user_version", fmt.Sprintf("[[%d]]", SchemaVersion)},
		{"PRAGMA quick_check", "[[ok]]"},
		{"SELECT count(*) FROM pragma_table_list", "[[15]]"}, // schema 5: lease_tokens (4), hyperparameters and two views (5)
		{"SELECT 1; SELECT 2", "[[2]]"},
		{"SELECT count(*) FROM sqlite_master WHERE type = 'view'", "[[4]]"},
	} {
		_, rows, err := s.Query(c.q)
		if err != nil || fmt.Sprint(rows) != c.want && (c.want != "[]" || rows != nil) {
			t.Errorf("%s: %v, %v; want %s", c.q, rows, err, c.want)
		}
	}
	if _, _, err := s.Query("PRAGMA table_info(runs)"); err != nil {
		t.Errorf("PRAGMA table_info(runs): %v", err)
	}
	if after := dirState(t, dir); after != before {
		t.Errorf("reading changed %s", dir)
	}
}

// TestReadOnlyStoreEmptySQL: no statement is an error, not an empty result.
func TestReadOnlyStoreEmptySQL(t *testing.T) {
	_, db := scratchDB(t)
	s := openQueryStore(t, db)
	for _, q := range []string{"", "  \n\t", "-- just a comment", "/* nothing */ ;"} {
		if _, _, err := s.Query(q); !errors.Is(err, ErrNoStatement) {
			t.Errorf("%q: %v, want ErrNoStatement", q, err)
		}
	}
}

// TestReadOnlyStoreEveryConnection: database/sql opens connections as it
// needs them; each one is guarded, not just the first.
func TestReadOnlyStoreEveryConnection(t *testing.T) {
	dir, db := scratchDB(t)
	s := openQueryStore(t, db)
	ctx := context.Background()
	const n = 4
	for i := range n {
		conn, err := s.db.Conn(ctx) // held open, so the pool must open a new one next time
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		name := fmt.Sprintf("c%d.db", i)
		if _, err := conn.ExecContext(ctx, "ATTACH '"+name+"' AS n"); err == nil {
			t.Errorf("connection %d attached %s", i, name)
		}
		if _, err := conn.ExecContext(ctx, "VACUUM INTO '"+name+"'"); err == nil {
			t.Errorf("connection %d vacuumed into %s", i, name)
		}
		if _, err := os.Stat(filepath.Join(dir, name)); !os.IsNotExist(err) {
			t.Errorf("connection %d created %s", i, name)
		}
	}
	if st := s.db.Stats(); st.OpenConnections < n {
		t.Errorf("%d connections open, want at least %d", st.OpenConnections, n)
	}
}

// FuzzReadOnlyQuery feeds SQL to a read-only store, as `sgplab query`
// does, and checks that the database's directory (listing, database and WAL
// bytes) is what it was: no SQL changes a file.
func FuzzReadOnlyQuery(f *testing.F) {
	dir, db := scratchDB(f)
	for _, q := range refusedStatements {
		f.Add(strings.ReplaceAll(q, "%DIR%", dir))
	}
	for _, q := range []string{
		"SELECT * FROM runs", "SELECT * FROM run_metrics", "PRAGMA table_info(runs)",
		"SELECT name FROM pragma_table_info('runs')", "SELECT writefile('w.db', 'x')",
		"ATTACH 'file:w.db?mode=rwc' AS w", "SELECT sqlite_attach('w.db', 'w', NULL)",
		"PRAGMA main.user_version = 1", "PRAGMA schema.cache_size = 10; VACUUM",
	} {
		f.Add(q)
	}
	s := openQueryStore(f, db)
	before := dirState(f, dir)
	f.Fuzz(func(t *testing.T, q string) {
		s.Query(q) // any error is fine; a changed file is not
		if after := dirState(t, dir); after != before {
			t.Fatalf("%q changed %s:\nbefore\n%.300s\nafter\n%.300s", q, dir, before, after)
		}
	})
}

// TestDirStateSeesChanges keeps the fuzz target's check honest: a write
// through a writable store does change the state it compares.
func TestDirStateSeesChanges(t *testing.T) {
	dir, db := scratchDB(t)
	openQueryStore(t, db)
	before := dirState(t, dir)
	w, err := Open(db)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.db.Exec("DELETE FROM runs WHERE id = 'r0'"); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if dirState(t, dir) == before {
		t.Error("deleting a run left the directory state unchanged")
	}
	if err := os.WriteFile(filepath.Join(dir, "new.db"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if after := dirState(t, dir); !bytes.Contains([]byte(after), []byte("new.db")) {
		t.Error("a new file is not in the directory state")
	}
}
