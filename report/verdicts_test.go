package report

import (
	"database/sql"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"sgplab/claims"
	"sgplab/internal/reporttest"
	"sgplab/results"
)

// verdictsConfig has claims of every way of knowing their runs: declarative
// (one selection, a ratio, a sanity check), raw SQL with runs_where or
// runs_query, and raw SQL that declares none.
const verdictsConfig = `
name = "demo"
[[grid]]
name = "uci"
[[grid]]
name = "fig3"
[[grid]]
name = "sweep"

[[claim]]
text = "declarative: SGPR on concrete"
metric = "rmse"
where = { grid = "uci", method = "sgpr", dataset = "concrete" }
expect = "> 0"

[[claim]]
text = "declarative ratio on energy"
metric = "rmse"
where = { grid = "uci", dataset = "energy" }
ratio = [{ method = "svgp" }, { method = "sgpr" }]
expect = "> 1"

[[claim]]
text = "raw, runs_where"
query = "SELECT AVG(value) FROM run_metrics WHERE dataset = 'concrete' AND metric = 'rmse'"
runs_where = { grid = "uci", dataset = "concrete" }
expect = "> 0"

[[claim]]
text = "raw, runs_query"
query = "SELECT AVG(value) FROM run_metrics WHERE dataset = 'energy' AND metric = 'rmse'"
runs_query = "SELECT id FROM runs WHERE grid = 'uci' AND dataset = 'energy'"
expect = "> 0"

[[claim]]
text = "raw, no runs declared"
query = "SELECT AVG(value) FROM run_metrics WHERE dataset = 'concrete' AND metric = 'rmse'"
expect = "> 0"

[[claim]]
kind = "sanity"
text = "sanity check on fig3"
metric = "elbo"
where = { grid = "fig3", method = "vof" }
expect = "< 0"
`

// Done full-profile runs of the fixture's grids: uci 3 datasets × 3
// methods × 3 splits less VFF on yacht (never run) and SVGP on yacht
// (failed) = 21; fig3 2 datasets × 2 methods × 4 M × 3 splits = 48; sweep
// 2 methods × 4 M × 4 lengthscales less one = 31.
const fixtureDoneFull = 21 + 48 + 31

