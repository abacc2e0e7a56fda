package runner

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

const recipeGrid = `
name = "t"
[[grid]]
name = "g"
methods = ["fake-recipe", "fake-mean"]
datasets = ["toy"]
`

// runsOf returns the runs of method in runs.
func runsOf(runs []*RunSpec, method string) []*RunSpec {
	var out []*RunSpec
	for _, r := range runs {
		if r.Method == method {
			out = append(out, r)
		}
	}
	return out
}

// TestDefaultBudget: a grid without iterations gives each method its
// declared budget and, unless the grid sets stop_tol, its stopping
// tolerance; a grid (or a method's table) that sets iterations runs
// exactly that many. Before, a grid without iterations was an error.
func TestDefaultBudget(t *testing.T) {
	for _, tc := range []struct {
		name, extra string
		wantIt      []int // fake-recipe's runs
		wantStop    float64
		wantMeanIt  int // fake-mean declares no recipe: DefaultRecipe
	}{
		{"defaults", "", []int{40}, 1e-4, 1000},
		{"grid stop_tol", "stop_tol = 1e-3\n", []int{40}, 1e-3, 1000},
		{"stop_tol off", "stop_tol = 0\n", []int{40}, 0, 1000},
		{"grid iterations", "iterations = 7\n", []int{7}, 0, 7},
		{"minibatch default", "batch_size = 10\n", []int{80}, 0, 1000},
		{"method iterations", "[grid.method.fake-recipe]\niterations = [3, 4]\n", []int{3, 4}, 0, 1000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runs, _, err := expand(t, recipeGrid+tc.extra, "")
			if err != nil {
				t.Fatal(err)
			}
			var its []int
			for _, r := range runsOf(runs, "fake-recipe") {
				its = append(its, r.Iterations)
				if r.StopTol != tc.wantStop {
					t.Errorf("stop_tol %v, want %v", r.StopTol, tc.wantStop)
				}
			}
			if len(its) != len(tc.wantIt) {
				t.Fatalf("iterations %v, want %v", its, tc.wantIt)
			}
			for i := range its {
				if its[i] != tc.wantIt[i] {
					t.Errorf("iterations %v, want %v", its, tc.wantIt)
				}
			}
			for _, r := range runsOf(runs, "fake-mean") {
				if r.Iterations != tc.wantMeanIt {
					t.Errorf("fake-mean: iterations %d, want %d", r.Iterations, tc.wantMeanIt)
				}
			}
		})
	}
}

