package kernels

import (
	"fmt"
	"math"
	"testing"

	"gonum.org/v1/gonum/diff/fd"
	"gonum.org/v1/gonum/integrate/quad"
	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
	"sgplab/gp/param"
)

func spectralBound(t *testing.T, name string, dim int, opts Options) (SpectralBound, *param.Set, Kernel) {
	t.Helper()
	k := mustNew(t, name, dim, opts)
	s := declared(t, k)
	b, ok := k.Bind(s.Bind(ad.NewTape()), "kern.").(SpectralBound)
	if !ok {
		t.Fatalf("%s does not implement SpectralBound", name)
	}
	return b, s, k
}

// composite integrates f over [a, b] with n panels of 10-point Gauss–Legendre.
func composite(f func(float64) float64, a, b float64, n int) float64 {
	h := (b - a) / float64(n)
	s := 0.0
	for i := 0; i < n; i++ {
		s += quad.Fixed(f, a+float64(i)*h, a+float64(i+1)*h, 10, nil, 0)
	}
	return s
}

var spectralNames = []string{"se", "matern12", "matern32", "matern52"}

// TestDensityIntegratesToVariance checks ∫S = σ² in 1-D and, with ARD
// lengthscales, in 2-D, using ξ = tan(u)/(2πℓ) to map R onto (−π/2, π/2).
func TestDensityIntegratesToVariance(t *testing.T) {
	const v = 1.7
	for _, name := range spectralNames {
		b1, _, _ := spectralBound(t, name, 1, Options{Variance: v, Lengthscales: []float64{0.6}})
		one := mat.NewDense(1, 1, nil)
		dens := func(b SpectralBound, xi ...float64) float64 {
			return b.Density(mat.NewDense(1, len(xi), xi)).Value().At(0, 0)
		}
		sub := func(u, l float64) (xi, jac float64) {
			c := 1 / (2 * math.Pi * l)
			tn := math.Tan(u)
			return c * tn, c * (1 + tn*tn)
		}
		got := composite(func(u float64) float64 {
			xi, jac := sub(u, 0.6)
			one.Set(0, 0, xi)
			return b1.Density1D(one, 0).Value().At(0, 0) * jac
		}, -math.Pi/2, math.Pi/2, 40)
		if math.Abs(got-v) > 1e-8 {
			t.Errorf("%s 1-D: ∫S = %.12g, want %v", name, got, v)
		}

		// 2-D with ARD: ξ_d = η_d/(2πℓ_d), then polar coordinates in η with
		// ρ = tan u, which keeps the heavy Matérn-½ tail smooth.
		ls := []float64{0.6, 1.4}
		b2, _, _ := spectralBound(t, name, 2, Options{Variance: v, Lengthscales: ls})
		got = composite(func(u float64) float64 {
			rho, jac := math.Tan(u), 1/(math.Cos(u)*math.Cos(u))
			return composite(func(phi float64) float64 {
				x1 := rho * math.Cos(phi) / (2 * math.Pi * ls[0])
				x2 := rho * math.Sin(phi) / (2 * math.Pi * ls[1])
				return dens(b2, x1, x2) * rho * jac / (4 * math.Pi * math.Pi * ls[0] * ls[1])
			}, 0, 2*math.Pi, 2)
		}, 0, math.Pi/2, 40)
		if math.Abs(got-v) > 1e-6 {
			t.Errorf("%s 2-D: ∫S = %.12g, want %v", name, got, v)
		}
	}
}

// halfLineFourier integrates 2∫₀^T f(ξ) cos(2πξτ) dξ by 10-point
// Gauss–Legendre on panels that grow geometrically from scale/8 (resolving
// the peak of f at 0) and are split so that no panel spans more than a
// quarter period. f is evaluated once on all nodes.
func halfLineFourier(f func(xi []float64) []float64, tau, scale, T float64) float64 {
	var nodes, weights []float64
	x, w := make([]float64, 10), make([]float64, 10)
	a, width := 0.0, scale/8
	for a < T {
		b := math.Min(a+width, T)
		n := int(math.Ceil((b-a)*tau*4)) + 1
		h := (b - a) / float64(n)
		for i := 0; i < n; i++ {
			quad.Legendre{}.FixedLocations(x, w, a+float64(i)*h, a+float64(i+1)*h)
			nodes = append(nodes, x...)
			weights = append(weights, w...)
		}
		a, width = b, width*1.5
	}
	s := 0.0
	for i, v := range f(nodes) {
		s += weights[i] * v * math.Cos(2*math.Pi*nodes[i]*tau)
	}
	return 2 * s
}

