package results

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mattn/go-sqlite3"
)

// Run statuses.
const (
	StatusRunning     = "running"
	StatusDone        = "done"
	StatusFailed      = "failed"
	StatusInterrupted = "interrupted"
)

// Run is one row of the runs table: what ran, how it ended and where.
type Run struct {
	ID         string
	Grid       string // grid or paper name
	Spec       string // canonical JSON of the run spec
	Method     string
	Dataset    string
	Split      int
	Seed       uint64
	Status     string // StatusRunning, StatusDone, StatusFailed or StatusInterrupted
	Error      string
	Started    time.Time
	Finished   time.Time
	Host       string
	GitCommit  string
	GoVersion  string
	BLAS       string
	Provenance string // JSON
	Profile    string // "quick", "full" or ""
	// Params are the run's flattened parameters, e.g. {"num_inducing", "100"}.
	Params []Param
	// Hyper are the run's fitted hyperparameters (hyperparameters table),
	// by name and index.
	Hyper []Hyperparameter
}

// Param is one flattened run parameter. It is stored as text, and also as a
// number when Value parses as a finite one.
type Param struct{ Name, Value string }

// Metric is one final metric of a run; see MetricNames for the names.
type Metric struct {
	Name  string
	Value float64
}

// TracePoint is one optimiser iteration as reported by the method.
type TracePoint struct {
	Iteration int
	Elapsed   float64 // seconds since Fit started
	Objective float64
	Phase     string
}

// Filter selects runs; empty fields match everything.
type Filter struct {
	Grid, Method, Dataset, Status string
}

// DefaultBusyTimeout is how long a writer waits for another process's write
// lock before giving up with an error.
const DefaultBusyTimeout = 10 * time.Second

// Options tune OpenWith.
type Options struct {
	// ReadOnly opens an existing database without write access, whatever
	// the SQL: besides mode=ro and query_only, an SQLite authorizer on
	// every connection refuses writes, schema changes, ATTACH, VACUUM,
	// transactions and PRAGMAs that set values before they run.
	ReadOnly bool
	// BusyTimeout bounds the wait for another process's lock; zero means
	// DefaultBusyTimeout.
	BusyTimeout time.Duration
}

// Store is a results database. It is safe for concurrent use; writes from one
// process are serialised, and SQLite's WAL lets readers in other processes
// proceed while a run is being written.
type Store struct {
	db       *sql.DB
	path     string
	readOnly bool
	timeout  time.Duration
	version  int        // schema version; older read-only databases lack later tables
	mu       sync.Mutex // serialises this process's write transactions
	guard    *readGuard // the authorizer of a read-only store's connections
}

// minReadVersion is the oldest schema a read-only Store reads without
// migrating it.
const minReadVersion = 2

// Open opens the database at path for reading and writing, creating it (and
// its parent directories) if needed and migrating an older schema.
func Open(path string) (*Store, error) { return OpenWith(path, Options{}) }

// OpenReadOnly opens an existing database for queries only.
func OpenReadOnly(path string) (*Store, error) { return OpenWith(path, Options{ReadOnly: true}) }

// OpenWith opens the database at path with the given options.
func OpenWith(path string, o Options) (*Store, error) {
	if path == "" {
		return nil, errors.New("results: empty database path")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("results: database path %q: %w", path, err)
	}
	if o.BusyTimeout <= 0 {
		o.BusyTimeout = DefaultBusyTimeout
	}
	if err := precheck(abs, o.ReadOnly); err != nil {
		return nil, err
	}
	q := url.Values{}
	q.Set("_busy_timeout", strconv.FormatInt(o.BusyTimeout.Milliseconds(), 10))
	q.Set("_foreign_keys", "1")
	if o.ReadOnly {
		q.Set("mode", "ro")
		q.Set("_query_only", "1")
	} else {
		q.Set("_journal_mode", "WAL")
		q.Set("_synchronous", "NORMAL")
		// Take the write lock at BEGIN so a writer waits (busy_timeout) up
		// front instead of failing on a read→write upgrade mid-transaction.
		q.Set("_txlock", "immediate")
	}
	dsn := "file:" + escapeURIPath(abs) + "?" + q.Encode()
	var db *sql.DB
	var guard *readGuard
	if o.ReadOnly {
		guard = new(readGuard)
		db = sql.OpenDB(newGuardedConnector(dsn, guard))
	} else if db, err = sql.Open(driverName, dsn); err != nil {
		return nil, fmt.Errorf("results: opening %s: %w", abs, err)
	}
	db.SetMaxIdleConns(4)
	s := &Store{db: db, path: abs, readOnly: o.ReadOnly, timeout: o.BusyTimeout, guard: guard}
	ctx := context.Background()
	// SQLite returns SQLITE_BUSY at once, without calling the busy handler,
	// where waiting could deadlock: this happens when several processes (or
	// connections) open a new file together and race to switch it to WAL.
	// Retry those until the busy timeout, so that the timeout means the same
	// when opening as when writing.
	deadline := time.Now().Add(o.BusyTimeout)
	for {
		err = s.setUp(ctx)
		if err == nil {
			return s, nil
		}
		if !isBusy(err) || time.Now().After(deadline) {
			db.Close()
			return nil, err
		}
		time.Sleep(openRetryDelay)
	}
}

