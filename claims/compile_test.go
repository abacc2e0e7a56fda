package claims

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"

	"sgplab/internal/gridlang"
	"sgplab/internal/reporttest"
	"sgplab/results"
)

// config is the part of a paper config that claims read.
type config struct {
	Name   string `toml:"name"`
	Claims []Spec `toml:"claim"`
	Report struct {
		Derive []Derive `toml:"derive"`
	} `toml:"report"`
}

// parsed are a config's compiled claims and its derived values.
type parsed struct {
	Claims []Claim
	Derive []Derive
}

// parseClaims checks and compiles a config's claims as report.Parse does
// (which adds file:line to each problem), returning every problem found.
// Templates and matrices expand first, as for report.Parse.
func parseClaims(name, src string) (parsed, error) {
	var raw map[string]any
	md, err := toml.Decode(src, &raw)
	if err != nil {
		return parsed{}, fmt.Errorf("%s: %w", name, err)
	}
	lang, lerrs := gridlang.Expand(raw, md)
	if len(lerrs) > 0 {
		return parsed{}, fmt.Errorf("%s: %v", name, lerrs)
	}
	var c config
	if _, _, err := lang.Decode(&c, "name", "claim", "report"); err != nil {
		return parsed{}, fmt.Errorf("%s: %w", name, err)
	}
	var errs []error
	for _, e := range CheckDerived(c.Report.Derive) {
		errs = append(errs, fmt.Errorf("report.derive%s: %s", e.Key, e.Msg))
	}
	p := parsed{Derive: c.Report.Derive}
	for i := range c.Claims {
		for _, e := range c.Claims[i].Check() {
			errs = append(errs, fmt.Errorf("claim[%d]%s: %s", i, e.Key, e.Msg))
		}
		cl, fes := Compile(c.Claims[i], c.Name, c.Report.Derive)
		for _, e := range fes {
			errs = append(errs, fmt.Errorf("claim[%d]%s: %s", i, e.Key, e.Msg))
		}
		p.Claims = append(p.Claims, cl)
	}
	return p, errors.Join(errs...)
}

func TestDeclarativeClaims(t *testing.T) {
	spec, err := parseClaims("claims.toml", reporttest.ClaimFormConfig)
	if err != nil {
		t.Fatal(err)
	}
	st := reporttest.Store(t)
	// Expected values recomputed from the fixture's formulas.
	mean3 := func(f func(int) float64) float64 { return (f(0) + f(1) + f(2)) / 3 }
	elbo := func(M, split int) float64 { return -1000 - 1.5*100/float64(M)*10 + float64(split) }
	want := []float64{
		mean3(func(s int) float64 { return reporttest.RMSE("sgpr", "concrete", s) }),
		reporttest.RMSE("svgp", "energy", 1) / reporttest.RMSE("sgpr", "energy", 1),
		mean3(func(s int) float64 { return elbo(80, s) }) - elbo(20, 2),
		0.1 + 1.0/64,
		0,
		mean3(func(s int) float64 { return elbo(10, s) }),
		(2*reporttest.RMSE("sgpr", "concrete", 0) + 2*reporttest.RMSE("sgpr", "concrete", 2)) / 2,
	}
	for i, c := range spec.Claims {
		r := c.Eval(st, "full", false)
		if r.Verdict != Reproduced {
			t.Errorf("claim %q: verdict %s (%s)\n%s", c.Text, r.Verdict, r.Detail, c.SQL)
			continue
		}
		if math.Abs(r.Value-want[i]) > 1e-12*math.Max(1, math.Abs(want[i])) {
			t.Errorf("claim %q = %.15g, want %.15g\n%s", c.Text, r.Value, want[i], c.SQL)
		}
	}
	if spec.Claims[3].Kind != "sanity" || spec.Claims[0].Kind != "reproduction" {
		t.Errorf("kinds %q, %q", spec.Claims[3].Kind, spec.Claims[0].Kind)
	}
	// The quick profile sees its own runs only (+100 on every RMSE).
	if r := spec.Claims[0].Eval(st, "quick", false); math.Abs(r.Value-want[0]-100) > 1e-9 {
		t.Errorf("quick profile: %v, want %v", r.Value, want[0]+100)
	}
}

