package report

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sgplab/claims"
	"sgplab/internal/anyconv"
	"sgplab/internal/reporttest"
	"sgplab/results"
)

// staleFixture is the fixture store (the "current" config's runs) plus runs
// of the same grids left by an older version of the config: an SGPR on
// concrete with a far worse RMSE (which would flip the first claim and the
// table cell) and a method the config no longer has in grid fig3 (which
// would add a series to the figures). It returns the store and what the
// current config expands to, with one run that has not run yet.
func staleFixture(t *testing.T) (*results.Store, *Expected, Coverage) {
	t.Helper()
	st := reporttest.Store(t)
	_, rows, err := st.Query("SELECT id, profile, status FROM runs ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	exp := &Expected{Grids: []string{"uci", "fig3", "sweep"}, IDs: map[string][]string{}}
	want := Coverage{Profile: "full"}
	for _, r := range rows {
		p := profileName(anyconv.String(r[1]))
		exp.IDs[p] = append(exp.IDs[p], anyconv.String(r[0]))
		if p != "full" {
			continue
		}
		want.Expected++
		switch anyconv.String(r[2]) {
		case results.StatusDone:
			want.Done++
		case results.StatusFailed:
			want.Failed++
		default:
			want.Unfinished++
		}
	}
	exp.IDs["full"] = append(exp.IDs["full"], "not-run-yet")
	want.Expected++
	want.Missing++

	start := time.Date(2023, 1, 1, 0, 0, 0, 0, time.UTC)
	save := func(id string, r results.Run, ms []results.Metric, tr []results.TracePoint) {
		t.Helper()
		r.ID, r.Status, r.Started, r.Finished = id, results.StatusDone, start, start.Add(time.Second)
		if err := st.SaveRun(r, ms, tr); err != nil {
			t.Fatal(err)
		}
	}
	for split := range 3 {
		// Stored as "<paper>/<grid>", the other accepted spelling.
		save(fmt.Sprintf("old-uci-%d", split), results.Run{Grid: "demo/uci", Method: "sgpr", Dataset: "concrete", Split: split, Profile: "full",
			Params: []results.Param{{Name: "num_inducing", Value: "100"}, {Name: "kernel", Value: "se"}}},
			[]results.Metric{{Name: "rmse", Value: 50}, {Name: "nlpd", Value: 4}}, nil)
		want.Stale++
	}
	for _, M := range []int{10, 40} {
		save(fmt.Sprintf("old-fig3-%d", M), results.Run{Grid: "fig3", Method: "oldmethod", Dataset: "gp-sample", Profile: "full",
			Params: []results.Param{{Name: "num_inducing", Value: fmt.Sprint(M)}}},
			[]results.Metric{{Name: "elbo", Value: -1200}, {Name: "rmse", Value: 0.3}, {Name: "train_seconds", Value: 1}},
			[]results.TracePoint{{Iteration: 0, Objective: -2000}, {Iteration: 10, Objective: -1200}})
		want.Stale++
	}
	// A stale quick run is not counted in the full report.
	save("old-quick", results.Run{Grid: "uci", Method: "sgpr", Dataset: "energy", Profile: "quick"},
		[]results.Metric{{Name: "rmse", Value: 9}}, nil)
	return st, exp, want
}

func TestRenderUsesOnlyExpectedRuns(t *testing.T) {
	spec, err := Parse("demo.toml", reporttest.Config)
	if err != nil {
		t.Fatal(err)
	}
	st, exp, want := staleFixture(t)
	read := func(dir, name string) string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	claim := func(sum Summary) claims.Result {
		t.Helper()
		for _, c := range sum.Claims {
			if c.Text == "SGPR beats SVGP on concrete" {
				return c
			}
		}
		t.Fatal("claim missing")
		return claims.Result{}
	}

	// Without Expected, the stale runs leak in: this is what the test guards.
	mixed := t.TempDir()
	sum, err := Render(spec, st, mixed, Options{Formats: []string{"svg"}})
	if err != nil {
		t.Fatal(err)
	}
	if c := claim(sum); c.Verdict != claims.Differs {
		t.Fatalf("fixture does not exercise stale runs: claim %v (%g)", c.Verdict, c.Value)
	}
	if !strings.Contains(read(mixed, "fig-line.svg"), "oldmethod") {
		t.Fatal("fixture does not exercise stale runs: fig-line lacks oldmethod")
	}

	out := t.TempDir()
	sum, err = Render(spec, st, out, Options{Formats: []string{"svg"}, Expected: exp})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Runs == nil || *sum.Runs != want {
		t.Errorf("coverage = %+v, want %+v", sum.Runs, want)
	}
	if c := claim(sum); c.Verdict != claims.Reproduced || c.Value < 0.25-1e-12 || c.Value > 0.25+1e-12 {
		t.Errorf("claim = %v %g, want reproduced 0.25", c.Verdict, c.Value)
	}
	// Mean of the current concrete SGPR runs: rmseOf over splits 0, 1, 2.
	wantCell := fmt.Sprintf("%.3f", (reporttest.RMSE("sgpr", "concrete", 0)+reporttest.RMSE("sgpr", "concrete", 1)+reporttest.RMSE("sgpr", "concrete", 2))/3)
	var row string
	for _, l := range strings.Split(read(out, "table-1.md"), "\n") {
		if strings.HasPrefix(l, "| concrete") {
			row = l
		}
	}
	if !strings.Contains(row, wantCell) || strings.Contains(row, "50.0") {
		t.Errorf("table-1 concrete row %q, want SGPR mean %s and no stale value", row, wantCell)
	}
	for _, f := range []string{"fig-line.svg", "fig-trace.svg", "fig-scatter.svg"} {
		if strings.Contains(read(out, f), "oldmethod") {
			t.Errorf("%s draws the stale method", f)
		}
	}
	idx := read(out, "index.md")
	for _, s := range []string{
		fmt.Sprintf("exactly the %d run(s)", want.Expected),
		fmt.Sprintf("%d done, %d failed, 0 unfinished (interrupted or running), 1 not run yet", want.Done, want.Failed),
		"`sgplab run --profile full demo.toml` runs the missing",
		fmt.Sprintf("%d stale run(s)", want.Stale),
		"`sgplab results prune --profile full demo.toml`",
	} {
		if !strings.Contains(idx, s) {
			t.Errorf("index.md lacks %q", s)
		}
	}
	// The main database is untouched.
	_, rows, err := st.Query("SELECT COUNT(*) FROM runs WHERE id LIKE 'old-%'")
	if err != nil || anyconv.Int64(rows[0][0]) != 6 {
		t.Errorf("stale runs in the database after rendering: %v %v, want 6", rows, err)
	}
}

// With no runs at all, the report renders and says what to run.
func TestRenderExpectedOnEmptyDatabase(t *testing.T) {
	spec, err := Parse("demo.toml", reporttest.Config)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		open func(t *testing.T) *results.Store
	}{
		{"no file", func(t *testing.T) *results.Store {
			st, err := results.OpenEmpty(filepath.Join(t.TempDir(), "absent.db"))
			if err != nil {
				t.Fatal(err)
			}
			return st
		}},
		{"empty file", func(t *testing.T) *results.Store {
			st, err := results.Open(filepath.Join(t.TempDir(), "empty.db"))
			if err != nil {
				t.Fatal(err)
			}
			return st
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := tc.open(t)
			defer st.Close()
			exp := &Expected{Grids: []string{"uci"}, IDs: map[string][]string{"full": {"a", "b"}, "quick": {"c"}}}
			out := t.TempDir()
			sum, err := Render(spec, st, out, Options{Formats: []string{"svg"}, Expected: exp})
			if err != nil {
				t.Fatal(err)
			}
			if want := (Coverage{Profile: "full", Expected: 2, Missing: 2}); *sum.Runs != want {
				t.Errorf("coverage %+v, want %+v", *sum.Runs, want)
			}
			idx, err := os.ReadFile(filepath.Join(out, "index.md"))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(idx), "2 not run yet. `sgplab run --profile full demo.toml`") {
				t.Errorf("index.md does not say what to run:\n%s", idx)
			}
		})
	}
}

