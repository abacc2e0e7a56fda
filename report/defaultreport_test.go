package report

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"sgplab/internal/reporttest"
	"sgplab/results"
)

// sweepOpts describe a fabricated ad-hoc sweep (see sweepStore).
type sweepOpts struct {
	gpr bool // exact GPR ran (on yacht only)
	// sizeMetric: sparse runs record x_num_inducing; else M is read from
	// the num_inducing parameter.
	sizeMetric bool
	// converged: runs record x_converged (svgp M=16 split 1 is 0) and
	// x_rel_change.
	converged bool
	// lengthscales: sgpr also sweeps lengthscale over these values.
	lengthscales []string
	// noRMSE: vff records no rmse (a metric missing from a configuration).
	noRMSE bool
}

// sweepNLPD is the fabricated test NLPD of a run.
func sweepNLPD(method, dataset string, m int, split int) float64 {
	base := map[string]float64{"yacht": 1, "energy": 2}[dataset]
	switch method {
	case "gpr":
		return base - 0.5
	case "vff":
		return base + 0.3
	}
	off := map[string]float64{"sgpr": 0, "svgp": 0.4}[method]
	return base + off + 8/float64(m) + 0.01*float64(split)
}

// sweepStore saves a sweep of sgpr and svgp over num_inducing ∈ {16, 32,
// 64}, vff (one configuration, M recorded as metric num_features) and
// optionally gpr on yacht and energy, two splits, with traces. Methods
// differ in jitter and kernel (their settings, not axes). It returns the
// store and the expected runs of grid "sweep".
func sweepStore(t *testing.T, o sweepOpts) (*results.Store, *Expected) {
	t.Helper()
	st, err := results.Open(filepath.Join(t.TempDir(), "r.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	exp := &Expected{Grids: []string{"sweep"}, IDs: map[string][]string{}}
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	save := func(method, ds string, m int, ls string, split int) {
		t.Helper()
		id := fmt.Sprintf("%s-%s-%d-%s-%d", method, ds, m, ls, split)
		params := []results.Param{{Name: "kernel", Value: "se"}, {Name: "fit.iterations", Value: "200"},
			{Name: "sha256.dataset.file", Value: "abc" + ds}}
		switch method {
		case "gpr":
			params = append(params, results.Param{Name: "jitter", Value: "0"})
		case "vff":
			params[0].Value = "matern52"
			params = append(params, results.Param{Name: "frequencies", Value: "16"})
		default:
			params = append(params, results.Param{Name: "jitter", Value: "1e-06"}, results.Param{Name: "num_inducing", Value: strconv.Itoa(m)})
		}
		if ls != "" {
			params = append(params, results.Param{Name: "lengthscale", Value: ls})
		}
		nlpd := sweepNLPD(method, ds, m, split)
		if ls == "2" {
			nlpd += 0.2
		}
		ms := []results.Metric{{Name: "nlpd", Value: nlpd}, {Name: "elbo", Value: -100 * nlpd},
			{Name: "x_train_cpu_seconds", Value: 0.01 * float64(m*m) * (1 + 0.1*float64(split))}}
		if !(o.noRMSE && method == "vff") {
			ms = append(ms, results.Metric{Name: "rmse", Value: nlpd / 2})
		}
		switch {
		case method == "vff":
			ms = append(ms, results.Metric{Name: "num_features", Value: 248})
		case method != "gpr" && o.sizeMetric:
			ms = append(ms, results.Metric{Name: "x_num_inducing", Value: float64(m)})
		}
		if o.converged {
			conv := 1.0
			if method == "svgp" && m == 16 && split == 1 {
				conv = 0
			}
			ms = append(ms, results.Metric{Name: "x_converged", Value: conv}, results.Metric{Name: "x_rel_change", Value: 1e-3 * (1 - conv) / 2})
		}
		var tr []results.TracePoint
		for it := 0; it <= 40; it += 4 {
			tr = append(tr, results.TracePoint{Iteration: it, Objective: -100*nlpd - 400*math.Exp(-float64(it)/8)})
		}
		r := results.Run{ID: id, Grid: "sweep", Method: method, Dataset: ds, Split: split, Profile: "full",
			Status: results.StatusDone, Started: start, Finished: start.Add(time.Second), Params: params}
		if err := st.SaveRun(r, ms, tr); err != nil {
			t.Fatal(err)
		}
		exp.IDs["full"] = append(exp.IDs["full"], id)
	}
	for _, ds := range []string{"yacht", "energy"} {
		for split := 0; split < 2; split++ {
			for _, m := range []int{16, 32, 64} {
				save("svgp", ds, m, "", split)
				if len(o.lengthscales) == 0 {
					save("sgpr", ds, m, "", split)
				}
				for _, ls := range o.lengthscales {
					save("sgpr", ds, m, ls, split)
				}
			}
			save("vff", ds, 0, "", split)
			if o.gpr && ds == "yacht" {
				save("gpr", ds, 0, "", split)
			}
		}
	}
	return st, exp
}

// sweepReport renders the default report of a sweepStore.
func sweepReport(t *testing.T, o sweepOpts) (dir string, sum Summary, d *defaultReport, rc *renderCtx) {
	t.Helper()
	st, exp := sweepStore(t, o)
	spec, err := Parse("sweep.toml", "name = \"sweep\"\n[[grid]]\nname = \"sweep\"\n")
	if err != nil {
		t.Fatal(err)
	}
	dir = filepath.Join(t.TempDir(), "out")
	sum, err = Render(spec, st, dir, Options{Formats: []string{"png"}, Expected: exp})
	if err != nil {
		t.Fatal(err)
	}
	runs, err := loadRuns(st, "sweep", []string{"sweep"})
	if err != nil {
		t.Fatal(err)
	}
	return dir, sum, newDefaultReport(runs), &renderCtx{spec: &spec, profile: "full"}
}

func legendLabels(f *figure) []string {
	var out []string
	for _, it := range f.Below {
		out = append(out, it.Label)
	}
	return out
}

// TestDefaultReportFigures: a sweep without tables gets, per dataset, test
// NLPD and RMSE against M, a Pareto front and a trace panel, titled in
// words; legends name the methods and only the parameters that vary within
// one; exact GPR is a reference line where it ran; parameters that differ
// only between methods (jitter, kernel) are neither axes nor legend
// entries.
func TestDefaultReportFigures(t *testing.T) {
	for _, tc := range []struct {
		name      string
		opts      sweepOpts
		files     []string // besides index.md, summary.md and summary.csv
		titles    []string // in index.md
		legends   map[string][]string
		mSource   string // in the caption of the M figures
		refYacht  bool
		noCaption []string // never in index.md
	}{
		{
			name: "gpr and x_num_inducing",
			opts: sweepOpts{gpr: true, sizeMetric: true},
			files: []string{"nlpd-vs-m-energy.png", "nlpd-vs-m-yacht.png", "rmse-vs-m-energy.png", "rmse-vs-m-yacht.png",
				"pareto-energy.png", "pareto-yacht.png", "trace-energy.png", "trace-yacht.png"},
			titles: []string{"Test NLPD against inducing variables — yacht", "Test RMSE against inducing variables — energy",
				"Test NLPD against training CPU time — yacht", "Training objective against iteration — energy"},
			legends: map[string][]string{
				"nlpd-vs-m-yacht":  {"sgpr", "svgp", "vff", "gpr (exact)"},
				"nlpd-vs-m-energy": {"sgpr", "svgp", "vff"},
				"pareto-yacht":     {"gpr", "sgpr", "svgp", "vff", "Pareto front"},
			},
			mSource:  "metric num_features for vff; metric x_num_inducing for sgpr, svgp",
			refYacht: true,
		},
		{
			name: "no gpr, M from the parameter",
			opts: sweepOpts{},
			files: []string{"nlpd-vs-m-energy.png", "nlpd-vs-m-yacht.png", "rmse-vs-m-energy.png", "rmse-vs-m-yacht.png",
				"pareto-energy.png", "pareto-yacht.png", "trace-energy.png", "trace-yacht.png"},
			legends: map[string][]string{
				"nlpd-vs-m-yacht": {"sgpr", "svgp", "vff"},
			},
			mSource:   "metric num_features for vff; parameter num_inducing for sgpr, svgp",
			noCaption: []string{"exact GPR", "(exact)", "converge", "Hollow"},
		},
		{
			name: "lengthscale swept within sgpr",
			opts: sweepOpts{sizeMetric: true, lengthscales: []string{"0.5", "2"}},
			files: []string{"nlpd-vs-m-yacht.png", "rmse-vs-m-yacht.png", "nlpd-vs-lengthscale-yacht.png",
				"rmse-vs-lengthscale-energy.png", "pareto-yacht.png", "trace-yacht.png"},
			titles: []string{"Test NLPD against lengthscale — yacht"},
			legends: map[string][]string{
				"nlpd-vs-m-yacht":           {"sgpr lengthscale=0.5", "sgpr lengthscale=2", "svgp", "vff"},
				"nlpd-vs-lengthscale-yacht": {"sgpr M=16", "sgpr M=32", "sgpr M=64"},
			},
			mSource: "metric num_features for vff; metric x_num_inducing for sgpr, svgp",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, _, d, rc := sweepReport(t, tc.opts)
			index, err := os.ReadFile(filepath.Join(dir, "index.md"))
			if err != nil {
				t.Fatal(err)
			}
			entries, _ := os.ReadDir(dir)
			var got []string
			for _, e := range entries {
				got = append(got, e.Name())
			}
			for _, f := range append(tc.files, "index.md", "summary.md", "summary.csv") {
				if !slices.Contains(got, f) {
					t.Errorf("no %s; files: %v", f, got)
				}
			}
			for _, f := range got {
				// Settings that differ only between methods are no axis.
				if strings.Contains(f, "jitter") || strings.Contains(f, "kernel") || strings.Contains(f, "iterations") || strings.Contains(f, "frequencies") {
					t.Errorf("figure %s is against a per-method setting", f)
				}
				if strings.HasSuffix(f, ".png") {
					fh, err := os.Open(filepath.Join(dir, f))
					if err != nil {
						t.Fatal(err)
					}
					if _, err := png.Decode(fh); err != nil {
						t.Errorf("%s: %v", f, err)
					}
					fh.Close()
				}
			}
			for _, s := range tc.titles {
				if !strings.Contains(string(index), "#### "+s+"\n") {
					t.Errorf("index.md lacks the title %q", s)
				}
			}
			for _, s := range tc.noCaption {
				if strings.Contains(string(index), s) {
					t.Errorf("index.md says %q:\n%s", s, index)
				}
			}
			for _, s := range []string{"the paper", "Ours:", "_vs_", "figure-"} {
				if strings.Contains(string(index), s) {
					t.Errorf("index.md of an ad-hoc sweep says %q", s)
				}
			}
			if !strings.Contains(string(index), "M is the effective number of inducing variables: "+tc.mSource+".") {
				t.Errorf("index.md does not say where M came from (%s):\n%s", tc.mSource, index)
			}
			if !strings.Contains(string(index), "- jitter: 0 (gpr); 1e-06 (sgpr, svgp)") && tc.opts.gpr {
				t.Errorf("index.md does not list jitter as a setting that differs between methods:\n%s", index)
			}
			for _, ds := range []string{"yacht", "energy"} {
				figs := d.datasetFigures(ds, d.traceRuns()[ds], nil, rc)
				byName := map[string]*figure{}
				for _, nf := range figs {
					byName[nf.name] = nf.fig
				}
				for name, want := range tc.legends {
					if !strings.HasSuffix(name, ds) {
						continue
					}
					f := byName[name]
					if f == nil {
						t.Errorf("no figure %s", name)
						continue
					}
					if got := legendLabels(f); !slices.Equal(got, want) {
						t.Errorf("%s legend = %q, want %q", name, got, want)
					}
				}
				ref := strings.Contains(byName["nlpd-vs-m-"+ds].describe, "Dashed horizontal lines: exact gpr")
				if want := tc.refYacht && ds == "yacht"; ref != want {
					t.Errorf("%s: reference line in the caption = %v, want %v", ds, ref, want)
				}
			}
		})
	}
}

// TestDefaultReportTrace: the trace panel shows one run per method, its
// largest M and lowest split, and says which.
func TestDefaultReportTrace(t *testing.T) {
	dir, _, d, _ := sweepReport(t, sweepOpts{gpr: true, sizeMetric: true})
	tr := d.traceRuns()["yacht"]
	var got []string
	for _, x := range tr {
		got = append(got, fmt.Sprintf("%s M=%g split=%d", x.c.method, x.c.m, x.run.Split))
	}
	want := []string{"gpr M=NaN split=0", "sgpr M=64 split=0", "svgp M=64 split=0", "vff M=248 split=0"}
	if !slices.Equal(got, want) {
		t.Errorf("traced runs = %q, want %q", got, want)
	}
	index, _ := os.ReadFile(filepath.Join(dir, "index.md"))
	if !strings.Contains(string(index), "(gpr split 0; sgpr M = 64, split 0; svgp M = 64, split 0; vff M = 248, split 0; full profile)") {
		t.Errorf("index.md does not say which runs the trace panel shows:\n%s", index)
	}
}

// TestDefaultReportConvergence: when runs record x_converged, points with
// an unconverged run are hollow, the legend and caption say so and the
// summary counts them; without the metric, nothing is said.
func TestDefaultReportConvergence(t *testing.T) {
	for _, conv := range []bool{true, false} {
		t.Run(fmt.Sprint("converged metric ", conv), func(t *testing.T) {
			dir, _, d, rc := sweepReport(t, sweepOpts{gpr: true, sizeMetric: true, converged: conv})
			f := d.againstM("yacht", qualities[0], rc)
			hasItem := slices.Contains(legendLabels(f), "hollow: a run did not converge")
			if hasItem != conv {
				t.Errorf("legend entry for hollow markers = %v, want %v", hasItem, conv)
			}
			if got := strings.Contains(f.describe, "Hollow markers"); got != conv {
				t.Errorf("caption mentions hollow markers = %v, want %v: %s", got, conv, f.describe)
			}
			// Exactly the svgp M=16 point on yacht is hollow.
			var hollow []string
			for _, c := range d.configs {
				if c.dataset == "yacht" && c.unconverged() > 0 {
					hollow = append(hollow, fmt.Sprintf("%s %g", c.method, c.m))
				}
			}
			if want := map[bool][]string{true: {"svgp 16"}}[conv]; !slices.Equal(hollow, want) {
				t.Errorf("unconverged configurations %q, want %q", hollow, want)
			}
			rows := readCSVFile(t, filepath.Join(dir, "summary.csv"))
			col := slices.Index(rows[0], "unconverged")
			if (col >= 0) != conv {
				t.Fatalf("summary.csv has an unconverged column = %v, want %v: %v", col >= 0, conv, rows[0])
			}
			md, _ := os.ReadFile(filepath.Join(dir, "summary.md"))
			if conv {
				var counts []string
				for _, r := range rows[1:] {
					if r[0] == "yacht" && r[1] == "svgp" {
						counts = append(counts, r[col])
					}
				}
				if !slices.Equal(counts, []string{"1", "0", "0"}) {
					t.Errorf("unconverged runs of svgp on yacht by M = %q, want [1 0 0]", counts)
				}
				if !strings.Contains(string(md), "| yacht | svgp | 16 | 2 | **1** |") {
					t.Errorf("summary.md does not flag the unconverged run:\n%s", md)
				}
			} else if strings.Contains(string(md), "converge") {
				t.Errorf("summary.md speaks of convergence without the metric:\n%s", md)
			}
		})
	}
}

func readCSVFile(t *testing.T, path string) [][]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// TestSummaryCSVParses: summary.csv leaves missing values empty, never
// "—", so that every non-empty cell of a numeric column parses as a
// number (as pandas reads it); text columns are the dataset, method, M's
// source and the non-numeric parameters.
func TestSummaryCSVParses(t *testing.T) {
	dir, _, _, _ := sweepReport(t, sweepOpts{gpr: true, sizeMetric: true, converged: true, noRMSE: true, lengthscales: []string{"0.5", "2"}})
	rows := readCSVFile(t, filepath.Join(dir, "summary.csv"))
	text := map[string]bool{"dataset": true, "method": true, "m_source": true}
	empty := map[string]int{}
	for _, r := range rows[1:] {
		for j, v := range r {
			name := rows[0][j]
			if strings.Contains(v, "—") {
				t.Errorf("%s = %q: a dash where a value is missing", name, v)
			}
			if v == "" {
				empty[name]++
				continue
			}
			if text[name] {
				continue
			}
			if _, err := strconv.ParseFloat(v, 64); err != nil {
				t.Errorf("%s = %q does not parse as a number: %v", name, v, err)
			}
		}
	}
	// Missing: gpr's M, source and lengthscale; vff's lengthscale and rmse;
	// the std of nothing.
	for _, name := range []string{"m", "m_source", "lengthscale", "rmse_mean", "rmse_std"} {
		if empty[name] == 0 {
			t.Errorf("column %s has no empty cell; rows:\n%v", name, rows)
		}
	}
	want := []string{"dataset", "method", "lengthscale", "m", "m_source", "runs", "unconverged",
		"nlpd_mean", "nlpd_std", "nlpd_n", "rmse_mean", "rmse_std", "rmse_n"}
	if got := rows[0][:len(want)]; !slices.Equal(got, want) {
		t.Errorf("header starts %q, want %q", got, want)
	}
}

// TestDefaultSummaryStats: the summary's mean and sample standard
// deviation over splits, rows by dataset, method and M; stale and failed
// runs left out.
func TestDefaultSummaryStats(t *testing.T) {
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
	// sgpr M=10: rmse 1, 2, 3 → mean 2, std 1; M=20: 0.5 ×3; svgp M=10: 4 (one split).
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

	spec, err := Parse("t.toml", "name = \"t\"\n")
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	if _, err := Render(spec, st, out, Options{Formats: []string{"png"}, Expected: exp}); err != nil {
		t.Fatal(err)
	}
	rows := readCSVFile(t, filepath.Join(out, "summary.csv"))
	want := [][]string{
		{"dataset", "method", "m", "m_source", "runs", "rmse_mean", "rmse_std", "rmse_n", "elbo_mean", "elbo_std", "elbo_n"},
		{"csv", "sgpr", "10", "num_inducing", "3", "2", "1", "3", "-200", "100", "3"},
		{"csv", "sgpr", "20", "num_inducing", "3", "0.5", "0", "3", "-50", "0", "3"},
		{"csv", "svgp", "10", "num_inducing", "1", "4", "", "1", "-400", "", "1"},
	}
	if fmt.Sprint(rows) != fmt.Sprint(want) {
		t.Errorf("summary.csv:\n%v\nwant\n%v", rows, want)
	}
	index, _ := os.ReadFile(filepath.Join(out, "index.md"))
	for _, s := range []string{"## Default report", "| csv | sgpr | 10 | 3 | 2 ± 1 | -200 ± 1e+02 |", "rmse-vs-m-csv.png"} {
		if !strings.Contains(string(index), s) {
			t.Errorf("index.md lacks %q:\n%s", s, index)
		}
	}
}

// TestPaperWording: only a config that cites a paper speaks of "the paper"
// and "ours".
func TestPaperWording(t *testing.T) {
	st := reporttest.Store(t)
	for _, tc := range []struct {
		name, config string
		paper        bool
	}{
		{"paper config", reporttest.Config, true},
		{"ad-hoc figure config", "name = \"demo\"\n[[grid]]\nname = \"fig3\"\n[[figure]]\nname = \"f\"\nkind = \"line\"\ngrid = \"fig3\"\nx = \"param:num_inducing\"\ny = \"metric:rmse\"\nseries = \"method\"\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec, err := Parse("t.toml", tc.config)
			if err != nil {
				t.Fatal(err)
			}
			out := t.TempDir()
			if _, err := Render(spec, st, out, Options{Formats: []string{"svg"}, Profile: "quick"}); err != nil {
				t.Fatal(err)
			}
			index, _ := os.ReadFile(filepath.Join(out, "index.md"))
			for _, s := range []string{"the paper", "Ours:"} {
				if got := strings.Contains(string(index), s); got != tc.paper {
					t.Errorf("index.md says %q = %v, want %v:\n%s", s, got, tc.paper, index)
				}
			}
		})
	}
}