func TestDeclarativeClaimErrors(t *testing.T) {
	head := "name = \"demo\"\n[[grid]]\nname = \"uci\"\n[[claim]]\ntext = \"x\"\nexpect = \"> 0\"\n"
	cases := []struct{ body, want string }{
		{"metric = \"rmse\"\nquery = \"SELECT 1\"", "not both"},
		{"metric = \"rmse\"\nratio = [{ method = \"a\" }]", "two selections"},
		{"metric = \"rmse\"\naggregate = \"mode\"", "not one of"},
		{"where = { method = \"a\" }", "needs metric"},
		{"metric = \"rmse\"\nwhere = { status = \"failed\" }", "finished runs"},
		{"metric = \"rmse\"\nwhere = { split = \"a\" }", "integers"},
		{"metric = \"rmse\"\nratio = [{ method = \"a\" }, { method = \"b\" }]\ndifference = [{ method = \"a\" }, { method = \"b\" }]", "not both"},
		{"query = \"SELECT 1\"\nkind = \"check\"", "kind"},
		{"metric = \"rmse\"\nacross = \"min\"", "needs per"},
	}
	for _, c := range cases {
		_, err := parseClaims("bad.toml", head+c.body)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want it to mention %q", c.body, err, c.want)
		}
	}
}

// claimConstructsConfig exercises ranges, metric and derived-parameter
// filters, per over run columns with having and count, at_min/at_max,
// paired and nested comparisons, on the fixture and grid "pairs" below.
const claimConstructsConfig = `
name = "demo"
[[grid]]
name = "uci"
[[grid]]
name = "fig3"
[[grid]]
name = "sweep"
[[grid]]
name = "pairs"

[[report.derive]]
name = "x_double_rmse"
query = "SELECT run_id, 2 * value FROM metrics WHERE name = 'rmse'"
[[report.derive]]
name = "m_tenths"
as = "param"
digits = 2
query = "SELECT run_id, num / 10.0 + 1e-4 FROM run_params WHERE name = 'num_inducing'"

[[claim]]
text = "range on a parameter"
metric = "elbo"
aggregate = "min"
where = { grid = "fig3", method = "vof", dataset = "gp-sample", num_inducing = ">= 40" }
expect = "< 0"

[[claim]]
text = "closed range, count"
aggregate = "count"
where = { grid = "fig3", method = "vof", dataset = "gp-sample", num_inducing = "in [10, 20]" }
expect = "> 0"

[[claim]]
text = "value ± tolerance, and a list of ranges"
metric = "rmse"
where = { grid = "sweep", method = "sgpr", num_inducing = 64, lengthscale = ["= 0.3 ± 0.01", "≥ 0.5"] }
expect = "> 0"

[[claim]]
text = "range on split"
metric = "rmse"
where = { grid = "uci", method = "sgpr", dataset = "concrete", split = "< 2" }
expect = "> 0"

[[claim]]
text = "filter on a stored metric"
metric = "elbo"
aggregate = "min"
where = { grid = "fig3", method = "vof", dataset = "gp-sample", "metric:rmse" = "< 0.2" }
expect = "< 0"

[[claim]]
text = "filter on a derived metric"
metric = "rmse"
where = { grid = "uci", method = "sgpr", "metric:x_double_rmse" = "> 10" }
expect = "> 0"

[[claim]]
text = "derived parameter: a number matches to its digits"
metric = "elbo"
where = { grid = "fig3", method = "vof", dataset = "gp-sample", m_tenths = 4 }
expect = "< 0"

[[claim]]
text = "derived parameter: a range on its unrounded value"
aggregate = "count"
where = { grid = "fig3", method = "vof", dataset = "gp-sample", m_tenths = "< 2.5" }
expect = "> 0"

[[claim]]
text = "per run column, count of groups with having"
metric = "elbo"
aggregate = "max"
where = { grid = "fig3", dataset = "gp-sample" }
per = ["method"]
across = "count"
having = "> -1015"
expect = "= 1"

[[claim]]
text = "count of groups, none ran: no data"
metric = "elbo"
where = { grid = "fig3", dataset = "absent" }
per = ["method"]
across = "count"
expect = "= 0"

[[claim]]
text = "at the smallest per value (numeric order)"
metric = "rmse"
where = { grid = "sweep", method = "sgpr", lengthscale = 0.3 }
per = ["num_inducing"]
across = "at_min"
expect = "> 0"

[[claim]]
text = "at the largest per value"
metric = "rmse"
where = { grid = "sweep", method = "sgpr", lengthscale = 0.3 }
per = ["num_inducing"]
across = "at_max"
expect = "> 0"

[[claim]]
text = "paired difference within each M, median over M"
metric = "elbo"
where = { grid = "fig3", dataset = "gp-sample" }
per = ["num_inducing"]
paired = true
across = "median"
difference = [{ method = "vof" }, { method = "sgpr" }]
expect = "< 0"

[[claim]]
text = "paired ratio on differently named keys; unmatched groups drop out"
metric = "x_gap"
where = { grid = "pairs" }
paired = true
across = "max"
ratio = [{ method = "vff", per = ["frequencies"] }, { method = "iff", per = ["freqs_per_dim"] }]
expect = "> 0"

[[claim]]
text = "nested: a ratio of two differences"
metric = "rmse"
where = { grid = "uci", dataset = "concrete" }
ratio = [
  { difference = [{ method = "svgp" }, { method = "sgpr" }] },
  { difference = [{ method = "vff" }, { method = "sgpr" }] },
]
expect = "< 0"

[[claim]]
text = "a ratio of two counts is a fraction"
aggregate = "count"
where = { grid = "uci", dataset = "concrete" }
ratio = [{ method = "sgpr" }, {}]
expect = "in [0, 1]"

[[claim]]
text = "reach: fastest configuration within + 0.04 of the worse best mean RMSE, SGPR ÷ VOF"
metric = "train_seconds"
aggregate = "median"
per = ["num_inducing"]
reach = { metric = "rmse", plus = 0.04 }
where = { grid = "fig3", dataset = "gp-sample" }
ratio = [{ method = "sgpr" }, { method = "vof" }]
expect = "> 0"

[[claim]]
text = "reach: within 1.1 × the worse best"
metric = "train_seconds"
aggregate = "median"
per = ["num_inducing"]
reach = { metric = "rmse", times = 1.1 }
where = { grid = "fig3", dataset = "gp-sample" }
ratio = [{ method = "sgpr" }, { method = "vof" }]
expect = "> 0"

[[claim]]
text = "having filters the groups before the reduction"
metric = "elbo"
where = { grid = "fig3", method = "vof", dataset = "gp-sample" }
per = ["num_inducing"]
across = "min"
having = "> -1100"
expect = "< 0"

[[claim]]
text = "paired count with enough pairs: VFF ÷ IFF > 2 at 1 of the 2 matched F"
metric = "x_gap"
where = { grid = "pairs" }
paired = true
across = "count"
having = "> 2"
min_groups = 2
ratio = [{ method = "vff", per = ["frequencies"] }, { method = "iff", per = ["freqs_per_dim"] }]
expect = "= 1"

[[claim]]
text = "too few pairs: no data rather than a count of 1"
metric = "x_gap"
where = { grid = "pairs" }
paired = true
across = "count"
having = "> 2"
min_groups = 3
ratio = [{ method = "vff", per = ["frequencies"] }, { method = "iff", per = ["freqs_per_dim"] }]
expect = "= 1"

[[claim]]
text = "min_groups on the groups of one selection: 3 values of F for VFF"
metric = "x_gap"
where = { grid = "pairs", method = "vff" }
per = ["frequencies"]
across = "max"
min_groups = 3
expect = "> 0"
`