// TestDensityFourierReproducesKernel checks k(τ) = ∫ S(ξ) cos(2πξτ) dξ at
// several τ, in 1-D for every kernel (through Density1D on a 3-D ARD
// kernel, i.e. k(τ e_d)) and in 2-D for SE and Matérn-5/2. The density is
// even in each coordinate, so the 2-D integral is 4∫∫_{ξ≥0} S cos cos.
func TestDensityFourierReproducesKernel(t *testing.T) {
	const v = 1.3
	ls := []float64{0.6, 1.1, 0.8}
	// Cut-offs (in units of 1/ℓ) beyond which the omitted oscillating tail,
	// about S(T)/(2πτ), is below the tolerance.
	cut := map[string]float64{"se": 8, "matern12": 1000, "matern32": 100, "matern52": 40}
	tol := map[string]float64{"se": 1e-12, "matern12": 2e-7, "matern32": 1e-9, "matern52": 1e-10}
	for _, name := range spectralNames {
		b, s, k := spectralBound(t, name, 3, Options{Variance: v, Lengthscales: ls})
		for d := 0; d < 3; d++ {
			for _, tau := range []float64{0.15, 0.7, 1.9} {
				got := halfLineFourier(func(xi []float64) []float64 {
					return mat.Col(nil, 0, b.Density1D(mat.NewDense(len(xi), 1, xi), d).Value())
				}, tau, 1/ls[d], cut[name]/ls[d])
				x := mat.NewDense(1, 3, nil)
				x.Set(0, d, tau)
				want := Matrix(k, s, "kern.", x, mat.NewDense(1, 3, nil)).At(0, 0)
				if math.Abs(got-want) > tol[name] {
					t.Errorf("%s dim %d τ=%v: Fourier integral %.12g, k(τ) = %.12g", name, d, tau, got, want)
				}
			}
		}
	}
	for _, name := range []string{"se", "matern52"} {
		ls2 := []float64{0.6, 1.1}
		b, s, k := spectralBound(t, name, 2, Options{Variance: v, Lengthscales: ls2})
		c := map[string]float64{"se": 8, "matern52": 15}[name]
		for _, tau := range [][]float64{{0.3, -0.5}, {0.9, 0.2}} {
			got := halfLineFourier(func(x1s []float64) []float64 {
				out := make([]float64, len(x1s))
				for i, x1 := range x1s {
					out[i] = halfLineFourier(func(x2s []float64) []float64 {
						om := mat.NewDense(len(x2s), 2, nil)
						for j, x2 := range x2s {
							om.Set(j, 0, x1)
							om.Set(j, 1, x2)
						}
						return mat.Col(nil, 0, b.Density(om).Value())
					}, math.Abs(tau[1]), 1/ls2[1], c/ls2[1])
				}
				return out
			}, math.Abs(tau[0]), 1/ls2[0], c/ls2[0])
			want := Matrix(k, s, "kern.", mat.NewDense(1, 2, tau), mat.NewDense(1, 2, nil)).At(0, 0)
			if math.Abs(got-want) > 1e-7 {
				t.Errorf("%s 2-D τ=%v: Fourier integral %.10g, k(τ) = %.10g", name, tau, got, want)
			}
		}
	}
}

