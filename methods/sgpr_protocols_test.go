package methods

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp"
	"sgplab/gp/ad"
	"sgplab/gp/features"
	"sgplab/gp/inference"
	"sgplab/gp/kernels"
	"sgplab/gp/param"
	"sgplab/internal/testhelp"
)

func fitSGPR(t *testing.T, raw map[string]any, train gp.Data, opt FitOptions) (*sparseModel, FitResult) {
	t.Helper()
	model, err := Build("sgpr", raw)
	if err != nil {
		t.Fatal(err)
	}
	res, err := model.Fit(context.Background(), train, opt, nil)
	if err != nil {
		t.Fatal(err)
	}
	return sparseOf(t, model), res
}

// boundAt evaluates the collapsed bound and its jitter directly at the
// parameters a fitted sgpr model keeps.
func boundAt(t *testing.T, m *sparseModel, train gp.Data) (float64, float64) {
	t.Helper()
	tape := ad.NewTape()
	b := m.set.Bind(tape)
	z := features.NewInducingPoints(m.set.Value(InducingName))
	out, info, err := inference.SGPR(m.kern.Bind(b, KernelPrefix), z.Bind(b, inducingPfx), tape.Const(train.X), train.Y,
		b.Get(noiseName), inference.Options{Jitter: m.p.Float("jitter")})
	if err != nil {
		t.Fatal(err)
	}
	return out.Scalar(), info.Jitter
}

func hyper(res FitResult, name string) []float64 {
	for _, h := range res.Hyper {
		if h.Name == name {
			return h.Value
		}
	}
	return nil
}

// Greedy re-selection through the registry: never worse than one round,
// stops within the budget, leaves Z at distinct training inputs and reports
// the bound (and jitter) of the parameters it keeps.
func TestSGPRReselectRounds(t *testing.T) {
	train := toyData(11, 150, 0.1)
	raw := func(rounds int) map[string]any {
		return map[string]any{"num_inducing": int64(12), "inducing_init": "greedy", "train_inducing": false,
			"reselect_rounds": int64(rounds), "lengthscales": []any{0.3}}
	}
	opt := FitOptions{Iterations: 60, Seed: 1}
	_, one := fitSGPR(t, raw(1), train, opt)
	m, many := fitSGPR(t, raw(8), train, opt)
	run := many.Extra["reselect_rounds_run"]
	t.Logf("1 round: %.6f; %v rounds: %.6f", one.Objective, run, many.Objective)
	if one.Extra["reselect_rounds_run"] != 1 || run < 2 || run > 8 {
		t.Errorf("rounds run: %v with a budget of 1, %v with 8", one.Extra["reselect_rounds_run"], run)
	}
	if many.Objective < one.Objective-1e-9*math.Abs(one.Objective) {
		t.Errorf("re-selection ended at %.8f, below one round %.8f", many.Objective, one.Objective)
	}
	for i := 1; i < len(many.Trace); i++ {
		if many.Trace[i].Iteration < many.Trace[i-1].Iteration || many.Trace[i].Elapsed < many.Trace[i-1].Elapsed {
			t.Fatalf("trace not monotone at %d: %+v then %+v", i, many.Trace[i-1], many.Trace[i])
		}
	}
	best := math.Inf(-1)
	for _, p := range many.Trace {
		best = math.Max(best, p.Objective)
	}
	if math.Abs(many.Objective-best) > 1e-9*math.Abs(best) {
		t.Errorf("reported %.10f, best bound in the trace %.10f (the best round is not the one kept)", many.Objective, best)
	}
	got, jitter := boundAt(t, m, train)
	if got != many.Objective || jitter != many.Extra["jitter"] {
		t.Errorf("bound at the kept parameters %.17g (jitter %g), reported %.17g (jitter %g)", got, jitter, many.Objective, many.Extra["jitter"])
	}
	z := m.set.Value(InducingName)
	seen := map[[2]float64]bool{}
	for i := 0; i < z.RawMatrix().Rows; i++ {
		row := [2]float64{z.At(i, 0), z.At(i, 1)}
		found := false
		for j := 0; j < train.N() && !found; j++ {
			found = train.X.At(j, 0) == row[0] && train.X.At(j, 1) == row[1]
		}
		if !found || seen[row] {
			t.Errorf("z[%d] = %v is not a distinct training input", i, row)
		}
		seen[row] = true
	}
}