func TestDeclarativeClaimConstructs(t *testing.T) {
	spec, err := parseClaims("claims.toml", claimConstructsConfig)
	if err != nil {
		t.Fatal(err)
	}
	st := reporttest.Store(t)
	// Grid "pairs": IFF's gap 1/F at F = 2, 4; VFF's 1/F at F = 2 and 1 at
	// F = 4 and 8 (F = 8 has no IFF partner): ratios 1 and 4.
	gaps := []struct {
		method, key string
		f           int
		gap         float64
	}{{"iff", "freqs_per_dim", 2, 0.5}, {"iff", "freqs_per_dim", 4, 0.25},
		{"vff", "frequencies", 2, 0.5}, {"vff", "frequencies", 4, 1}, {"vff", "frequencies", 8, 100}}
	for i, g := range gaps {
		r := results.Run{ID: fmt.Sprintf("pair-%d", i), Grid: "pairs", Method: g.method, Dataset: "d", Profile: "full",
			Status: results.StatusDone, Params: []results.Param{{Name: g.key, Value: fmt.Sprint(g.f)}}}
		if err := st.SaveRun(r, []results.Metric{{Name: "x_gap", Value: g.gap}}, nil); err != nil {
			t.Fatal(err)
		}
	}
	elbo := func(method string, M, split int) float64 {
		gap := 100 / float64(M)
		if method == "vof" {
			gap *= 1.5
		}
		return -1000 - gap*10 + float64(split)
	}
	meanSplits := func(f func(int) float64) float64 { return (f(0) + f(1) + f(2)) / 3 }
	sweep := func(M int, l float64) float64 { return 0.1 + 1/float64(M) + math.Abs(math.Log(l/0.3))*0.1 }
	concrete := func(m string) float64 {
		return meanSplits(func(s int) float64 { return reporttest.RMSE(m, "concrete", s) })
	}
	want := []float64{
		elbo("vof", 40, 0), // smallest ELBO among M ≥ 40
		6,                  // M ∈ {10, 20} × 3 splits
		(sweep(64, 0.3) + sweep(64, 1) + sweep(64, 3)) / 3,
		(reporttest.RMSE("sgpr", "concrete", 0) + reporttest.RMSE("sgpr", "concrete", 1)) / 2,
		elbo("vof", 40, 0), // RMSE < 0.2 only at M = 40 and 80
		// 2·RMSE > 10 only on concrete, strictly: split 0 (2·5.0 = 10) drops out.
		(reporttest.RMSE("sgpr", "concrete", 1) + reporttest.RMSE("sgpr", "concrete", 2)) / 2,
		meanSplits(func(s int) float64 { return elbo("vof", 40, s) }),
		6, // M/10 ≤ 2: M ∈ {10, 20}
		1, // max ELBO per method: SGPR −1010.5 passes, VOF −1016.75 does not
		math.NaN(),
		sweep(8, 0.3), // numeric order: 8 before 16 (text order would pick 16)
		sweep(64, 0.3),
		// ELBO(VOF) − ELBO(SGPR) = −500/M at M = 10, 20, 40, 80.
		(-500.0/20 - 500.0/40) / 2,
		4,
		(concrete("svgp") - concrete("sgpr")) / (concrete("vff") - concrete("sgpr")),
		1.0 / 3,
		// Mean RMSE per M: SGPR 0.31, 0.21, 0.16, 0.135; VOF 0.41, 0.26, 0.185,
		// 0.1475. The worse best is VOF's 0.1475 (SGPR's 0.135 would give 1
		// and 4 below): level 0.1875 reaches SGPR M = 40 and VOF M = 40, level
		// 0.16225 SGPR M = 40 and VOF M = 80. Median time 0.011 M² (VOF ÷ 4).
		4,
		(0.01 * 1600 * 1.1) / (0.01 * 6400 * 1.1 / 4),
		meanSplits(func(s int) float64 { return elbo("vof", 20, s) }), // M = 10 (mean −1149) is dropped
		1,          // VFF ÷ IFF = 1 and 4 at F = 2 and 4; 2 pairs ≥ min_groups = 2
		math.NaN(), // 2 pairs < min_groups = 3
		100,        // VFF's gaps 0.5, 1, 100 at F = 2, 4, 8: 3 groups
	}
	if len(want) != len(spec.Claims) {
		t.Fatalf("%d claims, %d expected values", len(spec.Claims), len(want))
	}
	for i, c := range spec.Claims {
		r := c.Eval(st, "full", false)
		if math.IsNaN(want[i]) {
			if r.Verdict != NoData {
				t.Errorf("claim %q: verdict %s (%v), want no data\n%s", c.Text, r.Verdict, r.Value, c.SQL)
			}
			continue
		}
		if r.Verdict == NoData || r.Verdict == QueryError {
			t.Errorf("claim %q: verdict %s (%s)\n%s", c.Text, r.Verdict, r.Detail, c.SQL)
			continue
		}
		if math.Abs(r.Value-want[i]) > 1e-12*math.Max(1, math.Abs(want[i])) {
			t.Errorf("claim %q = %.15g, want %.15g\n%s", c.Text, r.Value, want[i], c.SQL)
		}
	}
}