// The profile is picked among the current config's runs only: a stale
// finished full run does not make a quick-only report a full one.
func TestRenderExpectedPicksProfile(t *testing.T) {
	spec, st := fixtureSpecStore(t)
	now := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, r := range []results.Run{
		{ID: "stale-full", Grid: "uci", Method: "sgpr", Dataset: "concrete", Profile: "full"},
		{ID: "cur-quick", Grid: "uci", Method: "sgpr", Dataset: "concrete", Profile: "quick"},
	} {
		r.Status, r.Started, r.Finished = results.StatusDone, now, now
		if err := st.SaveRun(r, []results.Metric{{Name: "rmse", Value: 1}}, nil); err != nil {
			t.Fatal(err)
		}
	}
	exp := &Expected{Grids: []string{"uci"}, IDs: map[string][]string{"full": {"cur-full"}, "quick": {"cur-quick"}}}
	sum, err := Render(spec, st, t.TempDir(), Options{Formats: []string{"svg"}, Expected: exp})
	if err != nil {
		t.Fatal(err)
	}
	if want := (Coverage{Profile: "quick", Expected: 1, Done: 1}); *sum.Runs != want {
		t.Errorf("coverage %+v, want %+v", *sum.Runs, want)
	}
	if _, err := Render(spec, st, t.TempDir(), Options{Profile: "bogus", Expected: exp}); err == nil {
		t.Error("unknown profile accepted")
	}
}

