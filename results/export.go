package results

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// What an export writes (ExportWhat); any other name is an artifact
// (predictions, z, q, field, train, or a method's own).
const (
	ExportRuns            = "runs"            // one row per run (ExportWide)
	ExportMetrics         = "metrics"         // one row per run × metric
	ExportHyperparameters = "hyperparameters" // one row per run × hyperparameter entry
	ExportTraces          = "traces"          // one row per run × trace point
)

// exportIdentity are the columns every export starts with: which run a row
// belongs to and how it ended.
var exportIdentity = []string{"run_id", "grid", "method", "dataset", "split", "seed", "profile", "status", "error"}

// where builds the WHERE clause of the filter over runs aliased r (IDs are
// applied by keep). Grid matches the stored grid, its last part, or
// EXPERIMENT/GRID: the runner stores the grid's own name and the
// experiment in the run's spec.
func (f ExportFilter) where() (string, []any) {
	var conds []string
	var args []any
	if f.Grid != "" {
		if exp, grid, ok := strings.Cut(f.Grid, "/"); ok {
			conds = append(conds, "(r.grid = ? OR (r.grid = ? AND CASE WHEN json_valid(r.spec) THEN json_extract(r.spec, '$.experiment') END = ?))")
			args = append(args, f.Grid, grid, exp)
		} else {
			conds = append(conds, "(r.grid = ? OR substr(r.grid, -length(?) - 1) = '/' || ?)")
			args = append(args, f.Grid, f.Grid, f.Grid)
		}
	}
	for _, c := range []struct{ col, val string }{{"method", f.Method}, {"status", f.Status}, {"profile", f.Profile}} {
		if c.val != "" {
			conds = append(conds, "r."+c.col+" = ?")
			args = append(args, c.val)
		}
	}
	if len(conds) == 0 {
		return "", nil
	}
	return " WHERE " + strings.Join(conds, " AND "), args
}

// keep reports whether run id passes the IDs restriction.
func (f ExportFilter) keep(id string) bool {
	if f.IDs == nil {
		return true
	}
	_, ok := f.IDs[id]
	return ok
}

// exportRuns returns the identity, status and error of the selected runs
// (columns run_id, grid, method, dataset, split, seed, profile, status,
// error), seeds as unsigned integers, ordered by grid, method, dataset,
// split, seed and id.
func (s *Store) exportRuns(f ExportFilter) ([][]any, error) {
	where, args := f.where()
	_, rows, err := s.Query(`SELECT r.id, r.grid, r.method, r.dataset, r.split, r.seed, r.profile, r.status, r.error
		FROM runs r`+where+` ORDER BY r.grid, r.method, r.dataset, r.split, r.seed, r.id`, args...)
	if err != nil {
		return nil, err
	}
	out := rows[:0]
	for _, r := range rows {
		if !f.keep(r[0].(string)) {
			continue
		}
		if seed, ok := r[5].(int64); ok {
			r[5] = uint64(seed)
		}
		out = append(out, r)
	}
	return out, nil
}