func TestDeclarativeClaimConstructErrors(t *testing.T) {
	head := "name = \"demo\"\n[[grid]]\nname = \"uci\"\n" +
		"[[report.derive]]\nname = \"x_log_rmse\"\ntransform = \"log10\"\nquery = \"SELECT run_id, value FROM metrics WHERE name = 'rmse'\"\n" +
		"[[report.derive]]\nname = \"w\"\nas = \"param\"\nquery = \"SELECT run_id, num FROM run_params WHERE name = 'width'\"\n" +
		"[[claim]]\ntext = \"x\"\nexpect = \"> 0\"\n"
	cases := []struct{ body, want string }{
		{"metric = \"rmse\"\nwhere = { num_inducing = \"<= abc\" }", "filter num_inducing: cannot read range \"<= abc\""},
		{"metric = \"rmse\"\nwhere = { grid = \"<= 3\" }", "filter grid: want names"},
		{"metric = \"rmse\"\nwhere = { split = \"a\" }", "filter split: want integers or a range"},
		{"metric = \"rmse\"\nwhere = { \"metric:nlpd\" = \"low\" }", "filter metric:nlpd: want a range"},
		{"metric = \"rmse\"\nhaving = \"< 1\"", "having = \"< 1\" filters the groups of per"},
		{"metric = \"rmse\"\nper = [\"m\"]\nhaving = \"small\"", "having: cannot read expect"},
		{"metric = \"rmse\"\nper = [\"m\"]\nacross = \"first\"", "mean, median, min, max, sum, count, at_min, at_max"},
		{"metric = \"rmse\"\nper = [\"m\"]\npaired = true", "give ratio or difference"},
		{"metric = \"rmse\"\npaired = true\nratio = [{ per = [\"a\"] }, { per = [\"a\", \"b\"] }]", "as many on each (got 1 and 2)"},
		{"metric = \"rmse\"\npaired = true\nper = [\"a\"]\nratio = [{ ratio = [{}, {}] }, {}]", "selection 1: a paired or reach side is one selection"},
		{"metric = \"x_log_rmse\"", "transform = \"log10\""},
		{"metric = \"rmse\"\nwhere = { \"metric:x_log_rmse\" = \"> 0\" }", "transform = \"log10\""},
		{"metric = \"rmse\"\nper = [\"w\"]", "per: \"w\" is a derived parameter"},
		{"metric = \"rmse\"\nratio = [{ difference = [{}] }, {}]", "selection 1: ratio and difference take two selections"},
		{"metric = \"rmse\"\nratio = [{ ratio = 3 }, {}]", "ratio: want two selections"},
		{"metric = \"rmse\"\nratio = [{ paired = \"yes\" }, {}]", "paired must be true or false"},
		{"metric = \"t\"\nper = [\"m\"]\nreach = { metric = \"rmse\" }", "reach compares the two sides"},
		{"metric = \"t\"\nper = [\"m\"]\npaired = true\nratio = [{ across = \"min\" }, {}]", "selection 1: in a paired comparison across, having and min_groups belong to the pair"},
		{"metric = \"t\"\nper = [\"m\"]\npaired = true\nratio = [{ min_groups = 2 }, {}]", "selection 1: in a paired comparison across, having and min_groups belong"},
		{"metric = \"rmse\"\nmin_groups = 2", "min_groups = 2 counts the groups of per"},
		{"metric = \"rmse\"\nper = [\"m\"]\nmin_groups = -1", "min_groups = -1: want a positive number"},
		{"metric = \"rmse\"\nper = [\"m\"]\nratio = [{ min_groups = \"2\" }, {}]", "min_groups must be an integer"},
		{"metric = \"t\"\nper = [\"m\"]\nreach = { metric = \"rmse\", factor = 2 }\nratio = [{}, {}]", "reach: unknown key \"factor\"; valid: aggregate, metric, plus, times"},
		{"metric = \"t\"\nper = [\"m\"]\nreach = { plus = 1 }\nratio = [{}, {}]", "reach needs metric"},
		{"metric = \"t\"\nper = [\"m\"]\nreach = { metric = \"rmse\", times = -1 }\nratio = [{}, {}]", "times must be positive"},
		{"metric = \"t\"\nreach = { metric = \"rmse\" }\nratio = [{}, {}]", "reach compares groups (configurations): give per"},
		{"metric = \"t\"\nper = [\"m\"]\nacross = \"mean\"\nreach = { metric = \"rmse\" }\nratio = [{}, {}]", "across = \"mean\" must be min"},
		{"metric = \"t\"\nper = [\"m\"]\nratio = [{ reach = 3 }, {}]", "reach: want { metric"},
	}
	for _, c := range cases {
		_, err := parseClaims("bad.toml", head+c.body)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want it to mention %q", c.body, err, c.want)
		}
	}
}

