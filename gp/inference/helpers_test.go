package inference

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/diff/fd"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
	"sgplab/gp/features"
	"sgplab/gp/kernels"
	"sgplab/gp/param"
	"sgplab/internal/testhelp"
)

// seBound is a squared-exponential ARD kernel written for the tests, so that
// they check inference against kernels evaluated independently (seMatrix).
type seBound struct{ variance, ls *ad.Node } // 1×1, 1×D

func (k seBound) scaled(x *ad.Node) *ad.Node { return ad.MulRowVec(x, ad.Pow(k.ls, -1)) }

func (k seBound) K(x, z *ad.Node) *ad.Node {
	return ad.MulScalar(ad.Exp(ad.Scale(-0.5, ad.SqDist(k.scaled(x), k.scaled(z)))), k.variance)
}

func (k seBound) Diag(x *ad.Node) *ad.Node {
	n, _ := x.Dims()
	return ad.MulScalar(x.Tape().Const(filled(n, 1, 1)), k.variance)
}

func seMatrix(x, z *mat.Dense, variance float64, ls []float64) *mat.Dense {
	n, d := x.Dims()
	m, _ := z.Dims()
	out := mat.NewDense(n, m, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < m; j++ {
			s := 0.0
			for k := 0; k < d; k++ {
				r := (x.At(i, k) - z.At(j, k)) / ls[k]
				s += r * r
			}
			out.Set(i, j, variance*math.Exp(-0.5*s))
		}
	}
	return out
}

func filled(r, c int, v float64) *mat.Dense {
	m := mat.NewDense(r, c, nil)
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			m.Set(i, j, v)
		}
	}
	return m
}

// problem is a small regression problem with its parameter set:
// "variance", "ls", "noise_variance", optional "z", "q_mu", "q_sqrt".
type problem struct {
	x     *mat.Dense
	y     []float64
	set   *param.Set
	ls    []float64
	vari  float64
	noise float64
}

func newProblem(seed uint64, n, d int, noise float64) *problem {
	rng := rand.New(rand.NewPCG(seed, 7))
	x := testhelp.RandMat(rng, n, d, 1)
	y := make([]float64, n)
	for i := range y {
		s := 0.0
		for j := 0; j < d; j++ {
			s += math.Sin(1.5 * x.At(i, j))
		}
		y[i] = s + math.Sqrt(noise)*rng.NormFloat64()
	}
	p := &problem{x: x, y: y, set: param.NewSet(), vari: 1.3, noise: noise}
	p.ls = make([]float64, d)
	for j := range p.ls {
		p.ls[j] = 0.8 + 0.3*float64(j)
	}
	must(p.set.AddScalar("variance", p.vari, param.DefaultPositive))
	must(p.set.Add("ls", mat.NewDense(1, d, append([]float64(nil), p.ls...)), param.DefaultPositive))
	must(p.set.AddScalar("noise_variance", noise, param.DefaultPositive))
	return p
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

func (p *problem) kernel(b *param.Bound) seBound {
	return seBound{variance: b.Get("variance"), ls: b.Get("ls")}
}

func (p *problem) addZ(z *mat.Dense) *problem {
	must(p.set.Add("z", mat.DenseCopyOf(z), param.Identity{}))
	return p
}

func (p *problem) points(b *param.Bound) features.Bound { return features.BoundPoints{Z: b.Get("z")} }

// objective is evaluated on a fresh tape with p.set bound.
type objective func(t *ad.Tape, b *param.Bound) (*ad.Node, error)

func evaluate(t testing.TB, s *param.Set, f objective) float64 {
	t.Helper()
	tape := ad.NewTape()
	out, err := f(tape, s.Bind(tape))
	if err != nil {
		t.Fatal(err)
	}
	return out.Scalar()
}

// checkGradient compares the tape gradient of f with respect to every
// trainable parameter of s (unconstrained) against central differences.
func checkGradient(t *testing.T, s *param.Set, f objective, tol float64) {
	t.Helper()
	x0 := s.Vector()
	defer s.SetVector(x0)
	tape := ad.NewTape()
	b := s.Bind(tape)
	out, err := f(tape, b)
	if err != nil {
		t.Fatal(err)
	}
	tape.Backward(out)
	got := b.Gradient()
	want := fd.Gradient(nil, func(x []float64) float64 {
		s.SetVector(x)
		return evaluate(t, s, f)
	}, x0, &fd.Settings{Formula: fd.Central, Step: 1e-5})
	scale := math.Max(1, floats.Norm(want, math.Inf(1)))
	for i := range got {
		if d := math.Abs(got[i] - want[i]); d > tol*scale || math.IsNaN(got[i]) {
			t.Errorf("gradient[%d] = %.10g, finite differences %.10g (|Δ| = %.3g)", i, got[i], want[i], d)
		}
	}
}

// cholesky returns the lower Cholesky factor of a symmetric PD matrix.
func cholesky(t testing.TB, a mat.Matrix) *mat.Dense {
	t.Helper()
	n, _ := a.Dims()
	sym := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			sym.SetSym(i, j, 0.5*(a.At(i, j)+a.At(j, i)))
		}
	}
	var c mat.Cholesky
	if !c.Factorize(sym) {
		t.Fatal("test matrix not positive definite")
	}
	var l mat.TriDense
	c.LTo(&l)
	return mat.DenseCopyOf(&l)
}

var _ kernels.Bound = seBound{}

// declareQ declares q(u) = N(mu, S) as q_mu and q_sqrt = sd·I.
func declareQ(s *param.Set, mu *mat.Dense, sd float64) {
	m, _ := mu.Dims()
	sq := mat.NewDense(m, m, nil)
	for i := 0; i < m; i++ {
		sq.Set(i, i, sd)
	}
	must(s.Add("q_mu", mu, param.Identity{}))
	must(s.Add("q_sqrt", sq, param.Identity{}))
}
