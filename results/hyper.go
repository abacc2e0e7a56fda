package results

import (
	"context"
	"database/sql"
)

// Hyperparameter is one entry of a fitted hyperparameter in natural units
// (a kernel variance, one of several ARD lengthscales, the noise
// variance): a scalar has Index 0, a vector one row per entry, a matrix
// its entries row-major.
type Hyperparameter struct {
	Name  string
	Index int
	Value float64
}

// Metric names of the convergence diagnostic the runner stores with every
// done run (runner.convergence, optim.Rule); the run_convergence view
// reads them.
const (
	ConvergedMetric = "x_converged"  // 1 converged, 0 not, NULL without training
	RelChangeMetric = "x_rel_change" // relative gain per iteration over the last 10 % of the trace
)

// schemaV5 adds the fitted hyperparameters of every run, and views for
// hand-written SQL and pandas: hyperparameters and convergence per run.
// idx is the entry's index ("index" is an SQL keyword).
const schemaV5 = `
CREATE TABLE hyperparameters (
	run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	name   TEXT NOT NULL,
	idx    INTEGER NOT NULL,
	value  REAL,                            -- NULL means NaN
	PRIMARY KEY (run_id, name, idx)
) WITHOUT ROWID;

CREATE VIEW run_hyperparameters (run_id, grid, method, dataset, split, seed, name, idx, value) AS
	SELECT r.id, r.grid, r.method, r.dataset, r.split, r.seed, h.name, h.idx, h.value
	FROM runs r JOIN hyperparameters h ON h.run_id = r.id;

-- One row per run: converged is 1, 0, or NULL for a run without training
-- (and for runs that are not done).
CREATE VIEW run_convergence (run_id, grid, method, dataset, split, seed, status, iterations, converged, rel_change) AS
	SELECT r.id, r.grid, r.method, r.dataset, r.split, r.seed, r.status, it.value, c.value, rc.value
	FROM runs r
	LEFT JOIN metrics it ON it.run_id = r.id AND it.name = 'iterations'
	LEFT JOIN metrics c ON c.run_id = r.id AND c.name = '` + ConvergedMetric + `'
	LEFT JOIN metrics rc ON rc.run_id = r.id AND rc.name = '` + RelChangeMetric + `';
`

// hyperVersion is the first schema version with the hyperparameters table.
const hyperVersion = 5

func writeHyper(ctx context.Context, tx *sql.Tx, id string, hs []Hyperparameter) error {
	const batch = 200
	for start := 0; start < len(hs); start += batch {
		part := hs[start:min(start+batch, len(hs))]
		args := make([]any, 0, 4*len(part))
		for _, h := range part {
			args = append(args, id, h.Name, h.Index, nullFloat(h.Value))
		}
		if _, err := tx.ExecContext(ctx, "INSERT INTO hyperparameters (run_id, name, idx, value) VALUES "+placeholders(len(part), 4), args...); err != nil {
			return err
		}
	}
	return nil
}

// readHyper passes the hyperparameters of the runs selected by the WHERE
// clause where (over runs aliased r) to add, by run id, then name and
// index. A database older than hyperVersion has none.
func (s *Store) readHyper(ctx context.Context, where string, args []any, add func(id string, h Hyperparameter)) error {
	if s.version < hyperVersion {
		return nil
	}
	rows, err := s.db.QueryContext(ctx, "SELECT h.run_id, h.name, h.idx, h.value FROM hyperparameters h JOIN runs r ON r.id = h.run_id"+
		where+" ORDER BY h.run_id, h.name, h.idx", args...)
	if err != nil {
		return s.wrap("reading hyperparameters", err)
	}
	for rows.Next() {
		var id string
		var h Hyperparameter
		var v sql.NullFloat64
		if err := rows.Scan(&id, &h.Name, &h.Index, &v); err != nil {
			rows.Close()
			return s.wrap("reading hyperparameters", err)
		}
		h.Value = floatOrNaN(v)
		add(id, h)
	}
	if err := closeRows(rows); err != nil {
		return s.wrap("reading hyperparameters", err)
	}
	return nil
}

// Hyperparameters returns the fitted hyperparameters of run id, ordered
// by name and index.
func (s *Store) Hyperparameters(id string) ([]Hyperparameter, error) {
	var out []Hyperparameter
	err := s.readHyper(context.Background(), " WHERE r.id = ?", []any{id}, func(_ string, h Hyperparameter) { out = append(out, h) })
	return out, err
}

// hasTable reports whether schema (main, src, …) of conn holds a table.
func hasTable(ctx context.Context, conn *sql.Conn, schema, table string) (bool, error) {
	var n int
	err := conn.QueryRowContext(ctx, "SELECT count(*) FROM "+schema+".sqlite_master WHERE type = 'table' AND name = ?", table).Scan(&n)
	return n > 0, err
}
