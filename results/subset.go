package results

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/mattn/go-sqlite3"
)

// RunRef identifies a stored run by what a config's grids say about it.
type RunRef struct {
	ID, Grid, Profile, Status string
}

// gridCond is the WHERE condition selecting the runs of an experiment's
// grids, with its arguments. The grid column holds either the [[grid]] name
// or "<experiment>/<grid>"; a run whose stored spec names another experiment
// is never selected, so two configs sharing a database and a grid name do
// not take each other's runs.
func gridCond(experiment string, grids []string) (string, []any) {
	var args []any
	for _, g := range grids {
		args = append(args, g)
		if experiment != "" {
			args = append(args, experiment+"/"+g)
		}
	}
	cond := "grid IN " + placeholders(1, len(args))
	if experiment != "" {
		cond += " AND (spec = '' OR json_valid(spec) = 0 OR COALESCE(json_extract(spec, '$.experiment'), '') IN ('', ?))"
		args = append(args, experiment)
	}
	return cond, args
}

// GridRuns lists the runs of the named grids of an experiment (the grid
// file's name), in id order. Runs recorded by another experiment under the
// same grid name are left out.
func (s *Store) GridRuns(experiment string, grids []string) ([]RunRef, error) {
	if len(grids) == 0 {
		return nil, nil
	}
	cond, args := gridCond(experiment, grids)
	rows, err := s.db.QueryContext(context.Background(), "SELECT id, grid, profile, status FROM runs WHERE "+cond+" ORDER BY id", args...)
	if err != nil {
		return nil, s.wrap("listing runs of grids", err)
	}
	defer rows.Close()
	var out []RunRef
	for rows.Next() {
		var r RunRef
		if err := rows.Scan(&r.ID, &r.Grid, &r.Profile, &r.Status); err != nil {
			return nil, s.wrap("listing runs of grids", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, s.wrap("listing runs of grids", err)
	}
	return out, nil
}

// runTables are the tables holding rows keyed by run, children first.
var runTables = []struct{ name, key string }{
	{"hyperparameters", "run_id"}, {"artifacts", "run_id"}, {"traces", "run_id"}, {"metrics", "run_id"}, {"run_params", "run_id"}, {"runs", "id"},
}

// DeleteRuns deletes the given runs with their metrics, traces, parameters
// and artifacts in one transaction, and returns how many runs it deleted.
// Ids that are not stored are ignored.
func (s *Store) DeleteRuns(ids []string) (int, error) {
	if s.readOnly {
		return 0, ErrReadOnly
	}
	if len(ids) == 0 {
		return 0, nil
	}
	ctx := context.Background()
	s.mu.Lock()
	defer s.mu.Unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, s.wrap("deleting runs", err)
	}
	defer tx.Rollback()
	deleted := 0
	const chunk = 400 // well below SQLite's host-parameter limit
	for i := 0; i < len(ids); i += chunk {
		part := ids[i:min(i+chunk, len(ids))]
		args := make([]any, len(part))
		for j, id := range part {
			args[j] = id
		}
		in := placeholders(1, len(part))
		for _, t := range runTables {
			res, err := tx.ExecContext(ctx, "DELETE FROM "+t.name+" WHERE "+t.key+" IN "+in, args...)
			if err != nil {
				return 0, s.wrap("deleting runs", err)
			}
			if t.name == "runs" {
				n, err := res.RowsAffected()
				if err != nil {
					return 0, s.wrap("deleting runs", err)
				}
				deleted += int(n)
			}
		}
		// Leases (the claims table) are not copied by Subset, so they are not in runTables.
		if _, err := tx.ExecContext(ctx, "DELETE FROM claims WHERE run_id IN "+in, args...); err != nil {
			return 0, s.wrap("deleting runs", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return 0, s.wrap("deleting runs", err)
	}
	return deleted, nil
}

var memoryStores atomic.Int64

// OpenEmpty returns an in-memory store with the current schema and no runs.
// Path reports displayPath: it stands for a database that does not exist yet,
// so that a report can say what is missing before anything ran.
func OpenEmpty(displayPath string) (*Store, error) {
	s, err := openMemory(displayPath)
	if err != nil {
		return nil, err
	}
	if err := s.guardMemory(); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// openMemory opens a private in-memory database with the current schema.
// One connection holds it, so every query sees the same database.
func openMemory(displayPath string) (*Store, error) {
	name := fmt.Sprintf("file:sgplab-memory-%d?mode=memory&cache=private&_foreign_keys=1", memoryStores.Add(1))
	db, err := sql.Open(driverName, name)
	if err != nil {
		return nil, fmt.Errorf("results: opening an in-memory database: %w", err)
	}
	// The database lives as long as its one connection: never close it idle.
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
	s := &Store{db: db, path: displayPath, timeout: DefaultBusyTimeout}
	if err := migrate(context.Background(), s); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// Subset returns a read-only in-memory copy of the store holding only the
// given runs, with their metrics, traces, parameters and artifacts. Every
// table and view keeps its name, so any query, hand-written SQL included,
// sees exactly these runs; this is how a report ignores runs left over from
// an older version of its config. The store's file is attached read-only and
// never modified. Path reports the store's path. Close the copy when done.
func (s *Store) Subset(ids []string) (*Store, error) {
	m, err := openMemory(s.path)
	if err != nil {
		return nil, err
	}
	if err := m.copyFrom(s.path, ids); err != nil {
		m.Close()
		return nil, err
	}
	if err := m.guardMemory(); err != nil {
		m.Close()
		return nil, err
	}
	return m, nil
}

// guardMemory makes an in-memory store read-only for whatever SQL it is
// given from now on (a report's claims and derived values come from a
// config file): its one connection gets the read-only store's authorizer
// and may attach no database, so no statement can write a file, the
// source database included, or change the copy a report reads.
func (m *Store) guardMemory() error {
	ctx := context.Background()
	conn, err := m.db.Conn(ctx)
	if err != nil {
		return m.wrap("guarding the copy", err)
	}
	defer conn.Close()
	g := new(readGuard)
	err = conn.Raw(func(dc any) error {
		c, ok := dc.(*sqlite3.SQLiteConn)
		if !ok {
			return fmt.Errorf("unexpected driver connection %T", dc)
		}
		c.SetLimit(sqlite3.SQLITE_LIMIT_ATTACHED, 0)
		c.RegisterAuthorizer(g.authorize)
		return nil
	})
	if err != nil {
		return m.wrap("guarding the copy", err)
	}
	m.guard, m.readOnly = g, true
	return nil
}

func (m *Store) copyFrom(path string, ids []string) error {
	ctx := context.Background()
	conn, err := m.db.Conn(ctx)
	if err != nil {
		return m.wrap("copying runs", err)
	}
	defer conn.Close()
	exec := func(q string, args ...any) error {
		if _, err := conn.ExecContext(ctx, q, args...); err != nil {
			return m.wrap("copying runs", err)
		}
		return nil
	}
	if err := exec("ATTACH DATABASE ? AS src", "file:"+escapeURIPath(path)+"?mode=ro"); err != nil {
		return err
	}
	defer conn.ExecContext(ctx, "DETACH DATABASE src")
	if err := exec("CREATE TEMP TABLE keep_ids (id TEXT PRIMARY KEY) WITHOUT ROWID"); err != nil {
		return err
	}
	defer conn.ExecContext(ctx, "DROP TABLE temp.keep_ids")
	const chunk = 400
	for i := 0; i < len(ids); i += chunk {
		part := ids[i:min(i+chunk, len(ids))]
		args := make([]any, len(part))
		for j, id := range part {
			args[j] = id
		}
		if err := exec("INSERT OR IGNORE INTO temp.keep_ids (id) VALUES "+placeholders(len(part), 1), args...); err != nil {
			return err
		}
	}
	// Parents first so foreign keys hold; columns named so a differing
	// column order between the file and this build cannot shift values.
	for i := len(runTables) - 1; i >= 0; i-- {
		t := runTables[i]
		if ok, err := hasTable(ctx, conn, "src", t.name); err != nil {
			return m.wrap("copying runs", err)
		} else if !ok {
			continue // an older database without this table
		}
		cols, err := tableColumns(ctx, conn, t.name)
		if err != nil {
			return m.wrap("copying runs", err)
		}
		list := strings.Join(cols, ", ")
		if err := exec(fmt.Sprintf("INSERT INTO main.%[1]s (%[2]s) SELECT %[2]s FROM src.%[1]s WHERE %[3]s IN (SELECT id FROM temp.keep_ids)", t.name, list, t.key)); err != nil {
			return err
		}
	}
	return nil
}

// tableColumns lists the columns of a table of the main schema, quoted.
func tableColumns(ctx context.Context, conn *sql.Conn, table string) ([]string, error) {
	rows, err := conn.QueryContext(ctx, "SELECT name FROM pragma_table_info(?, 'main')", table)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var cols []string
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			return nil, err
		}
		cols = append(cols, `"`+strings.ReplaceAll(c, `"`, `""`)+`"`)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(cols) == 0 {
		return nil, fmt.Errorf("no table %s", table)
	}
	return cols, nil
}