// openRetryDelay is the pause between attempts to open a busy database.
const openRetryDelay = 20 * time.Millisecond

// setUp checks the connection and the schema version, migrating it when
// the store is writable.
func (s *Store) setUp(ctx context.Context) error {
	if err := s.db.PingContext(ctx); err != nil {
		return s.wrap("opening", err)
	}
	if s.readOnly {
		return s.checkVersion(ctx)
	}
	return migrate(ctx, s)
}

// isBusy reports whether err is SQLite's "database is busy/locked".
func isBusy(err error) bool {
	var se sqlite3.Error
	return errors.As(err, &se) && (se.Code == sqlite3.ErrBusy || se.Code == sqlite3.ErrLocked)
}

// precheck turns the common path problems into errors that name the path,
// rather than SQLite's bare "unable to open database file".
func precheck(abs string, readOnly bool) error {
	fi, err := os.Stat(abs)
	switch {
	case err == nil && fi.IsDir():
		return fmt.Errorf("results: database path %s is a directory", abs)
	case readOnly && errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("results: database %s does not exist", abs)
	case readOnly && err != nil:
		return fmt.Errorf("results: database %s: %w", abs, err)
	}
	if err == nil && fi.Size() > 0 {
		if err := checkHeader(abs); err != nil {
			return err
		}
	}
	if readOnly {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		return fmt.Errorf("results: cannot create directory for database %s: %w", abs, err)
	}
	f, err := os.OpenFile(abs, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("results: database %s is not writable: %w", abs, err)
	}
	return f.Close()
}

// sqliteMagic starts every SQLite database file.
const sqliteMagic = "SQLite format 3\x00"

// checkHeader refuses a non-empty file that is not an SQLite database.
// SQLite itself only notices when the file is long enough to hold a header:
// a file shorter than that (a one-line note given as --db by mistake) would
// silently be overwritten with a new database.
func checkHeader(abs string) error {
	f, err := os.Open(abs)
	if err != nil {
		return fmt.Errorf("results: database %s: %w", abs, err)
	}
	defer f.Close()
	buf := make([]byte, len(sqliteMagic))
	n, _ := io.ReadFull(f, buf)
	if string(buf[:n]) != sqliteMagic {
		return fmt.Errorf("results: %s is not a database (no SQLite header); refusing to overwrite it", abs)
	}
	return nil
}

// escapeURIPath escapes the characters that would end the path part of an
// SQLite file: URI.
func escapeURIPath(p string) string {
	return strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(filepath.ToSlash(p))
}

func (s *Store) checkVersion(ctx context.Context) error {
	v, err := userVersion(ctx, s.db)
	if err != nil {
		return s.wrap("reading schema version", err)
	}
	switch {
	case v == SchemaVersion:
		s.version = v
		return nil
	case v >= minReadVersion && v < SchemaVersion:
		// Versions since 2 differ only by added tables, views and
		// columns readers do not use (claims in 3, the claims' token in
		// 4, hyperparameters in 5); absent tables read as empty, so
		// reading needs no migration.
		s.version = v
		return nil
	case v == 0:
		return fmt.Errorf("results: %s is not an sgplab results database (no schema)", s.path)
	case v > SchemaVersion:
		return fmt.Errorf("results: %s has schema version %d, newer than this build understands (%d); use a newer sgplab", s.path, v, SchemaVersion)
	default:
		return fmt.Errorf("results: %s has schema version %d, older than %d; open it for writing once (results.Open) to migrate it", s.path, v, SchemaVersion)
	}
}

