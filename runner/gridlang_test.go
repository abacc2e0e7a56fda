package runner

import (
	"strings"
	"testing"
)

// runIDs expands src under profile and returns its runs' ids and grids in
// order.
func runIDs(t *testing.T, src, profile string) []string {
	t.Helper()
	runs, _, err := expand(t, src, profile)
	if err != nil {
		t.Fatalf("%v\n%s", err, src)
	}
	out := make([]string, len(runs))
	for i, r := range runs {
		out[i] = r.Grid + " " + r.ID + " " + string(r.Canonical())
	}
	return out
}

// TestGridLanguageExpandsToWrittenOut checks each construct of the grid
// language against the grids written out by hand: the same runs, with the
// same ids, in the same order, under both profiles.
func TestGridLanguageExpandsToWrittenOut(t *testing.T) {
	cases := []struct {
		name, lang, written string
	}{{
		name: "template",
		lang: `name = "t"
[template.base]
methods = ["fake-mean"]
datasets = ["toy"]
splits = [0, 1]
seeds = [0]
iterations = 5
[template.base.params]
num_inducing = [10, 20]
kernel = "se"
[[grid]]
name = "a"
extends = "base"
[grid.params]
kernel = "matern32"            # merged key-wise: num_inducing stays
[[grid]]
name = "b"
extends = "base"
splits = [2]
`,
		written: `name = "t"
[[grid]]
name = "a"
methods = ["fake-mean"]
datasets = ["toy"]
splits = [0, 1]
seeds = [0]
iterations = 5
[grid.params]
num_inducing = [10, 20]
kernel = "matern32"
[[grid]]
name = "b"
methods = ["fake-mean"]
datasets = ["toy"]
splits = [2]
seeds = [0]
iterations = 5
[grid.params]
num_inducing = [10, 20]
kernel = "se"
`,
	}, {
		name: "extends a list, in order, templates extending templates",
		lang: `name = "t"
[template.run]
methods = ["fake-mean"]
datasets = ["toy"]
splits = [0]
seeds = [0]
iterations = 5
[template.long]
extends = "run"
iterations = 50
[template.m32]
params = { kernel = "matern32" }
iterations = 7
[[grid]]
name = "a"
extends = ["long", "m32"]     # m32's iterations win over long's
[[grid]]
name = "b"
extends = ["m32", "long"]     # long's win over m32's
`,
		written: `name = "t"
[[grid]]
name = "a"
methods = ["fake-mean"]
datasets = ["toy"]
splits = [0]
seeds = [0]
iterations = 7
params = { kernel = "matern32" }
[[grid]]
name = "b"
methods = ["fake-mean"]
datasets = ["toy"]
splits = [0]
seeds = [0]
iterations = 50
params = { kernel = "matern32" }
`,
	}, {
		name: "matrix of named variants with when rules",
		lang: `name = "t"
[[grid]]
name = "g-{data}-{kernel}"
methods = ["fake-mean"]
splits = [0]
seeds = [0]
iterations = 5
[template.toy2]
datasets = ["toy2"]
[grid.matrix.data]
small = { datasets = ["toy"], dataset = { n = 50 } }
large = { extends = "toy2" }      # a variant may extend templates
[grid.matrix]
kernel = ["se", "matern32"]
[grid.params]
kernel = "{kernel}"
[[grid.when]]
data = "large"
kernel = "matern32"
skip = true
[[grid.when]]
kernel = "se"
set = { params = { num_inducing = [5, 6] } }
`,
		written: `name = "t"
[[grid]]
name = "g-small-se"
methods = ["fake-mean"]
datasets = ["toy"]
splits = [0]
seeds = [0]
iterations = 5
dataset = { n = 50 }
params = { kernel = "se", num_inducing = [5, 6] }
[[grid]]
name = "g-small-matern32"
methods = ["fake-mean"]
datasets = ["toy"]
splits = [0]
seeds = [0]
iterations = 5
dataset = { n = 50 }
params = { kernel = "matern32" }
[[grid]]
name = "g-large-se"
methods = ["fake-mean"]
datasets = ["toy2"]
splits = [0]
seeds = [0]
iterations = 5
params = { kernel = "se", num_inducing = [5, 6] }
`,
	}, {
		name: "when rules accumulate: the template's first, then the grid's",
		lang: `name = "t"
[template.base]
methods = ["fake-mean"]
datasets = ["toy"]
splits = [0]
seeds = [0]
matrix.k = ["se", "matern32"]
when = [{ k = "se", set = { iterations = 3, params = { num_inducing = 5 } } }]
[[grid]]
name = "g-{k}"
extends = "base"
iterations = 9
[[grid.when]]
k = "se"
set = { iterations = 4 }        # after the template's rule: 4 wins, num_inducing stays 5
`,
		written: `name = "t"
[[grid]]
name = "g-se"
methods = ["fake-mean"]
datasets = ["toy"]
splits = [0]
seeds = [0]
iterations = 4
params = { num_inducing = 5 }
[[grid]]
name = "g-matern32"
methods = ["fake-mean"]
datasets = ["toy"]
splits = [0]
seeds = [0]
iterations = 9
`,
	}, {
		name: "variables outside the name become include rows",
		lang: `name = "t"
[[grid]]
name = "rows"
methods = ["fake-mean"]
datasets = ["toy"]
splits = [0]
seeds = [0]
iterations = 5
[grid.matrix]
m = [10, 20, 40]
[grid.params]
num_inducing = "{m}"
lengthscales = "{[m / 10]}"
`,
		written: `name = "t"
[[grid]]
name = "rows"
methods = ["fake-mean"]
datasets = ["toy"]
splits = [0]
seeds = [0]
iterations = 5
[grid.params]
num_inducing = 10
lengthscales = [[1.0]]
[[grid.include]]
params = { num_inducing = 20, lengthscales = [2.0] }
[[grid.include]]
params = { num_inducing = 40, lengthscales = [4.0] }
`,
	}, {
		name: "derived values",
		lang: `name = "t"
[[grid]]
name = "d"
methods = ["fake-mean"]
datasets = ["toy"]
splits = [0]
seeds = [0]
iterations = 5
[grid.let]
W = "{6 * sqrt(1000 / 2)}"
eps = "{sig(0.5 / W, 10)}"
bw = [0.5, 1, 3, 40]
[grid.params]
lengthscales = "{[eps]}"
num_inducing = "{atmost(round(bw / (2 * eps)), 2000)}"
`,
		written: `name = "t"
[[grid]]
name = "d"
methods = ["fake-mean"]
datasets = ["toy"]
splits = [0]
seeds = [0]
iterations = 5
[grid.params]
lengthscales = [[0.003726779962]]
num_inducing = [67, 134, 402]
`,
	}, {
		name: "profile patterns",
		lang: `name = "t"
[template.g]
methods = ["fake-mean"]
datasets = ["toy"]
splits = [0, 1, 2]
seeds = [0]
iterations = 5
params = { num_inducing = [10, 20] }
[[grid]]
name = "uci-a"
extends = "g"
[[grid]]
name = "uci-b"
extends = "g"
[[grid]]
name = "other"
extends = "g"
[profiles.quick]
note = "fewer splits"
[profiles.quick.grids."uci-*"]
splits = [0]
params = { num_inducing = 10 }
[profiles.quick.grids.uci-b]
splits = [1]                   # the grid's own entry wins over the pattern
`,
		written: `name = "t"
[[grid]]
name = "uci-a"
methods = ["fake-mean"]
datasets = ["toy"]
splits = [0, 1, 2]
seeds = [0]
iterations = 5
params = { num_inducing = [10, 20] }
[[grid]]
name = "uci-b"
methods = ["fake-mean"]
datasets = ["toy"]
splits = [0, 1, 2]
seeds = [0]
iterations = 5
params = { num_inducing = [10, 20] }
[[grid]]
name = "other"
methods = ["fake-mean"]
datasets = ["toy"]
splits = [0, 1, 2]
seeds = [0]
iterations = 5
params = { num_inducing = [10, 20] }
[profiles.quick]
note = "fewer splits"
[profiles.quick.grids.uci-a]
splits = [0]
params = { num_inducing = 10 }
[profiles.quick.grids.uci-b]
splits = [1]
params = { num_inducing = 10 }
`,
	}, {
		name: "variants written as dotted keys keep their order",
		lang: `name = "t"
[template.small]
datasets = ["toy"]
[template.large]
datasets = ["toy2"]
[[grid]]
name = "g-{d}"
methods = ["fake-mean"]
splits = [0]
seeds = [0]
matrix.d = { small.extends = "small", large.extends = "large" }
`,
		written: `name = "t"
[[grid]]
name = "g-small"
methods = ["fake-mean"]
datasets = ["toy"]
splits = [0]
seeds = [0]
[[grid]]
name = "g-large"
methods = ["fake-mean"]
datasets = ["toy2"]
splits = [0]
seeds = [0]
`,
	}, {
		name: "matrix variable from an expression",
		lang: `name = "t"
[[grid]]
name = "g{i}"
methods = ["fake-mean"]
datasets = ["toy"]
splits = [0]
seeds = [0]
iterations = "{5 * i}"
[grid.matrix]
i = "{concat(linspace(1, 2, 2), 4)}"
`,
		written: `name = "t"
[[grid]]
name = "g1"
methods = ["fake-mean"]
datasets = ["toy"]
splits = [0]
seeds = [0]
iterations = 5
[[grid]]
name = "g2"
methods = ["fake-mean"]
datasets = ["toy"]
splits = [0]
seeds = [0]
iterations = 10
[[grid]]
name = "g4"
methods = ["fake-mean"]
datasets = ["toy"]
splits = [0]
seeds = [0]
iterations = 20
`,
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, prof := range []string{"full", "quick"} {
				if prof == "quick" && !strings.Contains(c.written, "[profiles.quick]") {
					continue
				}
				got, want := runIDs(t, c.lang, prof), runIDs(t, c.written, prof)
				if strings.Join(got, "\n") != strings.Join(want, "\n") {
					t.Fatalf("%s profile:\ngot\n%s\nwant\n%s", prof, strings.Join(got, "\n"), strings.Join(want, "\n"))
				}
				if len(got) == 0 {
					t.Fatal("no runs")
				}
			}
		})
	}
}

