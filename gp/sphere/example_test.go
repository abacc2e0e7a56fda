package sphere_test

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp/sphere"
)

// The harmonics of levels 0…3 on S⁸ ⊂ R⁹ (the VISH airline setting) and
// the addition theorem at one point: Σ_k φ_{ℓk}(x)² = N(9,ℓ)/Ω₈.
func ExampleBasis() {
	b, err := sphere.NewBasis(9, 3)
	if err != nil {
		panic(err)
	}
	x := mat.NewDense(1, 9, nil)
	x.Set(0, 8, 1) // the north pole
	phi, _ := b.Eval(x)
	sum := make([]float64, 4)
	for m, l := range b.LevelOf() {
		sum[l] += phi.At(m, 0) * phi.At(m, 0)
	}
	fmt.Println("M =", b.M())
	for l, s := range sum {
		fmt.Printf("level %d: %d harmonics, Σφ² Ω = %.6f\n", l, sphere.LevelCount(9, l), s*sphere.SurfaceArea(9))
	}
	// Output:
	// M = 210
	// level 0: 1 harmonics, Σφ² Ω = 1.000000
	// level 1: 9 harmonics, Σφ² Ω = 9.000000
	// level 2: 44 harmonics, Σφ² Ω = 44.000000
	// level 3: 156 harmonics, Σφ² Ω = 156.000000
}

// Funk–Hecke coefficients of the ReLU-network (arc-cosine order 1) shape
// on S²: 3π/2, 2π/3, 3π/32, then zero at every odd level ≥ 3.
func ExampleFunkHecke() {
	s := func(t float64) (float64, float64) {
		return (math.Sqrt(1-t*t) + (math.Pi-math.Acos(t))*t) / math.Pi, 0
	}
	lam, _, err := sphere.FunkHecke(3, 5, s, sphere.EvenPlusLinear)
	if err != nil {
		panic(err)
	}
	for l, v := range lam {
		fmt.Printf("λ_%d = %.6f\n", l, v)
	}
	// Output:
	// λ_0 = 4.712389
	// λ_1 = 2.094395
	// λ_2 = 0.294524
	// λ_3 = 0.000000
	// λ_4 = 0.008181
	// λ_5 = 0.000000
}
