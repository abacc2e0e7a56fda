// Package illustrations computes the figures of papers that are drawn
// from first principles rather than from runs, exactly and
// deterministically; the report draws them (kind = "illustration").
//
// IFFConstruction is Figure 1 of Cheema & Rasmussen (2023): a GP prior
// conditioned on point Fourier features and on integrated Fourier
// features, in the data and the frequency domain.
package illustrations

import (
	"math"
	"math/rand/v2"
)

// IFFConstruction is the computation behind Figure 1 of Cheema &
// Rasmussen (2023): a GP prior with an SE kernel (unit variance and
// lengthscale) written in the frequency domain, conditioned on (b) point
// Fourier features and (c) integrated Fourier features (IFF), in the data
// domain f(x) and the frequency domain.
//
// The continuum of frequencies is replaced by a fine grid ξ_j = (j+½)Δ,
// j < J, on (0, ξmax): f(x) = Σ_j A_j cos 2πξ_j x + B_j sin 2πξ_j x with
// A_j, B_j ~ N(0, 2 s(ξ_j) Δ) independent, so Var f(x) = 2Δ Σ_j s(ξ_j) → k(0)
// = 1. The frequency domain is drawn as w±_j = (A_j ± B_j)/(2√Δ), the
// real white noise at ±ξ_j with variance s(ξ_j). Features:
//   - (b) Fourier: w±_j at the fine frequency nearest each z_m (a point
//     evaluation of the white noise);
//   - (c) IFF: the average of w± over the box [z_m − ε/2, z_m + ε/2] (the
//     paper's Eq. 12 up to the 1/s normalisation, which is constant over a
//     box in the midpoint approximation it uses).
//
// Both are linear in the independent weights, so conditioning is exact
// (Matheron's rule per feature: each feature involves disjoint weights).
// The "data" are the features of one draw from the prior (Draws).
type IFFConstruction struct {
	Eps   float64 // width ε of a feature's box
	XMax  float64 // the data domain is [−XMax, XMax]
	XiMax float64 // the frequency domain drawn is (−XiMax, XiMax)
	// PerBox fine frequencies make a box; Boxes boxes (features per sign)
	// are covered by the features.
	PerBox, Boxes int
	Delta         float64   // fine grid spacing, Eps/PerBox
	Xi, S         []float64 // fine grid ξ_j and s(ξ_j)
	X             []float64 // data-domain grid
}

// NewIFFConstruction is the setting of the paper's figure: ε = 0.025, 16
// features per sign (|ξ| < 0.4), 400 fine frequencies per box up to
// |ξ| = 0.6, x on [−5, 5] at 201 points.
func NewIFFConstruction() *IFFConstruction {
	c := &IFFConstruction{Eps: 0.025, XMax: 5, XiMax: 0.6, PerBox: 400, Boxes: 16}
	c.Delta = c.Eps / float64(c.PerBox)
	nbox := int(math.Round(c.XiMax / c.Eps))
	j := nbox * c.PerBox
	c.Xi, c.S = make([]float64, j), make([]float64, j)
	for i := range c.Xi {
		c.Xi[i] = (float64(i) + 0.5) * c.Delta
		c.S[i] = SESpectral(c.Xi[i])
	}
	const nx = 201
	c.X = make([]float64, nx)
	for i := range c.X {
		c.X[i] = -c.XMax + 2*c.XMax*float64(i)/(nx-1)
	}
	return c
}

// SESpectral is s(ξ) = √(2π) exp(−2π²ξ²), the spectral density of the SE
// kernel with unit variance and lengthscale (∫ s = 1).
func SESpectral(xi float64) float64 {
	return math.Sqrt(2*math.Pi) * math.Exp(-2*math.Pi*math.Pi*xi*xi)
}

// BoxCentre is z_m = (m + ½) ε.
func (c *IFFConstruction) BoxCentre(m int) float64 { return (float64(m) + 0.5) * c.Eps }

// pointIndex is the fine frequency nearest z_m (its box's middle).
func (c *IFFConstruction) pointIndex(m int) int { return m*c.PerBox + c.PerBox/2 }

