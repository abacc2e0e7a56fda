package results

import (
	"bytes"
	"encoding/csv"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// exportFixture holds runs as the runner stores them: grid is the grid's
// own name and the experiment is in the spec.
func exportFixture(t *testing.T) *Store {
	t.Helper()
	s := openTemp(t)
	for _, c := range []struct {
		id, exp, grid, method, status string
		split                         int
	}{
		{"a1", "paper", "g", "sgpr", StatusDone, 0}, {"a2", "paper", "g", "svgp", StatusDone, 1},
		{"b1", "other", "g", "sgpr", StatusDone, 0}, {"c1", "paper", "h", "sgpr", StatusFailed, 0},
	} {
		r := sampleRun(c.id)
		r.Grid, r.Method, r.Status, r.Split, r.Profile = c.grid, c.method, c.status, c.split, "full"
		r.Spec = `{"experiment":"` + c.exp + `","grid":"` + c.grid + `"}`
		var ms []Metric
		var tr []TracePoint
		var arts []Artifact
		if c.status == StatusDone {
			r.Hyper = []Hyperparameter{{"kernel.lengthscales", 0, 0.5}, {"kernel.lengthscales", 1, 2}, {"noise_variance", 0, 0.1}}
			ms = []Metric{{"rmse", 0.25}, {ConvergedMetric, 1}}
			tr = sampleTrace(4)
			cols := []string{"x0", "mean"}
			if c.method == "svgp" {
				cols = []string{"x0", "var_y"}
			}
			arts = []Artifact{{Name: "predictions", Columns: cols, Rows: 2, Data: []float64{0, 1, 2, 3}}}
		}
		if err := s.SaveRunArtifacts(r, ms, tr, arts); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func readCSV(t *testing.T, b *bytes.Buffer) [][]string {
	t.Helper()
	rows, err := csv.NewReader(b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

func TestExportWhat(t *testing.T) {
	s := exportFixture(t)
	for _, tc := range []struct {
		what    string
		f       ExportFilter
		header  string
		rows    int
		first   string // the first data row, joined by commas
		wantErr string
	}{
		{what: ExportMetrics, header: "run_id,grid,method,dataset,split,seed,profile,status,error,metric,value", rows: 7,
			first: "a1,g,sgpr,kin40k,0,9223372036854775813,full,done,,rmse,0.25"},
		{what: ExportHyperparameters, f: ExportFilter{Grid: "paper/g"}, header: "run_id,grid,method,dataset,split,seed,profile,status,error,name,idx,value", rows: 6,
			first: "a1,g,sgpr,kin40k,0,9223372036854775813,full,done,,kernel.lengthscales,0,0.5"},
		{what: ExportTraces, f: ExportFilter{Method: "svgp"}, header: "run_id,grid,method,dataset,split,seed,profile,status,error,seq,iteration,elapsed_seconds,objective,phase", rows: 4,
			first: "a2,g,svgp,kin40k,1,9223372036854775813,full,done,,0,0,0,-1000,adam"},
		{what: "predictions", f: ExportFilter{Grid: "paper/g"}, header: "run_id,grid,method,dataset,split,seed,profile,status,error,row,x0,mean,var_y", rows: 4,
			first: "a1,g,sgpr,kin40k,0,9223372036854775813,full,done,,0,0,1,"},
		{what: "predictions", f: ExportFilter{IDs: map[string]struct{}{"a2": {}}}, header: "run_id,grid,method,dataset,split,seed,profile,status,error,row,x0,var_y", rows: 2,
			first: "a2,g,svgp,kin40k,1,9223372036854775813,full,done,,0,0,1"},
		{what: "q", wantErr: `no selected run has an artifact "q"`},
		{what: "predictions", f: ExportFilter{Grid: "paper/h"}, wantErr: "stored: predictions"},
	} {
		t.Run(tc.what+" "+tc.f.Grid, func(t *testing.T) {
			var b bytes.Buffer
			err := s.ExportWhat(&b, FormatCSV, tc.what, tc.f)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			rows := readCSV(t, &b)
			if strings.Join(rows[0], ",") != tc.header || len(rows)-1 != tc.rows || strings.Join(rows[1], ",") != tc.first {
				t.Errorf("got header %v, %d rows, first %v\nwant %s, %d rows, first %s", rows[0], len(rows)-1, rows[1], tc.header, tc.rows, tc.first)
			}
		})
	}
}

// TestExportGridFilter: the runner stores a run's grid as the grid's own
// name and its experiment in the spec, so --grid EXPERIMENT/GRID (the form
// the help shows) matched nothing before; it now selects that
// experiment's grid and no other experiment's grid of the same name.
func TestExportGridFilter(t *testing.T) {
	s := exportFixture(t)
	for _, tc := range []struct {
		f    ExportFilter
		want []string
	}{
		{ExportFilter{Grid: "paper/g"}, []string{"a1", "a2"}},
		{ExportFilter{Grid: "other/g"}, []string{"b1"}},
		{ExportFilter{Grid: "g"}, []string{"a1", "a2", "b1"}},
		{ExportFilter{Grid: "paper/h"}, []string{"c1"}},
		{ExportFilter{Grid: "nope/g"}, nil},
		{ExportFilter{IDs: map[string]struct{}{"a2": {}, "c1": {}, "zz": {}}}, []string{"a2", "c1"}},
		{ExportFilter{Grid: "paper/g", IDs: map[string]struct{}{"a2": {}, "b1": {}}}, []string{"a2"}},
		{ExportFilter{IDs: map[string]struct{}{}}, nil},
	} {
		var b bytes.Buffer
		if err := s.ExportWide(&b, FormatCSV, tc.f); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range readCSV(t, &b)[1:] {
			got = append(got, r[0])
		}
		slices.Sort(got)
		if !slices.Equal(got, tc.want) {
			t.Errorf("filter %+v: runs %v, want %v", tc.f, got, tc.want)
		}
	}
}

func TestExportNPY(t *testing.T) {
	s := exportFixture(t)
	dir := filepath.Join(t.TempDir(), "npy")
	n, err := s.ExportNPY(dir, "predictions", ExportFilter{Grid: "paper/g"})
	if err != nil || n != 2 {
		t.Fatalf("%d arrays, %v", n, err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "a2.predictions.npy"))
	if err != nil {
		t.Fatal(err)
	}
	rows, cols, data, err := readNPY(b)
	if err != nil || rows != 2 || cols != 2 || !slices.Equal(data, []float64{0, 1, 2, 3}) {
		t.Errorf("a2: %d × %d %v, %v", rows, cols, data, err)
	}
	f, err := os.Open(filepath.Join(dir, "index.predictions.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	index, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(index[0], ",") != "run_id,grid,method,dataset,split,seed,profile,status,error,file,rows,cols,columns" ||
		len(index) != 3 || strings.Join(index[2][9:], ",") != "a2.predictions.npy,2,2,x0 var_y" {
		t.Errorf("index.predictions.csv %v", index)
	}
	for _, what := range []string{ExportHyperparameters, ExportRuns, ""} {
		if _, err := s.ExportNPY(dir, what, ExportFilter{}); err == nil || !strings.Contains(err.Error(), "npy holds arrays") {
			t.Errorf("npy of %q: %v", what, err)
		}
	}
	if _, err := s.ExportNPY(dir, "z", ExportFilter{}); err == nil || !strings.Contains(err.Error(), `artifact "z"`) {
		t.Errorf("npy of a missing artifact: %v", err)
	}
}

func TestMetricValues(t *testing.T) {
	s := exportFixture(t)
	got, err := s.MetricValues(ConvergedMetric, []string{"a1", "c1", "zz"})
	if err != nil || len(got) != 1 || got["a1"] != 1 {
		t.Errorf("%v, %v; want a1 only", got, err)
	}
}
