package results

import (
	"context"
	"database/sql"
	"fmt"
)

// SchemaVersion is the schema version this package writes. It is stored in
// the database header (PRAGMA user_version) and logged in the
// schema_version table.
const SchemaVersion = 5

// migration moves a database from version-1 to version.
type migration struct {
	version int
	sql     string
}

// migrations is the ordered path from an empty file to SchemaVersion. A new
// schema version appends one step here and bumps SchemaVersion; steps are
// never edited once released, so every older database can be brought up to
// date by replaying the tail.
var migrations = []migration{
	{version: 1, sql: schemaV1},
	{version: 2, sql: schemaV2},
	{version: 3, sql: schemaV3},
	{version: 4, sql: schemaV4},
	{version: 5, sql: schemaV5}, // hyper.go
}

// schemaV1 is the first schema.
//
// Conventions: times are TEXT in UTC, RFC 3339 with nanoseconds and a fixed
// width (so they sort as text), NULL when unknown. REAL columns hold NULL where
// the Go value was NaN (SQLite has no NaN). Seeds are uint64 in Go and stored
// as the int64 with the same bits, so seeds ≥ 2⁶³ read negative in raw SQL.
const schemaV1 = `
-- One row per migration applied, for humans; PRAGMA user_version is authoritative.
CREATE TABLE schema_version (
	version INTEGER PRIMARY KEY,
	applied TEXT NOT NULL
);

-- One row per run. id is the runner's hash of the canonical spec, so the same
-- experiment always has the same id and re-running it replaces its row.
CREATE TABLE runs (
	id          TEXT PRIMARY KEY,
	grid        TEXT NOT NULL DEFAULT '',   -- grid or paper name
	spec        TEXT NOT NULL DEFAULT '',   -- canonical JSON of the run spec
	method      TEXT NOT NULL,
	dataset     TEXT NOT NULL,
	split       INTEGER NOT NULL,
	seed        INTEGER NOT NULL,
	profile     TEXT NOT NULL DEFAULT ''    -- 'quick', 'full' or ''
	            CHECK (profile IN ('', 'quick', 'full')),
	status      TEXT NOT NULL
	            CHECK (status IN ('running', 'done', 'failed', 'interrupted')),
	error       TEXT NOT NULL DEFAULT '',
	started     TEXT,
	finished    TEXT,
	host        TEXT NOT NULL DEFAULT '',
	git_commit  TEXT NOT NULL DEFAULT '',
	go_version  TEXT NOT NULL DEFAULT '',
	blas        TEXT NOT NULL DEFAULT '',
	provenance  TEXT NOT NULL DEFAULT ''    -- JSON: dataset files, checksums, …
);
CREATE INDEX runs_grid ON runs (grid, method, dataset);
CREATE INDEX runs_method_dataset ON runs (method, dataset);

-- Final metrics of a run; names are documented in doc.go and MetricNames.
CREATE TABLE metrics (
	run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	name   TEXT NOT NULL,
	value  REAL,                            -- NULL means NaN
	PRIMARY KEY (run_id, name)
) WITHOUT ROWID;

-- Optimiser trace, one row per reported iteration. seq keeps the order in
-- which points were reported (iterations restart when the phase changes).
CREATE TABLE traces (
	run_id          TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	seq             INTEGER NOT NULL,
	iteration       INTEGER NOT NULL,
	elapsed_seconds REAL,
	objective       REAL,                   -- NULL means NaN
	phase           TEXT NOT NULL DEFAULT '',
	PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;

-- The run's flattened parameters; num is the value as a number when it
-- parses as a finite one, so SQL can compare and sort numerically.
CREATE TABLE run_params (
	run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	name   TEXT NOT NULL,
	value  TEXT NOT NULL,
	num    REAL,
	PRIMARY KEY (run_id, name)
) WITHOUT ROWID;

-- For hand-written SQL: one row per run × metric, whatever the run's status.
CREATE VIEW run_metrics (run_id, method, dataset, split, seed, metric, value) AS
	SELECT r.id, r.method, r.dataset, r.split, r.seed, m.name, m.value
	FROM runs r JOIN metrics m ON m.run_id = r.id;

-- For hand-written SQL: one row per run × parameter.
CREATE VIEW run_params_v (run_id, method, dataset, split, seed, param, value, num) AS
	SELECT r.id, r.method, r.dataset, r.split, r.seed, p.name, p.value, p.num
	FROM runs r JOIN run_params p ON p.run_id = r.id;
`