// ExportWhat writes what (ExportRuns, ExportMetrics, ExportHyperparameters,
// ExportTraces or an artifact name) of the selected runs as csv, json or
// table. Every row starts with the run's identity and outcome (run_id,
// grid, method, dataset, split, seed, profile, status, error), then:
//
//	runs             … p.PARAM and m.METRIC columns, one row per run (ExportWide)
//	metrics          … metric, value (every run, a NULL metric where it has none)
//	hyperparameters  … name, idx, value
//	traces           … seq, iteration, elapsed_seconds, objective, phase
//	ARTIFACT         … row, then the artifact's columns (the union over the
//	                 runs, empty where a run's artifact lacks one)
func (s *Store) ExportWhat(w io.Writer, format, what string, f ExportFilter) error {
	switch format {
	case FormatCSV, FormatJSON, FormatTable:
	default:
		return fmt.Errorf("results: unknown export format %q: use csv, json or table (npy: ExportNPY)", format)
	}
	if what == ExportRuns || what == "" {
		return s.ExportWide(w, format, f)
	}
	runs, err := s.exportRuns(f)
	if err != nil {
		return err
	}
	var cols []string
	var rows [][]any
	switch what {
	case ExportMetrics:
		cols, rows, err = s.longRows(runs, []string{"metric", "value"}, true,
			"SELECT m.run_id, m.name, m.value FROM metrics m JOIN runs r ON r.id = m.run_id", "m.run_id, m.name", f)
	case ExportHyperparameters:
		if s.version < hyperVersion {
			cols = append(append([]string(nil), exportIdentity...), "name", "idx", "value")
			break
		}
		cols, rows, err = s.longRows(runs, []string{"name", "idx", "value"}, false,
			"SELECT h.run_id, h.name, h.idx, h.value FROM hyperparameters h JOIN runs r ON r.id = h.run_id", "h.run_id, h.name, h.idx", f)
	case ExportTraces:
		cols, rows, err = s.longRows(runs, []string{"seq", "iteration", "elapsed_seconds", "objective", "phase"}, false,
			"SELECT t.run_id, t.seq, t.iteration, t.elapsed_seconds, t.objective, t.phase FROM traces t JOIN runs r ON r.id = t.run_id", "t.run_id, t.seq", f)
	default:
		cols, rows, err = s.artifactRows(runs, what)
	}
	if err != nil {
		return err
	}
	return WriteRows(w, format, cols, rows)
}

// longRows joins the rows of q (run id first, then the values named cols)
// to the runs' identities, in the runs' order. With keepEmpty a run
// without rows appears once with NULL values.
func (s *Store) longRows(runs [][]any, cols []string, keepEmpty bool, q, order string, f ExportFilter) ([]string, [][]any, error) {
	where, args := f.where()
	_, rows, err := s.Query(q+where+" ORDER BY "+order, args...)
	if err != nil {
		return nil, nil, err
	}
	byRun := map[string][][]any{}
	for _, r := range rows {
		id := r[0].(string)
		byRun[id] = append(byRun[id], r[1:])
	}
	var out [][]any
	for _, run := range runs {
		id := run[0].(string)
		vals := byRun[id]
		if len(vals) == 0 && keepEmpty {
			vals = [][]any{make([]any, len(cols))}
		}
		for _, v := range vals {
			out = append(out, append(append(make([]any, 0, len(exportIdentity)+len(cols)), run[:len(exportIdentity)]...), v...))
		}
	}
	return append(append([]string(nil), exportIdentity...), cols...), out, nil
}

// runArtifact reads artifact name of run id; found is false when the run
// has none.
func (s *Store) runArtifact(id, name string) (a Artifact, found bool, err error) {
	var rows int
	var cols string
	var data []byte
	err = s.db.QueryRowContext(context.Background(), "SELECT rows, columns, data FROM artifacts WHERE run_id = ? AND name = ?", id, name).Scan(&rows, &cols, &data)
	if err == sql.ErrNoRows {
		return Artifact{}, false, nil
	}
	if err != nil {
		return Artifact{}, false, s.wrap("reading artifact "+name+" of run "+id, err)
	}
	a, err = decodeArtifact(name, rows, cols, data)
	return a, err == nil, err
}

// artifactRows is the long table of artifact name over the runs that have
// it; the error lists the artifact names stored when none has it.
func (s *Store) artifactRows(runs [][]any, name string) ([]string, [][]any, error) {
	var arts []Artifact
	var owners [][]any
	colIndex := map[string]int{}
	var union []string
	for _, run := range runs {
		a, found, err := s.runArtifact(run[0].(string), name)
		if err != nil {
			return nil, nil, err
		}
		if !found {
			continue
		}
		arts = append(arts, a)
		owners = append(owners, run)
		for _, c := range a.Columns {
			if _, ok := colIndex[c]; !ok {
				colIndex[c] = len(union)
				union = append(union, c)
			}
		}
	}
	if len(arts) == 0 {
		stored, err := s.artifactNames()
		if err != nil {
			return nil, nil, err
		}
		return nil, nil, fmt.Errorf("results: no selected run has an artifact %q; export runs, metrics, hyperparameters, traces or a stored artifact (%s); a grid stores artifacts it lists under artifacts = [...]",
			name, orNone(stored))
	}
	cols := append(append(append([]string(nil), exportIdentity...), "row"), union...)
	var out [][]any
	for k, a := range arts {
		for i := 0; i < a.Rows; i++ {
			row := make([]any, len(cols))
			copy(row, owners[k][:len(exportIdentity)])
			row[len(exportIdentity)] = int64(i)
			for j, c := range a.Columns {
				row[len(exportIdentity)+1+colIndex[c]] = nullFloat(a.At(i, j))
			}
			out = append(out, row)
		}
	}
	return cols, out, nil
}