// Every claim and derived value of the paper configs is valid SQL: on an
// empty database each claim has no data rather than a query error (a
// compiled claim's SQL is otherwise only run by a report).
func TestPaperConfigClaimsCompile(t *testing.T) {
	paths, err := filepath.Glob("../paper_configs/*.toml")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no paper configs: %v", err)
	}
	st, err := results.Open(filepath.Join(t.TempDir(), "empty.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, p := range paths {
		src, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		spec, err := parseClaims(p, string(src))
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range spec.Derive {
			if _, _, err := st.Query(scopedQuery(d.Query, "quick", false)); err != nil {
				t.Errorf("%s: derived %s: %v", filepath.Base(p), d.Name, err)
			}
		}
		for i, c := range spec.Claims {
			for _, profile := range []string{"quick", "full"} {
				if r := c.Eval(st, profile, false); r.Verdict == QueryError {
					t.Errorf("%s: claim %d (%s profile): %s\n%s", filepath.Base(p), i+1, profile, r.Detail, c.SQL)
				}
				if c.Runs == "" {
					continue
				}
				// The query of the claim's runs, which a report runs only on a judged claim.
				if _, _, err := st.Query(scopedQuery(ConvergenceQuery(c.Runs), profile, false)); err != nil {
					t.Errorf("%s: claim %d (%s profile), its runs: %v\n%s", filepath.Base(p), i+1, profile, err, c.Runs)
				}
			}
		}
	}
}