// schemaV2 adds per-run arrays (predictive curves, kernel matrices) that
// figures draw but that are not scalar metrics. data is the row-major
// values as little-endian float64 (see EncodeValues); columns is a JSON list.
const schemaV2 = `
CREATE TABLE artifacts (
	run_id  TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	name    TEXT NOT NULL,
	rows    INTEGER NOT NULL,
	cols    INTEGER NOT NULL,
	columns TEXT NOT NULL,
	data    BLOB NOT NULL,
	PRIMARY KEY (run_id, name)
) WITHOUT ROWID;
`

// schemaV3 adds leases, in a table named claims (see the package
// documentation on why it keeps that name): several workers (processes,
// hosts) sweeping one database each lease a run before running it. A lease
// lives while its worker updates heartbeat; one whose heartbeat is older
// than its own stale_ms is dead (kill -9, lost node) and may be taken
// over. Times are Unix nanoseconds, so staleness is one integer comparison.
const schemaV3 = `
CREATE TABLE claims (
	run_id    TEXT PRIMARY KEY,
	worker    TEXT NOT NULL,              -- host:pid:random, unique per sweep
	host      TEXT NOT NULL,
	pid       INTEGER NOT NULL,
	claimed   INTEGER NOT NULL,           -- Unix ns
	heartbeat INTEGER NOT NULL,           -- Unix ns, refreshed while the run is in flight
	stale_ms  INTEGER NOT NULL            -- the claim is dead once heartbeat is older than this
) WITHOUT ROWID;
CREATE INDEX claims_worker ON claims (worker);
`

// schemaV4 fences leases: every lease gets a token, a number no earlier
// lease in the database had (lease_tokens counts them), and a worker writes
// a run only while the run's claims row still carries its worker and token,
// checked in the write's own transaction. A worker that was suspended
// (SIGSTOP, Slurm's scontrol suspend) while another took its lease over
// thereby writes nothing when it wakes.
const schemaV4 = `
ALTER TABLE claims ADD COLUMN token INTEGER NOT NULL DEFAULT 0;
CREATE TABLE lease_tokens (
	id   INTEGER PRIMARY KEY CHECK (id = 1),
	last INTEGER NOT NULL                 -- the last token handed out
);
INSERT INTO lease_tokens (id, last) VALUES (1, 0);
`

// userVersion reads PRAGMA user_version through q.
func userVersion(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}) (int, error) {
	var v int
	if err := q.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return 0, err
	}
	return v, nil
}

// migrate brings the database up to SchemaVersion in one write transaction;
// the version is re-read inside it so two processes opening a fresh file at
// once apply each step exactly once.
func migrate(ctx context.Context, s *Store) error {
	v, err := userVersion(ctx, s.db)
	if err != nil {
		return s.wrap("reading schema version", err)
	}
	if v > SchemaVersion {
		return fmt.Errorf("results: %s has schema version %d, newer than this build understands (%d); use a newer sgplab", s.path, v, SchemaVersion)
	}
	if v == SchemaVersion {
		s.version = v
		return nil
	}
	s.version = SchemaVersion
	s.mu.Lock()
	defer s.mu.Unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return s.wrap("starting migration", err)
	}
	defer tx.Rollback()
	if v, err = userVersion(ctx, tx); err != nil {
		return s.wrap("reading schema version", err)
	}
	for _, m := range migrations {
		if m.version <= v {
			continue
		}
		if _, err := tx.ExecContext(ctx, m.sql); err != nil {
			return s.wrap(fmt.Sprintf("migrating to schema version %d", m.version), err)
		}
		if _, err := tx.ExecContext(ctx, "INSERT INTO schema_version (version, applied) VALUES (?, ?)", m.version, formatTime(nowUTC())); err != nil {
			return s.wrap(fmt.Sprintf("migrating to schema version %d", m.version), err)
		}
		// PRAGMA takes no bound parameters; the version is an int we control.
		if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", m.version)); err != nil {
			return s.wrap(fmt.Sprintf("migrating to schema version %d", m.version), err)
		}
	}
	if err := tx.Commit(); err != nil {
		return s.wrap("committing migration", err)
	}
	return nil
}
