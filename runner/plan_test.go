package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp"
)

// expandShaped expands src with datasets of the given shape (toy: n rows
// exactly, d inputs; toy2: at most n rows) and memory limit.
func expandShaped(t *testing.T, src string, n, d int, memory float64) ([]*RunSpec, []string, error) {
	t.Helper()
	f, err := Parse("test.toml", src)
	if err != nil {
		t.Fatal(err)
	}
	return f.Expand(ExpandOptions{ValidateDataset: fakeValidate, MemoryLimit: memory,
		Shape: func(name string, _ map[string]any) (int, int, bool) { return n, d, name == "toy" }})
}

// grid is a one-grid file of methods on dataset with extra lines.
func grid(methods, dataset, extra string) string {
	return "name = \"t\"\n[[grid]]\nname = \"g\"\nmethods = [" + methods + "]\ndatasets = [\"" + dataset + "\"]\niterations = 1\n" + extra
}

// TestExpandChecksWhatMethodsDeclare: what a method declares (ranges,
// dimension limits, feature counts, memory, inducing points against N) is
// checked when the grid expands, so --dry-run refuses it too, with
// file:line, the key and what to do instead. Before, every one of these
// passed validation and failed (or, for the capped M and the exploding
// VFF grid, silently ran or crashed) at run time.
func TestExpandChecksWhatMethodsDeclare(t *testing.T) {
	zfile := filepath.Join(t.TempDir(), "z.csv")
	if err := os.WriteFile(zfile, []byte("0.1\n0.5\n0.9\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		src    string
		n, d   int
		memory float64
		want   []string // substrings of the error; none: no error
		warn   string   // substring of a warning
	}{
		// The values rejected only at run time before (issue 27 §2).
		{"bases 0", grid(`"bspline"`, "toy", "[grid.params]\nbases = 0\n"), 50, 1, 0,
			[]string{"test.toml:8: grid[0].params.bases:", `parameter "bases": 0 is out of range: want ≥ 4`}, ""},
		{"jitter < 0", grid(`"sgpr"`, "toy", "[grid.params]\njitter = -1e-6\n"), 50, 1, 0,
			[]string{"test.toml:8: grid[0].params.jitter:", "out of range: want ≥ 0"}, ""},
		{"lengthscales ≤ 0", grid(`"svgp"`, "toy", "[grid.params]\nlengthscales = [[1.0, -0.5]]\n"), 50, 2, 0,
			[]string{"grid[0].params.lengthscales:", "element 1 (-0.5) is out of range: want > 0"}, ""},
		{"lengthscales empty", grid(`"sgpr"`, "toy", "[grid.params]\nlengthscales = [[]]\n"), 50, 1, 0,
			[]string{"grid[0].params.lengthscales:", "empty list"}, ""},
		{"noise_variance ≤ 0", grid(`"vff"`, "toy", "[grid.params]\nnoise_variance = 0.0\n"), 50, 1, 0,
			[]string{"grid[0].params.noise_variance:", "0 is out of range: want > 0"}, ""},
		{"freqs_per_dim < 0", grid(`"iff"`, "toy", "[grid.params]\nfreqs_per_dim = -3\n"), 50, 1, 0,
			[]string{"grid[0].params.freqs_per_dim:", "out of range: want ≥ 1"}, ""},
		{"num_orthogonal < 0", grid(`"odvgp"`, "toy", "[grid.params]\nnum_orthogonal = -1\n"), 500, 1, 0,
			[]string{"grid[0].params.num_orthogonal:", "out of range: want ≥ 1"}, ""},
		{"max_level < 0", grid(`"vish"`, "toy", "[grid.params]\nmax_level = -1\n"), 50, 1, 0,
			[]string{"grid[0].params.max_level:", "out of range: want ≥ 0"}, ""},
		{"eps_factor < 0", grid(`"iff"`, "toy", "[grid.params]\neps_factor = -0.5\n"), 50, 1, 0,
			[]string{"grid[0].params.eps_factor:", "out of range: want > 0"}, ""},
		{"frequencies 0", grid(`"avff"`, "toy", "[grid.params]\nfrequencies = 0\n"), 50, 1, 0,
			[]string{"grid[0].params.frequencies:", "out of range: want ≥ 1"}, ""},
		// NaN and Inf name the field, not the grid.
		{"NaN param", grid(`"sgpr"`, "toy", "[grid.params]\nnoise_variance = nan\n"), 50, 1, 0,
			[]string{"test.toml:8: grid[0].params.noise_variance:", "NaN is not finite"}, ""},
		{"Inf dataset field", grid(`"sgpr"`, "toy", "[grid.dataset]\nn = inf\n"), 50, 1, 0,
			[]string{"test.toml:8: grid[0].dataset.n:", "+Inf is not a finite number"}, ""},
		// Did you mean.
		{"typo", grid(`"sgpr"`, "toy", "[grid.params]\nnum_inducng = 5\n"), 50, 1, 0,
			[]string{"grid[0].params.num_inducng:", `did you mean "num_inducing"?`}, ""},
		{"typo in a choice", grid(`"sgpr"`, "toy", "[grid.params]\nkernel = \"matern23\"\n"), 50, 1, 0,
			[]string{`did you mean "matern32"?`}, ""},
		// Feature counts that explode: Kronecker VFF on 6 inputs is 31⁶.
		{"vff 31^6", grid(`"vff", "sgpr"`, "toy2", ""), 308, 6, 64e9,
			[]string{"test.toml:4: grid[0].methods: dataset toy2 (N ≤ 308, D = 6): method vff needs at least",
				"M = 887503681", `use structure = "additive", mask = true or fewer frequencies`}, ""},
		{"at the key that grows it", grid(`"vff"`, "toy2", "[grid.params]\nfrequencies = 16\n"), 308, 6, 64e9,
			[]string{"test.toml:8: grid[0].params.frequencies: dataset toy2 (N ≤ 308, D = 6): method vff needs at least"}, ""},
		{"additive vff fits", grid(`"vff"`, "toy2", "[grid.params]\nstructure = \"additive\"\n"), 308, 6, 64e9, nil, ""},
		{"ski 4^D", grid(`"ski"`, "toy2", ""), 8192, 8, 4e9,
			[]string{"method ski needs at least", "N·4^D"}, ""},
		{"exact GPR tape", grid(`"gpr"`, "toy2", ""), 20000, 2, 4e9,
			[]string{"method gpr needs at least 9.6 GB", "N×N matrices"}, ""},
		{"exact GPR max_points", grid(`"gpr"`, "toy", ""), 30000, 2, 0,
			[]string{"30000 training rows exceed max_points = 20000"}, ""},
		// Input-dimension limits.
		{"iff 6-D", grid(`"iff"`, "toy2", ""), 308, 6, 0, []string{"method iff handles inputs of at most 2 dimension(s); the data have 6"}, ""},
		{"vof 2-D", grid(`"vof-trig"`, "toy2", ""), 308, 2, 0, []string{"method vof-trig handles inputs of at most 1 dimension(s)"}, ""},
		// More inducing points than training rows: one set is capped at N
		// (a documented rule; the M used is recorded), two are an error.
		{"capped M", grid(`"sgpr"`, "toy", "[grid.params]\nnum_inducing = 100000\n"), 50, 1, 0, nil,
			"num_inducing = 100000 exceeds the 50 training rows: M is capped at N"},
		{"two sets > N", grid(`"solvegp"`, "toy", "[grid.params]\nnum_inducing = 30\nnum_orthogonal = 30\n"), 50, 1, 0,
			[]string{"the inducing inputs of both sets (60) exceed the at most 50 training inputs"}, ""},
		{"directions > N", grid(`"activated-svgp"`, "toy", "[grid.params]\nnum_inducing = 64\n"), 50, 1, 0,
			[]string{"grid[0].params.num_inducing:", "64 directions exceed"}, ""},
		{"z_file rows", grid(`"svgp"`, "toy", "[grid.params]\ninducing_init = \"file\"\nz_file = \""+zfile+"\"\nnum_inducing = 5\n"), 50, 1, 0,
			[]string{"grid[0].params.z_file:", "has 3 rows but num_inducing = 5", "set num_inducing = 3"}, ""},
		{"z_file rows match", grid(`"svgp"`, "toy", "[grid.params]\ninducing_init = \"file\"\nz_file = \""+zfile+"\"\nnum_inducing = 3\n"), 50, 1, 0, nil, ""},
		// Parameter combinations, checked on the runs a grid keeps.
		{"collapsed minibatch", grid(`"vish"`, "toy", "batch_size = 10\n"), 50, 1, 0,
			[]string{"the collapsed bound is full-batch; batch_size 10"}, ""},
		{"harmonics pair", grid(`"spherical-orthogonal"`, "toy", "[grid.params]\nbase = \"harmonics\"\northogonal = \"harmonics\"\n"), 50, 1, 0,
			[]string{"grid[0].params.orthogonal:", "base = orthogonal = harmonics"}, ""},
		{"excluded combination", grid(`"sgpr"`, "toy", "[grid.params]\nreselect_rounds = [0, 2]\n[[grid.exclude]]\nreselect_rounds = 2\n"), 50, 1, 0, nil, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, warnings, err := expandShaped(t, c.src, c.n, c.d, c.memory)
			if c.want == nil && err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			for _, w := range c.want {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("error %v\nwant it to contain %q", err, w)
				}
			}
			if c.warn != "" && !strings.Contains(strings.Join(warnings, "\n"), c.warn) {
				t.Errorf("warnings %q, want one containing %q", warnings, c.warn)
			}
		})
	}
}