// setConverged stores x_converged = value for every done run matching
// where (SQL on runs); value nil stores NULL (no training).
func setConverged(t *testing.T, st *results.Store, where string, value any) {
	t.Helper()
	db, err := sql.Open("sqlite3", st.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("INSERT OR REPLACE INTO metrics (run_id, name, value) SELECT id, 'x_converged', ? FROM runs WHERE status = 'done' AND "+where, value); err != nil {
		t.Fatal(err)
	}
}

// The verdict of each claim and the report's header as the convergence of
// the fixture's runs changes.
func TestClaimVerdictsFollowConvergence(t *testing.T) {
	// The one unconverged run of the "one unconverged" case.
	const sgprConcrete1 = "grid = 'uci' AND method = 'sgpr' AND dataset = 'concrete' AND split = 1 AND profile = 'full'"
	type want struct {
		verdict, detail   string
		runs, unconverged int
	}
	cases := []struct {
		name   string
		setup  func(*testing.T, *results.Store)
		claims []want
		header string
	}{{
		name:  "not recorded (a database from before x_converged)",
		setup: func(*testing.T, *results.Store) {},
		claims: []want{
			{claims.Reproduced, "convergence not recorded for 3 of its 3 runs", 3, 0},
			{claims.Reproduced, "convergence not recorded for 6 of its 6 runs", 6, 0},
			{claims.Reproduced, "convergence not recorded for 9 of its 9 runs", 9, 0},
			{claims.Reproduced, "convergence not recorded for 9 of its 9 runs", 9, 0},
			{claims.Reproduced, "convergence not checked", 0, 0},
			{claims.Reproduced, "convergence not recorded for 24 of its 24 runs", 24, 0},
		},
		header: fmt.Sprintf("**Verdicts.** Reproduction claims (counted): 5 of 5 reproduced, 0 differ, 0 inconclusive (runs not converged), 0 no data. "+
			"Not converged (x_converged = 0): 0 of the report's %d done runs, 0 of them read by counted claims. "+
			"Convergence is not recorded in this database", fixtureDoneFull),
	}, {
		name:  "all converged",
		setup: func(t *testing.T, st *results.Store) { setConverged(t, st, "1", 1) },
		claims: []want{
			{claims.Reproduced, "", 3, 0},
			{claims.Reproduced, "", 6, 0},
			{claims.Reproduced, "", 9, 0},
			{claims.Reproduced, "", 9, 0},
			{claims.Reproduced, "convergence not checked", 0, 0},
			{claims.Reproduced, "", 24, 0},
		},
		header: fmt.Sprintf("**Verdicts.** Reproduction claims (counted): 5 of 5 reproduced, 0 differ, 0 inconclusive (runs not converged), 0 no data. "+
			"Not converged (x_converged = 0): 0 of the report's %d done runs, 0 of them read by counted claims. "+
			"1 judged claim(s) (1 counted) are raw SQL that declare no runs", fixtureDoneFull),
	}, {
		name:  "no training (NULL) counts as converged",
		setup: func(t *testing.T, st *results.Store) { setConverged(t, st, "1", nil) },
		claims: []want{
			{claims.Reproduced, "", 3, 0},
			{claims.Reproduced, "", 6, 0},
			{claims.Reproduced, "", 9, 0},
			{claims.Reproduced, "", 9, 0},
			{claims.Reproduced, "convergence not checked", 0, 0},
			{claims.Reproduced, "", 24, 0},
		},
		header: fmt.Sprintf("Not converged (x_converged = 0): 0 of the report's %d done runs, 0 of them read by counted claims.", fixtureDoneFull),
	}, {
		name: "one unconverged run behind two counted claims",
		setup: func(t *testing.T, st *results.Store) {
			setConverged(t, st, "1", 1)
			setConverged(t, st, sgprConcrete1, 0)
		},
		claims: []want{
			{claims.Inconclusive, "1 of its 3 runs did not converge (the number alone: reproduced)", 3, 1},
			{claims.Reproduced, "", 6, 0},
			{claims.Inconclusive, "1 of its 9 runs did not converge (the number alone: reproduced)", 9, 1},
			{claims.Reproduced, "", 9, 0},
			{claims.Reproduced, "convergence not checked", 0, 0}, // reads the run too, but cannot know it
			{claims.Reproduced, "", 24, 0},
		},
		header: fmt.Sprintf("**Verdicts.** Reproduction claims (counted): 3 of 5 reproduced, 0 differ, 2 inconclusive (runs not converged), 0 no data. "+
			"Not converged (x_converged = 0): 1 of the report's %d done runs, 1 of them read by counted claims.", fixtureDoneFull),
	}, {
		name: "unconverged runs behind a sanity check only",
		setup: func(t *testing.T, st *results.Store) {
			setConverged(t, st, "1", 1)
			setConverged(t, st, "grid = 'fig3' AND method = 'vof' AND split = 0", 0)
		},
		claims: []want{
			{claims.Reproduced, "", 3, 0},
			{claims.Reproduced, "", 6, 0},
			{claims.Reproduced, "", 9, 0},
			{claims.Reproduced, "", 9, 0},
			{claims.Reproduced, "convergence not checked", 0, 0},
			{claims.Inconclusive, "8 of its 24 runs did not converge (the number alone: reproduced)", 24, 8},
		},
		header: fmt.Sprintf("**Verdicts.** Reproduction claims (counted): 5 of 5 reproduced, 0 differ, 0 inconclusive (runs not converged), 0 no data. "+
			"Not converged (x_converged = 0): 8 of the report's %d done runs, 0 of them read by counted claims.", fixtureDoneFull),
	}}
	spec, err := Parse("verdicts.toml", verdictsConfig)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := reporttest.Store(t)
			c.setup(t, st)
			out := t.TempDir()
			sum, err := Render(spec, st, out, Options{Formats: []string{"svg"}, Profile: "full"})
			if err != nil {
				t.Fatal(err)
			}
			if len(sum.Claims) != len(c.claims) {
				t.Fatalf("%d claims, want %d", len(sum.Claims), len(c.claims))
			}
			for i, w := range c.claims {
				r := sum.Claims[i]
				if r.Verdict != w.verdict || !strings.Contains(r.Detail, w.detail) || (w.detail == "" && r.Detail != "") ||
					r.Runs != w.runs || len(r.Unconverged) != w.unconverged {
					t.Errorf("claim %d (%s): %s (%s), %d runs, %d unconverged; want %s (%s), %d, %d",
						i+1, r.Text, r.Verdict, r.Detail, r.Runs, len(r.Unconverged), w.verdict, w.detail, w.runs, w.unconverged)
				}
				if r.Verdict == claims.Inconclusive && (r.Computed != claims.Reproduced || math.IsNaN(r.Value)) {
					t.Errorf("claim %d: inconclusive keeps its number and the verdict it alone gives: %v, %q", i+1, r.Value, r.Computed)
				}
			}
			idx := readFile(t, filepath.Join(out, "index.md"))
			if !strings.Contains(idx, c.header) {
				t.Errorf("index.md lacks\n%s\n---\n%s", c.header, idx)
			}
			sqlFile := readFile(t, filepath.Join(out, "claims.sql"))
			for i, r := range sum.Claims {
				marker := fmt.Sprintf("-- claim %d is inconclusive", i+1)
				if strings.Contains(sqlFile, marker) != (len(r.Unconverged) > 0) {
					t.Errorf("claims.sql: %q present = %v, want %v", marker, !(len(r.Unconverged) > 0), len(r.Unconverged) > 0)
				}
			}
		})
	}
}

