package report

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sgplab/internal/reporttest"
)

func TestParetoFront(t *testing.T) {
	for _, tc := range []struct {
		name string
		pts  []frontPoint
		want []string
	}{
		{"empty", nil, nil},
		{"one", []frontPoint{{1, 1, "a"}}, []string{"a"}},
		{"dominated", []frontPoint{{2, 2, "b"}, {1, 1, "a"}}, []string{"a"}},
		{"trade-off", []frontPoint{{3, 1, "c"}, {1, 3, "a"}, {2, 2, "b"}, {2.5, 2.5, "x"}}, []string{"a", "b", "c"}},
		{"tie in cost keeps the better", []frontPoint{{1, 2, "worse"}, {1, 1, "better"}, {2, 0.5, "slow"}}, []string{"better", "slow"}},
		{"tie in quality keeps the cheaper", []frontPoint{{2, 1, "slow"}, {1, 1, "fast"}}, []string{"fast"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, p := range paretoFront(tc.pts) {
				got = append(got, p.label)
			}
			if strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Errorf("front = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestParetoFrontBruteForce checks the sweep against the definition: a point
// is on the front iff no other point is at least as good in both and better
// in one.
func TestParetoFrontBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 1))
	for trial := 0; trial < 200; trial++ {
		pts := make([]frontPoint, 1+rng.IntN(30))
		for i := range pts {
			pts[i] = frontPoint{x: rng.Float64(), y: rng.Float64(), label: string(rune('A' + i))}
		}
		want := map[string]bool{}
		for _, p := range pts {
			dominated := false
			for _, q := range pts {
				if q.x <= p.x && q.y <= p.y && (q.x < p.x || q.y < p.y) {
					dominated = true
				}
			}
			if !dominated {
				want[p.label] = true
			}
		}
		front := paretoFront(pts)
		if len(front) != len(want) {
			t.Fatalf("trial %d: %d points on the front, want %d", trial, len(front), len(want))
		}
		for i, p := range front {
			if !want[p.label] {
				t.Fatalf("trial %d: %s is dominated", trial, p.label)
			}
			if i > 0 && !(p.x > front[i-1].x && p.y < front[i-1].y) {
				t.Fatalf("trial %d: front not a staircase at %d", trial, i)
			}
		}
	}
}

func TestJoinedDimension(t *testing.T) {
	r := &run{Method: "sgpr", Grid: "leaderboard/collapsed-small", Dataset: "yacht", Params: map[string]string{"num_inducing": "64"}}
	for dim, want := range map[string]string{
		"grid":                       "collapsed-small",
		"method+grid":                "sgpr · collapsed-small",
		"dataset+param:num_inducing": "yacht · 64",
	} {
		if got := dimValue(r, dim); got != want {
			t.Errorf("dimValue(%q) = %q, want %q", dim, got, want)
		}
	}
	if v, ok := dimPart("method+grid", "sgpr · collapsed-small", "method"); !ok || v != "sgpr" {
		t.Errorf("dimPart = %q, %v", v, ok)
	}
	if _, ok := dimPart("method+grid", "sgpr · collapsed-small", "dataset"); ok {
		t.Error("dimPart found a dataset in method+grid")
	}
	for _, bad := range []string{"method+metric", "method+bogus", "method+"} {
		if err := checkDim(bad, false); err == nil {
			t.Errorf("checkDim(%q) accepted", bad)
		}
	}
}

func TestLeaderboardSpecErrors(t *testing.T) {
	for _, tc := range []struct{ name, section, want string }{
		{"mean rank needs rank", `[[table]]
name = "t"
grid = "uci"
kind = "mean_rank"
rows = "method"
columns = "dataset"
metric = "rmse"`, "needs rank"},
		{"mean rank ranks rows", `[[table]]
name = "t"
grid = "uci"
kind = "mean_rank"
rows = "method"
columns = "dataset"
metric = "rmse"
rank = "lower"
rank_across = "columns"`, "rank_across"},
		{"unknown table kind", `[[table]]
name = "t"
grid = "uci"
kind = "podium"
rows = "method"
columns = "dataset"
metric = "rmse"`, "unknown table kind"},
		{"pareto needs metrics", `[[figure]]
name = "f"
grid = "uci"
kind = "pareto"
x = "param:num_inducing"
y = "metric:rmse"`, "pareto figure needs x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "name = \"p\"\n[[grid]]\nname = \"uci\"\n" + tc.section + "\n"
			_, err := Parse("p.toml", src)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

const leaderboardFixture = `
name = "demo"
[[grid]]
name = "uci"
[[grid]]
name = "fig3"

[[report.not_applicable]]
methods = ["vff"]
datasets = ["yacht"]
reason = "VFF is 1-D here"

[[table]]
name = "ranks"
kind = "mean_rank"
grid = "uci"
rows = "method"
columns = "dataset"
metric = "rmse"
rank = "lower"

[[figure]]
name = "front"
kind = "pareto"
grid = "fig3"
x = "metric:train_seconds"
y = "metric:rmse"
series = "method"
panels = "dataset"
logx = true
`

// TestMeanRankAndParetoRender renders the fixture's results: rmseOf puts
// vff < sgpr < svgp on concrete and energy; on yacht vff is not applicable
// and svgp failed, so one method is left and nothing is ranked there. The
// fig3 grid's means (sgpr: 0.011 M² s and RMSE 0.11 + 2/M; vof: a quarter
// of the time and 0.11 + 3/M) put vof at M = 10, 20, 40, 80 and then sgpr
// at M = 80 on the front.
func TestMeanRankAndParetoRender(t *testing.T) {
	spec, err := Parse("demo.toml", leaderboardFixture)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if _, err := Render(spec, reporttest.Store(t), out, Options{Formats: []string{"png"}}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(out, "ranks.md"))
	if err != nil {
		t.Fatal(err)
	}
	md := string(b)
	var rows []string
	for _, l := range strings.Split(md, "\n") {
		if strings.HasPrefix(l, "| ") && !strings.HasPrefix(l, "| method") {
			rows = append(rows, l)
		}
	}
	want := []string{
		"| vff | **1.0** | **1.0** | n/a [2] | **1.0** | 2 |",
		"| sgpr | 2.0 | 2.0 | — [3] | 2.0 | 2 |",
		"| svgp | 3.0 | 3.0 | — [1] | 3.0 | 2 |",
	}
	if strings.Join(rows, "\n") != strings.Join(want, "\n") {
		t.Errorf("mean-rank rows:\n%s\nwant:\n%s", strings.Join(rows, "\n"), strings.Join(want, "\n"))
	}
	if !strings.Contains(md, "[2] not applicable: VFF is 1-D here") {
		t.Errorf("no not-applicable footnote in\n%s", md)
	}
	idx, err := os.ReadFile(filepath.Join(out, "index.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, ds := range []string{"gp-sample", "gp-sample-2"} {
		line := "- Pareto front on " + ds + ": vof num_inducing=10 "
		if !strings.Contains(string(idx), line) {
			t.Fatalf("index.md lacks %q:\n%s", line, idx)
		}
	}
	i := strings.Index(string(idx), "- Pareto front on gp-sample:")
	front := strings.SplitN(string(idx)[i:], "\n", 2)[0]
	var labels []string
	for _, p := range strings.Split(strings.SplitN(front, ": ", 2)[1], " → ") {
		labels = append(labels, p[:strings.Index(p, " (")])
	}
	wantFront := "vof num_inducing=10,vof num_inducing=20,vof num_inducing=40,vof num_inducing=80,sgpr num_inducing=80"
	if strings.Join(labels, ",") != wantFront {
		t.Errorf("front = %v, want %s", labels, wantFront)
	}
	if st, err := os.Stat(filepath.Join(out, "front.png")); err != nil || st.Size() == 0 {
		t.Errorf("front.png: %v", err)
	}
}