// TestRunChecksPlanOnItsData: what Expand could not know (here, the
// dataset's dimension) is checked when the run starts, on the training
// set it got: IFF on 3-D data fails with the method's declared limit
// before fitting, and the sweep goes on.
func TestRunChecksPlanOnItsData(t *testing.T) {
	runs, _, err := expand(t, grid(`"iff", "fake-mean"`, "toy", ""), "")
	if err != nil {
		t.Fatal(err)
	}
	r, st := newRunner(t, filepath.Join(t.TempDir(), "r.db"))
	r.Prepare = func(_ context.Context, s *RunSpec) (*Dataset, error) {
		x := mat.NewDense(30, 3, nil)
		for i := range 30 {
			for j := range 3 {
				x.Set(i, j, float64((i*7+j*3)%11))
			}
		}
		d := gp.Data{X: x, Y: make([]float64, 30)}
		return &Dataset{Task: "regression", Train: d, Test: d}, nil
	}
	sum, err := r.Run(context.Background(), runs)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Done != 1 || sum.Failed != 1 {
		t.Fatalf("summary %v, want 1 done, 1 failed", sum)
	}
	_, rows, err := st.Query("SELECT error FROM runs WHERE method = 'iff'")
	if err != nil {
		t.Fatal(err)
	}
	if msg, _ := rows[0][0].(string); !strings.Contains(msg, "method iff handles inputs of at most 2 dimension(s); the data have 3") {
		t.Errorf("iff run error %q", msg)
	}
}

// The dataset's shape is asked with its own parameters only: protocol and
// scaling are the runner's, and a generator given them would not resolve.
func TestShapeGetsDatasetParamsOnly(t *testing.T) {
	f, err := Parse("test.toml", grid(`"sgpr"`, "toy", "[grid.dataset]\nn = 40\nprotocol = \"synthetic\"\nscaling = \"none\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	var got []map[string]any
	_, _, err = f.Expand(ExpandOptions{ValidateDataset: fakeValidate,
		Shape: func(_ string, p map[string]any) (int, int, bool) { got = append(got, p); return 40, 1, true }})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range got {
		if _, ok := p["protocol"]; ok || p["scaling"] != nil || p["n"] == nil {
			t.Errorf("Shape got %v, want the dataset's parameters only", p)
		}
	}
	if len(got) == 0 {
		t.Error("Shape never asked")
	}
}
