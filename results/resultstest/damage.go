// Package resultstest has helpers for tests of code that reads results
// databases.
package resultstest

import (
	"fmt"
	"os"
)

// pageSize is SQLite's default page size, which results databases use.
const pageSize = 4096

// DamageMiddlePage overwrites the middle page of the SQLite database at
// path with garbage, as a failing disk or a bad copy would. The database
// must be closed (checkpointed) and hold at least 8 pages.
func DamageMiddlePage(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if len(b) < 8*pageSize {
		return fmt.Errorf("resultstest: database of %d bytes is too small to damage a middle page", len(b))
	}
	mid := (len(b) / pageSize / 2) * pageSize
	for i := mid; i < mid+pageSize; i++ {
		b[i] = byte(i*131 + 7)
	}
	return os.WriteFile(path, b, 0o644)
}
