package report

import (
	"encoding/csv"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"sgplab/internal/reporttest"
)

// naiveMeanStd is an independent two-pass sample mean and std.
func naiveMeanStd(xs []float64) (float64, float64) {
	var m float64
	for _, x := range xs {
		m += x
	}
	m /= float64(len(xs))
	var ss float64
	for _, x := range xs {
		ss += (x - m) * (x - m)
	}
	return m, math.Sqrt(ss / float64(len(xs)-1))
}

func renderFixture(t *testing.T, opts Options) (Summary, string) {
	t.Helper()
	spec, err := Parse("demo.toml", reporttest.Config)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	sum, err := Render(spec, reporttest.Store(t), out, opts)
	if err != nil {
		t.Fatal(err)
	}
	return sum, out
}

func readCSV(t *testing.T, path string) map[[2]string]map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	out := map[[2]string]map[string]string{}
	for _, r := range recs[1:] {
		row := map[string]string{}
		for i, h := range recs[0] {
			row[h] = r[i]
		}
		out[[2]string{r[0], r[1]}] = row
	}
	return out
}

func num(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("not a number: %q", s)
	}
	return v
}

func TestTableMeanStdRanksAndPaper(t *testing.T) {
	_, out := renderFixture(t, Options{})
	cells := readCSV(t, filepath.Join(out, "table-1.csv"))
	// Means and stds against the fabricated values, full profile only.
	for _, ds := range []string{"concrete", "energy"} {
		var means []float64
		for _, m := range []string{"sgpr", "svgp", "vff"} {
			xs := []float64{reporttest.RMSE(m, ds, 0), reporttest.RMSE(m, ds, 1), reporttest.RMSE(m, ds, 2)}
			wantMean, wantStd := naiveMeanStd(xs)
			c := cells[[2]string{ds, m}]
			if got := num(t, c["mean"]); math.Abs(got-wantMean) > 1e-12 {
				t.Errorf("%s/%s mean = %v, want %v", ds, m, got, wantMean)
			}
			if got := num(t, c["std"]); math.Abs(got-wantStd) > 1e-12 {
				t.Errorf("%s/%s std = %v, want %v", ds, m, got, wantStd)
			}
			if c["n"] != "3" || c["profile"] != "full" {
				t.Errorf("%s/%s n=%s profile=%s", ds, m, c["n"], c["profile"])
			}
			means = append(means, wantMean)
		}
		// Lower is better: vff < sgpr < svgp.
		for m, want := range map[string]string{"vff": "1", "sgpr": "2", "svgp": "3"} {
			if got := cells[[2]string{ds, m}]["rank"]; got != want {
				t.Errorf("%s/%s rank = %s, want %s (means %v)", ds, m, got, want, means)
			}
		}
	}
	// Paper vs ours: concrete/sgpr paper 5.0, ours mean 5.1.
	c := cells[[2]string{"concrete", "sgpr"}]
	if d := num(t, c["ours_minus_paper"]); math.Abs(d-0.1) > 1e-12 || c["paper_value"] != "5" || c["paper_std"] != "0.2" {
		t.Errorf("paper comparison %v", c)
	}
	// Absent cells: a failed run with a missing file, and no run at all.
	failed := cells[[2]string{"yacht", "svgp"}]
	if failed["value"] != "" || failed["n"] != "0" || !strings.Contains(failed["note"], "yacht.csv not found") ||
		!strings.Contains(failed["note"], "sgplab data fetch yacht") || failed["paper_value"] != "1.5" || failed["ours_minus_paper"] != "" {
		t.Errorf("failed cell %v", failed)
	}
	if never := cells[[2]string{"yacht", "vff"}]; !strings.Contains(never["note"], "no runs for dataset yacht, method vff") {
		t.Errorf("never-run cell %v", never)
	}
	// Row order: explicit first, then the rest.
	md, err := os.ReadFile(filepath.Join(out, "table-1.md"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(md)
	if !(strings.Index(s, "| energy |") < strings.Index(s, "| concrete |") && strings.Index(s, "| concrete |") < strings.Index(s, "| yacht |")) {
		t.Errorf("row order wrong:\n%s", s)
	}
	for _, want := range []string{
		"| energy | 0.600 ± 0.100 (2) | 0.850 ± 0.100 (3) | **0.500 ± 0.100** (1) |",
		"| *mean rank* | 2.00 | 3.00 | 1.00 |",
		"| concrete | SGPR | 5.000 ± 0.200 | 5.100 ± 0.100 | +0.100 | +2.0% |",
		"| yacht | SVGP | 1.500 | — [1] | — | — |",
		"paper (reported)",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("table-1.md lacks %q:\n%s", want, s)
		}
	}
	tex, err := os.ReadFile(filepath.Join(out, "table-1.tex"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(tex), `\textbf{0.500 $\pm$ 0.100} (1)`) || !strings.Contains(string(tex), `---\textsuperscript{1}`) {
		t.Errorf("table-1.tex:\n%s", tex)
	}
}

func TestTableMetricColumnsMedianAndFilter(t *testing.T) {
	_, out := renderFixture(t, Options{})
	cells := readCSV(t, filepath.Join(out, "table-2.csv"))
	for _, m := range []string{"sgpr", "svgp", "vff"} {
		// Median of three splits is the middle split; only concrete passes the filter.
		want := reporttest.RMSE(m, "concrete", 1)
		if got := num(t, cells[[2]string{m, "rmse"}]["value"]); math.Abs(got-want) > 1e-12 {
			t.Errorf("%s rmse median = %v, want %v", m, got, want)
		}
		if got := num(t, cells[[2]string{m, "nlpd"}]["value"]); math.Abs(got-math.Log(want)) > 1e-12 {
			t.Errorf("%s nlpd median = %v, want %v", m, got, math.Log(want))
		}
	}
	md, _ := os.ReadFile(filepath.Join(out, "table-2.md"))
	if !strings.Contains(string(md), "| method \\ metric | rmse | nlpd |") {
		t.Errorf("metric columns not in the given order:\n%s", md)
	}
}

func TestQuickProfileIsLabelledAndSeparate(t *testing.T) {
	sum, out := renderFixture(t, Options{Profile: "quick"})
	if sum.Profile != "quick" {
		t.Fatalf("profile %q", sum.Profile)
	}
	cells := readCSV(t, filepath.Join(out, "table-1.csv"))
	want, _ := naiveMeanStd([]float64{reporttest.RMSE("sgpr", "concrete", 0) + 100, reporttest.RMSE("sgpr", "concrete", 1) + 100, reporttest.RMSE("sgpr", "concrete", 2) + 100})
	if got := num(t, cells[[2]string{"concrete", "sgpr"}]["mean"]); math.Abs(got-want) > 1e-12 {
		t.Errorf("quick mean = %v, want %v", got, want)
	}
	md, _ := os.ReadFile(filepath.Join(out, "table-1.md"))
	idx, _ := os.ReadFile(filepath.Join(out, "index.md"))
	for _, s := range []string{string(md), string(idx)} {
		if !strings.Contains(s, "UCI regression, test RMSE (quick profile)") {
			t.Errorf("quick profile not in the title:\n%s", s)
		}
	}
	if !strings.Contains(string(idx), "3 splits instead of 10.") || !strings.Contains(string(idx), "Training curves (quick profile)") {
		t.Errorf("index lacks the profile note or figure label:\n%s", idx)
	}
	// The fig3 grid has no quick runs: the cell-free figure says so.
	if len(sum.Warnings) == 0 || !strings.Contains(strings.Join(sum.Warnings, "\n"), "no finished quick-profile runs of grid fig3") {
		t.Errorf("warnings %v", sum.Warnings)
	}
}

func TestRankTiesAndDirection(t *testing.T) {
	bt := &builtTable{Spec: TableSpec{Rank: "higher", RankAcross: "columns"}, Rows: []string{"r"}, Cols: []string{"a", "b", "c", "d"},
		Cells: map[[2]string]*cell{}}
	for c, v := range map[string]float64{"a": 1, "b": 3, "c": 3, "d": math.NaN()} {
		bt.Cells[[2]string{"r", c}] = &cell{Row: "r", Col: c, Value: v}
	}
	bt.Cells[[2]string{"r", "x"}] = nil
	delete(bt.Cells, [2]string{"r", "x"})
	bt.rank()
	for c, want := range map[string]float64{"a": 3, "b": 1.5, "c": 1.5, "d": 0} {
		if got := bt.cell("r", c).Rank; got != want {
			t.Errorf("rank of %s = %v, want %v", c, got, want)
		}
	}
	if !bt.cell("r", "b").Best || !bt.cell("r", "c").Best || bt.cell("r", "a").Best {
		t.Error("tied best cells must both be bold")
	}
}

func TestFmtNum(t *testing.T) {
	cases := []struct {
		v      float64
		digits int
		want   string
	}{
		{5.1, 3, "5.100"}, {0.0004, 3, "4.00e-04"}, {1234567, 2, "1.2e+06"}, {math.NaN(), 3, "—"}, {-2.5, 1, "-2.5"}, {0, 3, "0.000"},
	}
	for _, c := range cases {
		if got := fmtNum(c.v, c.digits); got != c.want {
			t.Errorf("fmtNum(%v, %d) = %q, want %q", c.v, c.digits, got, c.want)
		}
	}
}

// A cell that averages different configurations must say so.
func TestTablePoolingIsFootnoted(t *testing.T) {
	src := "name = \"demo\"\n[[grid]]\nname = \"fig3\"\n[[table]]\nname = \"t\"\ngrid = \"fig3\"\nrows = \"dataset\"\ncolumns = \"method\"\nmetric = \"elbo\"\n"
	spec, err := Parse("p.toml", src)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if _, err := Render(spec, reporttest.Store(t), out, Options{Formats: []string{"png"}}); err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(filepath.Join(out, "t.md"))
	if !strings.Contains(string(md), "pools runs that differ in num_inducing ∈ {10, 20, 40, 80}") {
		t.Errorf("no pooling footnote:\n%s", md)
	}
}

// A run's grid is a grouping dimension (tables whose rows are configurations
// encoded in grid names): the "<paper>/" prefix the runner may store is
// dropped, and checkDim accepts it on both kinds of axes.
func TestGridDimension(t *testing.T) {
	for _, g := range []string{"spherical-odgp/uci-relu-arccos-m128", "uci-relu-arccos-m128"} {
		if got := dimValue(&run{Grid: g}, "grid"); got != "uci-relu-arccos-m128" {
			t.Errorf("dimValue(grid %q) = %q, want uci-relu-arccos-m128", g, got)
		}
	}
	for _, numeric := range []bool{false, true} {
		if err := checkDim("grid", numeric); err != nil {
			t.Errorf("checkDim(grid, %v): %v", numeric, err)
		}
	}
}
