package runner

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

const base = `
name = "t"
[[grid]]
name = "g"
methods = ["fake-mean"]
datasets = ["toy"]
splits = [0, 1, 2]
seeds = [0]
iterations = 5
[grid.params]
num_inducing = [10, 20]
`

func expand(t *testing.T, src string, profile string) ([]*RunSpec, []string, error) {
	t.Helper()
	f, err := Parse("test.toml", src)
	if err != nil {
		return nil, nil, err
	}
	return f.Expand(ExpandOptions{Profile: profile, ValidateDataset: fakeValidate})
}

func TestParseErrors(t *testing.T) {
	cases := []struct {
		name, src string
		want      []string // substrings of the error
	}{
		{"malformed", "name = \"t\"\n[[grid]\nname = 1\n", []string{"test.toml:3:", "TOML syntax"}},
		{"unknown top key", "colour = 1\n" + base, []string{"colour: unknown key", "valid top-level keys: name"}},
		{"unknown grid key", strings.Replace(base, "seeds = [0]", "seeds = [0]\nitertions = 3", 1), []string{"test.toml:9: grid[0].itertions: unknown key; valid keys:", "iterations"}},
		{"type error", strings.Replace(base, "splits = [0, 1, 2]", `splits = "all"`, 1), []string{"test.toml:7: grid[0].splits: want an integer"}},
		{"float split", strings.Replace(base, "splits = [0, 1, 2]", `splits = [0.5]`, 1), []string{"grid[0].splits: want an integer"}},
		{"empty grid", "name = \"t\"\n", []string{"empty: the file defines no [[grid]]"}},
		{"empty list", strings.Replace(base, "splits = [0, 1, 2]", "splits = []", 1), []string{"empty list"}},
		{"repeated value", strings.Replace(base, "splits = [0, 1, 2]", "splits = [0, 1, 0]", 1), []string{"value 0 is listed twice"}},
		{"duplicate grid", base + "[[grid]]\nname = \"g\"\n", []string{"test.toml:13: grid[1].name: grid name \"g\" already used"}},
		{"bad optimizer", strings.Replace(base, "iterations = 5", "iterations = 5\noptimizer = \"sgd\"", 1), []string{"\"sgd\" is not one of: lbfgs, adam"}},
		{"bad time limit", strings.Replace(base, "iterations = 5", "iterations = 5\ntime_limit = \"soon\"", 1), []string{"not a positive duration"}},
		{"unknown profile", base + "[profiles.fast]\nnote = \"x\"\n", []string{"unknown profile \"fast\"; valid profiles: quick, full"}},
		{"profile without note", base + "[profiles.quick.override]\nsplits = [0]\n", []string{"profiles.quick.note: missing"}},
		{"profile bad key", base + "[profiles.quick]\nnote=\"n\"\n[profiles.quick.override]\nname = \"x\"\n", []string{"profiles.quick.override.name: unknown key"}},
		{"no name", "[[grid]]\nname=\"g\"\nmethods=[\"fake-mean\"]\n", []string{"name: missing"}},
		{"skip not a boolean", base + "[profiles.quick]\nnote=\"n\"\n[profiles.quick.grids.g]\nskip = \"yes\"\n", []string{"profiles.quick.grids.g.skip: want true or false"}},
		{"jobs zero", base + "[profiles.quick]\nnote=\"n\"\njobs = 0\n", []string{"test.toml:14: profiles.quick.jobs: 0: want at least 1 run in flight"}},
		{"jobs list", base + "[profiles.quick]\nnote=\"n\"\njobs = [1, 2]\n", []string{"profiles.quick.jobs: want one number of runs in flight, not a list"}},
		{"jobs string", base + "[profiles.quick]\nnote=\"n\"\njobs = \"2\"\n", []string{"profiles.quick.jobs: want an integer"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("test.toml", c.src)
			if err == nil {
				t.Fatalf("no error")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestFiguresKeysIgnored(t *testing.T) {
	src := base + "[[table]]\nname = \"x\"\nwhatever = 3\n[[figure]]\nname = \"f\"\n"
	if _, err := Parse("test.toml", src); err != nil {
		t.Fatal(err)
	}
}

func TestExpandErrors(t *testing.T) {
	cases := []struct {
		name, src string
		want      []string
	}{
		{"unknown method", strings.Replace(base, `["fake-mean"]`, `["fake-mean", "sgpx"]`, 1), []string{"test.toml:5: grid[0].methods: unknown method \"sgpx\"; valid methods:", "fake-mean"}},
		{"unknown dataset", strings.Replace(base, `["toy"]`, `["toi"]`, 1), []string{"grid[0].datasets: dataset \"toi\": unknown dataset \"toi\"; valid names: toy, toy2"}},
		{"unknown param", base + "foo = 1\n", []string{"test.toml:12: grid[0].params.foo: no method of this grid (fake-mean) has this parameter; valid parameters: kernel, lengthscales, num_inducing"}},
		{"param type", strings.Replace(base, "[10, 20]", `[10, "many"]`, 1), []string{"grid[0].params.num_inducing: method fake-mean, parameter \"num_inducing\""}},
		{"param choice", base + "kernel = \"rbf\"\n", []string{"\"rbf\" is not one of: se, matern32"}},
		{"override of absent method", base + "[grid.method.fake-fail]\nx = 1\n", []string{"override for method \"fake-fail\", which is not in this grid's methods"}},
		{"override unknown param", base + "[grid.method.fake-mean]\nx = 1\n", []string{"grid[0].method.fake-mean.x: method fake-mean has no parameter \"x\""}},
		{"exclude unknown key", base + "[[grid.exclude]]\nnum_inducin = 10\n", []string{"grid[0].exclude[0].num_inducin: matches nothing"}},
		{"include duplicates", base + "[[grid.include]]\nsplit = 1\nnum_inducing = 20\n", []string{"duplicate run", "already produced by test.toml grid[0]"}},
		{"method fit key type", base + "[grid.method.fake-mean]\niterations = \"many\"\n", []string{"grid[0].method.fake-mean.iterations: want an integer or a list of integers"}},
		{"method optimizer", base + "[grid.method.fake-mean]\noptimizer = \"sgd\"\n", []string{`grid[0].method.fake-mean.optimizer: "sgd" is not one of: lbfgs, adam`}},
		{"method learning rate", base + "[grid.method.fake-mean]\nlearning_rate = [0.1, 0]\n", []string{"grid[0].method.fake-mean.learning_rate: must be > 0, got 0"}},
		{"method iterations", base + "[grid.method.fake-mean]\niterations = -2\n", []string{"grid[0].method.fake-mean.iterations: must be ≥ 0"}},
		{"method stop tol", base + "[grid.method.fake-mean]\nstop_tol = 1.5\n", []string{"grid[0].method.fake-mean.stop_tol: must be ≥ 0 and < 1"}},
		{"bad metric", strings.Replace(base, "iterations = 5", "iterations = 5\nmetrics = [\"rmse\", \"rsme\"]", 1), []string{"unknown metric \"rsme\""}},
		{"task unsupported", strings.Replace(base, "iterations = 5", "iterations = 5\ntask = \"classification\"", 1), []string{"does not support task \"classification\""}},
		{"missing profile", base, []string{"no profile \"quick\"; defined profiles: full"}},
		{"zero inducing", strings.Replace(base, "[10, 20]", "[10, 0]", 1), []string{`test.toml:11: grid[0].params.num_inducing: method fake-mean, parameter "num_inducing": 0 is out of range: want ≥ 1`}},
		{"negative inducing", strings.Replace(base, "[10, 20]", "-5", 1), []string{`parameter "num_inducing": -5 is out of range: want ≥ 1`}},
		{"empty param list", strings.Replace(base, "[10, 20]", "[]", 1), []string{"test.toml:11: grid[0].params.num_inducing: empty list"}},
		{"empty dataset list", base + "[grid.dataset]\nn = []\n", []string{"grid[0].dataset.n: empty list"}},
		{"negative batch", strings.Replace(base, "iterations = 5", "iterations = 5\nbatch_size = -1", 1), []string{"test.toml:10: grid[0].batch_size: must be ≥ 0 (0 is full batch), got -1"}},
		{"zero learning rate", strings.Replace(base, "iterations = 5", "iterations = 5\nlearning_rate = [0.1, 0]", 1), []string{"grid[0].learning_rate: must be > 0, got 0"}},
		{"negative learning rate", strings.Replace(base, "iterations = 5", "iterations = 5\nlearning_rate = -0.1", 1), []string{"must be > 0, got -0.1"}},
		{"negative grad tol", strings.Replace(base, "iterations = 5", "iterations = 5\ngrad_tol = -1e-3", 1), []string{"grid[0].grad_tol: must be ≥ 0"}},
		{"negative split", strings.Replace(base, "[0, 1, 2]", "[0, -1]", 1), []string{"grid[0].splits: must be ≥ 0, got -1"}},
		{"missing z_file", base + "[grid.method.fake-mean]\nz_file = \"/nonexistent/z.csv\"\n", []string{"z_file"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			profile := ""
			if c.name == "missing profile" {
				profile = "quick"
			}
			_, _, err := expand(t, c.src, profile)
			if err == nil {
				t.Fatalf("no error")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

// TestProfileWithoutChangesSharesRuns: a profile that changes nothing in a
// grid does not fork that grid's runs (same ids, stored as full), while a
// grid it does change gets its own runs.
func TestProfileWithoutChangesSharesRuns(t *testing.T) {
	src := base + "[[grid]]\nname = \"h\"\nmethods = [\"fake-mean\"]\ndatasets = [\"toy\"]\niterations = 3\n" +
		"[profiles.quick]\nnote = \"grid h: 1 iteration\"\n[profiles.quick.grids.h]\niterations = 1\n"
	full, _, err := expand(t, src, "full")
	if err != nil {
		t.Fatal(err)
	}
	quick, _, err := expand(t, src, "quick")
	if err != nil {
		t.Fatal(err)
	}
	if len(full) != len(quick) {
		t.Fatalf("%d full runs, %d quick", len(full), len(quick))
	}
	for i := range full {
		same := full[i].ID == quick[i].ID
		switch {
		case full[i].Grid == "g" && (!same || quick[i].Profile != FullProfile):
			t.Errorf("grid g (unchanged by quick): quick run %s profile %s, full run %s", quick[i].ID, quick[i].Profile, full[i].ID)
		case full[i].Grid == "h" && (same || quick[i].Profile != QuickProfile):
			t.Errorf("grid h (changed by quick): quick run %s profile %s shares full's id %s", quick[i].ID, quick[i].Profile, full[i].ID)
		}
	}
	noop, _, err := expand(t, base+"[profiles.quick]\nnote = \"same as full\"\njobs = 2\n", "quick")
	if err != nil {
		t.Fatal(err)
	}
	fullBase, _, _ := expand(t, base, "")
	for i := range noop {
		if noop[i].ID != fullBase[i].ID {
			t.Errorf("a profile with only a note and jobs forks run %s into %s", fullBase[i].ID, noop[i].ID)
		}
	}
}

func TestCheckRunReceivesEveryCombination(t *testing.T) {
	f, err := Parse("test.toml", base+"[grid.dataset]\nprotocol = [\"a\", \"b\"]\n")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	_, _, err = f.Expand(ExpandOptions{ValidateDataset: func(string, map[string]any) error { return nil },
		CheckRun: func(name string, params map[string]any, protocol, scaling string, splits []int) error {
			got = append(got, fmt.Sprintf("%s %s %v %d", name, protocol, splits, len(params)))
			if protocol == "b" {
				return fmt.Errorf("protocol b has no test set")
			}
			return nil
		}})
	if want := []string{"toy a [0 1 2] 0", "toy b [0 1 2] 0"}; !slices.Equal(got, want) {
		t.Errorf("CheckRun calls %q, want %q", got, want)
	}
	if err == nil || !strings.Contains(err.Error(), "test.toml:6: grid[0].datasets: dataset \"toy\": protocol b has no test set") {
		t.Errorf("error %v does not name the grid line and the CheckRun error", err)
	}
}

func TestExpand(t *testing.T) {
	cases := []struct {
		name     string
		src      string
		profile  string
		n        int
		warnings int
		check    func(t *testing.T, runs []*RunSpec)
	}{
		{name: "product", src: base, n: 6},
		{name: "exclude", src: base + "[[grid.exclude]]\nsplit = [0, 2]\nnum_inducing = 20\n", n: 4, check: func(t *testing.T, runs []*RunSpec) {
			for _, r := range runs {
				if r.Split != 1 && r.Params["num_inducing"] == 20 {
					t.Errorf("excluded run kept: %s", r.Label())
				}
			}
		}},
		{name: "exclude by method", src: strings.Replace(base, `["fake-mean"]`, `["fake-mean", "fake-fail"]`, 1) + "[[grid.exclude]]\nmethod = \"fake-fail\"\nsplit = 0\n", n: 8, warnings: 1}, // fake-fail follows no sweep
		{name: "include by method", src: strings.Replace(base, `["fake-mean"]`, `["fake-mean", "fake-fail"]`, 1) + "[[grid.include]]\nmethod = \"fake-mean\"\nnum_inducing = 7\nseed = 3\n", n: 12, warnings: 1},
		{name: "exclude matching nothing warns", src: base + "[[grid.exclude]]\nsplit = 9\n", n: 6, warnings: 1},
		{name: "include", src: base + "[[grid.include]]\nsplit = 7\nnum_inducing = 99\ndataset = \"toy2\"\nn = 5\n", n: 7, check: func(t *testing.T, runs []*RunSpec) {
			r := runs[6]
			if r.Split != 7 || r.Params["num_inducing"] != 99 || r.Dataset != "toy2" || r.DatasetParams["n"] != int64(5) {
				t.Errorf("include run wrong: %+v", r)
			}
		}},
		{name: "two methods, inapplicable params dropped", src: strings.Replace(base, `["fake-mean"]`, `["fake-mean", "fake-fail"]`, 1), n: 9, warnings: 1},
		{name: "list-valued param is one value", src: base + "lengthscales = [1.0, 2.0]\n", n: 6, check: func(t *testing.T, runs []*RunSpec) {
			if got := runs[0].Params["lengthscales"].([]float64); len(got) != 2 {
				t.Errorf("lengthscales = %v", got)
			}
		}},
		{name: "list of lists sweeps", src: base + "lengthscales = [[1.0], [2.0, 3]]\n", n: 12},
		{name: "per-method override", src: base + "[grid.method.fake-mean]\nnum_inducing = 50\n", n: 3, warnings: 1},
		{name: "quick profile", profile: "quick", src: base + "[profiles.quick]\nnote = \"2 splits\"\n[profiles.quick.override]\nsplits = [0, 1]\niterations = 1\n[profiles.quick.override.params]\nnum_inducing = 5\n", n: 2,
			check: func(t *testing.T, runs []*RunSpec) {
				for _, r := range runs {
					if r.Profile != "quick" || r.Iterations != 1 || r.Params["num_inducing"] != 5 {
						t.Errorf("profile not applied: %+v", r)
					}
				}
			}},
		{name: "quick profile skips a grid", profile: "quick", src: base + "[[grid]]\nname = \"big\"\nmethods = [\"fake-mean\"]\ndatasets = [\"toy\"]\nsplits = [0]\niterations = 1\n" +
			"[profiles.quick]\nnote = \"grid big not run\"\n[profiles.quick.grids.big]\nskip = true\n", n: 6,
			check: func(t *testing.T, runs []*RunSpec) {
				for _, r := range runs {
					if r.Grid == "big" {
						t.Errorf("skipped grid ran: %s", r.Label())
					}
				}
			}},
		{name: "skipped only in its profile", src: base + "[[grid]]\nname = \"big\"\nmethods = [\"fake-mean\"]\ndatasets = [\"toy\"]\nsplits = [0]\niterations = 1\n" +
			"[profiles.quick]\nnote = \"grid big not run\"\n[profiles.quick.grids.big]\nskip = true\n", n: 7},
		{name: "quick profile drops the includes", profile: "quick", src: base + "[[grid.include]]\nsplit = 7\n" +
			"[profiles.quick]\nnote = \"no added runs\"\n[profiles.quick.grids.g]\ninclude = []\n", n: 6,
			check: func(t *testing.T, runs []*RunSpec) {
				for _, r := range runs {
					if r.Split == 7 {
						t.Errorf("include dropped by the profile ran: %s", r.Label())
					}
				}
			}},
		{name: "quick profile replaces the includes", profile: "quick", src: base + "[[grid.include]]\nsplit = 7\n" +
			"[profiles.quick]\nnote = \"other added runs\"\n[[profiles.quick.grids.g.include]]\nsplit = 8\n", n: 8,
			check: func(t *testing.T, runs []*RunSpec) {
				for _, r := range runs[6:] {
					if r.Split != 8 {
						t.Errorf("added run has split %d, want the profile's 8", r.Split)
					}
				}
			}},
		{name: "includes kept where the profile leaves them", profile: "quick", src: base + "[[grid.include]]\nsplit = 7\n" +
			"[profiles.quick]\nnote = \"1 iteration\"\n[profiles.quick.grids.g]\niterations = 1\n", n: 8},
		{name: "include narrowed to a method without a grid parameter", src: strings.Replace(base, `["fake-mean"]`, `["fake-mean", "fake-fail"]`, 1) +
			"[[grid.include]]\nmethod = \"fake-fail\"\nsplit = 9\n", n: 10, warnings: 1},
		{name: "dataset params expand", src: base + "[grid.dataset]\nn = [10, 20]\n", n: 12},
		{name: "defaults filled", src: base, n: 6, check: func(t *testing.T, runs []*RunSpec) {
			if runs[0].Params["kernel"] != "se" {
				t.Errorf("default kernel not filled: %v", runs[0].Params)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			runs, warns, err := expand(t, c.src, c.profile)
			if err != nil {
				t.Fatal(err)
			}
			if len(runs) != c.n {
				t.Fatalf("%d runs, want %d", len(runs), c.n)
			}
			if len(warns) != c.warnings {
				t.Errorf("warnings %q, want %d", warns, c.warnings)
			}
			ids := map[string]bool{}
			for _, r := range runs {
				if ids[r.ID] {
					t.Errorf("duplicate id %s", r.ID)
				}
				ids[r.ID] = true
			}
			if c.check != nil {
				c.check(t, runs)
			}
		})
	}
}

func TestRunIDCanonical(t *testing.T) {
	// The same grid written differently (key order, int vs float for a
	// Float parameter, explicit default) gives the same ids.
	a := base
	b := `
name = "t"
[[grid]]
iterations = 5
seeds = 0
name = "g"
datasets = "toy"
methods = "fake-mean"
splits = [0, 1, 2]
[grid.params]
kernel = "se"
num_inducing = [10, 20]
`
	ra, _, err := expand(t, a, "")
	if err != nil {
		t.Fatal(err)
	}
	rb, _, err := expand(t, b, "")
	if err != nil {
		t.Fatal(err)
	}
	for i := range ra {
		if ra[i].ID != rb[i].ID {
			t.Errorf("run %d: ids differ %s vs %s\n%s\n%s", i, ra[i].ID, rb[i].ID, ra[i].Canonical(), rb[i].Canonical())
		}
		if len(ra[i].ID) != 16 {
			t.Errorf("id %q is not 16 hex digits", ra[i].ID)
		}
	}
	want := `{"dataset":"toy","experiment":"t","fit":{"batch_size":0,"grad_tol":0,"iterations":5,"learning_rate":0,"optimizer":""},"grid":"g","method":"fake-mean","params":{"kernel":"se","num_inducing":10},"profile":"full","seed":0,"split":0}`
	if got := string(ra[0].Canonical()); got != want {
		t.Errorf("canonical spec\n got %s\nwant %s", got, want)
	}
	// A change that matters changes the id.
	rc, _, _ := expand(t, strings.Replace(a, "iterations = 5", "iterations = 6", 1), "")
	if rc[0].ID == ra[0].ID {
		t.Error("id did not change with iterations")
	}
}

func TestShard(t *testing.T) {
	runs, _, err := expand(t, base, "")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for i := 0; i < 4; i++ {
		s, err := Shard(runs, i, 4)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range s {
			seen[r.ID]++
		}
	}
	if len(seen) != len(runs) {
		t.Errorf("shards cover %d of %d runs", len(seen), len(runs))
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("run %s in %d shards", id, n)
		}
	}
	for _, bad := range []string{"4/4", "-1/2", "1", "a/b", "1/0", "01/2"} {
		if _, _, err := ParseShard(bad); err == nil {
			t.Errorf("ParseShard(%q) accepted", bad)
		}
	}
	if i, n, err := ParseShard("2/5"); err != nil || i != 2 || n != 5 {
		t.Errorf("ParseShard(2/5) = %d, %d, %v", i, n, err)
	}
}

// TestProfileJobs: a profile's jobs is read (the command line's default
// number of runs in flight) and a profile without it leaves 0.
func TestProfileJobs(t *testing.T) {
	for _, c := range []struct {
		src  string
		want int
	}{
		{base + "[profiles.quick]\nnote = \"n\"\njobs = 2\n", 2},
		{base + "[profiles.quick]\nnote = \"n\"\n", 0},
	} {
		f, err := Parse("test.toml", c.src)
		if err != nil {
			t.Fatal(err)
		}
		p, err := f.Profile(QuickProfile)
		if err != nil {
			t.Fatal(err)
		}
		if p.Jobs != c.want {
			t.Errorf("jobs %d, want %d", p.Jobs, c.want)
		}
	}
}
