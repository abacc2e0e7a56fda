package features

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
	"sgplab/gp/kernels"
)

// BenchmarkWhitenP compares B = L⁻¹PL⁻ᵀ (value and gradient with respect
// to the hyperparameters) through a dense Cholesky of Kuu with the
// structured whitening, for 2-D Kronecker VFF (M = 961) and 8-D additive
// VFF with 30 frequencies (M = 472).
func BenchmarkWhitenP(b *testing.B) {
	m52, _ := kernels.New("matern52", 1, kernels.Options{})
	m32, _ := kernels.New("matern32", 1, kernels.Options{})
	sep, _ := NewSeparable(m52, m52)
	parts := make([]kernels.Kernel, 8)
	for i := range parts {
		parts[i] = m32
	}
	add, _ := kernels.Additive(parts...)
	kron, _ := NewVFF(sep, []Interval{{0, 1}, {0, 1}}, 16, Kronecker, false)
	ivs := make([]Interval, 8)
	for i := range ivs {
		ivs[i] = Interval{0, 1}
	}
	additive, _ := NewVFF(add, ivs, 30, Additive, false)
	for _, c := range []struct {
		name string
		f    *IntervalFeature
	}{{"kronecker-M=961", kron}, {"additive-M=472", additive}} {
		m := c.f.M()
		p := mat.NewDense(m, m, nil)
		for i := 0; i < m; i++ {
			for j := 0; j < m; j++ {
				p.Set(i, j, math.Exp(-math.Abs(float64(i-j))/50))
			}
		}
		for _, structured := range []bool{false, true} {
			name := c.name + "/dense"
			if structured {
				name = c.name + "/structured"
			}
			b.Run(name, func(b *testing.B) {
				for b.Loop() {
					tp := ad.NewTape()
					d := c.f.Dim()
					ks := make([]kernels.Bound, d)
					var vars []*ad.Node
					for i := range ks {
						v, l := tp.Var(mat.NewDense(1, 1, []float64{1})), tp.Var(mat.NewDense(1, 1, []float64{0.2}))
						ks[i] = &fakeMatern{v: v, l: l}
						vars = append(vars, v, l)
					}
					kb := fakeParts{ks}
					var w func(*ad.Node) *ad.Node
					if structured {
						var err error
						if w, err = c.f.Whitener(kb, 3); err != nil {
							b.Fatal(err)
						}
					} else {
						l, err := ad.Cholesky(c.f.Kuu(kb))
						if err != nil {
							b.Fatal(err)
						}
						w = func(x *ad.Node) *ad.Node { return ad.SolveLower(l, x) }
					}
					bm := w(ad.T(w(tp.Const(p))))
					tp.Backward(ad.Trace(bm))
					_ = vars[0].Grad()
				}
			})
		}
	}
}
