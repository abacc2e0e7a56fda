package results

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"
)

// Worker identifies one sweeping process for leases.
type Worker struct {
	ID   string // unique per process and sweep, e.g. host:pid:nonce
	Host string
	PID  int
	// StaleAfter is how long after its last heartbeat this worker's leases
	// count as dead; it should be several heartbeat intervals.
	StaleAfter time.Duration
}

// NewWorker returns a Worker for this process.
func NewWorker(host string, staleAfter time.Duration) Worker {
	pid := os.Getpid()
	return Worker{ID: fmt.Sprintf("%s:%d:%d", host, pid, time.Now().UnixNano()), Host: host, PID: pid, StaleAfter: staleAfter}
}

// LeaseResult says why a lease was or was not granted.
type LeaseResult int

const (
	Leased      LeaseResult = iota // the run is ours: recorded as running with our lease
	HeldByOther                    // another live worker holds it
	Finished                       // done (not forced), or finished during this sweep
)

// Lease is a granted lease: the run, the worker and the lease's fencing
// token. Tokens come from one counter per database (lease_tokens), so no
// two leases ever share one, and a worker writes a run (SaveLeased) only
// while the run's claims row still holds its worker and token.
type Lease struct {
	RunID, Worker string
	Token         int64
}

// ErrLeaseLost is matched (errors.Is) by the *LeaseLostError a leased write
// returns when the writer no longer holds the run's lease.
var ErrLeaseLost = errors.New("results: lease lost")

// LeaseLostError says that a write under Lease was refused, and wrote
// nothing, because the run is no longer held under that lease: another worker
// took it over (the writer was suspended or cut off past its stale window),
// or the run was deleted.
type LeaseLostError struct {
	Lease Lease
	// Holder is the worker whose lease the run has now; "" if none.
	Holder string
}

func (e *LeaseLostError) Error() string {
	now := "nobody holds it now"
	if e.Holder != "" {
		now = "worker " + e.Holder + " holds it now"
	}
	return fmt.Sprintf("results: lease lost: run %s is no longer claimed by worker %s with token %d (%s); nothing was written",
		e.Lease.RunID, e.Lease.Worker, e.Lease.Token, now)
}

func (e *LeaseLostError) Is(target error) bool { return target == ErrLeaseLost }

// checkLease returns a *LeaseLostError unless the claims row of l.RunID
// holds l's worker and token. Called inside a write transaction (BEGIN
// IMMEDIATE, so the write lock is held), the answer stays true until that
// transaction ends: no other lease can be granted in between, however long
// this process is suspended.
func checkLease(ctx context.Context, tx *sql.Tx, l Lease) error {
	var worker string
	var token int64
	err := tx.QueryRowContext(ctx, "SELECT worker, token FROM claims WHERE run_id = ?", l.RunID).Scan(&worker, &token)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return &LeaseLostError{Lease: l}
	case err != nil:
		return err
	case worker != l.Worker || token != l.Token:
		return &LeaseLostError{Lease: l, Holder: worker}
	}
	return nil
}

