package results

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// RunStatus returns the status of run id, and whether it is stored at all.
func (s *Store) RunStatus(id string) (status string, found bool, err error) {
	err = s.db.QueryRowContext(context.Background(), "SELECT status FROM runs WHERE id = ?", id).Scan(&status)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, s.wrap("reading status of run "+id, err)
	}
	return status, true, nil
}

// statusChunk keeps IN lists well below SQLite's bound-parameter limit.
const statusChunk = 500

// Statuses returns the status of each stored run among ids; ids that are
// not stored are absent from the map. A run stored as running whose worker
// is dead (no lease, or a lease whose heartbeat went stale: kill -9, a lost
// node) is reported as interrupted.
func (s *Store) Statuses(ids []string) (map[string]string, error) {
	out, err := s.storedStatuses(ids)
	if err != nil {
		return nil, err
	}
	var running []string
	for id, st := range out {
		if st == StatusRunning {
			running = append(running, id)
		}
	}
	if len(running) == 0 {
		return out, nil
	}
	leases, err := s.Leases(running)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	for _, id := range running {
		if l, ok := leases[id]; !ok || !l.Live(now) {
			out[id] = StatusInterrupted
		}
	}
	return out, nil
}

func (s *Store) storedStatuses(ids []string) (map[string]string, error) {
	out := make(map[string]string, len(ids))
	ctx := context.Background()
	for start := 0; start < len(ids); start += statusChunk {
		chunk := ids[start:min(start+statusChunk, len(ids))]
		args := make([]any, len(chunk))
		for i, id := range chunk {
			args[i] = id
		}
		q := "SELECT id, status FROM runs WHERE id IN (" + strings.Repeat("?,", len(chunk)-1) + "?)"
		rows, err := s.db.QueryContext(ctx, q, args...)
		if err != nil {
			return nil, s.wrap("reading run statuses", err)
		}
		for rows.Next() {
			var id, st string
			if err := rows.Scan(&id, &st); err != nil {
				rows.Close()
				return nil, s.wrap("reading run statuses", err)
			}
			out[id] = st
		}
		if err := rows.Close(); err != nil {
			return nil, s.wrap("reading run statuses", err)
		}
		if err := rows.Err(); err != nil {
			return nil, s.wrap("reading run statuses", err)
		}
	}
	return out, nil
}

const runColumns = `r.id, r.grid, r.spec, r.method, r.dataset, r.split, r.seed, r.profile, r.status, r.error,
	r.started, r.finished, r.host, r.git_commit, r.go_version, r.blas, r.provenance`

// where builds the WHERE clause of a filter over runs aliased r.
func (f Filter) where() (string, []any) {
	var conds []string
	var args []any
	for _, c := range []struct{ col, val string }{
		{"r.grid", f.Grid}, {"r.method", f.Method}, {"r.dataset", f.Dataset}, {"r.status", f.Status},
	} {
		if c.val != "" {
			conds = append(conds, c.col+" = ?")
			args = append(args, c.val)
		}
	}
	if len(conds) == 0 {
		return "", nil
	}
	return " WHERE " + strings.Join(conds, " AND "), args
}

// Runs returns the runs matching filter, with their parameters (sorted by
// name), ordered by grid, method, dataset, split, seed and id.
func (s *Store) Runs(filter Filter) ([]Run, error) {
	ctx := context.Background()
	where, args := filter.where()
	rows, err := s.db.QueryContext(ctx, "SELECT "+runColumns+" FROM runs r"+where+
		" ORDER BY r.grid, r.method, r.dataset, r.split, r.seed, r.id", args...)
	if err != nil {
		return nil, s.wrap("reading runs", err)
	}
	var runs []Run
	index := make(map[string]int)
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			rows.Close()
			return nil, s.wrap("reading runs", err)
		}
		index[r.ID] = len(runs)
		runs = append(runs, r)
	}
	if err := closeRows(rows); err != nil {
		return nil, s.wrap("reading runs", err)
	}
	if len(runs) == 0 {
		return nil, nil
	}
	prows, err := s.db.QueryContext(ctx, "SELECT p.run_id, p.name, p.value FROM run_params p JOIN runs r ON r.id = p.run_id"+
		where+" ORDER BY p.run_id, p.name", args...)
	if err != nil {
		return nil, s.wrap("reading run parameters", err)
	}
	for prows.Next() {
		var id string
		var p Param
		if err := prows.Scan(&id, &p.Name, &p.Value); err != nil {
			prows.Close()
			return nil, s.wrap("reading run parameters", err)
		}
		if i, ok := index[id]; ok {
			runs[i].Params = append(runs[i].Params, p)
		}
	}
	if err := closeRows(prows); err != nil {
		return nil, s.wrap("reading run parameters", err)
	}
	if err := s.readHyper(ctx, where, args, func(id string, h Hyperparameter) {
		if i, ok := index[id]; ok {
			runs[i].Hyper = append(runs[i].Hyper, h)
		}
	}); err != nil {
		return nil, err
	}
	return runs, nil
}