// Nothing unconverged: claims.sql is the same whether or not the database
// records convergence, and so is index.md but for the header line and the
// notes of claims on runs without x_converged.
func TestVerdictOutputsUnchangedWhenConverged(t *testing.T) {
	spec, err := Parse("verdicts.toml", verdictsConfig)
	if err != nil {
		t.Fatal(err)
	}
	render := func(setup func(*results.Store)) (claimsSQL, index string) {
		st := reporttest.Store(t)
		setup(st)
		out := t.TempDir()
		if _, err := Render(spec, st, out, Options{Formats: []string{"svg"}, Profile: "full"}); err != nil {
			t.Fatal(err)
		}
		return readFile(t, filepath.Join(out, "claims.sql")), readFile(t, filepath.Join(out, "index.md"))
	}
	sqlOld, idxOld := render(func(*results.Store) {})
	sqlNew, idxNew := render(func(st *results.Store) { setConverged(t, st, "1", 1) })
	if sqlOld != sqlNew {
		t.Errorf("claims.sql differs:\n%s\n---\n%s", sqlOld, sqlNew)
	}
	note := regexp.MustCompile(`: convergence not recorded for \d+ of its \d+ runs`)
	if got, want := len(note.FindAllString(idxOld, -1)), 5; got != want {
		t.Errorf("%d claims note unrecorded convergence, want %d", got, want)
	}
	strip := func(s string) string {
		var keep []string
		for _, l := range strings.Split(s, "\n") {
			if !strings.HasPrefix(l, "**Verdicts.**") && !strings.HasPrefix(l, "Generated by") { // the database's path differs
				keep = append(keep, note.ReplaceAllString(l, ""))
			}
		}
		return strings.Join(keep, "\n")
	}
	if strip(idxOld) != strip(idxNew) {
		t.Errorf("index.md differs beyond the header line and the notes:\n%s\n---\n%s", strip(idxOld), strip(idxNew))
	}
}

