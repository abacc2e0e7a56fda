package results

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
)

// Prefer names the rule that settles two done copies of one run whose
// results differ (see Merge). Without one they are a conflict.
type Prefer string

// The rules for differing done copies.
const (
	PreferNone  Prefer = ""      // report a conflict and merge nothing
	PreferNewer Prefer = "newer" // keep the copy that finished later
	PreferOlder Prefer = "older" // keep the copy that finished earlier
	PreferDst   Prefer = "dst"   // keep the copy the destination already holds
)

// ParsePrefer reads a Prefer rule by name; "" is PreferNone.
func ParsePrefer(s string) (Prefer, error) {
	switch p := Prefer(s); p {
	case PreferNone, PreferNewer, PreferOlder, PreferDst:
		return p, nil
	}
	return "", fmt.Errorf("results: unknown merge rule %q: use %s, %s or %s", s, PreferNewer, PreferOlder, PreferDst)
}

// MergeOptions tune MergeWith.
type MergeOptions struct {
	// Prefer settles done copies with different results; PreferNone makes
	// them a *ConflictError.
	Prefer Prefer
	// AllowForeign merges runs of different experiments that share a grid
	// name; without it they are a *ForeignError.
	AllowForeign bool
}

// MergeReport counts what a merge did with the runs it was offered.
type MergeReport struct {
	Added    int // runs the destination did not hold
	Replaced int // runs replaced by a better copy
	// Lesser counts copies not taken because the destination's copy has a
	// higher status (see Merge): a done run offered as interrupted, say.
	Lesser int
	// Resolved counts done copies with different results settled by
	// MergeOptions.Prefer, whichever copy it kept.
	Resolved int
}

// Written is the number of runs the merge wrote.
func (r MergeReport) Written() int { return r.Added + r.Replaced }

// Merge is MergeWith with default options, returning the number of runs
// written.
func Merge(dst string, srcs ...string) (int, error) {
	rep, err := MergeWith(dst, MergeOptions{}, srcs...)
	return rep.Written(), err
}

// MergeWith copies the runs of each source database into dst (created if
// needed), source by source, keeping the better copy of each run id:
//
//   - a copy with a higher status wins, in the order done > failed >
//     interrupted = running, so a finished run is never traded for one
//     that did not finish and a failure gives way to a success;
//   - of two copies with the same status other than done, the one that
//     finished later wins (a newer attempt; an unfinished time counts as
//     earliest), and dst's on a tie;
//   - two done copies with the same result (equal metrics, measured ones
//     such as train_seconds aside, see IsMeasured) are the same run: dst's
//     is kept. Done copies with different results are a conflict, settled
//     by o.Prefer or reported by run id as a *ConflictError.
//
// So merging the same sources again writes nothing. Runs of different
// experiments (the grid file's name in the run spec) under one grid name
// would be mixed by status and export; unless o.AllowForeign they are
// refused with a *ForeignError.
//
// Merging is all-or-nothing: every source is opened and checked (SQLite
// quick_check) first, and all of them are merged in one transaction, so a
// bad source, a conflict or a foreign grid leaves dst as it was (and a dst
// this call created is removed).
func MergeWith(dst string, o MergeOptions, srcs ...string) (rep MergeReport, err error) {
	if _, err := ParsePrefer(string(o.Prefer)); err != nil {
		return MergeReport{}, err
	}
	_, statErr := os.Stat(dst)
	created := errors.Is(statErr, os.ErrNotExist)
	out, err := Open(dst)
	if err != nil {
		return MergeReport{}, err
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
		if err != nil {
			rep = MergeReport{}
		}
	}()
	dstInfo, err := os.Stat(out.path)
	if err != nil {
		return MergeReport{}, fmt.Errorf("results: merge: %w", err)
	}
	var ins []*Store
	defer func() {
		for _, in := range ins {
			in.Close()
		}
	}()
	for _, src := range srcs {
		if fi, err := os.Stat(src); err == nil && os.SameFile(fi, dstInfo) {
			return MergeReport{}, fmt.Errorf("results: merge: source %s is the destination database", src)
		}
		in, err := OpenReadOnly(src)
		if err != nil {
			return MergeReport{}, fmt.Errorf("results: merge: nothing merged: %w", err)
		}
		ins = append(ins, in)
		if err := in.QuickCheck(); err != nil {
			return MergeReport{}, fmt.Errorf("results: merge: nothing merged: %w", err)
		}
	}
	ctx := context.Background()
	out.mu.Lock()
	defer out.mu.Unlock()
	tx, err := out.db.BeginTx(ctx, nil)
	if err != nil {
		return MergeReport{}, out.wrap("merging into", err)
	}
	defer tx.Rollback()

	m := merger{ctx: ctx, tx: tx, dst: out, opt: o, origin: make(map[string]string)}
	if m.have, err = runHeads(ctx, tx, out); err != nil {
		return MergeReport{}, err
	}
	for id := range m.have {
		m.origin[id] = dst
	}
	if m.grids, err = gridExperiments(ctx, tx, out, dst); err != nil {
		return MergeReport{}, err
	}
	for i, in := range ins {
		if err := m.merge(in, srcs[i]); err != nil {
			return MergeReport{}, fmt.Errorf("%w (nothing merged)", err)
		}
	}
	switch {
	case len(m.foreign) > 0 && !o.AllowForeign:
		return MergeReport{}, &ForeignError{Grids: m.foreign}
	case len(m.conflicts) > 0:
		return MergeReport{}, &ConflictError{Conflicts: m.conflicts}
	}
	if err := tx.Commit(); err != nil {
		return MergeReport{}, out.wrap("merging", err)
	}
	return m.rep, nil
}