// Run returns the stored run id with its parameters.
func (s *Store) Run(id string) (Run, bool, error) {
	ctx := context.Background()
	r, err := scanRun(s.db.QueryRowContext(ctx, "SELECT "+runColumns+" FROM runs r WHERE r.id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return Run{}, false, nil
	}
	if err != nil {
		return Run{}, false, s.wrap("reading run "+id, err)
	}
	rows, err := s.db.QueryContext(ctx, "SELECT name, value FROM run_params WHERE run_id = ? ORDER BY name", id)
	if err != nil {
		return Run{}, false, s.wrap("reading parameters of run "+id, err)
	}
	for rows.Next() {
		var p Param
		if err := rows.Scan(&p.Name, &p.Value); err != nil {
			rows.Close()
			return Run{}, false, s.wrap("reading parameters of run "+id, err)
		}
		r.Params = append(r.Params, p)
	}
	if err := closeRows(rows); err != nil {
		return Run{}, false, s.wrap("reading parameters of run "+id, err)
	}
	if r.Hyper, err = s.Hyperparameters(id); err != nil {
		return Run{}, false, err
	}
	return r, true, nil
}

type scanner interface{ Scan(dest ...any) error }

func scanRun(sc scanner) (Run, error) {
	var r Run
	var seed int64
	var started, finished sql.NullString
	err := sc.Scan(&r.ID, &r.Grid, &r.Spec, &r.Method, &r.Dataset, &r.Split, &seed, &r.Profile, &r.Status, &r.Error,
		&started, &finished, &r.Host, &r.GitCommit, &r.GoVersion, &r.BLAS, &r.Provenance)
	if err != nil {
		return Run{}, err
	}
	r.Seed = uint64(seed)
	if r.Started, err = parseTime(started); err != nil {
		return Run{}, fmt.Errorf("run %s: started: %w", r.ID, err)
	}
	if r.Finished, err = parseTime(finished); err != nil {
		return Run{}, fmt.Errorf("run %s: finished: %w", r.ID, err)
	}
	return r, nil
}

// Metrics returns the metrics of run id sorted by name; NULL values read as NaN.
func (s *Store) Metrics(runID string) ([]Metric, error) {
	out, err := readMetrics(context.Background(), s.db, runID)
	if err != nil {
		return nil, s.wrap("reading metrics of run "+runID, err)
	}
	return out, nil
}

// readMetrics reads the metrics of a run through q (a database or a
// transaction).
func readMetrics(ctx context.Context, q querier, runID string) ([]Metric, error) {
	rows, err := q.QueryContext(ctx, "SELECT name, value FROM metrics WHERE run_id = ? ORDER BY name", runID)
	if err != nil {
		return nil, err
	}
	var out []Metric
	for rows.Next() {
		var m Metric
		var v sql.NullFloat64
		if err := rows.Scan(&m.Name, &v); err != nil {
			rows.Close()
			return nil, err
		}
		m.Value = floatOrNaN(v)
		out = append(out, m)
	}
	if err := closeRows(rows); err != nil {
		return nil, err
	}
	return out, nil
}

// Trace returns the trace of run id in the order it was saved.
func (s *Store) Trace(runID string) ([]TracePoint, error) {
	rows, err := s.db.QueryContext(context.Background(),
		"SELECT iteration, elapsed_seconds, objective, phase FROM traces WHERE run_id = ? ORDER BY seq", runID)
	if err != nil {
		return nil, s.wrap("reading trace of run "+runID, err)
	}
	var out []TracePoint
	for rows.Next() {
		var p TracePoint
		var el, obj sql.NullFloat64
		if err := rows.Scan(&p.Iteration, &el, &obj, &p.Phase); err != nil {
			rows.Close()
			return nil, s.wrap("reading trace of run "+runID, err)
		}
		p.Elapsed, p.Objective = floatOrNaN(el), floatOrNaN(obj)
		out = append(out, p)
	}
	if err := closeRows(rows); err != nil {
		return nil, s.wrap("reading trace of run "+runID, err)
	}
	return out, nil
}

// ErrNoStatement is the error of Query given SQL with no statement in it
// (empty, blanks or comments).
var ErrNoStatement = errors.New("results: no SQL statement to run")

// Query runs SQL and returns the column names and rows of its last
// statement. Values are nil (NULL), int64, float64, string or time.Time.
// On a read-only store, a statement that would write anything is refused
// before it runs (see Options.ReadOnly).
func (s *Store) Query(sqlText string, args ...any) (cols []string, rows [][]any, err error) {
	if strings.TrimSpace(sqlText) == "" {
		return nil, nil, ErrNoStatement
	}
	s.guard.reset()
	rs, err := s.db.QueryContext(context.Background(), sqlText, args...)
	if err != nil {
		return nil, nil, s.wrap("query", s.guard.explain(err))
	}
	defer rs.Close()
	if cols, err = rs.Columns(); err != nil {
		return nil, nil, s.wrap("query", err)
	}
	if len(cols) == 0 && s.readOnly { // every statement a read-only store runs has columns: only comments
		return nil, nil, fmt.Errorf("%w in %q", ErrNoStatement, sqlText)
	}
	for rs.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rs.Scan(ptrs...); err != nil {
			return nil, nil, s.wrap("query", err)
		}
		for i, v := range vals {
			switch v := v.(type) {
			case []byte:
				vals[i] = string(v)
			case bool:
				vals[i] = boolInt(v)
			case time.Time:
				vals[i] = v.UTC()
			}
		}
		rows = append(rows, vals)
	}
	if err := rs.Err(); err != nil {
		return nil, nil, s.wrap("query", s.guard.explain(err))
	}
	return cols, rows, nil
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func closeRows(rows *sql.Rows) error {
	if err := rows.Err(); err != nil {
		rows.Close()
		return err
	}
	return rows.Close()
}
