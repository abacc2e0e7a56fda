package results

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// damaged writes a database of n runs and overwrites one of its middle
// pages with garbage, as a failing disk or a bad copy would.
func damaged(t *testing.T, dir string, n int) string {
	t.Helper()
	var runs []Run
	for i := range n {
		runs = append(runs, runAt(fmt.Sprintf("d%03d", i), StatusDone, t0))
	}
	path := shard(t, dir, "damaged.db", runs...)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const page = 4096
	if len(b) < 8*page {
		t.Fatalf("database of %d bytes is too small to damage a middle page", len(b))
	}
	mid := (len(b) / page / 2) * page
	for i := mid; i < mid+page; i++ {
		b[i] = byte(i*131 + 7)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestQuickCheck(t *testing.T) {
	dir := t.TempDir()
	good := shard(t, dir, "good.db", runAt("r1", StatusDone, t0))
	s, err := OpenReadOnly(good)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.QuickCheck(); err != nil {
		t.Errorf("intact database: %v", err)
	}
	s.Close()

	bad := damaged(t, dir, 200)
	s, err = OpenReadOnly(bad)
	if err != nil {
		if !strings.Contains(err.Error(), "malformed") {
			t.Fatalf("opening the damaged database: %v", err)
		}
		return // damage already caught when opening
	}
	defer s.Close()
	err = s.QuickCheck()
	t.Logf("quick_check on the damaged database: %v", err)
	if err == nil || !strings.Contains(err.Error(), "is damaged") {
		t.Errorf("damaged database: QuickCheck = %v, want an error naming the damage", err)
	}
}

// TestMergeAllOrNothing: a damaged source makes the whole merge fail
// before anything is written, an existing destination keeps exactly its
// runs, and a destination the merge created is removed.
func TestMergeAllOrNothing(t *testing.T) {
	dir := t.TempDir()
	good := shard(t, dir, "good.db", runAt("g1", StatusDone, t0), runAt("g2", StatusDone, t0))
	bad := damaged(t, dir, 200)
	existing := shard(t, dir, "existing.db", runAt("e1", StatusDone, t0))

	if _, err := Merge(existing, good, bad); err == nil || !strings.Contains(err.Error(), "nothing merged") {
		t.Fatalf("merge with a damaged source: %v, want an error saying nothing was merged", err)
	}
	s, err := OpenReadOnly(existing)
	if err != nil {
		t.Fatal(err)
	}
	_, rows, err := s.Query("SELECT id FROM runs ORDER BY id")
	s.Close()
	if err != nil || len(rows) != 1 || rows[0][0] != "e1" {
		t.Errorf("destination after a failed merge holds %v (%v), want only e1", rows, err)
	}

	fresh := filepath.Join(dir, "fresh.db")
	if _, err := Merge(fresh, good, bad); err == nil {
		t.Fatal("merge into a new database with a damaged source succeeded")
	}
	if _, err := os.Stat(fresh); !os.IsNotExist(err) {
		t.Errorf("a failed merge left the new destination %s behind (%v)", fresh, err)
	}
	// A source that is not a database at all fails the same way.
	notDB := filepath.Join(dir, "note.db")
	os.WriteFile(notDB, []byte("not a database"), 0o644)
	if _, err := Merge(existing, good, notDB); err == nil || !strings.Contains(err.Error(), "nothing merged") {
		t.Errorf("merge with a non-database source: %v", err)
	}
	if n, err := Merge(existing, good); err != nil || n != 2 {
		t.Errorf("merge of the good source alone: %d, %v; want 2 runs", n, err)
	}
}