// k-means Z kept fixed: Z after training is bit-for-bit the seeded k-means
// centres while the hyperparameters move.
func TestSGPRKMeansFixed(t *testing.T) {
	train := toyData(12, 120, 0.1)
	opt := FitOptions{Iterations: 40, Seed: 5}
	m, res := fitSGPR(t, map[string]any{"num_inducing": int64(10), "inducing_init": "kmeans", "train_inducing": false}, train, opt)
	want, err := kmeansZ(train.X, 10, fitRNG(opt, 1))
	if err != nil {
		t.Fatal(err)
	}
	if got := m.set.Value(InducingName); !mat.Equal(got, want) {
		t.Errorf("Z changed in training:\n%v\nwant the k-means centres\n%v", mat.Formatted(got), mat.Formatted(want))
	}
	if v := hyper(res, KernelPrefix+"variance"); len(v) != 1 || v[0] == 1 {
		t.Errorf("kernel variance %v: the hyperparameters were not trained", v)
	}
	if res.Objective <= res.Trace[0].Objective {
		t.Errorf("bound went from %v to %v", res.Trace[0].Objective, res.Objective)
	}
}

func TestSGPRReselectBadConfig(t *testing.T) {
	for _, tc := range []struct {
		raw  map[string]any
		want string
	}{
		{map[string]any{"reselect_rounds": int64(-1)}, `parameter "reselect_rounds": -1 is out of range: want ≥ 0`},
		{map[string]any{"reselect_rounds": int64(3)}, "needs inducing_init = \"greedy\" and train_inducing = false"},
		{map[string]any{"reselect_rounds": int64(3), "inducing_init": "greedy"}, "train_inducing = false"},
	} {
		if _, err := Build("sgpr", tc.raw); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want it to mention %q", tc.raw, err, tc.want)
		}
	}
	model, err := Build("sgpr", map[string]any{"z_file": "z.csv"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := model.Fit(context.Background(), toyData(1, 20, 0.1), FitOptions{}, nil); err == nil || !strings.Contains(err.Error(), "inducing_init = \"file\"") {
		t.Errorf("z_file without inducing_init = file: error %v", err)
	}
}

// writeCSV writes z as a CSV file with a header line.
func writeCSV(t *testing.T, z *mat.Dense) string {
	t.Helper()
	var sb strings.Builder
	r, c := z.Dims()
	for j := 0; j < c; j++ {
		if j > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, "x%d", j)
	}
	sb.WriteByte('\n')
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			if j > 0 {
				sb.WriteByte(',')
			}
			fmt.Fprintf(&sb, "%.17g", z.At(i, j))
		}
		sb.WriteByte('\n')
	}
	path := filepath.Join(t.TempDir(), "z.csv")
	if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// naiveTitsias is testhelp.TitsiasBound for kern with jitter j on Kuu.