// statusRank orders the statuses of copies of one run: done > failed >
// interrupted = running (neither finished).
func statusRank(status string) int {
	switch status {
	case StatusDone:
		return 3
	case StatusFailed:
		return 2
	}
	return 1
}

// runHead is what a merge needs to know of a stored run before reading
// its rows.
type runHead struct {
	status   string
	finished string // fixed-width UTC text, "" when NULL: compares as text
	label    string // for messages: grid method dataset split seed
	commit   string
}

type querier interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}

// runHeads reads the head of every run of s through q.
func runHeads(ctx context.Context, q querier, s *Store) (map[string]runHead, error) {
	rows, err := q.QueryContext(ctx, `SELECT id, status, coalesce(finished, ''), grid, method, dataset, split, seed, git_commit FROM runs`)
	if err != nil {
		return nil, s.wrap("reading runs", err)
	}
	out := make(map[string]runHead)
	for rows.Next() {
		var id, grid, method, dataset string
		var split int
		var seed int64
		var h runHead
		if err := rows.Scan(&id, &h.status, &h.finished, &grid, &method, &dataset, &split, &seed, &h.commit); err != nil {
			rows.Close()
			return nil, s.wrap("reading runs", err)
		}
		h.label = fmt.Sprintf("%s %s %s split=%d seed=%d", grid, method, dataset, split, uint64(seed))
		out[id] = h
	}
	if err := closeRows(rows); err != nil {
		return nil, s.wrap("reading runs", err)
	}
	return out, nil
}

// gridExperiments maps each grid name of s to the experiments whose runs s
// holds under it, and each of those to where it was seen (path). Runs
// whose spec names no experiment (written by other tools) are left out.
func gridExperiments(ctx context.Context, q querier, s *Store, path string) (map[string]map[string]string, error) {
	rows, err := q.QueryContext(ctx, `SELECT DISTINCT grid, json_extract(spec, '$.experiment') FROM runs
		WHERE json_valid(spec) AND json_type(spec, '$.experiment') = 'text' ORDER BY 1, 2`)
	if err != nil {
		return nil, s.wrap("reading the experiments of the grids", err)
	}
	out := make(map[string]map[string]string)
	for rows.Next() {
		var grid, exp string
		if err := rows.Scan(&grid, &exp); err != nil {
			rows.Close()
			return nil, s.wrap("reading the experiments of the grids", err)
		}
		if out[grid] == nil {
			out[grid] = make(map[string]string)
		}
		out[grid][exp] = path
	}
	if err := closeRows(rows); err != nil {
		return nil, s.wrap("reading the experiments of the grids", err)
	}
	return out, nil
}

