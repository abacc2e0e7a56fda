// Package reporttest holds the fixture that the report and claims tests
// share: a paper config (Config) and a results database of fabricated runs
// (Store) whose numbers the tests can recompute (RMSE).
package reporttest

import (
	"fmt"
	"math"
	"path/filepath"
	"testing"
	"time"

	"sgplab/results"
)

// RMSE is the fabricated test RMSE of a run, so tests can recompute the
// expected means and standard deviations independently.
func RMSE(method, dataset string, split int) float64 {
	base := map[string]float64{"concrete": 5.0, "energy": 0.5, "yacht": 1.0}[dataset]
	off := map[string]float64{"sgpr": 0, "svgp": 0.25, "vff": -0.1}[method]
	return base + off + 0.1*float64(split)
}

// Config is a paper config over the fixture's grids: two tables, five
// figures and three raw-SQL claims.
const Config = `
name = "demo"
title = "Demo paper (Author 2024)"
description = "Fabricated results for the figures tests."

[profiles.quick]
note = "3 splits instead of 10."

[[grid]]
name = "uci"
methods = ["sgpr", "svgp", "vff"]

[[grid]]
name = "fig3"

[[grid]]
name = "sweep"

[report]
intro = "Test report."
[report.labels]
sgpr = "SGPR"
svgp = "SVGP"
vff = "VFF"

[[table]]
name = "table-1"
title = "UCI regression, test RMSE"
grid = "uci"
rows = "dataset"
columns = "method"
metric = "rmse"
rank = "lower"
digits = 3
row_order = ["energy", "concrete"]
[[table.paper]]
row = "concrete"
column = "sgpr"
value = 5.0
std = 0.2
[[table.paper]]
row = "yacht"
column = "svgp"
value = 1.5

[[table]]
name = "table-2"
title = "UCI regression, RMSE and NLPD"
grid = "uci"
rows = "method"
columns = "metric"
metrics = ["rmse", "nlpd"]
aggregate = "median"
[table.filter]
dataset = "concrete"

[[figure]]
name = "fig-line"
title = "ELBO vs number of features"
kind = "line"
grid = "fig3"
x = "param:num_inducing"
y = "metric:elbo"
series = "method"
logx = true
xlabel = "number of features M"
ylabel = "ELBO (nats)"
paper = "VOF matches SGPR from M = 20."

[[figure]]
name = "fig-band"
title = "Test RMSE vs M"
kind = "band"
grid = "fig3"
x = "param:num_inducing"
y = "metric:rmse"
series = "method"
panels = "dataset"
band = "2std"
logy = true

[[figure]]
name = "fig-scatter"
title = "RMSE vs training time"
kind = "scatter"
grid = "fig3"
x = "metric:train_seconds"
y = "metric:rmse"
series = "method"
logx = true

[[figure]]
name = "fig-heat"
title = "RMSE over M and lengthscale"
kind = "heatmap"
grid = "sweep"
x = "param:num_inducing"
y = "param:lengthscale"
z = "metric:rmse"
panels = "method"

[[figure]]
name = "fig-trace"
title = "Training curves"
kind = "trace"
grid = "fig3"
series = "method"
logy = false
[figure.filter]
num_inducing = 40

[[claim]]
text = "SGPR beats SVGP on concrete"
paper = "Table 1: 5.0 vs 5.25"
query = "SELECT (SELECT AVG(value) FROM run_metrics WHERE method='svgp' AND dataset='concrete' AND metric='rmse') - (SELECT AVG(value) FROM run_metrics WHERE method='sgpr' AND dataset='concrete' AND metric='rmse')"
expect = "> 0"

[[claim]]
text = "VFF is twice as good"
query = "SELECT AVG(value) FROM run_metrics WHERE method='vff' AND metric='rmse'"
expect = "< 1"

[[claim]]
text = "Nothing ran for boston"
query = "SELECT AVG(value) FROM run_metrics WHERE dataset='boston'"
expect = "< 1"
`

