package inducing

import (
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp/kernels"
	"sgplab/gp/param"
)

func randX(rng *rand.Rand, n, d int) *mat.Dense {
	x := mat.NewDense(n, d, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			x.Set(i, j, rng.NormFloat64())
		}
	}
	return x
}

func seKernel(t testing.TB, d int) (kernels.Kernel, *param.Set) {
	k, err := kernels.New("se", d, kernels.Options{Lengthscales: []float64{0.8}, Variance: 1.5})
	if err != nil {
		t.Fatal(err)
	}
	s := param.NewSet()
	if err := k.Declare(s, "k."); err != nil {
		t.Fatal(err)
	}
	return k, s
}

// denseResidual is diag(K − K_{·I} K_{II}⁻¹ K_{I·}) computed densely.
func denseResidual(k *mat.Dense, idx []int) []float64 {
	n, _ := k.Dims()
	out := make([]float64, n)
	if len(idx) == 0 {
		for i := range out {
			out[i] = k.At(i, i)
		}
		return out
	}
	kii := mat.NewSymDense(len(idx), nil)
	kxi := mat.NewDense(n, len(idx), nil)
	for a, i := range idx {
		for b, j := range idx {
			kii.SetSym(a, b, k.At(i, j))
		}
		for r := 0; r < n; r++ {
			kxi.Set(r, a, k.At(r, i))
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(kii) {
		panic("K_II not PD")
	}
	var sol mat.Dense
	_ = ch.SolveTo(&sol, kxi.T())
	for r := 0; r < n; r++ {
		out[r] = k.At(r, r) - mat.Dot(kxi.RowView(r), sol.ColView(r))
	}
	return out
}

func TestGreedyMatchesDense(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, dims := range [][3]int{{40, 2, 12}, {25, 1, 10}, {30, 3, 30}} {
		n, d, m := dims[0], dims[1], dims[2]
		x := randX(rng, n, d)
		k, s := seKernel(t, d)
		kd := kernels.Matrix(k, s, "k.", x, x)
		idx, traces, err := greedy(x, m, k, s, "k.")
		if err != nil && !errors.Is(err, ErrExhausted) {
			t.Fatal(err)
		}
		prev := math.Inf(1)
		for j := range idx {
			// Step j picks the largest dense residual given the first j points.
			res := denseResidual(kd, idx[:j])
			best := 0
			for i, v := range res {
				if v > res[best] {
					best = i
				}
			}
			if math.Abs(res[idx[j]]-res[best]) > 1e-9*res[best] {
				t.Errorf("N=%d step %d: picked residual %g, largest is %g", n, j, res[idx[j]], res[best])
			}
			var tr float64
			for _, v := range denseResidual(kd, idx[:j+1]) {
				tr += v
			}
			if math.Abs(traces[j]-tr) > 1e-8*(1+tr) {
				t.Errorf("N=%d step %d: trace %.12g, dense tr(K−Q) %.12g", n, j, traces[j], tr)
			}
			if traces[j] > prev {
				t.Errorf("N=%d step %d: trace rose from %g to %g", n, j, prev, traces[j])
			}
			prev = traces[j]
		}
		z, idx2, _ := Greedy(x, m, k, s, "k.")
		for j, i := range idx2 {
			if !mat.Equal(z.RowView(j), x.RowView(i)) {
				t.Fatalf("Z row %d is not x row %d", j, i)
			}
		}
	}
}

func TestGreedyExhausted(t *testing.T) {
	// Three distinct inputs, each repeated: only three pivots exist.
	x := mat.NewDense(6, 1, []float64{0, 1, 2, 0, 1, 2})
	k, s := seKernel(t, 1)
	z, idx, err := Greedy(x, 5, k, s, "k.")
	if !errors.Is(err, ErrExhausted) || len(idx) != 3 || z.RawMatrix().Rows != 3 {
		t.Errorf("got %d points, err %v; want 3 points and ErrExhausted", len(idx), err)
	}
}

func TestArgumentErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	x := randX(rng, 5, 2)
	k, s := seKernel(t, 2)
	for _, m := range []int{0, -1, 6} {
		if _, err := KMeans(x, m, rng); err == nil {
			t.Errorf("KMeans m=%d: no error", m)
		}
		if _, _, err := Greedy(x, m, k, s, "k."); err == nil {
			t.Errorf("Greedy m=%d: no error", m)
		}
		if _, err := RandomSubset(x, m, rng); err == nil {
			t.Errorf("RandomSubset m=%d: no error", m)
		}
	}
	if _, err := KMeans(&mat.Dense{}, 1, rng); err == nil {
		t.Error("KMeans on empty x: no error")
	}
}

func TestKMeans(t *testing.T) {
	// Five well-separated blobs, more rows than one work chunk.
	rng := rand.New(rand.NewPCG(5, 6))
	n, d, m := 3*chunkRows+17, 2, 5
	x := mat.NewDense(n, d, nil)
	centres := [][]float64{{0, 0}, {10, 0}, {0, 10}, {10, 10}, {5, 20}}
	for i := 0; i < n; i++ {
		c := centres[i%m]
		x.Set(i, 0, c[0]+0.5*rng.NormFloat64())
		x.Set(i, 1, c[1]+0.5*rng.NormFloat64())
	}
	z1, err := KMeans(x, m, rand.New(rand.NewPCG(42, 0)))
	if err != nil {
		t.Fatal(err)
	}
	z2, _ := KMeans(x, m, rand.New(rand.NewPCG(42, 0)))
	if !mat.Equal(z1, z2) {
		t.Error("same seed gave different centres")
	}
	init := kmeansPlusPlus(x, m, rand.New(rand.NewPCG(42, 0)))
	random, _ := RandomSubset(x, m, rand.New(rand.NewPCG(42, 0)))
	obj := Objective(x, z1)
	if obj > Objective(x, init) || obj > Objective(x, random) {
		t.Errorf("k-means objective %g worse than its seeding %g or a random subset %g", obj, Objective(x, init), Objective(x, random))
	}
	// Each true centre is recovered (noise sd 0.5, ~2000 points per blob).
	for _, c := range centres {
		best := math.Inf(1)
		for k := 0; k < m; k++ {
			best = math.Min(best, math.Hypot(z1.At(k, 0)-c[0], z1.At(k, 1)-c[1]))
		}
		if best > 0.05 {
			t.Errorf("centre %v not recovered (nearest at distance %g)", c, best)
		}
	}
	// A different seed on unstructured data gives a different answer.
	u := randX(rng, 300, 3)
	a, _ := KMeans(u, 10, rand.New(rand.NewPCG(1, 0)))
	b, _ := KMeans(u, 10, rand.New(rand.NewPCG(2, 0)))
	if mat.Equal(a, b) {
		t.Error("different seeds gave identical centres on random data")
	}
}

func TestRandomSubset(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	x := randX(rng, 50, 2)
	idx, err := RandomIndices(x, 50, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, i := range idx {
		if seen[i] || i < 0 || i >= 50 {
			t.Fatalf("index %d repeated or out of range", i)
		}
		seen[i] = true
	}
	z1, _ := RandomSubset(x, 7, rand.New(rand.NewPCG(1, 1)))
	z2, _ := RandomSubset(x, 7, rand.New(rand.NewPCG(1, 1)))
	if !mat.Equal(z1, z2) {
		t.Error("same seed gave different subsets")
	}
}

func TestFromCSV(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("z.csv", "x1,x2\n# comment\n0.5, 1\n\n-2,3e-1\n")
	z, err := FromCSV(good, 2)
	if err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(z, mat.NewDense(2, 2, []float64{0.5, 1, -2, 0.3})) {
		t.Errorf("read %v", mat.Formatted(z))
	}
	if z0, err := FromCSV(good, 0); err != nil || !mat.Equal(z0, z) {
		t.Errorf("dim 0: %v, %v", z0, err)
	}
	cases := []struct{ body, want string }{
		{"1,2\n3,x\n", "bad.csv:2: field 2"},
		{"1,2\n3\n", "bad.csv:2: 1 values, want 2"},
		{"1,2\nNaN,1\n", "bad.csv:2: field 1 is NaN"},
		{"1,2\n1e999,1\n", `bad.csv:2: field 1 "1e999" is beyond float64's range ±1.8e308 (overflow)`},
		{"1e999,1\n1,2\n", `bad.csv:1: field 1 "1e999" is beyond float64's range`}, // data, not a header
		{"# only a comment\n", "no data rows"},
	}
	for _, c := range cases {
		p := write("bad.csv", c.body)
		if _, err := FromCSV(p, 2); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want it to contain %q", c.body, err, c.want)
		}
	}
	if _, err := FromCSV(filepath.Join(dir, "missing.csv"), 2); err == nil {
		t.Error("missing file: no error")
	}
}

func BenchmarkGreedy(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	x := randX(rng, 5000, 3)
	k, s := seKernel(b, 3)
	for b.Loop() {
		if _, _, err := Greedy(x, 100, k, s, "k."); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkKMeans(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	x := randX(rng, 20000, 3)
	for b.Loop() {
		if _, err := KMeans(x, 100, rand.New(rand.NewPCG(1, 1))); err != nil {
			b.Fatal(err)
		}
	}
}