// merger carries one merge transaction across its sources.
type merger struct {
	ctx       context.Context
	tx        *sql.Tx
	dst       *Store
	opt       MergeOptions
	have      map[string]runHead           // the destination's runs as merged so far
	origin    map[string]string            // where the destination's copy of a run came from
	grids     map[string]map[string]string // grid → experiment → where first seen
	rep       MergeReport
	conflicts []Conflict
	foreign   []ForeignGrid
}

// merge offers the runs of in (at path src) to the destination.
func (m *merger) merge(in *Store, src string) error {
	grids, err := gridExperiments(m.ctx, in.db, in, src)
	if err != nil {
		return err
	}
	for _, grid := range slices.Sorted(maps.Keys(grids)) {
		held := m.grids[grid]
		if held == nil {
			held = make(map[string]string)
			m.grids[grid] = held
		}
		exps := slices.Sorted(maps.Keys(grids[grid]))
		if len(held) > 0 { // a grid the source alone holds twice is not this merge's doing
			for _, exp := range exps {
				if _, ok := held[exp]; !ok {
					other := slices.Sorted(maps.Keys(held))[0]
					m.foreign = append(m.foreign, ForeignGrid{Grid: grid,
						Experiment: exp, Source: src, Other: other, OtherSource: held[other]})
				}
			}
		}
		for _, exp := range exps {
			if _, ok := held[exp]; !ok {
				held[exp] = src
			}
		}
	}
	offered, err := runHeads(m.ctx, in.db, in)
	if err != nil {
		return err
	}
	for _, id := range slices.Sorted(maps.Keys(offered)) { // deterministic write order
		s := offered[id]
		d, held := m.have[id]
		take := false
		switch {
		case !held:
			take = true
			m.rep.Added++
		case statusRank(s.status) > statusRank(d.status):
			take = true
			m.rep.Replaced++
		case statusRank(s.status) < statusRank(d.status):
			m.rep.Lesser++
		case s.status != StatusDone:
			if take = s.finished > d.finished; take {
				m.rep.Replaced++
			}
		default:
			if take, err = m.doneCopies(id, d, s, in, src); err != nil {
				return err
			}
			if take {
				m.rep.Replaced++
			}
		}
		if !take {
			continue
		}
		if err := m.copyRun(id, in, src); err != nil {
			return err
		}
		m.have[id] = s
		m.origin[id] = src
	}
	return nil
}

// doneCopies decides between the destination's done copy d of run id and
// the done copy s offered by in: whether to take s.
func (m *merger) doneCopies(id string, d, s runHead, in *Store, src string) (bool, error) {
	dm, err := readMetrics(m.ctx, m.tx, id)
	if err != nil {
		return false, m.dst.wrap("reading metrics of run "+id, err)
	}
	sm, err := readMetrics(m.ctx, in.db, id)
	if err != nil {
		return false, in.wrap("reading metrics of run "+id, err)
	}
	diff := resultDiff(dm, sm)
	if diff == "" {
		return false, nil
	}
	switch m.opt.Prefer {
	case PreferNewer:
		m.rep.Resolved++
		return s.finished > d.finished, nil
	case PreferOlder:
		m.rep.Resolved++
		return s.finished < d.finished, nil
	case PreferDst:
		m.rep.Resolved++
		return false, nil
	}
	m.conflicts = append(m.conflicts, Conflict{ID: id, Label: d.label, Diff: diff,
		Copies: [2]ConflictCopy{
			{Source: m.origin[id], Finished: d.finished, Commit: d.commit},
			{Source: src, Finished: s.finished, Commit: s.commit},
		}})
	return false, nil
}

