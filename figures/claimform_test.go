package figures

import (
	"math"
	"strings"
	"testing"
)

const claimFormConfig = `
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

func TestDeclarativeClaims(t *testing.T) {
	spec, err := ParseReport("claims.toml", claimFormConfig)
	if err != nil {
		t.Fatal(err)
	}
	st := fixtureStore(t)
	// Expected values recomputed from the fixture's formulas.
	mean3 := func(f func(int) float64) float64 { return (f(0) + f(1) + f(2)) / 3 }
	elbo := func(M, split int) float64 { return -1000 - 1.5*100/float64(M)*10 + float64(split) }
	want := []float64{
		mean3(func(s int) float64 { return rmseOf("sgpr", "concrete", s) }),
		rmseOf("svgp", "energy", 1) / rmseOf("sgpr", "energy", 1),
		mean3(func(s int) float64 { return elbo(80, s) }) - elbo(20, 2),
		0.1 + 1.0/64,
		0,
		mean3(func(s int) float64 { return elbo(10, s) }),
		(2*rmseOf("sgpr", "concrete", 0) + 2*rmseOf("sgpr", "concrete", 2)) / 2,
	}
	for i, c := range spec.Claims {
		r := evalClaim(c, st, "full", false)
		if r.Verdict != Reproduced {
			t.Errorf("claim %q: verdict %s (%s)\n%s", c.Text, r.Verdict, r.Detail, c.Query)
			continue
		}
		if math.Abs(r.Value-want[i]) > 1e-12*math.Max(1, math.Abs(want[i])) {
			t.Errorf("claim %q = %.15g, want %.15g\n%s", c.Text, r.Value, want[i], c.Query)
		}
	}
	if spec.Claims[3].Kind != "sanity" || spec.Claims[0].Kind != "reproduction" {
		t.Errorf("kinds %q, %q", spec.Claims[3].Kind, spec.Claims[0].Kind)
	}
	// The quick profile sees its own runs only (+100 on every RMSE).
	if r := evalClaim(spec.Claims[0], st, "quick", false); math.Abs(r.Value-want[0]-100) > 1e-9 {
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
		_, err := ParseReport("bad.toml", head+c.body)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want it to mention %q", c.body, err, c.want)
		}
	}
}
