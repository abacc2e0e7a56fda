package main

import (
	"bytes"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunUnwritableDB checks that `sgplab run` refuses a database it cannot
// create or write before running anything, naming the path.
func TestRunUnwritableDB(t *testing.T) {
	dir := t.TempDir()
	grid := filepath.Join(dir, "g.toml")
	if err := os.WriteFile(grid, []byte(signalGrid), 0o644); err != nil {
		t.Fatal(err)
	}
	plain := filepath.Join(dir, "plain-file")
	if err := os.WriteFile(plain, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct{ name, db, want string }{
		{"parent is a regular file", filepath.Join(plain, "r.db"), "cannot create directory"},
		{"path is a directory", dir, "is a directory"},
		{"not a database", plain, "not a database"},
	}
	if os.Geteuid() != 0 { // root ignores permission bits, so the check cannot fail
		ro := filepath.Join(dir, "ro")
		if err := os.Mkdir(ro, 0o555); err != nil {
			t.Fatal(err)
		}
		cases = append(cases, struct{ name, db, want string }{"read-only directory", filepath.Join(ro, "r.db"), "not writable"})
	} else {
		t.Log("running as root: the read-only directory case is skipped")
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := Main([]string{"run", "--quiet", "--db", c.db, grid}, &out, &errb)
			if code != 1 || !strings.Contains(errb.String(), c.want) || !strings.Contains(errb.String(), c.db) {
				t.Errorf("exit %d, stderr %q; want exit 1 and an error naming %s with %q", code, errb.String(), c.db, c.want)
			}
			if strings.Contains(out.String(), "done") {
				t.Errorf("runs ran:\n%s", out.String())
			}
		})
	}
}

// TestRunDBLocked holds the write lock of the database on another
// connection while `sgplab run` starts: the run waits --busy-timeout, then
// exits 1 saying the database is locked and what to do.
func TestRunDBLocked(t *testing.T) {
	dir := t.TempDir()
	grid := filepath.Join(dir, "g.toml")
	db := filepath.Join(dir, "r.db")
	if err := os.WriteFile(grid, []byte(signalGrid), 0o644); err != nil {
		t.Fatal(err)
	}
	// Create the database (WAL mode) with two finished runs, then lock it.
	// (cli-test-block does not block in this process.)
	var out, errb bytes.Buffer
	grid1 := filepath.Join(dir, "g1.toml")
	os.WriteFile(grid1, []byte(strings.Replace(signalGrid, `["cli-test-mean", "cli-test-block"]`, `["cli-test-mean"]`, 1)), 0o644)
	if code := Main([]string{"run", "--quiet", "--db", db, grid1}, &out, &errb); code != 0 {
		t.Fatal(errb.String())
	}
	other, err := sql.Open("sqlite3", "file:"+db+"?_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	tx, err := other.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()

	out.Reset()
	errb.Reset()
	code := Main([]string{"run", "--quiet", "--busy-timeout", "150ms", "--db", db, grid}, &out, &errb)
	for _, want := range []string{db, "locked by another", "150ms", "--busy-timeout", "run the same command again"} {
		if !strings.Contains(errb.String(), want) {
			t.Errorf("stderr does not mention %q:\n%s", want, errb.String())
		}
	}
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	tx.Rollback()
	// The finished runs are intact and the sweep completes once unlocked.
	out.Reset()
	if code := Main([]string{"run", "--db", db, grid}, &out, &errb); code != 0 || !strings.Contains(out.String(), "4 runs: 2 done, 0 failed, 0 interrupted, 2 skipped") {
		t.Errorf("after unlocking: exit %d\n%s%s", code, out.String(), errb.String())
	}
}