// TestGridLanguageErrors checks that every mistake in the language's
// constructs is reported at its file:line with the valid choices.
func TestGridLanguageErrors(t *testing.T) {
	const grid = `
[[grid]]
name = "g"
methods = ["fake-mean"]
datasets = ["toy"]
splits = [0]
seeds = [0]
`
	cases := []struct {
		name, src string
		want      []string
	}{
		{"unknown template", "name = \"t\"\n[template.uci]\niterations = 5\n" + strings.Replace(grid, `name = "g"`, "name = \"g\"\nextends = \"ucl\"", 1),
			[]string{`test.toml:7: grid[0].extends: no template "ucl"; did you mean "uci"?; templates: uci`}},
		{"no templates at all", "name = \"t\"\n" + strings.Replace(grid, `name = "g"`, "name = \"g\"\nextends = \"uci\"", 1),
			[]string{`test.toml:5: grid[0].extends: no template "uci": the file defines no [template.NAME]`}},
		{"cyclic extends", "name = \"t\"\n[template.a]\nextends = \"b\"\n[template.b]\nextends = [\"a\"]\n" + strings.Replace(grid, `name = "g"`, "name = \"g\"\nextends = \"a\"", 1),
			[]string{`test.toml:3: template.a.extends: cyclic extends: a → b → a`}},
		{"variable in name not defined", "name = \"t\"\n" + strings.Replace(grid, `name = "g"`, "name = \"g-{kernal}\"\n[grid.matrix]\nkernel = [\"se\"]\n[grid.params]\nnum_inducing = 5", 1),
			[]string{`test.toml:4: grid[0].name: {kernal}: "kernal" is not defined; did you mean "kernel"?; defined: kernel`}},
		{"name variable without a matrix", "name = \"t\"\n" + strings.Replace(grid, `name = "g"`, "name = \"g-{kernel}\"", 1),
			[]string{`test.toml:4: grid[0].name: {kernel}: "kernel" is not defined`}},
		{"pattern matching no grid", "name = \"t\"\n" + grid + "[profiles.quick]\nnote = \"n\"\n[profiles.quick.grids.\"uci-*\"]\nsplits = [0]\n",
			[]string{`test.toml:11: profiles.quick.grids.uci-*: pattern "uci-*" matches no grid; grids: g`}},
		{"bad key under a pattern, once at its line", "name = \"t\"\n" + strings.Replace(grid, `name = "g"`, "name = \"g-{k}\"\nmatrix.k = [1, 2]", 1) + "[profiles.quick]\nnote = \"n\"\n[profiles.quick.grids.\"g-*\"]\nsplts = [0]\n",
			[]string{`test.toml:13: profiles.quick.grids.g-*.splts: unknown key; valid keys:`}},
		{"when on an unknown variable", "name = \"t\"\n" + strings.Replace(strings.Replace(grid, `name = "g"`, "name = \"g-{kernel}\"", 1), "seeds = [0]", "seeds = [0]\n[grid.matrix]\nkernel = [\"se\", \"matern32\"]\n[[grid.when]]\nkernl = \"se\"\nskip = true", 1),
			[]string{`test.toml:12: grid[0].when[0].kernl: not a matrix variable; did you mean "kernel"?`}},
		{"when on an unknown variant", "name = \"t\"\n" + strings.Replace(strings.Replace(grid, `name = "g"`, "name = \"g-{kernel}\"", 1), "seeds = [0]", "seeds = [0]\n[grid.matrix]\nkernel = [\"se\", \"matern32\"]\n[[grid.when]]\nkernel = \"matern23\"\nskip = true", 1),
			[]string{`test.toml:12: grid[0].when[0].kernel: no variant "matern23" of kernel; did you mean "matern32"?; variants: se, matern32`}},
		{"when doing nothing", "name = \"t\"\n" + strings.Replace(strings.Replace(grid, `name = "g"`, "name = \"g-{kernel}\"", 1), "seeds = [0]", "seeds = [0]\n[grid.matrix]\nkernel = [\"se\", \"matern32\"]\n[[grid.when]]\nkernel = \"se\"", 1),
			[]string{`test.toml:11: grid[0].when[0]: a rule does nothing`}},
		{"unknown function", "name = \"t\"\n" + strings.Replace(grid, `seeds = [0]`, "seeds = [0]\n[grid.params]\nnum_inducing = \"{sqr(4)}\"", 1),
			[]string{`test.toml:10: grid[0].params.num_inducing: {sqr(4)}: unknown function "sqr"; did you mean "sqrt"?`}},
		{"let cycle", "name = \"t\"\n" + strings.Replace(grid, `seeds = [0]`, "seeds = [0]\n[grid.let]\na = \"{b}\"\nb = \"{a + 1}\"\n[grid.params]\nnum_inducing = \"{a}\"", 1),
			[]string{`grid[0].params.num_inducing: {a}: let a: {b}: let b: {a + 1}: let a refers to itself: a → b → a`}},
		{"rows that cannot be includes", "name = \"t\"\n" + strings.Replace(grid, `seeds = [0]`, "seeds = [0]\nmatrix = { m = [1, 2] }\ndescription = \"m = {m}\"", 1),
			[]string{`test.toml:10: grid[0].description: grid "g": the rows of its matrix differ in description`, "put the variables in the name ({m})"}},
		{"later error at the template's line", "name = \"t\"\n[template.uci]\niterations = -5\n" + strings.Replace(grid, `name = "g"`, "name = \"g\"\nextends = \"uci\"", 1),
			[]string{`test.toml:3: template.uci.iterations: in grid "g": must be ≥ 0`}},
		{"later error at the variant's line", "name = \"t\"\n" + strings.Replace(strings.Replace(grid, `name = "g"`, "name = \"g-{k}\"", 1), "seeds = [0]", "seeds = [0]\n[grid.matrix.k]\na = { params = { num_inducing = 5 } }\nb = { params = { num_inducng = 5 } }", 1),
			[]string{`test.toml:11: grid[0].matrix.k.b.params.num_inducng: in grid "g-b": no method of this grid (fake-mean) has this parameter; did you mean "num_inducing"?`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := expand(t, c.src, "")
			if err == nil {
				t.Fatalf("no error for\n%s", c.src)
			}
			if n := strings.Count(err.Error(), "\n") + 1; n != len(c.want) && !strings.Contains(c.name, "rows") {
				t.Errorf("%d errors, want %d:\n%v", n, len(c.want), err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error\n%v\nlacks %q", err, w)
				}
			}
		})
	}
}

