package inference

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
	"sgplab/gp/features"
	"sgplab/gp/kernels"
	"sgplab/gp/param"
	"sgplab/internal/testhelp"
)

// naiveExact computes the log marginal likelihood and the predictive
// marginals at xs with an explicit inverse and determinant.
func naiveExact(p *problem, xs *mat.Dense) (lml float64, mean, variance []float64) {
	n := len(p.y)
	k := seMatrix(p.x, p.x, p.vari, p.ls)
	for i := 0; i < n; i++ {
		k.Set(i, i, k.At(i, i)+p.noise)
	}
	var kinv mat.Dense
	if err := kinv.Inverse(k); err != nil {
		panic(err)
	}
	y := mat.NewVecDense(n, append([]float64(nil), p.y...))
	var a mat.VecDense
	a.MulVec(&kinv, y)
	logDet, sign := mat.LogDet(k)
	if sign <= 0 {
		panic("K + σ²I has non-positive determinant")
	}
	lml = -0.5*mat.Dot(y, &a) - 0.5*logDet - 0.5*float64(n)*math.Log(2*math.Pi)
	if xs == nil {
		return lml, nil, nil
	}
	ksx := seMatrix(xs, p.x, p.vari, p.ls)
	ns, _ := xs.Dims()
	mean = make([]float64, ns)
	variance = make([]float64, ns)
	var tmp mat.Dense
	tmp.Mul(ksx, &kinv)
	for i := 0; i < ns; i++ {
		mean[i] = mat.Dot(ksx.RowView(i), &a)
		variance[i] = p.vari - mat.Dot(tmp.RowView(i), ksx.RowView(i))
	}
	return lml, mean, variance
}

func exactObjective(p *problem, opt Options) objective {
	return func(t *ad.Tape, b *param.Bound) (*ad.Node, error) {
		lml, _, err := ExactLML(p.kernel(b), t.Const(p.x), p.y, b.Get("noise_variance"), opt)
		return lml, err
	}
}

func TestExactLMLMatchesNaive(t *testing.T) {
	for _, tc := range []struct {
		name  string
		seed  uint64
		n, d  int
		noise float64
	}{
		{"1d", 1, 15, 1, 0.1},
		{"3d", 2, 30, 3, 0.05},
		{"noisy", 3, 25, 2, 2.0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newProblem(tc.seed, tc.n, tc.d, tc.noise)
			want, _, _ := naiveExact(p, nil)
			got := evaluate(t, p.set, exactObjective(p, Options{}))
			if e := testhelp.RelErr(got, want); e > 1e-10 {
				t.Errorf("ExactLML = %.12g, naive %.12g (rel %.2g)", got, want, e)
			}
		})
	}
}

func TestExactGradient(t *testing.T) {
	p := newProblem(4, 12, 2, 0.3)
	checkGradient(t, p.set, exactObjective(p, Options{}), 1e-6)
}

func TestExactPredictMatchesNaive(t *testing.T) {
	p := newProblem(5, 20, 2, 0.2)
	xs := testhelp.RandMat(rand.New(rand.NewPCG(9, 9)), 7, 2, 1.5)
	_, wantMean, wantVar := naiveExact(p, xs)
	tape := ad.NewTape()
	b := p.set.Bind(tape)
	post, err := ExactPosterior(p.kernel(b), tape.Const(p.x), p.y, b.Get("noise_variance"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	mean, variance, err := post.Predict(xs, func(t *ad.Tape) (kernels.Bound, features.Bound) {
		return p.kernel(p.set.Bind(t)), features.BoundPoints{Z: t.Const(p.x)}
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := range mean {
		if math.Abs(mean[i]-wantMean[i]) > 1e-10 || math.Abs(variance[i]-wantVar[i]) > 1e-10 {
			t.Errorf("point %d: mean %.12g var %.12g, naive %.12g %.12g", i, mean[i], variance[i], wantMean[i], wantVar[i])
		}
	}
}

func TestExactErrors(t *testing.T) {
	p := newProblem(6, 5, 1, 0.1)
	tape := ad.NewTape()
	b := p.set.Bind(tape)
	for _, tc := range []struct {
		name  string
		y     []float64
		noise *ad.Node
		opt   Options
	}{
		{"short y", p.y[:3], b.Get("noise_variance"), Options{}},
		{"zero noise", p.y, tape.Scalar(0), Options{}},
		{"negative jitter", p.y, b.Get("noise_variance"), Options{Jitter: -1}},
		{"noise not scalar", p.y, tape.Const(filled(2, 1, 1)), Options{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, _, err := ExactLML(p.kernel(b), tape.Const(p.x), tc.y, tc.noise, tc.opt); err == nil {
				t.Error("no error")
			}
		})
	}
}