// TestDensityConventions checks the mapping to the VOF paper's unitary
// convention (s(ω) = v l exp(−l²ω²/2) for SE) and SE separability.
func TestDensityConventions(t *testing.T) {
	const v, l = 1.4, 0.7
	b, _, _ := spectralBound(t, "se", 1, Options{Variance: v, Lengthscales: []float64{l}})
	for _, w := range []float64{0, 0.8, 2.5} {
		vof := v * l * math.Exp(-l*l*w*w/2)
		got := math.Pow(2*math.Pi, -0.5) * b.Density(mat.NewDense(1, 1, []float64{w / (2 * math.Pi)})).Value().At(0, 0)
		if math.Abs(got-vof) > 1e-14 {
			t.Errorf("ω=%v: (2π)^{-1/2} S(ω/2π) = %v, VOF s(ω) = %v", w, got, vof)
		}
	}
	// VOF Matérn-3/2: s(ω) = 2√2 v λ³ / (√π (λ² + ω²)²), λ = √3/l.
	bm, _, _ := spectralBound(t, "matern32", 1, Options{Variance: v, Lengthscales: []float64{l}})
	lam := math.Sqrt(3) / l
	for _, w := range []float64{0, 0.8, 2.5} {
		vof := 2 * math.Sqrt2 * v * lam * lam * lam / (math.Sqrt(math.Pi) * math.Pow(lam*lam+w*w, 2))
		got := math.Pow(2*math.Pi, -0.5) * bm.Density(mat.NewDense(1, 1, []float64{w / (2 * math.Pi)})).Value().At(0, 0)
		if math.Abs(got-vof) > 1e-13 {
			t.Errorf("Matérn-3/2 ω=%v: %v, VOF %v", w, got, vof)
		}
	}
	b3, _, _ := spectralBound(t, "se", 3, Options{Variance: v, Lengthscales: []float64{0.5, 0.9, 1.6}})
	xi := []float64{0.3, -0.2, 0.45}
	want := v * v * v
	for d := range xi {
		want *= b3.Density1D(mat.NewDense(1, 1, xi[d:d+1]), d).Value().At(0, 0) / v
	}
	if got := b3.Density(mat.NewDense(1, 3, xi)).Value().At(0, 0); math.Abs(got-want/(v*v)) > 1e-14 {
		t.Errorf("SE density %v, product of 1-D densities %v", got, want/(v*v))
	}
	ls := b3.Lengthscales().Value()
	if c := ls.RawMatrix().Cols; c != 3 || math.Abs(ls.At(0, 2)-1.6) > 1e-14 {
		t.Errorf("Lengthscales() = %v", mat.Formatted(ls))
	}
}

// TestDensityGradients checks d S / d hyperparameters by central differences.
func TestDensityGradients(t *testing.T) {
	omega := mat.NewDense(3, 2, []float64{0, 0, 0.3, -0.5, 1.2, 0.4})
	w := mat.NewDense(3, 1, []float64{0.7, -1.2, 2.1})
	for _, name := range spectralNames {
		for _, opts := range []Options{{Variance: 1.2, Lengthscales: []float64{0.7}}, {Variance: 0.8, Lengthscales: []float64{0.6, 1.3}}} {
			for _, oneD := range []int{-1, 0, 1} {
				t.Run(fmt.Sprintf("%s-%d-%d", name, len(opts.Lengthscales), oneD), func(t *testing.T) {
					k := mustNew(t, name, 2, opts)
					s := declared(t, k)
					eval := func(tp *ad.Tape, bs *param.Bound) *ad.Node {
						b := k.Bind(bs, "kern.").(SpectralBound)
						if oneD < 0 {
							return weighted(b.Density(omega), w)
						}
						return weighted(b.Density1D(omega.Slice(0, 3, oneD, oneD+1).(*mat.Dense), oneD), w)
					}
					tp := ad.NewTape()
					bs := s.Bind(tp)
					tp.Backward(eval(tp, bs))
					got := bs.Gradient()
					v0 := s.Vector()
					want := fd.Gradient(nil, func(v []float64) float64 {
						s.SetVector(v)
						tp := ad.NewTape()
						return eval(tp, s.Bind(tp)).Scalar()
					}, v0, &fd.Settings{Formula: fd.Central, Step: 1e-6})
					compareGrad(t, name, got, want, 1e-6)
				})
			}
		}
	}
}
