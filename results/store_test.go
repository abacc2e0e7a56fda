package results

import (
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func openTemp(t testing.TB) *Store {
	t.Helper()
	s, err := Open(filepath.Join(t.TempDir(), "results.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

var t0 = time.Date(2024, 5, 6, 7, 8, 9, 123456789, time.UTC)

func sampleRun(id string) Run {
	return Run{
		ID: id, Grid: "vish-table1", Spec: `{"method":"sgpr","m":100}`, Method: "sgpr", Dataset: "kin40k",
		Split: 3, Seed: 1<<63 + 5, Status: StatusDone, Started: t0, Finished: t0.Add(90 * time.Second),
		Host: "node1", GitCommit: "abc123", GoVersion: "go1.26", BLAS: "gonum", Provenance: `{"sha256":"00"}`,
		Profile: "quick",
		Params:  []Param{{"dataset.n", "1000"}, {"num_inducing", "100"}, {"optimizer", "lbfgs"}, {"tol", "1e-6"}},
	}
}

func sampleMetrics(n int) []Metric {
	names := SortedMetricNames()
	out := make([]Metric, n)
	for i := range out {
		name := ""
		if i < len(names) {
			name = names[i]
		} else {
			name = fmt.Sprintf("x_extra_%02d", i)
		}
		out[i] = Metric{name, 0.1 * float64(i+1)}
	}
	return out
}

func sampleTrace(n int) []TracePoint {
	out := make([]TracePoint, n)
	for i := range out {
		phase := "adam"
		if i >= n/2 {
			phase = "natgrad"
		}
		out[i] = TracePoint{Iteration: i % (n/2 + 1), Elapsed: 0.01 * float64(i), Objective: -1000 / float64(i+1), Phase: phase}
	}
	return out
}

func countRows(t *testing.T, s *Store, table, id string) int64 {
	t.Helper()
	_, rows, err := s.Query("SELECT count(*) FROM "+table+" WHERE run_id = ?", id)
	if err != nil {
		t.Fatal(err)
	}
	return rows[0][0].(int64)
}

func TestSaveRunRoundTrip(t *testing.T) {
	s := openTemp(t)
	r := sampleRun("r1")
	metrics := []Metric{{"rmse", 0.25}, {"nlpd", math.NaN()}, {"elbo", math.Inf(-1)}, {"x_my_metric", -3}}
	trace := sampleTrace(7)
	trace[2].Objective = math.NaN()
	if err := s.SaveRun(r, metrics, trace); err != nil {
		t.Fatal(err)
	}
	got, found, err := s.Run("r1")
	if err != nil || !found {
		t.Fatalf("Run: found=%v err=%v", found, err)
	}
	if !got.Started.Equal(r.Started) || !got.Finished.Equal(r.Finished) {
		t.Errorf("times: got %v–%v want %v–%v", got.Started, got.Finished, r.Started, r.Finished)
	}
	got.Started, got.Finished = r.Started, r.Finished
	if !reflect.DeepEqual(got, r) {
		t.Errorf("run round trip:\n got %+v\nwant %+v", got, r)
	}

	gm, err := s.Metrics("r1")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"rmse": 0.25, "nlpd": math.NaN(), "elbo": math.Inf(-1), "x_my_metric": -3}
	if len(gm) != len(want) {
		t.Fatalf("got %d metrics, want %d", len(gm), len(want))
	}
	for i, m := range gm {
		if i > 0 && gm[i-1].Name >= m.Name {
			t.Errorf("metrics not sorted by name: %v", gm)
		}
		w := want[m.Name]
		if !(m.Value == w || math.IsNaN(w) && math.IsNaN(m.Value)) {
			t.Errorf("metric %s = %v, want %v", m.Name, m.Value, w)
		}
	}

	gt, err := s.Trace("r1")
	if err != nil {
		t.Fatal(err)
	}
	if len(gt) != len(trace) {
		t.Fatalf("trace has %d points, want %d", len(gt), len(trace))
	}
	for i := range trace {
		a, b := gt[i], trace[i]
		if a.Iteration != b.Iteration || a.Elapsed != b.Elapsed || a.Phase != b.Phase ||
			!(a.Objective == b.Objective || math.IsNaN(a.Objective) && math.IsNaN(b.Objective)) {
			t.Errorf("trace[%d] = %+v, want %+v", i, a, b)
		}
	}
}

func TestResaveReplaces(t *testing.T) {
	s := openTemp(t)
	r := sampleRun("r1")
	other := sampleRun("r2")
	if err := s.SaveRun(other, sampleMetrics(5), sampleTrace(10)); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveRun(r, sampleMetrics(20), sampleTrace(1000)); err != nil {
		t.Fatal(err)
	}
	r.Status, r.Error = StatusFailed, "cholesky: not positive definite"
	r.Params = []Param{{"num_inducing", "200"}}
	if err := s.SaveRun(r, sampleMetrics(3), sampleTrace(10)); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		table, id string
		want      int64
	}{
		{"metrics", "r1", 3}, {"traces", "r1", 10}, {"run_params", "r1", 1},
		{"metrics", "r2", 5}, {"traces", "r2", 10}, {"run_params", "r2", 4},
	} {
		if got := countRows(t, s, c.table, c.id); got != c.want {
			t.Errorf("%s rows of %s = %d, want %d", c.table, c.id, got, c.want)
		}
	}
	st, found, err := s.RunStatus("r1")
	if err != nil || !found || st != StatusFailed {
		t.Errorf("RunStatus = %q, %v, %v; want failed", st, found, err)
	}
	got, _, _ := s.Run("r1")
	if got.Error != r.Error || !reflect.DeepEqual(got.Params, r.Params) {
		t.Errorf("replaced run = %+v", got)
	}
}

func TestMarkRunningAndStatuses(t *testing.T) {
	s := openTemp(t)
	r := sampleRun("r1")
	r.Started = time.Time{}
	if err := s.MarkRunning(r); err != nil {
		t.Fatal(err)
	}
	got, _, err := s.Run("r1")
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != StatusRunning || got.Started.IsZero() || !got.Finished.IsZero() {
		t.Errorf("after MarkRunning: status %q started %v finished %v", got.Status, got.Started, got.Finished)
	}
	r.Status = StatusDone
	if err := s.SaveRun(r, sampleMetrics(2), nil); err != nil {
		t.Fatal(err)
	}
	// More ids than one IN chunk, most of them absent.
	ids := []string{"r1", "missing"}
	for i := range 1200 {
		id := fmt.Sprintf("g%04d", i)
		ids = append(ids, id)
		switch {
		case i%600 == 0: // held by a live worker
			if res, _, err := s.Lease(sampleRun(id), NewWorker("h", time.Hour), time.Now(), false); err != nil || res != Leased {
				t.Fatalf("Lease(%s) = %v, %v", id, res, err)
			}
		case i%300 == 0: // marked running without a claim: its worker is gone
			if err := s.MarkRunning(sampleRun(id)); err != nil {
				t.Fatal(err)
			}
		}
	}
	st, err := s.Statuses(ids)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"r1": "done", "g0000": "running", "g0300": "interrupted", "g0600": "running", "g0900": "interrupted"}
	if !reflect.DeepEqual(st, want) {
		t.Errorf("Statuses = %v, want %v", st, want)
	}
	if _, found, err := s.RunStatus("missing"); found || err != nil {
		t.Errorf("RunStatus(missing) found=%v err=%v", found, err)
	}
	if st, err := s.Statuses(nil); err != nil || len(st) != 0 {
		t.Errorf("Statuses(nil) = %v, %v", st, err)
	}
}

func TestSaveRunValidation(t *testing.T) {
	s := openTemp(t)
	for _, c := range []struct {
		name    string
		edit    func(*Run)
		metrics []Metric
		want    string
	}{
		{"empty id", func(r *Run) { r.ID = "" }, nil, "empty ID"},
		{"no method", func(r *Run) { r.Method = "" }, nil, "method and dataset"},
		{"bad status", func(r *Run) { r.Status = "ok" }, nil, `invalid status "ok"`},
		{"bad profile", func(r *Run) { r.Profile = "fast" }, nil, `invalid profile "fast"`},
		{"bad spec", func(r *Run) { r.Spec = "{" }, nil, "spec is not valid JSON"},
		{"bad provenance", func(r *Run) { r.Provenance = "x" }, nil, "provenance is not valid JSON"},
		{"unknown metric", nil, []Metric{{"rmse_test", 1}}, `unknown metric "rmse_test"`},
		{"bad extension", nil, []Metric{{"x_Bad", 1}}, `unknown metric "x_Bad"`},
		{"duplicate metric", nil, []Metric{{"rmse", 1}, {"rmse", 2}}, `metric "rmse" given twice`},
		{"duplicate param", func(r *Run) { r.Params = append(r.Params, Param{"optimizer", "adam"}) }, nil, `parameter "optimizer" given twice`},
		{"empty param", func(r *Run) { r.Params = []Param{{"", "1"}} }, nil, "empty name"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := sampleRun("v")
			if c.edit != nil {
				c.edit(&r)
			}
			err := s.SaveRun(r, c.metrics, nil)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want it to mention %q", err, c.want)
			}
		})
	}
	if _, found, _ := s.RunStatus("v"); found {
		t.Error("an invalid run was stored")
	}
}