// A quick profile that leaves a grid unchanged shares that grid's
// full-profile runs (runner: same ids, stored as profile "full"). Its report
// must judge claims and derived values on them, not find no data because
// their stored profile is not "quick".
func TestQuickReportUsesSharedFullRuns(t *testing.T) {
	spec, err := Parse("demo.toml", reporttest.Config)
	if err != nil {
		t.Fatal(err)
	}
	st, full, _ := staleFixture(t)
	exp := &Expected{Grids: full.Grids, IDs: map[string][]string{"quick": full.IDs["full"], "full": full.IDs["full"]}}
	sum, err := Render(spec, st, t.TempDir(), Options{Formats: []string{"svg"}, Profile: "quick", Expected: exp})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Profile != "quick" {
		t.Fatalf("reported profile %q, want quick", sum.Profile)
	}
	for _, c := range sum.Claims {
		if c.Text != "SGPR beats SVGP on concrete" {
			continue
		}
		if c.Verdict != claims.Reproduced || c.Value < 0.25-1e-12 || c.Value > 0.25+1e-12 {
			t.Errorf("claim on shared full runs = %v %g (%s), want reproduced 0.25", c.Verdict, c.Value, c.Detail)
		}
		return
	}
	t.Fatal("claim missing")
}

// A table cell whose dataset the reported reduced profile leaves out says
// so and names the full profile's command, rather than the quick command
// that would not run it; a cell the quick profile does run but that has no
// runs yet keeps pointing at the quick command.
func TestMissingCellOutsideProfile(t *testing.T) {
	spec, st := fixtureSpecStore(t)
	now := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	r := results.Run{ID: "q1", Grid: "uci", Method: "sgpr", Dataset: "concrete", Profile: "quick", Status: results.StatusDone, Started: now, Finished: now}
	if err := st.SaveRun(r, []results.Metric{{Name: "rmse", Value: 1}}, nil); err != nil {
		t.Fatal(err)
	}
	exp := &Expected{Grids: []string{"uci"},
		IDs:      map[string][]string{"quick": {"q1", "q2"}},
		Datasets: map[string]map[string][]string{"quick": {"uci": {"concrete"}}, "full": {"uci": {"concrete", "energy"}}}}
	dir := t.TempDir()
	if _, err := Render(spec, st, dir, Options{Profile: "quick", Formats: []string{"svg"}, Expected: exp}); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, "table-1.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"dataset energy is not in the quick profile (its note says why); the full profile runs it: `sgplab run demo.toml`",
		"no runs for dataset concrete, method svgp in grid uci",
	} {
		if !strings.Contains(string(md), want) {
			t.Errorf("table-1.md lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(string(md), "dataset energy, method sgpr in grid uci of") {
		t.Errorf("a full-only cell points at the quick command:\n%s", md)
	}
}

// fixtureSpecStore is the fixture config's report and an empty store.
func fixtureSpecStore(t *testing.T) (Spec, *results.Store) {
	t.Helper()
	return specStore(t, reporttest.Config)
}

// specStore is the report of the config cfg and an empty store.
func specStore(t *testing.T, cfg string) (Spec, *results.Store) {
	t.Helper()
	spec, err := Parse("demo.toml", cfg)
	if err != nil {
		t.Fatal(err)
	}
	st, err := results.Open(filepath.Join(t.TempDir(), "r.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return spec, st
}

// A table whose rows are grids names the grid a reduced profile leaves
// out (skipped, or run on fewer datasets) in the footnote of its empty
// cells, with the full profile's command, rather than the reduced
// profile's command that would never run it; a grid the profile runs but
// has not yet keeps pointing at the reduced profile's command.
func TestMissingCellOfGridOutsideProfile(t *testing.T) {
	const cfg = `
name = "demo"
title = "Demo"
[profiles.quick]
note = "fewer grids"
[[grid]]
name = "a"
[[grid]]
name = "b"
[[grid]]
name = "c"
[[table]]
name = "t"
title = "grids by dataset"
grids = ["a", "b", "c"]
rows = "grid"
columns = "dataset"
metric = "rmse"
row_order = ["a", "b", "c"]
[[table]]
name = "m"
title = "grids by metric"
grids = ["a", "b", "c"]
rows = "grid"
columns = "metric"
metrics = ["rmse", "nlpd"]
row_order = ["a", "b", "c"]
`
	spec, st := specStore(t, cfg)
	now := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	r := results.Run{ID: "q1", Grid: "demo/a", Method: "sgpr", Dataset: "energy", Profile: "quick", Status: results.StatusDone, Started: now, Finished: now}
	if err := st.SaveRun(r, []results.Metric{{Name: "rmse", Value: 1}, {Name: "nlpd", Value: 2}}, nil); err != nil {
		t.Fatal(err)
	}
	exp := &Expected{Grids: []string{"a", "b", "c"},
		IDs: map[string][]string{"quick": {"q1", "q2"}},
		Datasets: map[string]map[string][]string{
			"quick": {"a": {"energy"}, "c": {"energy"}}, // b skipped, a narrowed to energy
			"full":  {"a": {"energy", "yacht"}, "b": {"energy"}, "c": {"energy"}},
		}}
	dir := t.TempDir()
	if _, err := Render(spec, st, dir, Options{Profile: "quick", Formats: []string{"svg"}, Expected: exp}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		file          string
		want, notWant []string
	}{
		{"t.md",
			[]string{"grid b on dataset energy is not in the quick profile (its note says why); the full profile runs it: `sgplab run demo.toml`",
				"no runs for grid c, dataset energy in grid a, b, c"},
			[]string{"no runs for grid b", "yacht is not in"}},
		{"m.md",
			[]string{"grid b is not in the quick profile (its note says why); the full profile runs it: `sgplab run demo.toml`",
				"no runs for grid c, metric rmse"},
			[]string{"no runs for grid b"}},
	} {
		md, err := os.ReadFile(filepath.Join(dir, tc.file))
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range tc.want {
			if !strings.Contains(string(md), want) {
				t.Errorf("%s lacks %q:\n%s", tc.file, want, md)
			}
		}
		for _, bad := range tc.notWant {
			if strings.Contains(string(md), bad) {
				t.Errorf("%s has %q:\n%s", tc.file, bad, md)
			}
		}
	}
}
