package results

import (
	"fmt"
	"io"
	"sort"
)

// ExportFilter selects the runs of an export; empty fields match all.
// Grid matches the stored grid, its last part, or EXPERIMENT/GRID. IDs,
// when not nil, keeps only those runs (a config's current runs).
type ExportFilter struct {
	Grid, Method, Status, Profile string
	IDs                           map[string]struct{}
}

// ExportWide writes one row per run: its identity (run_id, grid, method,
// dataset, split, seed, profile), status and error, then one column per
// parameter ("p.NAME", e.g. p.num_inducing) and one per metric
// ("m.NAME", e.g. m.rmse), empty where a run has none. Columns are sorted
// by name so that exports of different databases line up.
func (s *Store) ExportWide(w io.Writer, format string, f ExportFilter) error {
	switch format {
	case FormatCSV, FormatJSON, FormatTable:
	default:
		return fmt.Errorf("results: unknown export format %q: use csv, json or table", format)
	}
	where, args := f.where()
	runs, err := s.exportRuns(f)
	if err != nil {
		return err
	}
	index := make(map[string]int, len(runs))
	for i, r := range runs {
		index[r[0].(string)] = i
	}
	values := map[string]map[string]any{} // column → run id → value
	collect := func(prefix, q string) error {
		_, rows, err := s.Query(q+where, args...)
		if err != nil {
			return err
		}
		for _, row := range rows {
			id, _ := row[0].(string)
			if _, ok := index[id]; !ok {
				continue
			}
			col := prefix + fmt.Sprint(row[1])
			if values[col] == nil {
				values[col] = map[string]any{}
			}
			values[col][id] = row[2]
		}
		return nil
	}
	if err := collect("p.", "SELECT p.run_id, p.name, coalesce(p.num, p.value) FROM run_params p JOIN runs r ON r.id = p.run_id"); err != nil {
		return err
	}
	if err := collect("m.", "SELECT m.run_id, m.name, m.value FROM metrics m JOIN runs r ON r.id = m.run_id"); err != nil {
		return err
	}
	extra := make([]string, 0, len(values))
	for c := range values {
		extra = append(extra, c)
	}
	sort.Slice(extra, func(i, j int) bool { // parameters before metrics, each sorted
		if extra[i][0] != extra[j][0] {
			return extra[i][0] == 'p'
		}
		return extra[i] < extra[j]
	})
	cols := append([]string{"run_id", "grid", "method", "dataset", "split", "seed", "profile", "status", "error"}, extra...)
	out := make([][]any, len(runs))
	for i, r := range runs {
		row := append(make([]any, 0, len(cols)), r...)
		for _, c := range extra {
			row = append(row, values[c][r[0].(string)])
		}
		out[i] = row
	}
	return WriteRows(w, format, cols, out)
}
