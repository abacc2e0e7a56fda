package methods

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sort"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp"
)

// reproCase is how TestSameBitsOnAnyCoreCount runs one method: its
// parameters, the input dimension and training-set size (large enough that
// the method's O(NM²) products are split into several column blocks, see
// linalg.splitCols) and its fit options.
type reproCase struct {
	raw  map[string]any
	dim  int
	n    int
	iter int
}

// reproDefault is used for every method without an entry in reproCases:
// 2-D inputs, N = 2000, three iterations of its default optimiser.
var reproDefault = reproCase{dim: 2, n: 2000, iter: 3}

// reproCases overrides reproDefault for methods that need other inputs or
// are too slow at the default size. A method that fails on the default is
// a test failure that points here, never a silent skip.
var reproCases = map[string]reproCase{
	"gpr":           {dim: 2, n: 500, iter: 3},
	"sgpr":          {raw: map[string]any{"num_inducing": int64(40)}, dim: 2, n: 2000, iter: 3},
	"svgp":          {raw: map[string]any{"num_inducing": int64(40)}, dim: 2, n: 2000, iter: 3},
	"kernel-approx": {dim: 1, n: 300, iter: 0},
	"vof-hermite":   {dim: 1, n: 500, iter: 3},
	"vof-trig":      {dim: 1, n: 500, iter: 3},
	// The decoupled methods at small sizes; init_iterations shortens the
	// L-BFGS first phase of solvegp and spherical-orthogonal (default 100).
	"odvgp":                {raw: map[string]any{"num_inducing": int64(20), "num_orthogonal": int64(20)}, dim: 2, n: 2000, iter: 3},
	"odvff":                {raw: map[string]any{"frequencies": int64(6), "num_orthogonal": int64(20)}, dim: 2, n: 2000, iter: 3},
	"solvegp":              {raw: map[string]any{"num_inducing": int64(20), "num_orthogonal": int64(20), "init_iterations": int64(2)}, dim: 2, n: 2000, iter: 3},
	"spherical-orthogonal": {raw: map[string]any{"num_inducing": int64(20), "num_orthogonal": int64(20), "init_iterations": int64(2)}, dim: 2, n: 2000, iter: 3},
}

// reproData draws y = Σ_d sin(2x_d) + 0.1ε with x uniform on [−2, 2]^dim.
func reproData(seed uint64, n, dim int) gp.Data {
	rng := rand.New(rand.NewPCG(seed, 7))
	x := mat.NewDense(n, dim, nil)
	y := make([]float64, n)
	for i := range n {
		for d := range dim {
			v := 4*rng.Float64() - 2
			x.Set(i, d, v)
			y[i] += math.Sin(2 * v)
		}
		y[i] += 0.1 * rng.NormFloat64()
	}
	return gp.Data{X: x, Y: y}
}

// TestSameBitsOnAnyCoreCount fits every registered method (including those
// registered after this test was written) under GOMAXPROCS 1, 2 and 3 and
// checks that the objective, trace, hyperparameters, extra metrics (timings,
// named *_seconds, aside) and predictions are bitwise identical: every metric a run records is a
// function of these.
func TestSameBitsOnAnyCoreCount(t *testing.T) {
	if testing.Short() {
		t.Skip("fits every method three times")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, m := range All() {
		t.Run(m.Name, func(t *testing.T) {
			c, ok := reproCases[m.Name]
			if !ok {
				c = reproDefault
			}
			train, test := reproData(1, c.n, c.dim), reproData(2, 100, c.dim)
			var want []float64
			for _, procs := range []int{1, 2, 3} {
				runtime.GOMAXPROCS(procs)
				got, err := reproFit(m.Name, c, train, test)
				if err != nil {
					t.Fatalf("GOMAXPROCS=%d: %v (give %s an entry in reproCases if it needs other inputs or parameters)", procs, err, m.Name)
				}
				if want == nil {
					want = got
					continue
				}
				if len(got) != len(want) {
					t.Fatalf("GOMAXPROCS=%d: %d recorded values, %d on one core", procs, len(got), len(want))
				}
				for i := range got {
					if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
						t.Fatalf("GOMAXPROCS=%d: recorded value %d is %.17g, %.17g on one core", procs, i, got[i], want[i])
					}
				}
			}
		})
	}
}

// reproFit fits one method and returns everything a run records, flattened.
func reproFit(name string, c reproCase, train, test gp.Data) ([]float64, error) {
	model, err := Build(name, c.raw)
	if err != nil {
		return nil, err
	}
	res, err := model.Fit(context.Background(), train, FitOptions{Iterations: c.iter, Seed: 5, Task: Regression}, nil)
	if err != nil {
		return nil, fmt.Errorf("fit: %w", err)
	}
	pred, err := model.Predict(test.X)
	if err != nil {
		return nil, fmt.Errorf("predict: %w", err)
	}
	out := []float64{res.Objective, float64(res.Iterations)}
	for _, p := range res.Trace {
		out = append(out, p.Objective)
	}
	for _, h := range res.Hyper {
		out = append(out, h.Value...)
	}
	keys := make([]string, 0, len(res.Extra))
	for k := range res.Extra {
		if strings.HasSuffix(k, "_seconds") {
			continue // timings differ from run to run by nature
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		out = append(out, res.Extra[k])
	}
	for _, s := range [][]float64{pred.Mean, pred.VarF, pred.VarY, pred.ProbPositive} {
		out = append(out, s...)
	}
	return out, nil
}
