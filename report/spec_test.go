package report

import (
	"strings"
	"testing"

	"sgplab/internal/reporttest"
)

func TestParseFixture(t *testing.T) {
	spec, err := Parse("demo.toml", reporttest.Config)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(spec.Tables); got != 2 {
		t.Fatalf("tables = %d, want 2", got)
	}
	tb := spec.Tables[0]
	if tb.Aggregate != "mean_std" || tb.RankAcross != "columns" || *tb.Digits != 3 || len(tb.Paper) != 2 || tb.Paper[0].Std == nil || tb.Paper[1].Std != nil {
		t.Errorf("table-1 decoded as %+v", tb)
	}
	if spec.Tables[1].Metrics[1] != "nlpd" || spec.Tables[1].filter["dataset"][0] != "concrete" {
		t.Errorf("table-2 decoded as %+v", spec.Tables[1])
	}
	if f := spec.Figures[4]; f.X != "iteration" || f.Y != "objective" || f.filter["param:num_inducing"][0] != "40" || f.Band != "std" {
		t.Errorf("trace figure defaults: %+v", f)
	}
	if spec.ProfileNotes["quick"] != "3 splits instead of 10." || strings.Join(spec.Grids, ",") != "uci,fig3,sweep" {
		t.Errorf("profiles %v grids %v", spec.ProfileNotes, spec.Grids)
	}
}

