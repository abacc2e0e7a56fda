package results

import (
	"bytes"
	"encoding/csv"
	"path/filepath"
	"slices"
	"testing"
)

func TestExportWide(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "r.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i, c := range []struct {
		id, grid, method, status, m string
		rmse                        float64
	}{{"a", "x/g", "sgpr", StatusDone, "10", 0.5}, {"b", "x/g", "sgpr", StatusDone, "30", 0.25}, {"c", "x/g", "svgp", StatusFailed, "10", 0}, {"d", "x/hg", "sgpr", StatusDone, "10", 0.75}} {
		r := sampleRun(c.id)
		r.Grid, r.Method, r.Status, r.Split, r.Profile = c.grid, c.method, c.status, i, "full"
		r.Params = []Param{{"num_inducing", c.m}, {"kernel", "se"}}
		var ms []Metric
		if c.status == StatusDone {
			ms = []Metric{{"rmse", c.rmse}}
		}
		if err := s.SaveRun(r, ms, nil); err != nil {
			t.Fatal(err)
		}
	}
	read := func(f ExportFilter) [][]string {
		var b bytes.Buffer
		if err := s.ExportWide(&b, FormatCSV, f); err != nil {
			t.Fatal(err)
		}
		rows, err := csv.NewReader(&b).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		return rows
	}
	all := read(ExportFilter{})
	wantCols := []string{"run_id", "grid", "method", "dataset", "split", "seed", "profile", "status", "error", "p.kernel", "p.num_inducing", "m.rmse"}
	if !slices.Equal(all[0], wantCols) {
		t.Fatalf("columns %v, want %v", all[0], wantCols)
	}
	if len(all) != 5 {
		t.Fatalf("%d rows, want a header and one row per run (4)", len(all))
	}
	byID := map[string][]string{}
	for _, r := range all[1:] {
		byID[r[0]] = r
	}
	if r := byID["b"]; r[10] != "30" || r[11] != "0.25" || r[9] != "se" {
		t.Errorf("run b: %v, want num_inducing 30 and rmse 0.25 in their columns", r)
	}
	if r := byID["c"]; r[7] != StatusFailed || r[11] != "" {
		t.Errorf("failed run c: %v, want status failed and an empty rmse", r)
	}
	for _, c := range []struct {
		f    ExportFilter
		want []string
	}{
		{ExportFilter{Grid: "g"}, []string{"a", "b", "c"}},
		{ExportFilter{Grid: "x/g"}, []string{"a", "b", "c"}},
		{ExportFilter{Grid: "hg"}, []string{"d"}},
		{ExportFilter{Method: "sgpr", Status: StatusDone}, []string{"a", "b", "d"}},
		{ExportFilter{Grid: "g", Status: StatusFailed}, []string{"c"}},
		{ExportFilter{Profile: "quick"}, nil},
		{ExportFilter{Profile: "full", Method: "svgp"}, []string{"c"}},
	} {
		var got []string
		for _, r := range read(c.f)[1:] {
			got = append(got, r[0])
		}
		slices.Sort(got)
		if !slices.Equal(got, c.want) {
			t.Errorf("filter %+v: runs %v, want %v", c.f, got, c.want)
		}
	}
}
