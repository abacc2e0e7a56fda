package likelihoods

import (
	"math"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
	"sgplab/gp/param"
)

// NoiseVarianceName is the parameter Gaussian registers (after the prefix).
const NoiseVarianceName = "noise_variance"

// Gaussian is p(y | f) = N(y; f, σ²) with σ² = prefix+"noise_variance".
type Gaussian struct {
	// InitVariance is the noise variance Declare registers.
	InitVariance float64
}

// NewGaussian returns a Gaussian likelihood whose noise variance starts at
// initVariance.
func NewGaussian(initVariance float64) *Gaussian { return &Gaussian{InitVariance: initVariance} }

func (*Gaussian) Name() string { return "gaussian" }

// Declare registers prefix+"noise_variance" with the default positive transform.
func (g *Gaussian) Declare(s *param.Set, prefix string) error {
	return s.AddScalar(prefix+NoiseVarianceName, g.InitVariance, param.DefaultPositive)
}

// VarExp is −½log(2πσ²) − ((y − μ)² + v)/(2σ²) per point.
func (*Gaussian) VarExp(b *param.Bound, prefix string, mu, v *ad.Node, y *mat.Dense) *ad.Node {
	n := checkShapes("Gaussian", mu, v, y)
	s2n := b.Get(prefix + NoiseVarianceName)
	s2 := s2n.Scalar()
	muv, vv := mu.Value(), v.Value()
	out := mat.NewDense(n, 1, nil)
	c := -0.5 * math.Log(2*math.Pi*s2)
	for i := 0; i < n; i++ {
		d := y.At(i, 0) - muv.At(i, 0)
		out.Set(i, 0, c-(d*d+vv.At(i, 0))/(2*s2))
	}
	return ad.Custom(out, func(g *mat.Dense) []*mat.Dense {
		var gmu, gv, gs2 *mat.Dense
		if mu.NeedsGrad() {
			gmu = mat.NewDense(n, 1, nil)
		}
		if v.NeedsGrad() {
			gv = mat.NewDense(n, 1, nil)
		}
		var ds2 float64
		for i := 0; i < n; i++ {
			gi := g.At(i, 0)
			d := y.At(i, 0) - muv.At(i, 0)
			if gmu != nil {
				gmu.Set(i, 0, gi*d/s2)
			}
			if gv != nil {
				gv.Set(i, 0, -gi/(2*s2))
			}
			ds2 += gi * (-0.5/s2 + (d*d+vv.At(i, 0))/(2*s2*s2))
		}
		if s2n.NeedsGrad() {
			gs2 = mat.NewDense(1, 1, []float64{ds2})
		}
		return []*mat.Dense{gmu, gv, gs2}
	}, mu, v, s2n)
}

// Predict returns mean μ and variance v + σ².
func (*Gaussian) Predict(s *param.Set, prefix string, mu, v []float64) (ymean, yvar []float64) {
	checkLens("Gaussian.Predict", len(mu), v)
	s2 := s.Scalar(prefix + NoiseVarianceName)
	ymean = append([]float64(nil), mu...)
	yvar = make([]float64, len(v))
	for i, vi := range v {
		yvar[i] = vi + s2
	}
	return ymean, yvar
}

// LogDensity is log N(y; μ, v + σ²).
func (*Gaussian) LogDensity(s *param.Set, prefix string, mu, v, y []float64) []float64 {
	checkLens("Gaussian.LogDensity", len(mu), v, y)
	s2 := s.Scalar(prefix + NoiseVarianceName)
	out := make([]float64, len(mu))
	for i := range mu {
		tv := v[i] + s2
		d := y[i] - mu[i]
		out[i] = -0.5 * (math.Log(2*math.Pi*tv) + d*d/tv)
	}
	return out
}
