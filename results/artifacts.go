package results

import (
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
)

// Artifact is a named array a run produced besides its scalar metrics: a
// predictive curve over a test grid, an approximate kernel matrix, …. It is
// a Rows×len(Columns) table stored row-major; Columns name the columns
// (e.g. "x", "mean", "var_f"), or hold one name per column of a matrix.
type Artifact struct {
	Name    string
	Columns []string
	Rows    int
	Data    []float64 // row-major, len Rows*len(Columns)
}

// At returns element (i, j).
func (a Artifact) At(i, j int) float64 { return a.Data[i*len(a.Columns)+j] }

// Column returns a copy of the column called name, or an error naming the
// columns there are.
func (a Artifact) Column(name string) ([]float64, error) {
	for j, c := range a.Columns {
		if c == name {
			out := make([]float64, a.Rows)
			for i := range out {
				out[i] = a.At(i, j)
			}
			return out, nil
		}
	}
	return nil, fmt.Errorf("artifact %s has no column %q; columns: %v", a.Name, name, a.Columns)
}

// Validate checks the shape and name.
func (a Artifact) Validate() error {
	switch {
	case a.Name == "":
		return errors.New("artifact has an empty name")
	case len(a.Columns) == 0:
		return fmt.Errorf("artifact %s has no columns", a.Name)
	case a.Rows < 0 || len(a.Data) != a.Rows*len(a.Columns):
		return fmt.Errorf("artifact %s: %d values for %d rows × %d columns", a.Name, len(a.Data), a.Rows, len(a.Columns))
	}
	return nil
}

// EncodeValues packs values as little-endian float64 (NaN kept), the
// artifacts.data column's format.
func EncodeValues(v []float64) []byte {
	b := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(x))
	}
	return b
}

// DecodeValues reverses EncodeValues.
func DecodeValues(b []byte) ([]float64, error) {
	if len(b)%8 != 0 {
		return nil, fmt.Errorf("results: artifact data has %d bytes, not a multiple of 8", len(b))
	}
	v := make([]float64, len(b)/8)
	for i := range v {
		v[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
	}
	return v, nil
}

// SaveRunArtifacts is SaveRun that also stores the run's artifacts, all in
// one transaction, so a run is never "done" without its arrays. It writes
// whoever holds the run's lease (and releases the lease when r is not
// running): it is for tools and tests; a worker sweeping a grid writes
// through SaveLeased.
func (s *Store) SaveRunArtifacts(r Run, metrics []Metric, trace []TracePoint, arts []Artifact) error {
	return s.save(nil, r, metrics, trace, arts)
}

// save writes r in one transaction, first checking lease unless it is nil.
func (s *Store) save(lease *Lease, r Run, metrics []Metric, trace []TracePoint, arts []Artifact) error {
	if err := validateRun(r, metrics); err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, a := range arts {
		if err := a.Validate(); err != nil {
			return fmt.Errorf("results: run %s: %w", r.ID, err)
		}
		if seen[a.Name] {
			return fmt.Errorf("results: run %s: artifact %q given twice", r.ID, a.Name)
		}
		seen[a.Name] = true
	}
	if s.readOnly {
		return ErrReadOnly
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ctx := context.Background()
	tx, err := s.db.BeginTx(ctx, nil) // BEGIN IMMEDIATE: nobody can lease the run until we commit
	if err != nil {
		return s.wrap("saving run "+r.ID, err)
	}
	defer tx.Rollback()
	if lease != nil {
		if err := checkLease(ctx, tx, *lease); err != nil {
			if errors.Is(err, ErrLeaseLost) {
				return err
			}
			return s.wrap("checking the claim on run "+r.ID, err)
		}
		if testHookLeaseChecked != nil {
			testHookLeaseChecked()
		}
	}
	if err := writeRun(ctx, tx, r, metrics, trace); err != nil {
		return s.wrap("saving run "+r.ID, err)
	}
	if err := writeArtifacts(ctx, tx, r.ID, arts); err != nil {
		return s.wrap("saving artifacts of run "+r.ID, err)
	}
	if r.Status != StatusRunning {
		if err := releaseLease(ctx, tx, r.ID); err != nil {
			return s.wrap("releasing the claim on run "+r.ID, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return s.wrap("saving run "+r.ID, err)
	}
	return nil
}

// testHookLeaseChecked, when set by a test, runs between a leased write's
// check of its lease and the write itself.
var testHookLeaseChecked func()

func writeArtifacts(ctx context.Context, tx *sql.Tx, id string, arts []Artifact) error {
	for _, a := range arts {
		cols, err := json.Marshal(a.Columns)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, "INSERT INTO artifacts (run_id, name, rows, cols, columns, data) VALUES (?, ?, ?, ?, ?, ?)",
			id, a.Name, a.Rows, len(a.Columns), string(cols), EncodeValues(a.Data)); err != nil {
			return err
		}
	}
	return nil
}

// Artifacts returns the artifacts of a run, sorted by name.
func (s *Store) Artifacts(runID string) ([]Artifact, error) {
	rows, err := s.db.QueryContext(context.Background(),
		"SELECT name, rows, columns, data FROM artifacts WHERE run_id = ? ORDER BY name", runID)
	if err != nil {
		return nil, s.wrap("reading artifacts", err)
	}
	defer rows.Close()
	var out []Artifact
	for rows.Next() {
		var a Artifact
		var cols string
		var data []byte
		if err := rows.Scan(&a.Name, &a.Rows, &cols, &data); err != nil {
			return nil, s.wrap("reading artifacts", err)
		}
		a, err := decodeArtifact(a.Name, a.Rows, cols, data)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	if err := closeRows(rows); err != nil {
		return nil, s.wrap("reading artifacts", err)
	}
	return out, nil
}

// DecodeArtifact rebuilds an artifact from the columns of the artifacts
// table as Store.Query returns them (data as a string of bytes).
func DecodeArtifact(name string, rows int64, columns, data string) (Artifact, error) {
	return decodeArtifact(name, int(rows), columns, []byte(data))
}

func decodeArtifact(name string, rows int, columns string, data []byte) (Artifact, error) {
	a := Artifact{Name: name, Rows: rows}
	if err := json.Unmarshal([]byte(columns), &a.Columns); err != nil {
		return a, fmt.Errorf("results: artifact %s: bad column list: %w", name, err)
	}
	var err error
	if a.Data, err = DecodeValues(data); err != nil {
		return a, err
	}
	return a, a.Validate()
}