func TestRunsFilter(t *testing.T) {
	s := openTemp(t)
	for i, c := range []struct{ grid, method, dataset, status string }{
		{"g1", "svgp", "kin40k", StatusDone},
		{"g1", "sgpr", "kin40k", StatusFailed},
		{"g1", "sgpr", "elevators", StatusDone},
		{"g2", "sgpr", "kin40k", StatusDone},
	} {
		r := sampleRun(fmt.Sprintf("id%d", i))
		r.Grid, r.Method, r.Dataset, r.Status = c.grid, c.method, c.dataset, c.status
		if err := s.SaveRun(r, nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		f    Filter
		want []string
	}{
		{Filter{}, []string{"id2", "id1", "id0", "id3"}},
		{Filter{Grid: "g1"}, []string{"id2", "id1", "id0"}},
		{Filter{Method: "sgpr", Dataset: "kin40k"}, []string{"id1", "id3"}},
		{Filter{Grid: "g1", Status: StatusDone}, []string{"id2", "id0"}},
		{Filter{Grid: "nope"}, nil},
	} {
		runs, err := s.Runs(c.f)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, r := range runs {
			ids = append(ids, r.ID)
			if len(r.Params) != 4 || r.Params[0].Name != "dataset.n" {
				t.Errorf("run %s params = %v", r.ID, r.Params)
			}
		}
		if !reflect.DeepEqual(ids, c.want) {
			t.Errorf("Runs(%+v) = %v, want %v", c.f, ids, c.want)
		}
	}
}

func TestViews(t *testing.T) {
	s := openTemp(t)
	r := sampleRun("r1")
	r.Seed = 7
	r.Params = []Param{{"a", "12"}, {"b", "lbfgs"}, {"c", "NaN"}, {"d", " 2.5e-3 "}, {"e", "Inf"}}
	if err := s.SaveRun(r, []Metric{{"rmse", 0.5}, {"nlpd", 1.5}}, nil); err != nil {
		t.Fatal(err)
	}
	cols, rows, err := s.Query("SELECT * FROM run_metrics ORDER BY metric")
	if err != nil {
		t.Fatal(err)
	}
	wantCols := []string{"run_id", "method", "dataset", "split", "seed", "metric", "value"}
	wantRows := [][]any{
		{"r1", "sgpr", "kin40k", int64(3), int64(7), "nlpd", 1.5},
		{"r1", "sgpr", "kin40k", int64(3), int64(7), "rmse", 0.5},
	}
	if !reflect.DeepEqual(cols, wantCols) || !reflect.DeepEqual(rows, wantRows) {
		t.Errorf("run_metrics = %v %v\nwant %v %v", cols, rows, wantCols, wantRows)
	}
	cols, rows, err = s.Query("SELECT param, value, num FROM run_params_v WHERE run_id = ? ORDER BY param", "r1")
	if err != nil {
		t.Fatal(err)
	}
	wantRows = [][]any{
		{"a", "12", 12.0}, {"b", "lbfgs", nil}, {"c", "NaN", nil}, {"d", " 2.5e-3 ", 2.5e-3}, {"e", "Inf", nil},
	}
	if !reflect.DeepEqual(rows, wantRows) {
		t.Errorf("run_params_v = %v %v, want %v", cols, rows, wantRows)
	}
	// The query shown in doc.go.
	_, rows, err = s.Query(`SELECT m.method, m.dataset, avg(m.value), count(*)
		FROM run_metrics m JOIN runs r ON r.id = m.run_id
		WHERE m.metric = 'rmse' AND r.status = 'done' AND r.grid = 'vish-table1'
		GROUP BY m.method, m.dataset`)
	if err != nil || !reflect.DeepEqual(rows, [][]any{{"sgpr", "kin40k", 0.5, int64(1)}}) {
		t.Errorf("doc.go query = %v, %v", rows, err)
	}
	if _, _, err := s.Query("SELECT nope FROM runs"); err == nil || !strings.Contains(err.Error(), "no such column") {
		t.Errorf("bad SQL: err = %v", err)
	}
}

func TestReadOnly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.db")
	w, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.SaveRun(sampleRun("r1"), sampleMetrics(3), nil); err != nil {
		t.Fatal(err)
	}
	w.Close()
	ro, err := OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if err := ro.SaveRun(sampleRun("r2"), nil, nil); err != ErrReadOnly {
		t.Errorf("SaveRun on read-only store: %v", err)
	}
	if _, _, err := ro.Query("DELETE FROM runs"); err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Errorf("DELETE through read-only Query: %v", err)
	}
	if m, err := ro.Metrics("r1"); err != nil || len(m) != 3 {
		t.Errorf("Metrics = %v, %v", m, err)
	}
	if _, err := OpenReadOnly(filepath.Join(t.TempDir(), "absent.db")); err == nil || !strings.Contains(err.Error(), "absent.db does not exist") {
		t.Errorf("OpenReadOnly(absent) = %v", err)
	}
}
