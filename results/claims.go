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

// Worker identifies one sweeping process for claims.
type Worker struct {
	ID   string // unique per process and sweep, e.g. host:pid:nonce
	Host string
	PID  int
	// StaleAfter is how long after its last heartbeat this worker's claims
	// count as dead; it should be several heartbeat intervals.
	StaleAfter time.Duration
}

// NewWorker returns a Worker for this process.
func NewWorker(host string, staleAfter time.Duration) Worker {
	pid := os.Getpid()
	return Worker{ID: fmt.Sprintf("%s:%d:%d", host, pid, time.Now().UnixNano()), Host: host, PID: pid, StaleAfter: staleAfter}
}

// ClaimResult says why a claim was or was not granted.
type ClaimResult int

const (
	Claimed     ClaimResult = iota // the run is ours: recorded as running with our claim
	HeldByOther                    // another live worker holds it
	Finished                       // done (not forced), or finished during this sweep
)

// Claim takes run r for worker w in one write transaction: it succeeds
// when no other worker holds a live claim on it, the run is not done
// (unless force) and it has not finished since since (a run another worker
// finished or failed during this sweep is not repeated by it). On success
// the run is recorded as running (MarkRunning) and the claim row written in
// the same transaction, so no two workers can both start it. A dead claim
// (heartbeat older than its stale_ms) is taken over.
func (s *Store) Claim(r Run, w Worker, since time.Time, force bool) (ClaimResult, error) {
	if s.readOnly {
		return 0, ErrReadOnly
	}
	r.Status = StatusRunning
	r.Error = ""
	r.Finished = time.Time{}
	if r.Started.IsZero() {
		r.Started = nowUTC()
	}
	if err := validateRun(r, nil); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ctx := context.Background()
	tx, err := s.db.BeginTx(ctx, nil) // BEGIN IMMEDIATE: the write lock is ours
	if err != nil {
		return 0, s.wrap("claiming run "+r.ID, err)
	}
	defer tx.Rollback()
	now := time.Now()
	var worker string
	var beat, staleMS int64
	err = tx.QueryRowContext(ctx, "SELECT worker, heartbeat, stale_ms FROM claims WHERE run_id = ?", r.ID).Scan(&worker, &beat, &staleMS)
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return 0, s.wrap("claiming run "+r.ID, err)
	case worker != w.ID && now.UnixNano()-beat < staleMS*int64(time.Millisecond):
		return HeldByOther, nil
	}
	var status string
	var finished sql.NullString
	err = tx.QueryRowContext(ctx, "SELECT status, finished FROM runs WHERE id = ?", r.ID).Scan(&status, &finished)
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return 0, s.wrap("claiming run "+r.ID, err)
	default:
		fin, _ := parseTime(finished)
		if status == StatusDone && !force {
			return Finished, nil
		}
		if (status == StatusDone || status == StatusFailed) && !fin.IsZero() && !fin.Before(since) {
			return Finished, nil
		}
	}
	if err := writeRun(ctx, tx, r, nil, nil); err != nil {
		return 0, s.wrap("claiming run "+r.ID, err)
	}
	_, err = tx.ExecContext(ctx, `INSERT OR REPLACE INTO claims (run_id, worker, host, pid, claimed, heartbeat, stale_ms)
		VALUES (?, ?, ?, ?, ?, ?, ?)`, r.ID, w.ID, w.Host, w.PID, now.UnixNano(), now.UnixNano(), w.StaleAfter.Milliseconds())
	if err != nil {
		return 0, s.wrap("claiming run "+r.ID, err)
	}
	if err := tx.Commit(); err != nil {
		return 0, s.wrap("claiming run "+r.ID, err)
	}
	return Claimed, nil
}

// Heartbeat refreshes every claim of worker w and returns how many it holds.
func (s *Store) Heartbeat(w Worker) (int64, error) {
	if s.readOnly {
		return 0, ErrReadOnly
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	res, err := s.db.ExecContext(context.Background(), "UPDATE claims SET heartbeat = ? WHERE worker = ?", time.Now().UnixNano(), w.ID)
	if err != nil {
		return 0, s.wrap("heartbeat", err)
	}
	return res.RowsAffected()
}

// Claim is one row of the claims table.
type ClaimInfo struct {
	RunID, Worker, Host string
	PID                 int
	Claimed, Heartbeat  time.Time
	StaleAfter          time.Duration
}

// Live reports whether the claim's heartbeat is recent enough at now.
func (c ClaimInfo) Live(now time.Time) bool { return now.Sub(c.Heartbeat) < c.StaleAfter }

// Claims returns the claims on the given runs (all claims when ids is nil).
func (s *Store) Claims(ids []string) (map[string]ClaimInfo, error) {
	out := map[string]ClaimInfo{}
	ctx := context.Background()
	scan := func(q string, args ...any) error {
		rows, err := s.db.QueryContext(ctx, q, args...)
		if err != nil {
			return s.wrap("reading claims", err)
		}
		for rows.Next() {
			var c ClaimInfo
			var claimed, beat, staleMS int64
			if err := rows.Scan(&c.RunID, &c.Worker, &c.Host, &c.PID, &claimed, &beat, &staleMS); err != nil {
				rows.Close()
				return s.wrap("reading claims", err)
			}
			c.Claimed, c.Heartbeat = time.Unix(0, claimed), time.Unix(0, beat)
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

// releaseClaim deletes the claim on id inside tx once the run is recorded
// with a final status.
func releaseClaim(ctx context.Context, tx *sql.Tx, id string) error {
	_, err := tx.ExecContext(ctx, "DELETE FROM claims WHERE run_id = ?", id)
	return err
}
