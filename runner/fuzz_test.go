package runner

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

var idRE = regexp.MustCompile(`^[0-9a-f]{16}$`)

// FuzzGrid parses and expands arbitrary grid files (seeded with every grid
// file of the repository and the test grids): no panic, errors instead;
// a grid that expands does so deterministically (same ids twice), with
// unique 16-hex-digit ids and canonical JSON specs.
func FuzzGrid(f *testing.F) {
	for _, pattern := range []string{"../experiments/*.toml", "../paper_configs/*.toml"} {
		files, _ := filepath.Glob(pattern)
		for _, p := range files {
			if b, err := os.ReadFile(p); err == nil {
				f.Add(string(b), "quick")
			}
		}
	}
	f.Add(base, "")
	f.Add(base+"[profiles.quick]\nnote = \"n\"\n[profiles.quick.override]\nsplits = [0]\n", "quick")
	f.Add(base+"[[grid.exclude]]\nnum_inducing = 10\n[[grid.include]]\nsplit = 7\n", "full")
	f.Add(base+"[grid.dataset]\nn = [10, 20]\n[grid.method.fake-mean]\nlengthscales = [[1.0], [2.0]]\n", "")
	f.Add("name = \"x\"\n[[grid]]\nname = \"g\"\nmethods = []\n", "")
	// The grid language: templates, a matrix with rows and rules, derived
	// values, profile patterns.
	f.Add("name = \"x\"\n[template.t]\nmethods = [\"fake-mean\"]\ndatasets = [\"toy\"]\nsplits = [0]\nseeds = [0]\n"+
		"[[grid]]\nname = \"g-{k}\"\nextends = \"t\"\nmatrix = { k = [\"se\", \"matern32\"], m = [5, 10] }\n"+
		"let = { n = \"{2 * m}\" }\nparams = { kernel = \"{k}\", num_inducing = \"{n}\" }\n"+
		"[[grid.when]]\nk = \"se\"\nset = { iterations = 3 }\n"+
		"[profiles.quick]\nnote = \"n\"\n[profiles.quick.grids.\"g-*\"]\nsplits = [1]\n", "quick")
	f.Fuzz(func(t *testing.T, src, profile string) {
		fl, err := Parse("fuzz.toml", src)
		if err != nil {
			return
		}
		opt := ExpandOptions{Profile: profile, ValidateDataset: fakeValidate}
		runs, _, err := fl.Expand(opt)
		if err != nil {
			return
		}
		again, _, err := fl.Expand(opt)
		if err != nil || len(again) != len(runs) {
			t.Fatalf("second expansion: %d runs, %v; first had %d", len(again), err, len(runs))
		}
		seen := map[string]bool{}
		for i, r := range runs {
			if !idRE.MatchString(r.ID) || seen[r.ID] {
				t.Fatalf("run %d: id %q is malformed or repeated", i, r.ID)
			}
			seen[r.ID] = true
			if again[i].ID != r.ID {
				t.Fatalf("run %d: id %s, then %s on the same file", i, r.ID, again[i].ID)
			}
			if !json.Valid(r.Canonical()) {
				t.Fatalf("run %s: canonical spec is not JSON: %s", r.ID, r.Canonical())
			}
		}
	})
}