func TestParseErrors(t *testing.T) {
	head := "name = \"p\"\n[[grid]]\nname = \"g\"\n[grid.params]\nanything = 1\n\n"
	table := "[[table]]\nname = \"t\"\ngrid = \"g\"\nrows = \"dataset\"\ncolumns = \"method\"\nmetric = \"rmse\"\n"
	figure := "[[figure]]\nname = \"f\"\ngrid = \"g\"\nx = \"param:m\"\ny = \"metric:elbo\"\n"
	cases := []struct {
		name, src string
		want      []string // substrings of the error
	}{
		{"unknown table key", head + table + "metrc = \"x\"\n", []string{"p.toml:13:", `unknown key "metrc" in [[table]]`, "valid keys:", "metric"}},
		{"unknown key in second figure", head + figure + "kind = \"line\"\n" + strings.Replace(figure, `"f"`, `"f2"`, 1) + "kind = \"line\"\ncolour = 1\n",
			[]string{"p.toml:19:", `unknown key "colour" in [[figure]]`}},
		{"bad figure kind", head + figure + "kind = \"pie\"\n", []string{"p.toml:12:", `unknown figure kind "pie"`, "line, scatter, band, heatmap, trace"}},
		{"bad kind line of second figure", head + figure + "kind = \"line\"\n" + strings.Replace(figure, `"f"`, `"f2"`, 1) + "kind = \"pie\"\n", []string{"p.toml:18:", `"pie"`}},
		{"unknown paper key", head + table + "[[table.paper]]\nrow = \"a\"\ncolumn = \"b\"\nvlue = 1\n", []string{"p.toml:16:", `"vlue" in [[table.paper]]`}},
		{"unknown report key", head + "[report]\ntitel = \"x\"\n", []string{"p.toml:8:", `"titel" in [report]`}},
		{"unknown grid", head + strings.Replace(table, `grid = "g"`, `grid = "h"`, 1), []string{"p.toml:9:", `unknown grid "h"`, "grids in this file: g"}},
		{"unknown metric", head + strings.Replace(table, "rmse", "rmsee", 1), []string{"p.toml:12:", `unknown metric "rmsee"`}},
		{"bad dimension", head + strings.Replace(table, `rows = "dataset"`, `rows = "colour"`, 1), []string{"p.toml:10:", `unknown dimension "colour"`}},
		{"bad aggregate", head + table + "aggregate = \"avg\"\n", []string{"p.toml:13:", `unknown aggregate "avg"`, "mean_std"}},
		{"bad rank", head + table + "rank = \"best\"\n", []string{"p.toml:13:", `unknown rank "best"`}},
		{"duplicate names", head + table + strings.Replace(figure, `"f"`, `"t"`, 1) + "kind = \"line\"\n", []string{"p.toml:14:", `figure name "t" is already used by a table`}},
		{"bad band", head + figure + "kind = \"band\"\nband = \"3std\"\n", []string{"p.toml:13:", `unknown band "3std"`}},
		{"heatmap needs z", head + strings.Replace(figure, "metric:elbo", "param:ls", 1) + "kind = \"heatmap\"\n", []string{"p.toml:7:", "heatmap needs z"}},
		{"bad expect", head + "[[claim]]\ntext = \"c\"\nquery = \"SELECT 1\"\nexpect = \"about 3\"\n", []string{"p.toml:10:", `cannot read expect "about 3"`}},
		{"claim without query", head + "[[claim]]\ntext = \"c\"\nexpect = \"< 1\"\n", []string{"p.toml:7:", "needs a query"}},
		{"toml syntax", head + "[[table]\n", []string{"p.toml:", "delimiter"}},
		{"several metrics need a metric axis", head + strings.Replace(table, `metric = "rmse"`, `metrics = ["rmse", "nlpd"]`, 1), []string{"several metrics"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("p.toml", c.src)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

// The runner's sections are not this package's business: unknown keys
// there must not be reported here.
func TestParseIgnoresRunnerKeys(t *testing.T) {
	src := "name = \"p\"\nmystery = 1\n[profiles.quick]\nnote = \"n\"\n[profiles.quick.override]\nsplits = [0]\n[[grid]]\nname = \"g\"\nwhatever = 2\n"
	if _, err := Parse("p.toml", src); err != nil {
		t.Fatal(err)
	}
}

// TestClaimErrorsLocated: the problems claims.Check, claims.Compile and
// claims.CheckDerived find are reported at the line of their key, or of
// the [[claim]] / [[report.derive]] header when the key is not written.
func TestClaimErrorsLocated(t *testing.T) {
	head := "name = \"demo\"\n[[grid]]\nname = \"uci\"\n[[claim]]\ntext = \"x\"\nexpect = \"> 0\"\n" // [[claim]] on line 4
	for _, c := range []struct{ body, want string }{
		{"metric = \"rmse\"\nwhere = { split = \"a\" }", "bad.toml:4: filter split: want integers"},
		{"query = \"SELECT 1\"\nkind = \"check\"", "bad.toml:8: kind \"check\" is not one of"},
		{"query = \"SELECT 1\"\nruns_where = { status = \"done\" }", "bad.toml:8: filter status: claims see only the finished runs"},
		{"metric = \"rmse\"\nquery = \"SELECT 1\"", "bad.toml:8: give query (SQL) or the declarative keys"},
		{"query = \"SELECT 1\"\n[[report.derive]]\nname = \"x_a\"\ntransform = \"ln\"\nquery = \"q\"", "bad.toml:10: unknown transform \"ln\""},
		{"query = \"SELECT 1\"\n[[report.derive]]\nquery = \"q\"", "bad.toml:8: a derived value needs a name"},
	} {
		_, err := Parse("bad.toml", head+c.body)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want it to contain %q", c.body, err, c.want)
		}
	}
}

// TestFigureKindsRegistry: the kinds error messages list are exactly the
// kinds registered, each with a check and a build.
func TestFigureKindsRegistry(t *testing.T) {
	if len(figureKindNames) != len(figureKinds) {
		t.Errorf("%d names for %d kinds", len(figureKindNames), len(figureKinds))
	}
	for _, name := range figureKindNames {
		k, ok := figureKinds[name]
		if !ok || k.check == nil || k.build == nil {
			t.Errorf("kind %q: registered %v, check and build set: %v", name, ok, ok && k.check != nil && k.build != nil)
		}
	}
}
