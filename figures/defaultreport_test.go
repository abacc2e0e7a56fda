package figures

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sgplab/results"
)

// TestDefaultReport: a config without tables or figures gets a summary of
// every metric by method × dataset × swept parameter, with mean and sample
// standard deviation over splits, and a figure per metric and swept numeric
// parameter; stale and failed runs are left out.
func TestDefaultReport(t *testing.T) {
	dir := t.TempDir()
	st, err := results.Open(filepath.Join(dir, "r.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	exp := &Expected{Grids: []string{"g"}, IDs: map[string][]string{}}
	save := func(id, method, m string, split int, status string, rmse float64) {
		t.Helper()
		r := results.Run{ID: id, Grid: "g", Method: method, Dataset: "csv", Split: split, Profile: "full", Status: status,
			Started: start, Finished: start.Add(time.Second),
			Params: []results.Param{{Name: "num_inducing", Value: m}, {Name: "kernel", Value: "se"}, {Name: "sha256.dataset.file", Value: fmt.Sprint(split)}}}
		var ms []results.Metric
		if status == results.StatusDone {
			ms = []results.Metric{{Name: "rmse", Value: rmse}, {Name: "elbo", Value: -rmse * 100}}
		}
		if err := st.SaveRun(r, ms, nil); err != nil {
			t.Fatal(err)
		}
	}
	// sgpr M=10: rmse 1, 2, 3 → mean 2, std 1; M=20: 0.5, 0.5, 0.5; svgp M=10: 4 (one split).
	for split, v := range []float64{1, 2, 3} {
		id := fmt.Sprintf("s10-%d", split)
		save(id, "sgpr", "10", split, results.StatusDone, v)
		exp.IDs["full"] = append(exp.IDs["full"], id)
		id = fmt.Sprintf("s20-%d", split)
		save(id, "sgpr", "20", split, results.StatusDone, 0.5)
		exp.IDs["full"] = append(exp.IDs["full"], id)
	}
	save("v10", "svgp", "10", 0, results.StatusDone, 4)
	save("v10-failed", "svgp", "10", 1, results.StatusFailed, 0)
	exp.IDs["full"] = append(exp.IDs["full"], "v10", "v10-failed")
	save("stale", "sgpr", "10", 7, results.StatusDone, 100) // not in the config any more

	spec, err := ParseReport("t.toml", "name = \"t\"\n")
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	if _, err := Render(spec, st, out, Options{Formats: []string{"png"}, Expected: exp}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(out, "summary.csv"))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		{"method", "dataset", "num_inducing", "runs", "elbo_mean", "elbo_std", "elbo_n", "rmse_mean", "rmse_std", "rmse_n"},
		{"sgpr", "csv", "10", "3", "-200", "100", "3", "2", "1", "3"},
		{"sgpr", "csv", "20", "3", "-50", "0", "3", "0.5", "0", "3"},
		{"svgp", "csv", "10", "1", "-400", "0", "1", "4", "0", "1"},
	}
	if fmt.Sprint(rows) != fmt.Sprint(want) {
		t.Errorf("summary.csv:\n%v\nwant\n%v", rows, want)
	}
	for _, f := range []string{"figure-rmse-vs-num_inducing.png", "figure-elbo-vs-num_inducing.png"} {
		fh, err := os.Open(filepath.Join(out, f))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := png.Decode(fh); err != nil {
			t.Errorf("%s: %v", f, err)
		}
		fh.Close()
	}
	index, _ := os.ReadFile(filepath.Join(out, "index.md"))
	for _, s := range []string{"## Default report", "the swept parameters are num_inducing", "| sgpr | csv | 10 | 3 | -200 ± 1e+02 | 2 ± 1 |", "figure-rmse-vs-num_inducing.png"} {
		if !strings.Contains(string(index), s) {
			t.Errorf("index.md lacks %q:\n%s", s, index)
		}
	}
}
