package likelihoods

import (
	"fmt"
	"math"
	"runtime"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
	"sgplab/gp/param"
	"sgplab/internal/goroutines"
)

// DefaultQuadraturePoints is the Gauss–Hermite order of New("bernoulli"), as
// in GPflow.
const DefaultQuadraturePoints = 20

// Bernoulli is the probit classification likelihood p(y | f) = Φ(y f) for
// labels y ∈ {−1, +1}. It has no parameters.
type Bernoulli struct {
	// x are the Gauss–Hermite nodes scaled by √2 and w the weights divided
	// by √π, so E_{N(0,1)}[g] ≈ Σ wᵢ g(xᵢ).
	x, w []float64
}

// NewBernoulli returns a probit likelihood whose variational expectations
// use points-point Gauss–Hermite quadrature.
func NewBernoulli(points int) (*Bernoulli, error) {
	gx, gw, err := GaussHermite(points)
	if err != nil {
		return nil, err
	}
	b := &Bernoulli{x: make([]float64, points), w: make([]float64, points)}
	for i := range gx {
		b.x[i] = math.Sqrt2 * gx[i]
		b.w[i] = gw[i] / math.SqrtPi
	}
	return b, nil
}

func mustBernoulli(points int) *Bernoulli {
	b, err := NewBernoulli(points)
	if err != nil {
		panic(err)
	}
	return b
}

// Points is the quadrature order.
func (b *Bernoulli) Points() int { return len(b.x) }

func (*Bernoulli) Name() string { return "bernoulli" }

// Declare registers nothing: the probit likelihood has no parameters.
func (*Bernoulli) Declare(*param.Set, string) error { return nil }

func label(y float64, i int) float64 {
	if y != 1 && y != -1 {
		panic(fmt.Sprintf("likelihoods: Bernoulli label %g at point %d; want −1 or +1", y, i))
	}
	return y
}

// VarExp is E_{N(f; μ, v)}[log Φ(y f)] by Gauss–Hermite quadrature. Its
// gradients are the exact derivatives of the quadrature sum:
// ∂/∂μ = Σ wᵢ h′(fᵢ) and ∂/∂v = Σ wᵢ h′(fᵢ) xᵢ / (2√v) with fᵢ = μ + √v xᵢ;
// for v ≤ 1e−12 (the removable singularity) the limit ½ Σ wᵢ h″(fᵢ) is used.
// Negative variances from round-off are treated as 0.
func (b *Bernoulli) VarExp(_ *param.Bound, _ string, mu, v *ad.Node, y *mat.Dense) *ad.Node {
	n := checkShapes("Bernoulli", mu, v, y)
	muv, vv := mu.Value(), v.Value()
	val := make([]float64, n)
	dmu := make([]float64, n)
	dv := make([]float64, n)
	for k := 0; k < n; k++ {
		label(y.At(k, 0), k) // panic here, not inside a worker goroutine
	}
	parallelChunks(n, func(lo, hi int) {
		for k := lo; k < hi; k++ {
			yk := y.At(k, 0)
			m, s2 := muv.At(k, 0), math.Max(vv.At(k, 0), 0)
			s := math.Sqrt(s2)
			var e, g1, gx, g2 float64
			for i, xi := range b.x {
				h, d1, d2 := logNormCDFDerivs(yk * (m + s*xi))
				wi := b.w[i]
				e += wi * h
				g1 += wi * d1
				gx += wi * d1 * xi
				g2 += wi * d2
			}
			val[k] = e
			dmu[k] = yk * g1 // d/df log Φ(y f) = y h′(y f)
			if s2 > 1e-12 {
				dv[k] = yk * gx / (2 * s)
			} else {
				dv[k] = 0.5 * g2 // y² = 1
			}
		}
	})
	return ad.Custom(mat.NewDense(n, 1, val), func(g *mat.Dense) []*mat.Dense {
		var gmu, gv *mat.Dense
		if mu.NeedsGrad() {
			gmu = mat.NewDense(n, 1, nil)
			for k := 0; k < n; k++ {
				gmu.Set(k, 0, g.At(k, 0)*dmu[k])
			}
		}
		if v.NeedsGrad() {
			gv = mat.NewDense(n, 1, nil)
			for k := 0; k < n; k++ {
				gv.Set(k, 0, g.At(k, 0)*dv[k])
			}
		}
		return []*mat.Dense{gmu, gv}
	}, mu, v)
}

// Predict returns p = p(y = +1) = Φ(μ/√(1 + v)) and the Bernoulli variance p(1 − p).
func (*Bernoulli) Predict(_ *param.Set, _ string, mu, v []float64) (ymean, yvar []float64) {
	checkLens("Bernoulli.Predict", len(mu), v)
	ymean = make([]float64, len(mu))
	yvar = make([]float64, len(mu))
	for i := range mu {
		p := NormCDF(mu[i] / math.Sqrt(1+math.Max(v[i], 0)))
		ymean[i], yvar[i] = p, p*(1-p)
	}
	return ymean, yvar
}

// LogDensity is log Φ(y μ/√(1 + v)), the closed form of ∫ Φ(y f) N(f; μ, v) df.
func (*Bernoulli) LogDensity(_ *param.Set, _ string, mu, v, y []float64) []float64 {
	checkLens("Bernoulli.LogDensity", len(mu), v, y)
	out := make([]float64, len(mu))
	for i := range mu {
		out[i] = LogNormCDF(label(y[i], i) * mu[i] / math.Sqrt(1+math.Max(v[i], 0)))
	}
	return out
}

// parallelChunks runs body over [0, n) split across the available cores
// when n is large enough to pay for the goroutines.
func parallelChunks(n int, body func(lo, hi int)) {
	workers := runtime.GOMAXPROCS(0)
	if n < 2048 || workers < 2 {
		body(0, n)
		return
	}
	var g goroutines.Group
	size := (n + workers - 1) / workers
	for lo := 0; lo < n; lo += size {
		hi := min(lo+size, n)
		g.Go(func() { body(lo, hi) })
	}
	g.Wait()
}