// copyRun writes in's rows of run id into the destination, replacing any.
func (m *merger) copyRun(id string, in *Store, src string) error {
	r, found, err := in.Run(id)
	if err != nil {
		return err
	}
	if !found { // cannot happen: the source is opened read-only
		return nil
	}
	metrics, err := in.Metrics(id)
	if err != nil {
		return err
	}
	trace, err := in.Trace(id)
	if err != nil {
		return err
	}
	arts, err := in.Artifacts(id)
	if err != nil {
		return err
	}
	if err := writeRun(m.ctx, m.tx, r, metrics, trace); err != nil {
		return m.dst.wrap("merging run "+id+" from "+src, err)
	}
	if err := writeArtifacts(m.ctx, m.tx, id, arts); err != nil {
		return m.dst.wrap("merging artifacts of run "+id+" from "+src, err)
	}
	return nil
}

// resultDiff describes how two copies' metrics differ, measured metrics
// aside, or returns "" when they are the same result. Values compare
// exactly: one run is bitwise reproducible, and NaN (stored as NULL) equals
// NaN.
func resultDiff(a, b []Metric) string {
	av, bv := metricMap(a), metricMap(b)
	names := slices.Sorted(maps.Keys(av))
	for n := range bv {
		if _, ok := av[n]; !ok {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	var diffs []string
	for _, n := range names {
		x, inA := av[n]
		y, inB := bv[n]
		switch {
		case !inA:
			diffs = append(diffs, n+" only in the second")
		case !inB:
			diffs = append(diffs, n+" only in the first")
		case x != y && !(math.IsNaN(x) && math.IsNaN(y)):
			diffs = append(diffs, n+" "+formatMetric(x)+" vs "+formatMetric(y))
		}
	}
	const shown = 3
	if len(diffs) > shown {
		return strings.Join(diffs[:shown], ", ") + fmt.Sprintf(" and %d more", len(diffs)-shown)
	}
	return strings.Join(diffs, ", ")
}

func metricMap(ms []Metric) map[string]float64 {
	out := make(map[string]float64, len(ms))
	for _, m := range ms {
		if !IsMeasured(m.Name) {
			out[m.Name] = m.Value
		}
	}
	return out
}

func formatMetric(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// Conflict is a run stored as done in two databases with different
// results.
type Conflict struct {
	ID     string
	Label  string // grid method dataset split seed
	Diff   string // the metrics that differ, e.g. "rmse 0.1 vs 0.2"
	Copies [2]ConflictCopy
}

// ConflictCopy says where one copy of a conflicting run comes from.
type ConflictCopy struct {
	Source   string // database path
	Finished string // finish time as stored
	Commit   string // git commit of the binary that ran it
}

// ConflictError reports done runs whose copies differ; nothing was merged.
type ConflictError struct{ Conflicts []Conflict }

// maxListed bounds the runs or grids an error lists one per line.
const maxListed = 20

func (e *ConflictError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "results: merge: %d run(s) are done in two databases with different results; nothing merged:", len(e.Conflicts))
	for i, c := range e.Conflicts {
		if i == maxListed {
			fmt.Fprintf(&b, "\n  … and %d more", len(e.Conflicts)-maxListed)
			break
		}
		fmt.Fprintf(&b, "\n  run %s (%s): %s", c.ID, c.Label, c.Diff)
		for j, cp := range c.Copies {
			fmt.Fprintf(&b, "; %s in %s (finished %s, commit %s)", [2]string{"first", "second"}[j], cp.Source, cp.Finished, orUnknown(cp.Commit))
		}
	}
	return b.String()
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// ForeignGrid is a grid name that two experiments use.
type ForeignGrid struct {
	Grid        string
	Experiment  string // the experiment a source brings
	Source      string
	Other       string // an experiment already held under Grid
	OtherSource string
}

// ForeignError reports grid names that the merge would give to two
// experiments; nothing was merged.
type ForeignError struct{ Grids []ForeignGrid }

func (e *ForeignError) Error() string {
	var b strings.Builder
	b.WriteString("results: merge: the databases hold different experiments under one grid name; nothing merged:")
	for i, g := range e.Grids {
		if i == maxListed {
			fmt.Fprintf(&b, "\n  … and %d more", len(e.Grids)-maxListed)
			break
		}
		fmt.Fprintf(&b, "\n  grid %q: experiment %q in %s, experiment %q in %s", g.Grid, g.Experiment, g.Source, g.Other, g.OtherSource)
	}
	return b.String()
}
