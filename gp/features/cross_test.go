package features_test

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/diff/fd"
	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
	"sgplab/gp/features"
	"sgplab/gp/kernels"
	"sgplab/gp/param"
)

// scaledPoints is a test feature u = c·f(Z) that knows its covariance with
// inducing points only through CrossCovariance.
type scaledPoints struct {
	features.BoundPoints
	c float64
}

func (s scaledPoints) Kuu(k kernels.Bound) *ad.Node {
	return ad.Scale(s.c*s.c, s.BoundPoints.Kuu(k))
}
func (s scaledPoints) Kuf(k kernels.Bound, x *ad.Node) *ad.Node {
	return ad.Scale(s.c, s.BoundPoints.Kuf(k, x))
}
func (s scaledPoints) Points() *ad.Node { return nil } // not a point set: hide the embedded one

func (s scaledPoints) KuvWith(k kernels.Bound, v features.Bound) (*ad.Node, bool, error) {
	if p, ok := v.(features.BoundPoints); ok {
		return ad.Scale(s.c, k.K(s.Z, p.Z)), true, nil
	}
	return nil, false, nil
}
func (s scaledPoints) KnownPartners() []string { return []string{"inducing points"} }

func randDense(rng *rand.Rand, r, c int, lo, hi float64) *mat.Dense {
	m := mat.NewDense(r, c, nil)
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			m.Set(i, j, lo+(hi-lo)*rng.Float64())
		}
	}
	return m
}

func TestKuvDispatch(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	k, err := kernels.New("matern32", 1, kernels.Options{Variance: 1.2, Lengthscales: []float64{0.3}})
	if err != nil {
		t.Fatal(err)
	}
	s := param.NewSet()
	if err := k.Declare(s, "kern."); err != nil {
		t.Fatal(err)
	}
	za, zb := randDense(rng, 4, 1, -0.5, 1.5), randDense(rng, 3, 1, 0, 1)
	for pfx, z := range map[string]*mat.Dense{"a.": za, "b.": zb} {
		if err := features.NewInducingPoints(z).Declare(s, pfx); err != nil {
			t.Fatal(err)
		}
	}
	vff, err := features.NewVFF(k, []features.Interval{{A: 0, B: 1}}, 4, features.Kronecker, false)
	if err != nil {
		t.Fatal(err)
	}
	iff, err := features.NewIFF([]int{3}, []float64{0.5}, false)
	if err != nil {
		t.Fatal(err)
	}
	tape := ad.NewTape()
	b := s.Bind(tape)
	kb := k.Bind(b, "kern.")
	pa := features.NewInducingPoints(za).Bind(b, "a.")
	pb := features.NewInducingPoints(zb).Bind(b, "b.")
	vb := vff.Bind(b, "")
	sc := scaledPoints{BoundPoints: pb.(features.BoundPoints), c: 2.5}
	same := func(name string, got *ad.Node, err error, want *mat.Dense) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !mat.EqualApprox(got.Value(), want, 1e-14) {
			t.Errorf("%s = %v, want %v", name, mat.Formatted(got.Value()), mat.Formatted(want))
		}
	}
	kab := kb.K(b.Get("a.z"), b.Get("b.z")).Value()
	got, err := features.Kuv(kb, pa, pb)
	same("Kuv(points, points)", got, err, kab)
	got, err = features.Kuv(kb, vb, pa)
	same("Kuv(vff, points)", got, err, vb.Kuf(kb, b.Get("a.z")).Value())
	got, err = features.Kuv(kb, pa, vb)
	same("Kuv(points, vff)", got, err, mat.DenseCopyOf(vb.Kuf(kb, b.Get("a.z")).Value().T()))
	got, err = features.Kuv(kb, features.DenseKuu(pa), features.DenseKuu(vb))
	same("Kuv through wrappers", got, err, mat.DenseCopyOf(vb.Kuf(kb, b.Get("a.z")).Value().T()))
	// CrossCovariance is asked first (u), then transposed (v).
	scaled := mat.DenseCopyOf(kb.K(b.Get("b.z"), b.Get("a.z")).Value())
	scaled.Scale(2.5, scaled)
	got, err = features.Kuv(kb, sc, pa)
	same("Kuv(custom, points)", got, err, scaled)
	got, err = features.Kuv(kb, pa, sc)
	same("Kuv(points, custom)", got, err, mat.DenseCopyOf(scaled.T()))
	// Undefined pairs are errors naming the types and the defined pairs.
	_, err = features.Kuv(kb, vb, iff.Bind(b, ""))
	if err == nil || !strings.Contains(err.Error(), "no cross-covariance between vff(kronecker) and iff") {
		t.Errorf("Kuv(vff, iff) error = %v", err)
	}
	_, err = features.Kuv(kb, sc, vb)
	if err == nil || !strings.Contains(err.Error(), "inducing points") {
		t.Errorf("Kuv(custom, vff) error = %v, want it to list the custom pairs", err)
	}
	if _, err := features.Kuv(kb, nil, pa); err == nil {
		t.Error("Kuv with a nil set: no error")
	}
	// KufChecked turns bad inputs into errors.
	if _, err := features.KufChecked(kb, vb, tape.Const(mat.NewDense(1, 1, []float64{math.NaN()}))); err == nil {
		t.Error("KufChecked at NaN: no error")
	}
	if _, err := features.KufChecked(kb, iff.Bind(b, ""), tape.Const(mat.NewDense(1, 2, nil))); err == nil {
		t.Error("KufChecked with 2 columns for a 1-D IFF: no error")
	}
}