// TestGridLanguageWarnings checks the constructs that expand but are
// probably mistakes.
func TestGridLanguageWarnings(t *testing.T) {
	src := `name = "t"
[template.unused]
iterations = 5
[[grid]]
name = "g-{k}"
methods = ["fake-mean"]
datasets = ["toy"]
splits = [0]
seeds = [0]
matrix = { k = [1, 2] }
[[grid.when]]
k = [3]
skip = true
`
	_, _, err := expand(t, src, "")
	if err == nil || !strings.Contains(err.Error(), `no variant "3" of k`) {
		t.Fatalf("want the unknown variant reported, got %v", err)
	}
	src = strings.Replace(src, "k = [3]", "k = [1]\nskip = false\nset = { iterations = 3 }", 1)
	src = strings.Replace(src, "skip = true\n", "", 1)
	_, warnings, err := expand(t, strings.Replace(src, "matrix = { k = [1, 2] }", "matrix = { k = [2] }", 1), "")
	if err == nil {
		t.Fatal("a rule on a variant the matrix lost must be an error")
	}
	_, warnings, err = expand(t, src, "")
	if err != nil {
		t.Fatal(err)
	}
	if want := `test.toml:2: template.unused: template "unused" is not extended by any grid`; !containsSub(warnings, want) {
		t.Errorf("warnings %q lack %q", warnings, want)
	}
}

func containsSub(xs []string, s string) bool {
	for _, x := range xs {
		if strings.Contains(x, s) {
			return true
		}
	}
	return false
}