// Lease takes run r for worker w in one write transaction: it succeeds
// when no other worker holds a live lease on it, the run is not done
// (unless force) and it has not finished since since (a run another worker
// finished or failed during this sweep is not repeated by it). On success
// the run is recorded as running (MarkRunning) and the claims row written
// with a new token in the same transaction, so no two workers can both
// start it; the Lease returned is what SaveLeased and Heartbeat need. A
// dead lease (heartbeat older than its stale_ms) is taken over, which
// fences off its old holder.
func (s *Store) Lease(r Run, w Worker, since time.Time, force bool) (LeaseResult, Lease, error) {
	if s.readOnly {
		return 0, Lease{}, ErrReadOnly
	}
	r.Status = StatusRunning
	r.Error = ""
	r.Finished = time.Time{}
	if r.Started.IsZero() {
		r.Started = nowUTC()
	}
	if err := validateRun(r, nil); err != nil {
		return 0, Lease{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ctx := context.Background()
	tx, err := s.db.BeginTx(ctx, nil) // BEGIN IMMEDIATE: the write lock is ours
	if err != nil {
		return 0, Lease{}, s.wrap("claiming run "+r.ID, err)
	}
	defer tx.Rollback()
	// Read the clock with the lock held: a wait for the lock must not age
	// the heartbeat written below, nor make a live lease look stale.
	now := time.Now()
	var worker string
	var beat, staleMS int64
	err = tx.QueryRowContext(ctx, "SELECT worker, heartbeat, stale_ms FROM claims WHERE run_id = ?", r.ID).Scan(&worker, &beat, &staleMS)
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return 0, Lease{}, s.wrap("claiming run "+r.ID, err)
	case worker != w.ID && now.UnixNano()-beat < staleMS*int64(time.Millisecond):
		return HeldByOther, Lease{}, nil
	}
	var status string
	var finished sql.NullString
	err = tx.QueryRowContext(ctx, "SELECT status, finished FROM runs WHERE id = ?", r.ID).Scan(&status, &finished)
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return 0, Lease{}, s.wrap("claiming run "+r.ID, err)
	default:
		fin, _ := parseTime(finished)
		if status == StatusDone && !force {
			return Finished, Lease{}, nil
		}
		if (status == StatusDone || status == StatusFailed) && !fin.IsZero() && !fin.Before(since) {
			return Finished, Lease{}, nil
		}
	}
	l := Lease{RunID: r.ID, Worker: w.ID}
	if err := tx.QueryRowContext(ctx, "UPDATE lease_tokens SET last = last + 1 WHERE id = 1 RETURNING last").Scan(&l.Token); err != nil {
		return 0, Lease{}, s.wrap("claiming run "+r.ID, err)
	}
	if err := writeRun(ctx, tx, r, nil, nil); err != nil {
		return 0, Lease{}, s.wrap("claiming run "+r.ID, err)
	}
	_, err = tx.ExecContext(ctx, `INSERT OR REPLACE INTO claims (run_id, worker, host, pid, claimed, heartbeat, stale_ms, token)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, r.ID, w.ID, w.Host, w.PID, now.UnixNano(), now.UnixNano(), w.StaleAfter.Milliseconds(), l.Token)
	if err != nil {
		return 0, Lease{}, s.wrap("claiming run "+r.ID, err)
	}
	if err := tx.Commit(); err != nil {
		return 0, Lease{}, s.wrap("claiming run "+r.ID, err)
	}
	return Leased, l, nil
}

// SaveLeased is SaveRunArtifacts for the holder of lease l: in one write
// transaction it checks that the run's lease is still l and then writes r
// (with its metrics, trace and artifacts) and, unless r is running,
// releases the lease. When the lease is no longer l it writes nothing and
// returns a *LeaseLostError (errors.Is(err, ErrLeaseLost)).
func (s *Store) SaveLeased(l Lease, r Run, metrics []Metric, trace []TracePoint, arts []Artifact) error {
	if l.RunID != r.ID {
		return fmt.Errorf("results: lease of run %s used to save run %s", l.RunID, r.ID)
	}
	return s.save(&l, r, metrics, trace, arts)
}

// Heartbeat refreshes the leases worker w holds and returns the leases of
// held that it no longer holds (taken over after it looked dead, or the run
// deleted), in one write transaction. It never revives a lease: a row
// another worker took over is not w's to refresh.
func (s *Store) Heartbeat(w Worker, held []Lease) (lost []Lease, err error) {
	if s.readOnly {
		return nil, ErrReadOnly
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ctx := context.Background()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, s.wrap("heartbeat", err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, "UPDATE claims SET heartbeat = ? WHERE worker = ?", time.Now().UnixNano(), w.ID); err != nil {
		return nil, s.wrap("heartbeat", err)
	}
	rows, err := tx.QueryContext(ctx, "SELECT run_id, token FROM claims WHERE worker = ?", w.ID)
	if err != nil {
		return nil, s.wrap("heartbeat", err)
	}
	tokens := map[string]int64{}
	for rows.Next() {
		var id string
		var token int64
		if err := rows.Scan(&id, &token); err != nil {
			rows.Close()
			return nil, s.wrap("heartbeat", err)
		}
		tokens[id] = token
	}
	if err := closeRows(rows); err != nil {
		return nil, s.wrap("heartbeat", err)
	}
	if err := tx.Commit(); err != nil {
		return nil, s.wrap("heartbeat", err)
	}
	for _, l := range held {
		if t, ok := tokens[l.RunID]; !ok || t != l.Token || l.Worker != w.ID {
			lost = append(lost, l)
		}
	}
	return lost, nil
}

// LeaseInfo is one row of the claims table: a live or dead lease.
type LeaseInfo struct {
	RunID, Worker, Host string
	PID                 int
	Taken, Heartbeat    time.Time
	StaleAfter          time.Duration
}

// Live reports whether the lease's heartbeat is recent enough at now.
func (c LeaseInfo) Live(now time.Time) bool { return now.Sub(c.Heartbeat) < c.StaleAfter }

// Leases returns the leases on the given runs (all leases when ids is nil),
// read from the claims table.
func (s *Store) Leases(ids []string) (map[string]LeaseInfo, error) {
	out := map[string]LeaseInfo{}
	if s.version != 0 && s.version < 3 {
		return out, nil // a version-2 database read without migration has no leases
	}
	ctx := context.Background()
	scan := func(q string, args ...any) error {
		rows, err := s.db.QueryContext(ctx, q, args...)
		if err != nil {
			return s.wrap("reading claims", err)
		}
		for rows.Next() {
			var c LeaseInfo
			var claimed, beat, staleMS int64
			if err := rows.Scan(&c.RunID, &c.Worker, &c.Host, &c.PID, &claimed, &beat, &staleMS); err != nil {
				rows.Close()
				return s.wrap("reading claims", err)
			}
			c.Taken, c.Heartbeat = time.Unix(0, claimed), time.Unix(0, beat)
			c.StaleAfter = time.Duration(staleMS) * time.Millisecond
			out[c.RunID] = c
		}
		if err := closeRows(rows); err != nil {
			return s.wrap("reading claims", err)
		}
		return nil
	}
	const cols = "SELECT run_id, worker, host, pid, claimed, heartbeat, stale_ms FROM claims"
	if ids == nil {
		return out, scan(cols)
	}
	for start := 0; start < len(ids); start += statusChunk {
		chunk := ids[start:min(start+statusChunk, len(ids))]
		args := make([]any, len(chunk))
		for i, id := range chunk {
			args[i] = id
		}
		if err := scan(cols+" WHERE run_id IN ("+strings.Repeat("?,", len(chunk)-1)+"?)", args...); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// releaseLease deletes the lease on id inside tx once the run is recorded
// with a final status (after checkLease, for a leased write).
func releaseLease(ctx context.Context, tx *sql.Tx, id string) error {
	_, err := tx.ExecContext(ctx, "DELETE FROM claims WHERE run_id = ?", id)
	return err
}