// checkSetGradient compares the tape gradient of f with respect to every
// trainable parameter of s (unconstrained) with central differences.
func checkSetGradient(t *testing.T, s *param.Set, f func(*ad.Tape, *param.Bound) (*ad.Node, error), tol float64) {
	t.Helper()
	x0 := s.Vector()
	defer s.SetVector(x0)
	eval := func() float64 {
		tape := ad.NewTape()
		out, err := f(tape, s.Bind(tape))
		if err != nil {
			t.Fatal(err)
		}
		return out.Scalar()
	}
	tape := ad.NewTape()
	b := s.Bind(tape)
	out, err := f(tape, b)
	if err != nil {
		t.Fatal(err)
	}
	tape.Backward(out)
	got := b.Gradient()
	want := fd.Gradient(nil, func(x []float64) float64 { s.SetVector(x); return eval() }, x0, &fd.Settings{Formula: fd.Central, Step: 1e-6})
	nonzero := false
	for i := range got {
		if d := math.Abs(got[i] - want[i]); d > tol*math.Max(1, math.Abs(want[i])) || math.IsNaN(got[i]) {
			t.Errorf("gradient[%d] = %.10g, finite differences %.10g", i, got[i], want[i])
		}
		nonzero = nonzero || got[i] != 0
	}
	if !nonzero {
		t.Error("gradient is zero")
	}
}

// TestKuvGradientThroughFeatures is the Z_γ-through-VFF gradient (ODVFF's
// K_βγ = Φ(Z_γ)): Kuv(feature, trainable points) differentiated in Z and
// the kernel's parameters, with points inside and outside the box, for
// every interval structure and order and for IFF.
func TestKuvGradientThroughFeatures(t *testing.T) {
	type build func(k kernels.Kernel, ivs []features.Interval) (features.Feature, error)
	vff := func(s features.Structure, mask bool) build {
		return func(k kernels.Kernel, ivs []features.Interval) (features.Feature, error) {
			return features.NewVFF(k, ivs, 4, s, mask)
		}
	}
	bsp := func(s features.Structure) build {
		return func(k kernels.Kernel, ivs []features.Interval) (features.Feature, error) {
			return features.NewBSplines(k, ivs, 7, s)
		}
	}
	for _, tc := range []struct {
		name   string
		kernel string
		dim    int
		s      features.Structure
		f      build
	}{
		{"vff/matern12", "matern12", 1, features.Kronecker, vff(features.Kronecker, false)},
		{"vff/matern32", "matern32", 1, features.Kronecker, vff(features.Kronecker, false)},
		{"vff/matern52", "matern52", 1, features.Kronecker, vff(features.Kronecker, false)},
		{"vff/additive", "matern32", 2, features.Additive, vff(features.Additive, false)},
		{"vff/kronecker-masked", "matern52", 2, features.Kronecker, vff(features.Kronecker, true)},
		{"bspline/matern32", "matern32", 1, features.Kronecker, bsp(features.Kronecker)},
		{"bspline/kronecker", "matern52", 2, features.Kronecker, bsp(features.Kronecker)},
		{"iff", "se", 2, features.Kronecker, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(7, uint64(len(tc.name))))
			parts := make([]kernels.Kernel, tc.dim)
			for d := range parts {
				var err error
				if parts[d], err = kernels.New(tc.kernel, 1, kernels.Options{Variance: 0.8 + 0.3*float64(d), Lengthscales: []float64{0.3 + 0.1*float64(d)}}); err != nil {
					t.Fatal(err)
				}
			}
			var k kernels.Kernel = parts[0]
			var err error
			switch {
			case tc.f == nil:
				k, err = kernels.New("se", tc.dim, kernels.Options{Lengthscales: []float64{0.4, 0.6}, ARD: true})
			case tc.dim > 1 && tc.s == features.Additive:
				k, err = kernels.Additive(parts...)
			case tc.dim > 1:
				k, err = features.NewSeparable(parts...)
			}
			if err != nil {
				t.Fatal(err)
			}
			ivs := make([]features.Interval, tc.dim)
			for d := range ivs {
				ivs[d] = features.Interval{A: 0, B: 1}
			}
			var feat features.Feature
			if tc.f == nil {
				feat, err = features.NewIFF([]int{3, 2}, []float64{0.4, 0.5}, false)
			} else {
				feat, err = tc.f(k, ivs)
			}
			if err != nil {
				t.Fatal(err)
			}
			s := param.NewSet()
			if err := k.Declare(s, "kern."); err != nil {
				t.Fatal(err)
			}
			// Points inside and up to 0.4 outside the box.
			z := randDense(rng, 6, tc.dim, -0.4, 1.4)
			if err := features.NewInducingPoints(z).Declare(s, "gamma."); err != nil {
				t.Fatal(err)
			}
			w := randDense(rng, feat.Bind(nil, "").M(), 6, -1, 1)
			obj := func(tape *ad.Tape, b *param.Bound) (*ad.Node, error) {
				kb := k.Bind(b, "kern.")
				pts := features.NewInducingPoints(z).Bind(b, "gamma.")
				kuv, err := features.Kuv(kb, feat.Bind(b, ""), pts)
				if err != nil {
					return nil, err
				}
				return ad.Dot(kuv, tape.Const(w)), nil
			}
			checkSetGradient(t, s, obj, 1e-6)
		})
	}
}