// TestMethodFitKeys: [grid.method.NAME] may set fit settings for that
// method's runs alone (a list sweeps); an include's own settings win over
// the method's table. Before, they were refused as unknown parameters.
func TestMethodFitKeys(t *testing.T) {
	src := recipeGrid + `iterations = 5
optimizer = "lbfgs"
[grid.method.fake-recipe]
optimizer = "adam"
learning_rate = [0.1, 0.2]
batch_size = 4
iterations = 9
[[grid.include]]
method = "fake-recipe"
learning_rate = 0.3
iterations = 11
`
	runs, _, err := expand(t, src, "")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range runs {
		got = append(got, strings.Join([]string{r.Method, r.Optimizer, formatValue(r.LearningRate), formatValue(r.BatchSize), formatValue(r.Iterations)}, " "))
	}
	want := []string{
		"fake-recipe adam 0.1 4 9",
		"fake-recipe adam 0.2 4 9",
		"fake-mean lbfgs 0 0 5",
		"fake-recipe adam 0.3 4 11",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("runs:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestRecipeMark: a run whose recipe resolves differently under the
// method's declared defaults and its legacy ones carries the resolved
// recipe in its canonical spec (so in its id); a run the change does not
// touch keeps the canonical spec, hence the id, it had.
func TestRecipeMark(t *testing.T) {
	for _, tc := range []struct {
		name, grid string
		mark       string // substring of the mark; "" none
	}{
		{"default recipe", `iterations = 5`, "regression, full batch: optimizer=adam learning_rate=0.05 natgrad_step=1"},
		{"explicit lbfgs", "iterations = 5\noptimizer = \"lbfgs\"", ""},
		{"explicit adam and rate", "iterations = 5\noptimizer = \"adam\"\nlearning_rate = 0.01", ""},
		{"explicit adam, default rate changed", "iterations = 5\noptimizer = \"adam\"", "optimizer=adam learning_rate=0.05 natgrad_step=0"},
		{"explicit natgrad", "iterations = 5\noptimizer = \"adam\"\nlearning_rate = 0.01\n[grid.params]\nnatgrad_step = 0.5", ""},
		{"minibatch, explicit adam", "iterations = 5\nbatch_size = 10\noptimizer = \"adam\"\nlearning_rate = 0.01", ""},
		{"minibatch, default", "iterations = 5\nbatch_size = 10", "regression, minibatch: optimizer=adam learning_rate=0.01 natgrad_step=0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runs, _, err := expand(t, strings.Replace(recipeGrid, `"fake-recipe", "fake-mean"`, `"fake-recipe"`, 1)+tc.grid+"\n", "")
			if err != nil {
				t.Fatal(err)
			}
			if len(runs) != 1 {
				t.Fatalf("%d runs", len(runs))
			}
			canon := string(runs[0].Canonical())
			has := strings.Contains(canon, `"recipe"`)
			switch {
			case tc.mark == "" && has:
				t.Errorf("marked, want unchanged: %s", canon)
			case tc.mark != "" && !strings.Contains(canon, tc.mark):
				t.Errorf("canonical spec %s lacks %q", canon, tc.mark)
			}
		})
	}
}

// TestStoredRecipe: a run stores the fit settings its method resolved on
// the training set it got (fit.optimizer, fit.learning_rate,
// fit.natgrad_step), not the grid's empty ones; a batch_size of at least
// N is a full batch. Before, fit.optimizer = "" and fit.learning_rate = 0.
func TestStoredRecipe(t *testing.T) {
	for _, tc := range []struct {
		name, grid string
		want       map[string]string
	}{
		{"default", "iterations = 2", map[string]string{"fit.optimizer": "adam", "fit.learning_rate": "0.05", "fit.natgrad_step": "1"}},
		{"minibatch", "iterations = 2\nbatch_size = 5", map[string]string{"fit.optimizer": "adam", "fit.learning_rate": "0.01", "fit.natgrad_step": ""}},
		{"batch of N", "iterations = 2\nbatch_size = 50", map[string]string{"fit.optimizer": "adam", "fit.learning_rate": "0.05", "fit.natgrad_step": "1"}},
		{"lbfgs", "iterations = 2\noptimizer = \"lbfgs\"", map[string]string{"fit.optimizer": "lbfgs", "fit.learning_rate": "0", "fit.natgrad_step": ""}},
	} {
		{
			t.Run(tc.name, func(t *testing.T) {
				runs, _, err := expand(t, strings.Replace(recipeGrid, `"fake-recipe", "fake-mean"`, `"fake-recipe"`, 1)+tc.grid+"\n", "")
				if err != nil {
					t.Fatal(err)
				}
				r, st := newRunner(t, filepath.Join(t.TempDir(), "r.db"))
				if _, err := r.Run(context.Background(), runs); err != nil {
					t.Fatal(err)
				}
				for name, want := range tc.want {
					_, rows, err := st.Query("SELECT value FROM run_params WHERE name = ?", name)
					if err != nil {
						t.Fatal(err)
					}
					got := ""
					if len(rows) == 1 {
						got = rows[0][0].(string)
					}
					if got != want {
						t.Errorf("%s = %q, want %q", name, got, want)
					}
				}
			})
		}
	}
}

// TestSizeParamPrecedence: of num_inducing and the structure parameter it
// chooses (vff's frequencies), the one set more specifically for a method
// reaches it; the other is dropped, and a swept num_inducing that does not
// reach a method is a warning; at the same level both are an error at the
// key. Before, num_inducing was not vff's parameter: vff collapsed to one
// run per dataset without a word.
func TestSizeParamPrecedence(t *testing.T) {
	grid := `
name = "t"
[[grid]]
name = "g"
methods = ["sgpr", "vff", "gpr"]
datasets = ["toy"]
iterations = 1
[grid.params]
num_inducing = [8, 16]
`
	for _, tc := range []struct {
		name, extra string
		vff         []string // num_inducing / frequencies of vff's runs
		warn        []string
		err         string
	}{
		{"num_inducing reaches vff", "", []string{"8/", "16/"},
			[]string{"grid[0].params: the grid sweeps num_inducing, but method gpr follows none of them (num_inducing: it has no such parameter), so it runs once per dataset and split"}, ""},
		{"method table wins", "[grid.method.vff]\nfrequencies = 4\n", []string{"/4"},
			[]string{"method vff follows none of them (num_inducing: frequencies chooses it (grid[0].method.vff.frequencies))"}, ""},
		{"method table sets num_inducing", "[grid.method.vff]\nnum_inducing = 30\n", []string{"30/"},
			[]string{"method vff follows none of them (num_inducing: grid[0].method.vff.num_inducing sets it)"}, ""},
		{"each method its own size", "frequencies = [3, 4]\n", []string{"/3", "/4"}, nil, ""},
		{"both in the method's table", "[grid.method.vff]\nfrequencies = 4\nnum_inducing = 30\n", nil, nil,
			"grid[0].method.vff.num_inducing: num_inducing: method vff chooses frequencies from it; give num_inducing or frequencies, not both"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runs, warnings, err := expand(t, grid+tc.extra, "")
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range runsOf(runs, "vff") {
				got = append(got, formatOpt(r.Params["num_inducing"])+"/"+formatOpt(r.Params["frequencies"]))
			}
			if strings.Join(got, " ") != strings.Join(tc.vff, " ") {
				t.Errorf("vff runs %v, want %v", got, tc.vff)
			}
			for _, w := range tc.warn {
				found := false
				for _, g := range warnings {
					found = found || strings.Contains(g, w)
				}
				if !found {
					t.Errorf("no warning %q in %q", w, warnings)
				}
			}
		})
	}
}

func formatOpt(v any) string {
	if v == nil {
		return ""
	}
	return formatValue(v)
}

// TestSizeParamInInclude: an include inherits the grid's [params] at their
// level, so a method table's structure parameter still wins there (the
// leaderboard's odvff includes failed with "give num_inducing or
// frequencies" before layerRank read inherited keys as the grid's).
func TestSizeParamInInclude(t *testing.T) {
	src := `
name = "t"
[[grid]]
name = "g"
methods = ["sgpr", "vff"]
datasets = ["toy"]
iterations = 1
[grid.params]
num_inducing = 8
[grid.method.vff]
frequencies = 4
[[grid.include]]
method = "vff"
dataset = "toy2"
`
	runs, _, err := expand(t, src, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runsOf(runs, "vff") {
		if _, has := r.Params["num_inducing"]; has || r.Params["frequencies"] != 4 {
			t.Errorf("vff run on %s: %v", r.Dataset, r.Params)
		}
	}
}

// TestComparisonWarnings: a dry run warns when two methods compared on
// the same data (all grids of a config) share no kernel family or no
// likelihood, naming the families and methods once for all datasets that
// differ alike. Before, nothing was said.
func TestComparisonWarnings(t *testing.T) {
	head := "name = \"t\"\n"
	grid := func(methods, datasets, params string) string {
		return "[[grid]]\nname = \"g" + fmt.Sprint(len(methods)) + "\"\nmethods = [" + methods + "]\ndatasets = [" + datasets + "]\niterations = 1\n" + params
	}
	for _, tc := range []struct {
		name, src string
		want      string // "" no warning
	}{
		{"vff's Matérn against SE", head + grid(`"sgpr", "vff"`, `"toy", "toy2"`, ""),
			"test.toml: the methods compared on toy, toy2 differ in kernel family: matern52 (vff), se (sgpr)"},
		{"across grids", head + grid(`"sgpr"`, `"toy"`, "") + grid(`"vff", "bspline"`, `"toy"`, ""),
			"differ in kernel family: matern52 (bspline, vff), se (sgpr)"},
		{"like with like", head + grid(`"sgpr", "vff"`, `"toy"`, "[grid.params]\nkernel = \"matern52\"\n"), ""},
		{"a kernel sweep for both", head + grid(`"sgpr", "svgp"`, `"toy"`, "[grid.params]\nkernel = [\"se\", \"matern32\"]\n"), ""},
		{"spherical SE is SE", head + grid(`"sgpr", "vish"`, `"toy"`, ""), ""},
		{"likelihood", head + grid(`"sgpr", "svgp"`, `"toy"`, "[grid.method.svgp]\nlikelihood = \"bernoulli\"\n"),
			"differ in likelihood: bernoulli (svgp), gaussian (sgpr)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, warnings, err := expand(t, tc.src, "")
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, w := range warnings {
				if strings.Contains(w, "differ in") {
					got = append(got, w)
				}
			}
			switch {
			case tc.want == "" && len(got) > 0:
				t.Errorf("warnings %q, want none", got)
			case tc.want != "" && (len(got) != 1 || !strings.Contains(got[0], tc.want)):
				t.Errorf("warnings %q, want one with %q", got, tc.want)
			}
		})
	}
}

// TestWarmStartMark: svgp's default minibatch recipe starts warm, so such
// a run's canonical spec (its id) says so and the run stores the warm
// start it got (fit.warm_start_iterations, fit.warm_start_points); a run
// that sets warm_start_iterations has it in its parameters already, and
// a named optimiser has no default warm start.
func TestWarmStartMark(t *testing.T) {
	const grid = `
name = "t"
[[grid]]
name = "g"
methods = ["svgp"]
datasets = ["toy"]
iterations = 5
batch_size = 10
`
	for _, tc := range []struct {
		name, extra string
		marked      bool
		stored      string // fit.warm_start_iterations; "" absent
	}{
		{"default", "", true, "100"},
		{"asked", "[grid.params]\nwarm_start_iterations = 0\n", false, ""},
		{"named optimiser", "optimizer = \"adam\"\n", false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runs, _, err := expand(t, grid+tc.extra, "")
			if err != nil {
				t.Fatal(err)
			}
			if len(runs) != 1 {
				t.Fatalf("%d runs", len(runs))
			}
			canon := string(runs[0].Canonical())
			if got := strings.Contains(canon, "warm_start=100/2000"); got != tc.marked {
				t.Errorf("canonical spec %s: warm-start mark %v, want %v", canon, got, tc.marked)
			}
			stored := map[string]string{}
			for _, kv := range runs[0].FlatParams() {
				stored[kv[0]] = kv[1]
			}
			if stored["fit.warm_start_iterations"] != tc.stored {
				t.Errorf("fit.warm_start_iterations = %q, want %q", stored["fit.warm_start_iterations"], tc.stored)
			}
			if tc.stored != "" && stored["fit.warm_start_points"] != "2000" {
				t.Errorf("fit.warm_start_points = %q, want 2000", stored["fit.warm_start_points"])
			}
		})
	}
}