// BusyTimeout is how long a write of this store waits for another
// connection's lock before it fails.
func (s *Store) BusyTimeout() time.Duration { return s.timeout }

// Path returns the absolute path of the database file.
func (s *Store) Path() string { return s.path }

// Close closes the database.
func (s *Store) Close() error {
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("results: closing %s: %w", s.path, err)
	}
	return nil
}

// wrap names the database and explains lock timeouts.
func (s *Store) wrap(what string, err error) error {
	if isBusy(err) {
		return fmt.Errorf("results: %s: %s: database is locked by another connection or process; gave up after the busy timeout of %v: %w", s.path, what, s.timeout, err)
	}
	if se := (sqlite3.Error{}); errors.As(err, &se) && se.Code == sqlite3.ErrReadonly {
		return fmt.Errorf("results: %s: %s: database is read-only: %w", s.path, what, err)
	}
	return fmt.Errorf("results: %s: %s: %w", s.path, what, err)
}

// ErrReadOnly is returned by writes to a store opened with OpenReadOnly.
var ErrReadOnly = errors.New("results: store is opened read-only")

// SaveRun writes r with its metrics and trace in one transaction, replacing
// every row previously stored under r.ID.
func (s *Store) SaveRun(r Run, metrics []Metric, trace []TracePoint) error {
	return s.SaveRunArtifacts(r, metrics, trace, nil)
}

// MarkRunning records r as in flight (status running, no metrics or trace),
// replacing any earlier rows of r.ID. A zero r.Started is set to now.
func (s *Store) MarkRunning(r Run) error {
	r.Status = StatusRunning
	r.Error = ""
	r.Finished = time.Time{}
	if r.Started.IsZero() {
		r.Started = nowUTC()
	}
	return s.SaveRun(r, nil, nil)
}

func validateRun(r Run, metrics []Metric) error {
	if r.ID == "" {
		return errors.New("results: run has an empty ID")
	}
	if r.Method == "" || r.Dataset == "" {
		return fmt.Errorf("results: run %s: method and dataset are required (got method %q, dataset %q)", r.ID, r.Method, r.Dataset)
	}
	switch r.Status {
	case StatusRunning, StatusDone, StatusFailed, StatusInterrupted:
	default:
		return fmt.Errorf("results: run %s: invalid status %q: use running, done, failed or interrupted", r.ID, r.Status)
	}
	switch r.Profile {
	case "", "quick", "full":
	default:
		return fmt.Errorf("results: run %s: invalid profile %q: use quick, full or empty", r.ID, r.Profile)
	}
	if r.Spec != "" && !json.Valid([]byte(r.Spec)) {
		return fmt.Errorf("results: run %s: spec is not valid JSON", r.ID)
	}
	if r.Provenance != "" && !json.Valid([]byte(r.Provenance)) {
		return fmt.Errorf("results: run %s: provenance is not valid JSON", r.ID)
	}
	seen := make(map[string]bool, len(metrics))
	for _, m := range metrics {
		if err := CheckMetricName(m.Name); err != nil {
			return fmt.Errorf("results: run %s: %w", r.ID, err)
		}
		if seen[m.Name] {
			return fmt.Errorf("results: run %s: metric %q given twice", r.ID, m.Name)
		}
		seen[m.Name] = true
	}
	seen = make(map[string]bool, len(r.Params))
	for _, p := range r.Params {
		if p.Name == "" {
			return fmt.Errorf("results: run %s: parameter with empty name", r.ID)
		}
		if seen[p.Name] {
			return fmt.Errorf("results: run %s: parameter %q given twice", r.ID, p.Name)
		}
		seen[p.Name] = true
	}
	return nil
}

// traceBatch is the number of trace rows per INSERT; multi-row inserts cut
// the per-statement cgo and driver overhead that dominates small rows.
const traceBatch = 100

