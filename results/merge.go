package results

import (
	"context"
	"fmt"
	"os"
	"slices"
)

// Merge copies the runs of each source database into dst (created if
// needed) and returns how many runs it wrote. It is idempotent by run id: a
// run already in dst is replaced only when the source copy finished later
// (a finished run beats one without a finish time); on a tie dst is kept, so
// merging the same shards again writes nothing. Each source is merged in
// one transaction.
func Merge(dst string, srcs ...string) (added int, err error) {
	out, err := Open(dst)
	if err != nil {
		return 0, err
	}
	defer func() {
		if cerr := out.Close(); err == nil {
			err = cerr
		}
	}()
	dstInfo, err := os.Stat(out.path)
	if err != nil {
		return 0, fmt.Errorf("results: merge: %w", err)
	}
	for _, src := range srcs {
		if fi, err := os.Stat(src); err == nil && os.SameFile(fi, dstInfo) {
			return added, fmt.Errorf("results: merge: source %s is the destination database", src)
		}
		n, err := mergeOne(out, src)
		added += n
		if err != nil {
			return added, err
		}
	}
	return added, nil
}

// finishedTimes maps run id to its stored finish time (NULL as "").
func finishedTimes(ctx context.Context, s *Store) (map[string]string, error) {
	rows, err := s.db.QueryContext(ctx, "SELECT id, coalesce(finished, '') FROM runs")
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

func mergeOne(dst *Store, src string) (int, error) {
	in, err := OpenReadOnly(src)
	if err != nil {
		return 0, err
	}
	defer in.Close()
	ctx := context.Background()
	have, err := finishedTimes(ctx, dst)
	if err != nil {
		return 0, err
	}
	offered, err := finishedTimes(ctx, in)
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
	if len(take) == 0 {
		return 0, nil
	}
	slices.Sort(take) // deterministic write order
	dst.mu.Lock()
	defer dst.mu.Unlock()
	tx, err := dst.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, dst.wrap("merging "+src+" into", err)
	}
	defer tx.Rollback()
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
	if err := tx.Commit(); err != nil {
		return 0, dst.wrap("merging "+src, err)
	}
	return len(take), nil
}