func TestClaimRunsDeclarationErrors(t *testing.T) {
	head := "name = \"demo\"\n[[grid]]\nname = \"uci\"\n[[claim]]\ntext = \"x\"\nexpect = \"> 0\"\n"
	cases := []struct{ body, want string }{
		{"metric = \"rmse\"\nruns_where = { grid = \"uci\" }", "reads the runs of its selections"},
		{"query = \"SELECT 1\"\nruns_where = { grid = \"uci\" }\nruns_query = \"SELECT id FROM runs\"", "not both"},
		{"query = \"SELECT 1\"\nruns_where = { status = \"done\" }", "finished runs"},
		{"query = \"SELECT 1\"\nruns_where = {}", "runs_where is empty"},
	}
	for _, c := range cases {
		_, err := Parse("bad.toml", head+c.body)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "bad.toml:") {
			t.Errorf("%q: error %v, want file:line and %q", c.body, err, c.want)
		}
	}
}

// A runs_query that is not SQL is an error of the claim, not a silent pass.
func TestClaimRunsQueryError(t *testing.T) {
	spec, err := Parse("q.toml", "name = \"demo\"\n[[grid]]\nname = \"uci\"\n[[claim]]\ntext = \"x\"\nexpect = \"> 0\"\n"+
		"query = \"SELECT 1\"\nruns_query = \"SELECT nosuchcolumn FROM runs\"\n")
	if err != nil {
		t.Fatal(err)
	}
	r := spec.Claims[0].Eval(reporttest.Store(t), "full", false)
	if r.Verdict != claims.QueryError || !strings.Contains(r.Detail, "runs_query") {
		t.Errorf("verdict %s (%s), want a query error naming runs_query", r.Verdict, r.Detail)
	}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// setMetric stores name = value for every done run matching where (SQL on
// runs).
func setMetric(t *testing.T, st *results.Store, name, where string, value float64) {
	t.Helper()
	db, err := sql.Open("sqlite3", st.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("INSERT OR REPLACE INTO metrics (run_id, name, value) SELECT id, ?, ? FROM runs WHERE status = 'done' AND "+where, name, value); err != nil {
		t.Fatal(err)
	}
}

// TestIndexPeakRSS: index.md's header states the largest peak RSS of the
// report's done runs, the run it came from and how many runs record one;
// a database whose runs record none gets no such line.
func TestIndexPeakRSS(t *testing.T) {
	spec, err := Parse("verdicts.toml", verdictsConfig)
	if err != nil {
		t.Fatal(err)
	}
	render := func(st *results.Store) string {
		out := t.TempDir()
		if _, err := Render(spec, st, out, Options{Formats: []string{"svg"}, Profile: "full"}); err != nil {
			t.Fatal(err)
		}
		return readFile(t, filepath.Join(out, "index.md"))
	}
	st := reporttest.Store(t)
	if idx := render(st); strings.Contains(idx, "Peak memory") {
		t.Errorf("a database without %s states a peak:\n%s", claims.PeakRSSMetric, idx)
	}
	const biggest = "grid = 'uci' AND method = 'sgpr' AND dataset = 'concrete' AND split = 1 AND profile = 'full'"
	setMetric(t, st, claims.PeakRSSMetric, "grid = 'uci'", 100<<20)
	setMetric(t, st, claims.PeakRSSMetric, biggest, 3<<29)                               // 1.5 GiB
	setMetric(t, st, claims.PeakRSSMetric, "grid = 'uci' AND profile = 'quick'", 64<<30) // another profile's run
	_, rows, err := st.Query("SELECT id FROM runs WHERE " + biggest)
	if err != nil || len(rows) != 1 {
		t.Fatalf("the biggest run: %v %v", rows, err)
	}
	want := fmt.Sprintf("**Peak memory.** The largest peak RSS of a run (`x_peak_rss_bytes`) is 1536 MiB: run %s (sgpr on concrete). 21 of the report's %d done runs record it.",
		rows[0][0], fixtureDoneFull)
	if idx := render(st); !strings.Contains(idx, want) {
		t.Errorf("index.md lacks\n%s\n---\n%s", want, idx)
	}
}
