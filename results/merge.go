package results

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"slices"
)

// Merge copies the runs of each source database into dst (created if
// needed) and returns how many runs it wrote. It is idempotent by run id: a
// run already in dst is replaced only when the source copy finished later
// (a finished run beats one without a finish time); on a tie dst is kept, so
// merging the same shards again writes nothing. It is all-or-nothing: every
// source is opened and checked (SQLite quick_check) first, and all of them
// are merged in one transaction, so a bad source leaves dst as it was (and
// a dst this call created is removed).
func Merge(dst string, srcs ...string) (added int, err error) {
	_, statErr := os.Stat(dst)
	created := errors.Is(statErr, os.ErrNotExist)
	out, err := Open(dst)
	if err != nil {
		return 0, err
	}
	defer func() {
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		if err != nil && created {
			for _, suffix := range []string{"", "-wal", "-shm"} {
				os.Remove(out.path + suffix)
			}
		}
	}()
	dstInfo, err := os.Stat(out.path)
	if err != nil {
		return 0, fmt.Errorf("results: merge: %w", err)
	}
	var ins []*Store
	defer func() {
		for _, in := range ins {
			in.Close()
		}
	}()
	for _, src := range srcs {
		if fi, err := os.Stat(src); err == nil && os.SameFile(fi, dstInfo) {
			return 0, fmt.Errorf("results: merge: source %s is the destination database", src)
		}
		in, err := OpenReadOnly(src)
		if err != nil {
			return 0, fmt.Errorf("results: merge: nothing merged: %w", err)
		}
		ins = append(ins, in)
		if err := in.QuickCheck(); err != nil {
			return 0, fmt.Errorf("results: merge: nothing merged: %w", err)
		}
	}
	ctx := context.Background()
	out.mu.Lock()
	defer out.mu.Unlock()
	tx, err := out.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, out.wrap("merging into", err)
	}
	defer tx.Rollback()
	for i, in := range ins {
		n, err := mergeOne(ctx, tx, out, in, srcs[i])
		if err != nil {
			return 0, fmt.Errorf("%w (nothing merged)", err)
		}
		added += n
	}
	if err := tx.Commit(); err != nil {
		return 0, out.wrap("merging", err)
	}
	return added, nil
}

// finishedTimes maps run id to its stored finish time (NULL as "").
func finishedTimes(ctx context.Context, q interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}, s *Store) (map[string]string, error) {
	rows, err := q.QueryContext(ctx, "SELECT id, coalesce(finished, '') FROM runs")
	if err != nil {
		return nil, s.wrap("reading runs", err)
	}
	out := make(map[string]string)
	for rows.Next() {
		var id, fin string
		if err := rows.Scan(&id, &fin); err != nil {
			rows.Close()
			return nil, s.wrap("reading runs", err)
		}
		out[id] = fin
	}
	if err := closeRows(rows); err != nil {
		return nil, s.wrap("reading runs", err)
	}
	return out, nil
}

// mergeOne copies the runs of in that are new or newer than dst's into tx.
func mergeOne(ctx context.Context, tx *sql.Tx, dst, in *Store, src string) (int, error) {
	have, err := finishedTimes(ctx, tx, dst)
	if err != nil {
		return 0, err
	}
	offered, err := finishedTimes(ctx, in.db, in)
	if err != nil {
		return 0, err
	}
	// Fixed-width UTC timestamps compare correctly as strings.
	var take []string
	for id, fin := range offered {
		if old, ok := have[id]; !ok || fin > old {
			take = append(take, id)
		}
	}
	slices.Sort(take) // deterministic write order
	for _, id := range take {
		r, found, err := in.Run(id)
		if err != nil {
			return 0, err
		}
		if !found { // cannot happen: the source is opened read-only
			continue
		}
		metrics, err := in.Metrics(id)
		if err != nil {
			return 0, err
		}
		trace, err := in.Trace(id)
		if err != nil {
			return 0, err
		}
		arts, err := in.Artifacts(id)
		if err != nil {
			return 0, err
		}
		if err := writeRun(ctx, tx, r, metrics, trace); err != nil {
			return 0, dst.wrap("merging run "+id+" from "+src, err)
		}
		if err := writeArtifacts(ctx, tx, id, arts); err != nil {
			return 0, dst.wrap("merging artifacts of run "+id+" from "+src, err)
		}
	}
	return len(take), nil
}