// TestEveryCSVParses: in every CSV a report writes (tables of a paper
// config, the default report's summary), a column with any number holds
// only numbers or empty cells, as pandas needs to read it as numeric, and
// no cell is a dash standing for a missing value.
func TestEveryCSVParses(t *testing.T) {
	paperDir := t.TempDir()
	spec, err := Parse("demo.toml", reporttest.Config)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Render(spec, reporttest.Store(t), paperDir, Options{Formats: []string{"svg"}}); err != nil {
		t.Fatal(err)
	}
	sweepDir, _, _, _ := sweepReport(t, sweepOpts{gpr: true, sizeMetric: true, converged: true, noRMSE: true})
	var files []string
	for _, dir := range []string{paperDir, sweepDir} {
		m, _ := filepath.Glob(filepath.Join(dir, "*.csv"))
		files = append(files, m...)
	}
	if len(files) < 3 {
		t.Fatalf("only %d CSV files: %v", len(files), files)
	}
	emptyCells := 0
	for _, f := range files {
		rows := readCSVFile(t, f)
		for j, name := range rows[0] {
			numeric := false
			for _, r := range rows[1:] {
				if _, err := strconv.ParseFloat(r[j], 64); err == nil {
					numeric = true
				}
			}
			for _, r := range rows[1:] {
				v := r[j]
				if v == "—" || v == "-" || v == "–" {
					t.Errorf("%s: column %s has a dash for a missing value", filepath.Base(f), name)
				}
				if v == "" {
					emptyCells++
					continue
				}
				if _, err := strconv.ParseFloat(v, 64); numeric && err != nil {
					t.Errorf("%s: column %s mixes numbers with %q", filepath.Base(f), name, v)
				}
			}
		}
	}
	if emptyCells == 0 {
		t.Error("no CSV has a missing value: the test proves nothing")
	}
}
