package methods

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp"
)

// naiveSELML is log N(y | 0, K + σ²I) for an SE kernel, by a dense
// Cholesky written out here independently of the inference package.
func naiveSELML(x *mat.Dense, y []float64, variance, ls, noise float64) float64 {
	n, _ := x.Dims()
	k := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			d := (x.At(i, 0) - x.At(j, 0)) / ls
			v := variance * math.Exp(-0.5*d*d)
			if i == j {
				v += noise
			}
			k.SetSym(i, j, v)
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(k) {
		panic("not positive definite")
	}
	a := mat.NewVecDense(n, nil)
	if err := ch.SolveVecTo(a, mat.NewVecDense(n, y)); err != nil {
		panic(err)
	}
	return -0.5*mat.Dot(mat.NewVecDense(n, y), a) - 0.5*ch.LogDet() - 0.5*float64(n)*math.Log(2*math.Pi)
}

// The spec's sanity setting (iff-spec §7): N = 250 on [−12.5, 12.5], SE
// with unit lengthscale and variance, noise 0.5. At the true
// hyperparameters (iterations = 0) ExactLML equals the naive formula, and
// IFF's 𝔉̂ is within 1e-2 nats per point of it, as the spec's check found
// (|L − 𝔉̂|/N ≈ 1e-3 there). At a too-short lengthscale whose bandwidth the
// grid does not cover, the gap opens up.
func TestIFFExactLML(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	n := 250
	x := mat.NewDense(n, 1, nil)
	for i := 0; i < n; i++ {
		x.Set(i, 0, -12.5+25*rng.Float64())
	}
	// y from the GP prior: y = L z + noise.
	y := make([]float64, n)
	k := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			d := x.At(i, 0) - x.At(j, 0)
			k.SetSym(i, j, math.Exp(-0.5*d*d)+map[bool]float64{true: 1e-8}[i == j])
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(k) {
		t.Fatal("prior covariance not positive definite")
	}
	var l mat.TriDense
	ch.LTo(&l)
	z := make([]float64, n)
	for i := range z {
		z[i] = rng.NormFloat64()
	}
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			y[i] += l.At(i, j) * z[j]
		}
		y[i] += math.Sqrt(0.5) * rng.NormFloat64()
	}
	train := gp.Data{X: x, Y: y}
	for _, c := range []struct {
		ls         float64
		maxGapPerN float64 // bound on |L − 𝔉̂|/N
		minGapPerN float64
	}{
		{ls: 1, maxGapPerN: 1e-2},
		{ls: 0.5, maxGapPerN: math.Inf(1), minGapPerN: 5e-3},
	} {
		model, err := Build("iff", map[string]any{"kernel": "se", "freqs_per_dim": int64(20), "lengthscales": []float64{c.ls},
			"variance": 1.0, "noise_variance": 0.5})
		if err != nil {
			t.Fatal(err)
		}
		res, err := model.Fit(context.Background(), train, FitOptions{Iterations: 0}, nil)
		if err != nil {
			t.Fatal(err)
		}
		em, ok := model.(ExactLMLModel)
		if !ok {
			t.Fatal("iff does not implement ExactLMLModel")
		}
		got, err := em.ExactLML(train)
		if err != nil {
			t.Fatal(err)
		}
		want := naiveSELML(x, y, 1, c.ls, 0.5)
		if math.Abs(got-want) > 1e-8*math.Abs(want) {
			t.Errorf("ℓ = %v: ExactLML = %.10g, naive = %.10g", c.ls, got, want)
		}
		gap := math.Abs(got-res.Objective) / float64(n)
		if gap > c.maxGapPerN || gap < c.minGapPerN {
			t.Errorf("ℓ = %v: |L − 𝔉̂|/N = %.3g, want in [%g, %g] (L = %.6g, 𝔉̂ = %.6g)", c.ls, gap, c.minGapPerN, c.maxGapPerN, got, res.Objective)
		}
		t.Logf("ℓ = %v: L = %.4f, 𝔉̂ = %.4f, (L − 𝔉̂)/N = %.2e", c.ls, got, res.Objective, (got-res.Objective)/float64(n))
	}
}

func TestExactLMLBeforeFit(t *testing.T) {
	model, err := Build("iff", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := model.(ExactLMLModel).ExactLML(gp.Data{X: mat.NewDense(2, 1, []float64{0, 1}), Y: []float64{0, 1}}); err == nil {
		t.Error("ExactLML before Fit: no error")
	}
}

// VFF (collapsed and SVGP) and B-splines report the exact L of their
// product-Matérn prior; on 1-D data that is the Matérn-5/2 GP itself, so it
// equals exact GPR's log marginal likelihood at the same hyperparameters.
func TestIntervalExactLML(t *testing.T) {
	train := iffTestData(150, 2)
	ref, err := Build("gpr", map[string]any{"kernel": "matern52", "lengthscales": []float64{0.7}, "variance": 1.3, "noise_variance": 0.2})
	if err != nil {
		t.Fatal(err)
	}
	rres, err := ref.Fit(context.Background(), train, FitOptions{Iterations: 0}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		method string
		p      map[string]any
	}{
		{"vff", map[string]any{"frequencies": int64(10)}},
		{"vff", map[string]any{"frequencies": int64(10), "objective": "svgp"}},
		{"bspline", map[string]any{"bases": int64(12)}},
	} {
		c.p["lengthscales"], c.p["variance"], c.p["noise_variance"] = []float64{0.7}, 1.3, 0.2
		m, err := Build(c.method, c.p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := m.Fit(context.Background(), train, FitOptions{Iterations: 0}, nil); err != nil {
			t.Fatal(err)
		}
		got, err := m.(ExactLMLModel).ExactLML(train)
		if err != nil {
			t.Fatalf("%s %v: %v", c.method, c.p["objective"], err)
		}
		if math.Abs(got-rres.Objective) > 1e-8*math.Abs(rres.Objective) {
			t.Errorf("%s %v: ExactLML = %.10g, exact GPR = %.10g", c.method, c.p["objective"], got, rres.Objective)
		}
	}
}
