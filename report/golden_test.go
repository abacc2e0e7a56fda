package report

import (
	"crypto/sha256"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"sgplab/internal/reporttest"
	"sgplab/internal/testhelp"
	"sgplab/results"
)

var updateGolden = flag.Bool("update", false, "rewrite testdata/golden from the reports rendered now")

// goldenCase is one report rendered on a fixture store.
type goldenCase struct {
	name, config string
	store        func(t *testing.T) (*results.Store, *Expected)
	opts         Options
}

func plainStore(build func(*testing.T) *results.Store) func(*testing.T) (*results.Store, *Expected) {
	return func(t *testing.T) (*results.Store, *Expected) { return build(t), nil }
}

var goldenCases = []goldenCase{
	{name: "fixture-full", config: reporttest.Config, store: plainStore(func(t *testing.T) *results.Store { return reporttest.Store(t) }), opts: Options{Profile: "full"}},
	{name: "fixture-quick", config: reporttest.Config, store: plainStore(func(t *testing.T) *results.Store { return reporttest.Store(t) }), opts: Options{Profile: "quick"}},
	{name: "verdicts", config: verdictsConfig, store: plainStore(func(t *testing.T) *results.Store {
		st := reporttest.Store(t)
		setConverged(t, st, "1", 1)
		setConverged(t, st, "grid = 'uci' AND method = 'sgpr' AND dataset = 'concrete' AND split = 1", 0)
		setConverged(t, st, "grid = 'fig3' AND method = 'vof' AND split = 2", 0)
		return st
	}), opts: Options{Profile: "full"}},
	{name: "claimform", config: reporttest.ClaimFormConfig, store: plainStore(func(t *testing.T) *results.Store { return reporttest.Store(t) })},
	{name: "derive", config: reporttest.DeriveConfig, store: plainStore(func(t *testing.T) *results.Store { return reporttest.Store(t) })},
	{name: "leaderboard", config: leaderboardFixture, store: plainStore(func(t *testing.T) *results.Store { return reporttest.Store(t) })},
	{name: "artifacts", config: artifactConfig, store: plainStore(artifactStore)},
	{name: "terms", config: termsConfig, store: plainStore(termsStore)},
	{name: "illustration", config: "name = \"p\"\n[[grid]]\nname = \"g\"\n[[figure]]\nname = \"figure-1\"\nkind = \"illustration\"\nillustration = \"iff-construction\"\n",
		store: plainStore(func(t *testing.T) *results.Store { return reporttest.Store(t) })},
	{name: "default", config: "name = \"sweep\"\n[[grid]]\nname = \"sweep\"\n", store: func(t *testing.T) (*results.Store, *Expected) {
		return sweepStore(t, sweepOpts{gpr: true, sizeMetric: true, converged: true, lengthscales: []string{"0.5", "2"}})
	}},
	{name: "stale", config: reporttest.Config, store: func(t *testing.T) (*results.Store, *Expected) {
		st, exp, _ := staleFixture(t)
		return st, exp
	}},
}

// TestGoldenReports renders every fixture report and compares its files
// with testdata/golden/CASE: text files (Markdown, CSV, LaTeX, SQL) byte
// for byte, figures by SHA-256. Figure bytes are pinned on amd64 only:
// other architectures fuse multiply-adds and move the last bits of
// coordinates. go test -run TestGoldenReports -update rewrites them.
func TestGoldenReports(t *testing.T) {
	for _, c := range goldenCases {
		t.Run(c.name, func(t *testing.T) {
			spec, err := Parse(c.name+".toml", c.config)
			if err != nil {
				t.Fatal(err)
			}
			st, exp := c.store(t)
			opts := c.opts
			opts.Expected = exp
			out := t.TempDir()
			if _, err := Render(spec, st, out, opts); err != nil {
				t.Fatal(err)
			}
			got := readReport(t, out, st.Path())
			dir := filepath.Join("testdata", "golden", c.name)
			if *updateGolden {
				writeGolden(t, dir, got)
				return
			}
			want := readReport(t, dir, "")
			for _, name := range sortedKeys(want) {
				if name == figuresSum && runtime.GOARCH != "amd64" {
					continue
				}
				if g, ok := got[name]; !ok {
					t.Errorf("%s: not written", name)
				} else if g != want[name] {
					n, gl, wl := testhelp.FirstDiff(g, want[name])
					t.Errorf("%s differs from %s at line %d:\n got: %s\nwant: %s", name, filepath.Join(dir, name), n, gl, wl)
				}
			}
			for name := range got {
				if _, ok := want[name]; !ok {
					t.Errorf("%s: written but not in %s", name, dir)
				}
			}
		})
	}
}

// unstableFigures are figures whose bytes vary from one rendering to the
// next, and why; the golden files only record that they were written.
var unstableFigures = map[string]string{
	"fig-field": "gonum's plotter.Contour draws its paths in the order of a map",
}

// figuresSum lists the figures' hashes in the format of sha256sum.
const figuresSum = "figures.sha256"

// readReport reads a report directory as name → content, with the figures
// replaced by their hashes (figuresSum) and the database path db (a
// temporary directory) by "$DB".
func readReport(t *testing.T, dir, db string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	var figs []string // sha256sum lines, in the order of the names
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		ext := filepath.Ext(e.Name())
		if why, ok := unstableFigures[strings.TrimSuffix(e.Name(), ext)]; ok && ext != ".md" {
			out[e.Name()+".unstable"] = why + "\n"
			continue
		}
		switch ext {
		case ".png", ".svg", ".pdf":
			figs = append(figs, fmt.Sprintf("%x  %s\n", sha256.Sum256(b), e.Name()))
		default:
			s := string(b)
			if db != "" {
				s = strings.ReplaceAll(s, db, "$DB")
			}
			out[e.Name()] = s
		}
	}
	if len(figs) > 0 {
		out[figuresSum] = strings.Join(figs, "")
	}
	return out
}

func writeGolden(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, s := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