// writeRun replaces the rows of r.ID inside tx. Children are deleted
// explicitly so correctness does not hinge on PRAGMA foreign_keys.
func writeRun(ctx context.Context, tx *sql.Tx, r Run, metrics []Metric, trace []TracePoint) error {
	for _, table := range []string{"metrics", "traces", "run_params", "artifacts", "hyperparameters", "runs"} {
		col := "run_id"
		if table == "runs" {
			col = "id"
		}
		if _, err := tx.ExecContext(ctx, "DELETE FROM "+table+" WHERE "+col+" = ?", r.ID); err != nil {
			return err
		}
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO runs (id, grid, spec, method, dataset, split, seed, profile,
		status, error, started, finished, host, git_commit, go_version, blas, provenance)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.ID, r.Grid, r.Spec, r.Method, r.Dataset, r.Split, int64(r.Seed), r.Profile,
		r.Status, r.Error, nullTime(r.Started), nullTime(r.Finished), r.Host, r.GitCommit, r.GoVersion, r.BLAS, r.Provenance)
	if err != nil {
		return err
	}
	if len(metrics) > 0 {
		args := make([]any, 0, 3*len(metrics))
		for _, m := range metrics {
			args = append(args, r.ID, m.Name, nullFloat(m.Value))
		}
		if _, err := tx.ExecContext(ctx, "INSERT INTO metrics (run_id, name, value) VALUES "+placeholders(len(metrics), 3), args...); err != nil {
			return err
		}
	}
	if len(r.Params) > 0 {
		args := make([]any, 0, 4*len(r.Params))
		for _, p := range r.Params {
			args = append(args, r.ID, p.Name, p.Value, paramNum(p.Value))
		}
		if _, err := tx.ExecContext(ctx, "INSERT INTO run_params (run_id, name, value, num) VALUES "+placeholders(len(r.Params), 4), args...); err != nil {
			return err
		}
	}
	if err := writeHyper(ctx, tx, r.ID, r.Hyper); err != nil {
		return err
	}
	var full *sql.Stmt
	args := make([]any, 0, 6*traceBatch)
	for start := 0; start < len(trace); start += traceBatch {
		end := min(start+traceBatch, len(trace))
		args = args[:0]
		for i, p := range trace[start:end] {
			args = append(args, r.ID, start+i, p.Iteration, nullFloat(p.Elapsed), nullFloat(p.Objective), p.Phase)
		}
		const ins = "INSERT INTO traces (run_id, seq, iteration, elapsed_seconds, objective, phase) VALUES "
		if end-start < traceBatch {
			if _, err := tx.ExecContext(ctx, ins+placeholders(end-start, 6), args...); err != nil {
				return err
			}
			continue
		}
		if full == nil {
			if full, err = tx.PrepareContext(ctx, ins+placeholders(traceBatch, 6)); err != nil {
				return err
			}
			defer full.Close()
		}
		if _, err := full.ExecContext(ctx, args...); err != nil {
			return err
		}
	}
	return nil
}

// placeholders returns "(?,?,…),(?,?,…)…" for rows rows of cols values.
func placeholders(rows, cols int) string {
	one := "(" + strings.Repeat("?,", cols-1) + "?)"
	var b strings.Builder
	b.Grow(rows * (len(one) + 1))
	for i := range rows {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(one)
	}
	return b.String()
}

// paramNum is the numeric value of a parameter, or NULL when it is not a
// finite number (ParseFloat alone would accept "NaN" and "Inf").
func paramNum(v string) any {
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return nil
	}
	return f
}

// timeLayout is fixed-width so that stored times sort correctly as text.
const timeLayout = "2006-01-02T15:04:05.000000000Z07:00"

func nowUTC() time.Time { return time.Now().UTC() }

func formatTime(t time.Time) string { return t.UTC().Format(timeLayout) }

func nullTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return formatTime(t)
}

func parseTime(ns sql.NullString) (time.Time, error) {
	if !ns.Valid || ns.String == "" {
		return time.Time{}, nil
	}
	return time.Parse(time.RFC3339Nano, ns.String)
}

// nullFloat stores NaN as NULL explicitly (SQLite has no NaN).
func nullFloat(v float64) any {
	if math.IsNaN(v) {
		return nil
	}
	return v
}

func floatOrNaN(v sql.NullFloat64) float64 {
	if !v.Valid {
		return math.NaN()
	}
	return v.Float64
}