// Weights holds w+ and w− on the fine grid (A = √Δ (w+ + w−), B = √Δ (w+ − w−)).
type Weights struct{ Plus, Minus []float64 }

// Draw samples weights from the prior.
func (c *IFFConstruction) Draw(rng *rand.Rand) Weights {
	w := Weights{make([]float64, len(c.Xi)), make([]float64, len(c.Xi))}
	for j := range c.Xi {
		sd := math.Sqrt(c.S[j])
		w.Plus[j] = sd * rng.NormFloat64()
		w.Minus[j] = sd * rng.NormFloat64()
	}
	return w
}

// F evaluates f(x) = Σ_j √Δ [(w+ + w−) cos 2πξx + (w+ − w−) sin 2πξx].
func (c *IFFConstruction) F(w Weights) []float64 {
	out := make([]float64, len(c.X))
	sq := math.Sqrt(c.Delta)
	for i, x := range c.X {
		var v float64
		for j, xi := range c.Xi {
			sn, cs := math.Sincos(2 * math.Pi * xi * x)
			v += sq * ((w.Plus[j]+w.Minus[j])*cs + (w.Plus[j]-w.Minus[j])*sn)
		}
		out[i] = v
	}
	return out
}

// Feature lists the fine weights that feature m averages (with equal
// weights): one for a point Fourier feature, its box for IFF.
func (c *IFFConstruction) Feature(m int, integrated bool) []int {
	if !integrated {
		return []int{c.pointIndex(m)}
	}
	idx := make([]int, c.PerBox)
	for k := range idx {
		idx[k] = m*c.PerBox + k
	}
	return idx
}

// Condition applies Matheron's rule: w ← w + Σ_m v a (u_m − aᵀw)/(aᵀ V a)
// for each feature (disjoint supports, so features condition independently),
// on both signs, where u are the features of truth.
func (c *IFFConstruction) Condition(w, truth Weights, integrated bool) Weights {
	out := Weights{append([]float64(nil), w.Plus...), append([]float64(nil), w.Minus...)}
	for m := 0; m < c.Boxes; m++ {
		idx := c.Feature(m, integrated)
		a := 1 / float64(len(idx))
		var vs float64
		for _, j := range idx {
			vs += a * a * c.S[j]
		}
		for _, pair := range []struct{ dst, w, t []float64 }{{out.Plus, w.Plus, truth.Plus}, {out.Minus, w.Minus, truth.Minus}} {
			var u, aw float64
			for _, j := range idx {
				u += a * pair.t[j]
				aw += a * pair.w[j]
			}
			for _, j := range idx {
				pair.dst[j] += c.S[j] * a * (u - aw) / vs
			}
		}
	}
	return out
}

// Moments returns the exact conditional mean and variance of f(x) given the
// features of truth (none: the prior).
func (c *IFFConstruction) Moments(truth Weights, conditioned, integrated bool) (mean, variance []float64) {
	mean, variance = make([]float64, len(c.X)), make([]float64, len(c.X))
	if !conditioned {
		for i := range c.X {
			variance[i] = 2 * c.Delta * sum(c.S)
		}
		return mean, variance
	}
	zero := Weights{make([]float64, len(c.Xi)), make([]float64, len(c.Xi))}
	mean = c.F(c.Condition(zero, truth, integrated))
	sq := math.Sqrt(c.Delta)
	for i, x := range c.X {
		v := 2 * c.Delta * sum(c.S)
		// Per feature and sign: f(x) = Σ_j g±_j w±_j with g± = √Δ (cos ± sin);
		// conditioning on aᵀw± removes (Σ_j g±_j s_j a)² / (a² Σ_j s_j).
		for m := 0; m < c.Boxes; m++ {
			idx := c.Feature(m, integrated)
			a := 1 / float64(len(idx))
			var gp, gm, vs float64
			for _, j := range idx {
				sn, cs := math.Sincos(2 * math.Pi * c.Xi[j] * x)
				gp += sq * (cs + sn) * c.S[j] * a
				gm += sq * (cs - sn) * c.S[j] * a
				vs += a * a * c.S[j]
			}
			v -= (gp*gp + gm*gm) / vs
		}
		variance[i] = v
	}
	return mean, variance
}