func naiveTitsias(t *testing.T, kern kernels.Kernel, s *param.Set, x, z *mat.Dense, y []float64, noise, j float64) float64 {
	t.Helper()
	kuu := kernels.Matrix(kern, s, KernelPrefix, z, z)
	for i := 0; i < z.RawMatrix().Rows; i++ {
		kuu.Set(i, i, kuu.At(i, i)+j)
	}
	b, err := testhelp.TitsiasBound(kuu, kernels.Matrix(kern, s, KernelPrefix, z, x), kernels.DiagValues(kern, s, KernelPrefix, x), y, noise)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Given hyperparameters, Z from a CSV file and iterations = 0, sgpr reports
// the bound at exactly those values: gp/inference.SGPR computed directly
// with an independently declared kernel, and the naive dense formula.
func TestSGPRGivenValuesZeroIterations(t *testing.T) {
	train := toyData(13, 40, 0.1)
	z := mat.NewDense(7, 2, nil)
	for i := 0; i < 7; i++ {
		z.Set(i, 0, -1.8+0.55*float64(i))
		z.Set(i, 1, 1.5*math.Sin(float64(i)))
	}
	const variance, noise = 1.7, 0.05
	ls := []float64{0.6, 1.3}
	for _, kname := range []string{"se", "matern32"} {
		m, res := fitSGPR(t, map[string]any{"kernel": kname, "variance": variance, "lengthscales": []any{ls[0], ls[1]},
			"noise_variance": noise, "inducing_init": "file", "z_file": writeCSV(t, z), "num_inducing": int64(7), "train_inducing": false}, train, FitOptions{Iterations: 0})
		if res.Iterations != 0 || !mat.Equal(m.set.Value(InducingName), z) {
			t.Fatalf("%s: %d iterations; Z %v", kname, res.Iterations, mat.Formatted(m.set.Value(InducingName)))
		}
		kern, err := kernels.New(kname, 2, kernels.Options{Variance: variance, Lengthscales: ls, ARD: true})
		if err != nil {
			t.Fatal(err)
		}
		s := param.NewSet()
		if err := kern.Declare(s, KernelPrefix); err != nil {
			t.Fatal(err)
		}
		if err := s.AddScalar("noise", noise, param.DefaultPositive); err != nil {
			t.Fatal(err)
		}
		zp := features.NewInducingPoints(z)
		if err := zp.Declare(s, ""); err != nil {
			t.Fatal(err)
		}
		tape := ad.NewTape()
		b := s.Bind(tape)
		direct, _, err := inference.SGPR(kern.Bind(b, KernelPrefix), zp.Bind(b, ""), tape.Const(train.X), train.Y,
			b.Get("noise"), inference.Options{Jitter: inference.DefaultJitter})
		if err != nil {
			t.Fatal(err)
		}
		naive := naiveTitsias(t, kern, s, train.X, z, train.Y, noise, inference.DefaultJitter)
		t.Logf("%s: method %.12f, inference.SGPR %.12f, naive %.12f", kname, res.Objective, direct.Scalar(), naive)
		if d := math.Abs(res.Objective - direct.Scalar()); d > 1e-9*math.Abs(naive) {
			t.Errorf("%s: method %.12f, inference.SGPR directly %.12f", kname, res.Objective, direct.Scalar())
		}
		if d := math.Abs(res.Objective - naive); d > 1e-7*math.Abs(naive) {
			t.Errorf("%s: method %.12f, naive dense bound %.12f", kname, res.Objective, naive)
		}
	}
}

// Every method takes explicit initial hyperparameters under the same names,
// and with iterations = 0 reports exactly those values.
func TestGivenHyperparametersAllMethods(t *testing.T) {
	train := toyData(14, 40, 0.1)
	train1 := vofTestData(40, 9)
	z := mat.NewDense(6, 2, nil)
	for i := 0; i < 6; i++ {
		z.Set(i, 0, -1.5+0.6*float64(i))
		z.Set(i, 1, 0.3*float64(i)-0.8)
	}
	zfile := writeCSV(t, z)
	given := map[string]any{"variance": 0.7, "lengthscales": []any{0.45}, "noise_variance": 0.02}
	for _, tc := range []struct {
		method string
		extra  map[string]any
		data   gp.Data
		opt    FitOptions
	}{
		{"gpr", nil, train, FitOptions{}},
		{"sgpr", map[string]any{"inducing_init": "file", "z_file": zfile, "num_inducing": int64(6)}, train, FitOptions{}},
		{"svgp", map[string]any{"inducing_init": "file", "z_file": zfile, "num_inducing": int64(6)}, train, FitOptions{}},
		{"iff", map[string]any{"freqs_per_dim": int64(6)}, train, FitOptions{}},
		{"vof-hermite", map[string]any{"num_features": int64(5), "eval_samples": int64(0)}, train1, FitOptions{}},
		{"vof-trig", map[string]any{"num_features": int64(5), "eval_samples": int64(0), "estimator": "quadrature"}, train1, FitOptions{}},
	} {
		t.Run(tc.method, func(t *testing.T) {
			raw := map[string]any{}
			for k, v := range given {
				raw[k] = v
			}
			for k, v := range tc.extra {
				raw[k] = v
			}
			model, err := Build(tc.method, raw)
			if err != nil {
				t.Fatal(err)
			}
			res, err := model.Fit(context.Background(), tc.data, tc.opt, nil)
			if err != nil {
				t.Fatal(err)
			}
			if res.Iterations != 0 {
				t.Errorf("%d iterations with a budget of 0", res.Iterations)
			}
			want := map[string]float64{KernelPrefix + "variance": 0.7, KernelPrefix + "lengthscales": 0.45, noiseName: 0.02}
			for name, w := range want {
				v := hyper(res, name)
				if len(v) == 0 {
					t.Errorf("%s not reported (have %v)", name, res.Hyper)
				}
				for _, x := range v {
					if math.Abs(x-w) > 1e-12*w {
						t.Errorf("%s = %v, given %v", name, x, w)
					}
				}
			}
			if tc.extra["z_file"] != nil {
				if got := model.(interface{ inducingZ() *mat.Dense }).inducingZ(); !mat.Equal(got, z) {
					t.Errorf("Z = %v, want the file's", mat.Formatted(got))
				}
			}
		})
	}
}

// Extra["jitter"] and the objective belong to the final parameters, also
// when Kuu needs escalating jitter (duplicate inducing inputs, jitter 0).
func TestSGPRJitterAtFinalPoint(t *testing.T) {
	train := toyData(15, 60, 0.1)
	z := mat.NewDense(6, 2, []float64{-1, -1, -1, -1, 0, 0.5, 0, 0.5, 1, -0.5, 1.2, 1})
	m, res := fitSGPR(t, map[string]any{"inducing_init": "file", "z_file": writeCSV(t, z), "num_inducing": int64(6), "train_inducing": false, "jitter": 0.0},
		train, FitOptions{Iterations: 30})
	got, jitter := boundAt(t, m, train)
	t.Logf("jitter %g, objective %.10f", res.Extra["jitter"], res.Objective)
	if !(res.Extra["jitter"] > 0) {
		t.Errorf("jitter %g: singular Kuu should need some", res.Extra["jitter"])
	}
	if got != res.Objective || jitter != res.Extra["jitter"] {
		t.Errorf("at the final parameters: bound %.17g jitter %g; reported %.17g jitter %g", got, jitter, res.Objective, res.Extra["jitter"])
	}
}

// Every method names its kernel and noise parameters identically; the old
// singular spelling "lengthscale" is gone (an unknown parameter).
func TestSharedParameterNames(t *testing.T) {
	shared := []string{"variance", "lengthscales", "noise_variance"}
	for _, name := range []string{"gpr", "sgpr", "svgp", "iff", "vff", "avff", "bspline", "kernel-approx", "ski"} {
		m, err := Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range shared {
			if name == "kernel-approx" && s == "noise_variance" {
				continue // no likelihood: it only evaluates the prior
			}
			found := false
			for _, d := range m.Params {
				found = found || d.Name == s
			}
			if !found {
				t.Errorf("%s has no parameter %q", name, s)
			}
		}
		if _, err := Build(name, map[string]any{"lengthscale": 0.7}); err == nil || !strings.Contains(err.Error(), "lengthscales") {
			t.Errorf("%s: the singular lengthscale: error %v, want one naming lengthscales", name, err)
		}
	}
	model, err := Build("iff", map[string]any{"lengthscales": []any{0.7}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := model.Fit(context.Background(), iffTestData(60, 8), FitOptions{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if v := hyper(res, KernelPrefix+"lengthscales"); len(v) != 1 || math.Abs(v[0]-0.7) > 1e-12 {
		t.Errorf("lengthscales %v, want [0.7]", v)
	}
}

// gram_order selects the order of the O(NM²) step: on a well-conditioned
// problem both orders fit to the same bound (rounding only), and an
// unknown order is rejected naming the choices.
func TestSGPRGramOrder(t *testing.T) {
	train := toyData(12, 120, 0.1)
	raw := func(order string) map[string]any {
		return map[string]any{"num_inducing": int64(10), "gram_order": order, "lengthscales": []any{0.5}}
	}
	opt := FitOptions{Iterations: 20, Seed: 1}
	ma, a := fitSGPR(t, raw("whiten_first"), train, opt)
	mg, g := fitSGPR(t, raw("gram_first"), train, opt)
	if ma.opts().GramFirst || !mg.opts().GramFirst {
		t.Fatalf("GramFirst: %v for whiten_first, %v for gram_first", ma.opts().GramFirst, mg.opts().GramFirst)
	}
	if d := math.Abs(a.Objective - g.Objective); d > 1e-6*math.Abs(a.Objective) {
		t.Errorf("bound %.10f whitening first, %.10f forming the Gram matrix first", a.Objective, g.Objective)
	}
	if _, err := Build("sgpr", raw("both")); err == nil || !strings.Contains(err.Error(), "gram_first") {
		t.Errorf("unknown gram_order: err = %v, want one naming the choices", err)
	}
}