func (s *Store) artifactNames() ([]string, error) {
	_, rows, err := s.Query("SELECT DISTINCT name FROM artifacts ORDER BY name")
	if err != nil {
		return nil, err
	}
	var out []string
	for _, r := range rows {
		out = append(out, r[0].(string))
	}
	return out, nil
}

func orNone(names []string) string {
	if len(names) == 0 {
		return "the database holds none"
	}
	return "stored: " + strings.Join(names, ", ")
}

// ExportNPY writes artifact name of every selected run that has it to
// dir/RUN_ID.NAME.npy (a rows × columns float64 array, NPY format 1.0), and
// dir/index.NAME.csv naming each file's run (the export's identity
// columns), shape and columns (space separated). It returns the number of
// arrays written.
func (s *Store) ExportNPY(dir, name string, f ExportFilter) (int, error) {
	if name == "" || name == ExportRuns || name == ExportMetrics || name == ExportHyperparameters || name == ExportTraces {
		return 0, fmt.Errorf("results: npy holds arrays: export an artifact (such as predictions, z or q) as npy, and %s, %s, %s or %s as csv or json",
			ExportRuns, ExportMetrics, ExportHyperparameters, ExportTraces)
	}
	runs, err := s.exportRuns(f)
	if err != nil {
		return 0, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, fmt.Errorf("results: export directory: %w", err)
	}
	index := [][]any{}
	for _, run := range runs {
		id := run[0].(string)
		a, found, err := s.runArtifact(id, name)
		if err != nil {
			return 0, err
		}
		if !found {
			continue
		}
		file := id + "." + name + ".npy"
		if err := writeNPYFile(filepath.Join(dir, file), a); err != nil {
			return 0, err
		}
		row := append(append([]any(nil), run[:len(exportIdentity)]...), file, int64(a.Rows), int64(len(a.Columns)), strings.Join(a.Columns, " "))
		index = append(index, row)
	}
	if len(index) == 0 {
		stored, err := s.artifactNames()
		if err != nil {
			return 0, err
		}
		return 0, fmt.Errorf("results: no selected run has an artifact %q (%s)", name, orNone(stored))
	}
	sort.SliceStable(index, func(i, j int) bool { return index[i][0].(string) < index[j][0].(string) })
	out, err := os.Create(filepath.Join(dir, "index."+name+".csv"))
	if err != nil {
		return 0, fmt.Errorf("results: %w", err)
	}
	cols := append(append([]string(nil), exportIdentity...), "file", "rows", "cols", "columns")
	if err := WriteRows(out, FormatCSV, cols, index); err != nil {
		out.Close()
		return 0, err
	}
	return len(index), out.Close()
}

func writeNPYFile(path string, a Artifact) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("results: %w", err)
	}
	if err := WriteNPY(f, a.Rows, len(a.Columns), a.Data); err != nil {
		f.Close()
		return fmt.Errorf("results: writing %s: %w", path, err)
	}
	return f.Close()
}

// MetricValues returns the value of metric name for each of ids that has
// it (NULL as NaN).
func (s *Store) MetricValues(name string, ids []string) (map[string]float64, error) {
	out := make(map[string]float64)
	for start := 0; start < len(ids); start += statusChunk {
		chunk := ids[start:min(start+statusChunk, len(ids))]
		args := []any{name}
		for _, id := range chunk {
			args = append(args, id)
		}
		_, rows, err := s.Query("SELECT run_id, value FROM metrics WHERE name = ? AND run_id IN "+placeholders(1, len(chunk)), args...)
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			v, _ := r[1].(float64)
			if r[1] == nil {
				v = nanValue
			}
			out[r[0].(string)] = v
		}
	}
	return out, nil
}

var nanValue = floatOrNaN(sql.NullFloat64{})