// Store builds a results database of fabricated runs in a temporary
// directory of t: grid "uci" (three methods, datasets and splits, full and
// quick profiles, one method never run and one failed on yacht), grid
// "fig3" (ELBO, RMSE and time against M, with traces) and grid "sweep"
// (RMSE over M × lengthscale, stored as "demo/sweep", with one hole).
func Store(t testing.TB) *results.Store {
	t.Helper()
	st, err := results.Open(filepath.Join(t.TempDir(), "results.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	n := 0
	save := func(r results.Run, ms []results.Metric, tr []results.TracePoint) {
		t.Helper()
		n++
		r.ID = fmt.Sprintf("run-%04d", n)
		r.Started = start
		if r.Status == "" {
			r.Status = results.StatusDone
		}
		if r.Status == results.StatusDone {
			r.Finished = start.Add(time.Duration(n) * time.Second)
		}
		if err := st.SaveRun(r, ms, tr); err != nil {
			t.Fatal(err)
		}
	}
	// Grid "uci": three methods, three datasets, three splits, full and quick.
	for _, profile := range []string{"full", "quick"} {
		for _, ds := range []string{"concrete", "energy", "yacht"} {
			for _, m := range []string{"sgpr", "svgp", "vff"} {
				for split := 0; split < 3; split++ {
					r := results.Run{Grid: "uci", Method: m, Dataset: ds, Split: split, Profile: profile,
						Params: []results.Param{{Name: "num_inducing", Value: "100"}, {Name: "kernel", Value: "se"}}}
					switch {
					case m == "vff" && ds == "yacht":
						continue // never run: the footnote must say so
					case m == "svgp" && ds == "yacht":
						r.Status, r.Error = results.StatusFailed, "dataset yacht: file yacht.csv not found in ./data"
						save(r, nil, nil)
						continue
					}
					v := RMSE(m, ds, split)
					if profile == "quick" {
						v += 100 // quick numbers must never leak into the full report
					}
					save(r, []results.Metric{{Name: "rmse", Value: v}, {Name: "nlpd", Value: math.Log(v)}}, nil)
				}
			}
		}
	}
	// Grid "fig3": ELBO, RMSE and time against M, with traces.
	for _, ds := range []string{"gp-sample", "gp-sample-2"} {
		for _, m := range []string{"sgpr", "vof"} {
			for _, M := range []int{10, 20, 40, 80} {
				for split := 0; split < 3; split++ {
					gap := 100 / float64(M)
					if m == "vof" {
						gap *= 1.5
					}
					elbo := -1000 - gap*10 + float64(split)
					rmse := 0.1 + gap/50 + 0.01*float64(split)
					secs := 0.01 * float64(M*M) * (1 + 0.1*float64(split))
					if m == "vof" {
						secs /= 4
					}
					var tr []results.TracePoint
					for it := 0; it <= 50; it += 5 {
						tr = append(tr, results.TracePoint{Iteration: it, Elapsed: secs * float64(it) / 50,
							Objective: elbo - 500*math.Exp(-float64(it)/10) - 3*float64(split)*math.Exp(-float64(it)/20)})
					}
					save(results.Run{Grid: "fig3", Method: m, Dataset: ds, Split: split, Profile: "full",
						Params: []results.Param{{Name: "num_inducing", Value: fmt.Sprint(M)}}},
						[]results.Metric{{Name: "elbo", Value: elbo}, {Name: "rmse", Value: rmse}, {Name: "train_seconds", Value: secs}}, tr)
				}
			}
		}
	}
	// Grid "sweep": RMSE over M × lengthscale, stored as "<paper>/<grid>".
	for _, m := range []string{"sgpr", "svgp"} {
		for _, M := range []int{8, 16, 32, 64} {
			for _, ls := range []string{"0.1", "0.3", "1", "3"} {
				var l float64
				fmt.Sscan(ls, &l)
				if m == "svgp" && M == 64 && ls == "3" {
					continue // a hole in the heatmap
				}
				v := 0.1 + 1/float64(M) + math.Abs(math.Log(l/0.3))*0.1
				save(results.Run{Grid: "demo/sweep", Method: m, Dataset: "gp-sample", Profile: "full",
					Params: []results.Param{{Name: "num_inducing", Value: fmt.Sprint(M)}, {Name: "lengthscale", Value: ls}}},
					[]results.Metric{{Name: "rmse", Value: v}}, nil)
			}
		}
	}
	return st
}

// ClaimFormConfig has declarative claims of every basic form (a mean, a
// ratio of medians, a difference with parameter filters, a grid stored as
// experiment/grid, a count, per-group reductions, a derived metric).
const ClaimFormConfig = `
name = "demo"
[[grid]]
name = "uci"
[[grid]]
name = "fig3"
[[grid]]
name = "sweep"

[[report.derive]]
name = "x_double_rmse"
query = "SELECT run_id, 2 * value FROM metrics WHERE name = 'rmse'"

[[claim]]
text = "mean"
metric = "rmse"
where = { grid = "uci", method = "sgpr", dataset = "concrete" }
expect = "> 0"

[[claim]]
text = "ratio of medians"
metric = "rmse"
aggregate = "median"
where = { grid = "uci", dataset = "energy" }
ratio = [{ method = "svgp" }, { method = "sgpr" }]
expect = "> 0"

[[claim]]
text = "difference, parameter filters, per-side metric"
where = { grid = "fig3", dataset = "gp-sample", method = "vof" }
difference = [{ metric = "elbo", num_inducing = 80 }, { metric = "elbo", num_inducing = [10, 20], aggregate = "max" }]
expect = "> 0"

[[claim]]
text = "grid stored as experiment/grid, float parameter"
metric = "rmse"
aggregate = "min"
where = { grid = "sweep", lengthscale = 0.3, num_inducing = 64 }
expect = "> 0"
kind = "sanity"

[[claim]]
text = "only finished runs count"
aggregate = "count"
where = { grid = "uci", method = "svgp", dataset = "yacht" }
expect = "= 0"

[[claim]]
text = "per-M means, smallest across M, over two parameter names"
metric = "elbo"
where = { grid = "fig3", dataset = "gp-sample", method = "vof" }
per = ["num_inducing", "lengthscale"]
across = "min"
expect = "< 0"

[[claim]]
text = "derived metric"
metric = "x_double_rmse"
where = { grid = "uci", method = "sgpr", dataset = "concrete", split = [0, 2] }
expect = "> 0"
`

// DeriveConfig derives metrics and parameters ([[report.derive]]) and draws
// them.
const DeriveConfig = `
name = "demo"
[[grid]]
name = "fig3"
[[grid]]
name = "sweep"

[[report.derive]]
name = "x_gap"
doc = "elbo minus 1000 times rmse"
query = "SELECT run_id, SUM(CASE metric WHEN 'elbo' THEN value ELSE -1000*value END) FROM run_metrics WHERE metric IN ('elbo', 'rmse') GROUP BY run_id"

[[report.derive]]
name = "x_time_norm"
query = """
SELECT run_id, value / MAX(value) OVER (PARTITION BY dataset)
FROM run_metrics WHERE metric = 'train_seconds'"""

[[report.derive]]
name = "log_m"
as = "param"
digits = 2
query = "SELECT run_id, num / 3.0 FROM run_params_v WHERE param = 'num_inducing'"

[[report.derive]]
name = "variant"
as = "param"
query = "SELECT id, method || '-' || dataset FROM runs"

[[figure]]
name = "fig-derived"
title = "derived gap against normalised time"
kind = "line"
grid = "fig3"
x = "metric:x_time_norm"
y = "metric:x_gap"
series = "method"
panels = "dataset"

[[figure]]
name = "heat-derived"
title = "rmse over a derived category"
kind = "heatmap"
grid = "sweep"
x = "param:log_m"
y = "param:lengthscale"
z = "metric:rmse"
`
