package results

import (
	"context"
	"fmt"
	"strings"
)

// QuickCheck runs SQLite's PRAGMA quick_check (a full scan of every page,
// linear in the file size, without the index cross-checks of
// integrity_check) and returns an error naming what is damaged. Commands
// that read a whole database (status, export, report, merge) call it first,
// so a damaged page is reported instead of silently giving partial results.
func (s *Store) QuickCheck() error {
	rows, err := s.db.QueryContext(context.Background(), "PRAGMA quick_check(20)")
	if err != nil {
		return fmt.Errorf("results: %s is damaged: quick_check cannot run: %w", s.path, err)
	}
	var problems []string
	for rows.Next() {
		var msg string
		if err := rows.Scan(&msg); err != nil {
			rows.Close()
			return fmt.Errorf("results: %s is damaged: %w", s.path, err)
		}
		if msg != "ok" {
			problems = append(problems, msg)
		}
	}
	if err := closeRows(rows); err != nil {
		return fmt.Errorf("results: %s is damaged: %w", s.path, err)
	}
	if len(problems) > 0 {
		return fmt.Errorf("results: %s is damaged (SQLite quick_check):\n  %s\nrecover what is readable with `sqlite3 %s .recover | sqlite3 recovered.db`, or re-run the sweep into a new database",
			s.path, strings.Join(problems, "\n  "), s.path)
	}
	return nil
}