// TestKuvConstantFastPath: a constant input inside the box gives the
// constant Φ, bit for bit what Phi returns.
func TestKuvConstantFastPath(t *testing.T) {
	k, kb, tape := boundMatern(t, "matern52", 0.2)
	f, err := features.NewVFF(k, []features.Interval{{A: 0, B: 1}}, 5, features.Kronecker, false)
	if err != nil {
		t.Fatal(err)
	}
	x := mat.NewDense(5, 1, []float64{0, 0.1, 0.5, 0.99, 1})
	phi, err := f.Phi(x)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []*ad.Node{tape.Const(x), tape.Var(x)} {
		got := f.Bind(nil, "").Kuf(kb, n).Value()
		if !mat.Equal(got, phi) {
			t.Errorf("Kuf (needs grad %v) differs from Phi", n.NeedsGrad())
		}
	}
}

// TestStructureOfForms: each feature reports its Kuu structure in a form
// the caller accepts, falling back to the dense Kuu, and every form agrees
// with Kuu.
func TestStructureOfForms(t *testing.T) {
	k, kb, tape := boundMatern(t, "matern32", 0.3)
	vff, err := features.NewVFF(k, []features.Interval{{A: 0, B: 1}}, 4, features.Kronecker, false)
	if err != nil {
		t.Fatal(err)
	}
	iff, err := features.NewIFF([]int{4}, []float64{0.5}, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		f      features.Bound
		accept features.Forms
		want   string
	}{
		{"vff all", vff.Bind(nil, ""), features.AllForms, "root"},
		{"vff factor", vff.Bind(nil, ""), features.FactorForms, "dense"},
		{"vff hidden", features.DenseKuu(vff.Bind(nil, "")), features.AllForms, "dense"},
		{"iff all", iff.Bind(nil, ""), features.AllForms, "precision"},
		{"iff dense only", iff.Bind(nil, ""), features.FormDense, "dense"},
	} {
		st, err := features.StructureOf(kb, tc.f, 3, tc.accept)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		form, err := st.Form()
		if err != nil || form != tc.want {
			t.Errorf("%s: form %q (%v), want %q", tc.name, form, err, tc.want)
			continue
		}
		kuu := tc.f.Kuu(kb).Value()
		m, _ := kuu.Dims()
		var got mat.Dense
		switch form {
		case "dense":
			got.CloneFrom(st.Dense.Value())
		case "precision":
			got.CloneFrom(mat.NewDense(m, m, nil))
			for i := 0; i < m; i++ {
				got.Set(i, i, 1/st.Precision.Value().At(i, 0))
			}
		case "root": // Kuu⁻¹ = (L⁻¹)ᵀL⁻¹ from the whitening map of I
			id := mat.NewDense(m, m, nil)
			for i := 0; i < m; i++ {
				id.Set(i, i, 1)
			}
			w := st.Whiten(tape.Const(id)).Value()
			var inv mat.Dense
			inv.Mul(w.T(), w)
			if err := got.Inverse(&inv); err != nil {
				t.Fatal(err)
			}
		}
		if !mat.EqualApprox(&got, kuu, 1e-8*mat.Norm(kuu, math.Inf(1))) {
			t.Errorf("%s: the %s form disagrees with Kuu", tc.name, form)
		}
	}
	if _, err := features.StructureOf(kb, features.WithKuu(vff.Bind(nil, ""), features.FormRoot, nil), 3, features.AllForms); err == nil {
		t.Error("WithKuu with a nil structure: no error")
	}
}

// boundMatern is a 1-D kernel with lengthscale ls bound on a fresh tape.
func boundMatern(t *testing.T, name string, ls float64) (kernels.Kernel, kernels.Bound, *ad.Tape) {
	t.Helper()
	k, err := kernels.New(name, 1, kernels.Options{Lengthscales: []float64{ls}})
	if err != nil {
		t.Fatal(err)
	}
	s := param.NewSet()
	if err := k.Declare(s, ""); err != nil {
		t.Fatal(err)
	}
	tape := ad.NewTape()
	return k, k.Bind(s.Bind(tape), ""), tape
}