// Spectrum coarse-grains w± to the feature resolution: per box of width ε,
// g = ε^{-1/2} ∫_box w dξ ≈ √(Δ/ε)·… so that Var g = the box mean of s ≈
// s(z). It returns box centres on (−ξmax, ξmax) and g there.
func (c *IFFConstruction) Spectrum(w Weights) (z, g []float64) {
	nbox := len(c.Xi) / c.PerBox
	z, g = make([]float64, 2*nbox), make([]float64, 2*nbox)
	scale := 1 / math.Sqrt(float64(c.PerBox))
	for m := 0; m < nbox; m++ {
		var p, q float64
		for k := 0; k < c.PerBox; k++ {
			p += w.Plus[m*c.PerBox+k]
			q += w.Minus[m*c.PerBox+k]
		}
		z[nbox-1-m], g[nbox-1-m] = -c.BoxCentre(m), q*scale
		z[nbox+m], g[nbox+m] = c.BoxCentre(m), p*scale
	}
	return z, g
}

// SpectrumSD is the standard deviation of the coarse-grained spectrum per
// box, prior or given the features (point features leave a box's average
// almost unknown; integrated ones fix it).
func (c *IFFConstruction) SpectrumSD(conditioned, integrated bool) []float64 {
	nbox := len(c.Xi) / c.PerBox
	sd := make([]float64, 2*nbox)
	for m := 0; m < nbox; m++ {
		var tot float64
		for k := 0; k < c.PerBox; k++ {
			tot += c.S[m*c.PerBox+k]
		}
		v := tot / float64(c.PerBox)
		if conditioned && m < c.Boxes {
			if integrated {
				v = 0
			} else {
				sj := c.S[c.pointIndex(m)]
				v -= sj * sj / (float64(c.PerBox) * sj)
			}
		}
		sd[nbox-1-m], sd[nbox+m] = math.Sqrt(math.Max(v, 0)), math.Sqrt(math.Max(v, 0))
	}
	return sd
}

// Draws returns the figure's draws from the prior, seeded so that the
// figure is the same every time: the truth whose features are conditioned
// on, then n samples.
func (c *IFFConstruction) Draws(n int, seed uint64) (truth Weights, samples []Weights) {
	rng := rand.New(rand.NewPCG(seed, 1))
	truth = c.Draw(rng)
	samples = make([]Weights, n)
	for i := range samples {
		samples[i] = c.Draw(rng)
	}
	return truth, samples
}

// Zero is the prior mean of the weights.
func (c *IFFConstruction) Zero() Weights {
	return Weights{make([]float64, len(c.Xi)), make([]float64, len(c.Xi))}
}

// FeatureValues are the features of truth on the scale of Spectrum, at
// their frequencies ±z_m: a box average of w has sd √(s/PerBox), rescaled
// by √PerBox as Spectrum does; a point value already has sd √s.
func (c *IFFConstruction) FeatureValues(truth Weights, integrated bool) (z, u []float64) {
	for m := 0; m < c.Boxes; m++ {
		idx := c.Feature(m, integrated)
		var up, um float64
		for _, j := range idx {
			up += truth.Plus[j]
			um += truth.Minus[j]
		}
		k := 1 / float64(len(idx))
		if integrated {
			k = 1 / math.Sqrt(float64(len(idx)))
		}
		z, u = append(z, c.BoxCentre(m), -c.BoxCentre(m)), append(u, up*k, um*k)
	}
	return z, u
}

// OutsideMass is 1 − 2ε Σ_m s(z_m): the spectral mass outside the
// features' band by the midpoint rule, the variance of f(x) that IFF
// leaves (its trace term per point).
func (c *IFFConstruction) OutsideMass() float64 {
	var zs float64
	for m := 0; m < c.Boxes; m++ {
		zs += SESpectral(c.BoxCentre(m))
	}
	return 1 - 2*c.Eps*zs
}

func sum(v []float64) float64 {
	var t float64
	for _, x := range v {
		t += x
	}
	return t
}
