package datasets

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sort"
	"sync"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp"
)

// paramSpec documents one generator parameter.
type paramSpec struct {
	name, kind string
	doc        string
}

// generator is a synthetic dataset: named defaults for the shared GP-draw
// parameters, taken from a paper's spec.
type generator struct {
	doc      string
	defaults map[string]any
	params   []paramSpec
}

var genParams = []paramSpec{
	{"kernel", "string", "se | matern12 | matern32 | matern52"},
	{"dim", "int", "input dimension"},
	{"n", "int", "training points"},
	{"n_test", "int", "test points (same realisation)"},
	{"lengthscale", "float", "lengthscale, every dimension"},
	{"variance", "float", "signal variance (per component when structure = additive)"},
	{"noise_variance", "float", "Gaussian noise variance on y"},
	{"inputs", "string", "uniform | gaussian | mixture | uniform-gap"},
	{"low", "float", "uniform lower bound"},
	{"high", "float", "uniform upper bound"},
	{"width", "float", "if > 0: uniform on [-width/2, width/2]"},
	{"input_std", "float", "gaussian input std"},
	{"gap_low", "float", "uniform-gap: no training inputs in (gap_low, gap_high)"},
	{"gap_high", "float", "uniform-gap upper end"},
	{"structure", "string", "ard (one D-dim GP) | additive (sum of independent 1-D GPs)"},
	{"method", "string", "auto | cholesky | statespace | rff"},
	{"rff_features", "int", "random Fourier features for method rff (>= 10000 under auto)"},
}

func gen(doc string, kv ...any) *generator {
	g := &generator{doc: doc, params: genParams, defaults: map[string]any{
		"kernel": "se", "dim": 1, "n": 500, "n_test": 500, "lengthscale": 1.0, "variance": 1.0,
		"noise_variance": 0.01, "inputs": "uniform", "low": 0.0, "high": 1.0, "width": 0.0, "input_std": 1.0,
		"gap_low": 0.45, "gap_high": 0.55, "structure": "ard", "method": "auto", "rff_features": 10000,
	}}
	for i := 0; i < len(kv); i += 2 {
		g.defaults[kv[i].(string)] = kv[i+1]
	}
	return g
}

func registerGenerators() {
	synth := func(name string, papers []string, g *generator) {
		add(&entry{name: name, task: Regression, papers: papers, format: fmtSynthetic, protocol: ProtoSynthetic,
			scaling: ScaleNone, gen: g, n: intDefault(g, "n"), d: intDefault(g, "dim")})
	}
	synth("gp-sample", nil, gen("GP draw with any stationary kernel (all parameters settable)"))
	synth("vof-regression", []string{pVOF}, gen("VOF Exp. B: 80 inputs U[-3,3], Matern-5/2 l=0.2 v=1, noise sd 0.03",
		"kernel", "matern52", "n", 80, "n_test", 0, "lengthscale", 0.2, "noise_variance", 0.03*0.03, "low", -3.0, "high", 3.0))
	synth("vof-inputs", []string{pVOF}, gen("VOF Exp. C: 1000 inputs (gaussian N(0,9) | uniform +-sqrt(108) | mixture), SE v=0.5 l=0.5, noise sd 0.01",
		"n", 1000, "n_test", 0, "variance", 0.5, "lengthscale", 0.5, "noise_variance", 1e-4, "inputs", "gaussian",
		"input_std", 3.0, "low", -math.Sqrt(108), "high", math.Sqrt(108)))
	synth("iff-synthetic", []string{pIFF}, gen("IFF Sec. 5.1: N=10000, SE or Matern-5/2, unit l and variance, SNR 0.774 (noise var 1/0.774), width 6 sqrt(N/2) in 1-D, 5 per dim in 2-D",
		"n", 10000, "n_test", 0, "noise_variance", 1/0.774, "width", -1.0))
	synth("iff-gap", []string{pIFF}, gen("IFF gap study: N=1000 inputs N(0,(W/6)^2), W = 6 sqrt(N/2)/l, SE or Matern-3/2, l=1, var 0.29398, noise var 0.23425",
		"n", 1000, "n_test", 0, "variance", 0.29398, "noise_variance", 0.23425, "inputs", "gaussian", "input_std", -1.0))
	synth("odvff-gap", []string{pODVFF}, gen("ODVFF Fig. 1/2: U[0,1] with no training data in [0.45,0.55], Matern-3/2 l=0.1 v=1, noise var 0.15, 2000 train / 1000 test on [0,1]",
		"kernel", "matern32", "n", 2000, "n_test", 1000, "lengthscale", 0.1, "noise_variance", 0.15, "inputs", "uniform-gap"))
	synth("odvff-synthetic", []string{pODVFF}, gen("ODVFF Sec. 5.1: U[0,1]^D, Matern-3/2 l=0.1 v=1, noise var 0.2, N in {50000,100000}, 1000 test; additive generator by default (spec §6.4)",
		"kernel", "matern32", "n", 50000, "n_test", 1000, "lengthscale", 0.1, "noise_variance", 0.2, "structure", "additive"))
}

func intDefault(g *generator, k string) int { return g.defaults[k].(int) }

// config is the resolved parameter set.
type config struct {
	kernel, inputs, structure, method string
	dim, n, nTest, rffFeatures        int
	ls, variance, noise               float64
	low, high, width, inputStd        float64
	gapLow, gapHigh                   float64
}

func (g *generator) resolve(p map[string]any) (config, error) {
	m := map[string]any{}
	for k, v := range g.defaults {
		m[k] = v
	}
	for k, v := range p {
		m[k] = v
	}
	var c config
	var errs []error
	str := func(k string) string { s, _ := m[k].(string); return s }
	in := func(k string) int {
		v, _, err := intParam(m, k)
		errs = append(errs, err)
		return v
	}
	fl := func(k string) float64 {
		v, err := floatParam(m, k, 0)
		errs = append(errs, err)
		return v
	}
	c.kernel, c.inputs, c.structure, c.method = str("kernel"), str("inputs"), str("structure"), str("method")
	c.dim, c.n, c.nTest, c.rffFeatures = in("dim"), in("n"), in("n_test"), in("rff_features")
	c.ls, c.variance, c.noise = fl("lengthscale"), fl("variance"), fl("noise_variance")
	c.low, c.high, c.width, c.inputStd = fl("low"), fl("high"), fl("width"), fl("input_std")
	c.gapLow, c.gapHigh = fl("gap_low"), fl("gap_high")
	if err := errors.Join(errs...); err != nil {
		return c, err
	}
	if c.width < 0 { // IFF Sec. 5.1 widths
		c.width = 6 * math.Sqrt(float64(c.n)/2)
		if c.dim == 2 {
			c.width = 5
		}
	}
	if c.width > 0 {
		c.low, c.high = -c.width/2, c.width/2
	}
	if c.inputStd < 0 { // IFF gap study: W = 6 sqrt(N/2)/l, std W/6
		c.inputStd = math.Sqrt(float64(c.n)/2) / c.ls
	}
	switch {
	case kernelFunc(c.kernel) == nil:
		return c, fmt.Errorf("unknown kernel %q; valid: se, matern12, matern32, matern52", c.kernel)
	case c.dim < 1 || c.n < 1 || c.nTest < 0:
		return c, fmt.Errorf("need dim >= 1, n >= 1, n_test >= 0 (got %d, %d, %d)", c.dim, c.n, c.nTest)
	case !(c.ls > 0) || !(c.variance > 0) || c.noise < 0:
		return c, fmt.Errorf("need lengthscale > 0, variance > 0, noise_variance >= 0")
	case !(c.high > c.low):
		return c, fmt.Errorf("need high > low (got [%v, %v])", c.low, c.high)
	case c.inputs == "uniform-gap" && !(c.low <= c.gapLow && c.gapLow < c.gapHigh && c.gapHigh <= c.high && c.gapHigh-c.gapLow < c.high-c.low):
		return c, fmt.Errorf("gap (%v, %v) must lie inside [%v, %v]", c.gapLow, c.gapHigh, c.low, c.high)
	case c.structure != "ard" && c.structure != "additive":
		return c, fmt.Errorf("unknown structure %q; valid: ard, additive", c.structure)
	}
	switch c.inputs {
	case "uniform", "gaussian", "mixture", "uniform-gap":
	default:
		return c, fmt.Errorf("unknown inputs %q; valid: uniform, gaussian, mixture, uniform-gap", c.inputs)
	}
	switch c.method {
	case "auto", "cholesky", "rff":
	case "statespace":
		if c.kernel == "se" || (c.dim > 1 && c.structure != "additive") {
			return c, errors.New("method statespace needs a Matern kernel and 1-D or additive structure")
		}
	default:
		return c, fmt.Errorf("unknown method %q; valid: auto, cholesky, statespace, rff", c.method)
	}
	if c.method == "cholesky" && c.n+c.nTest > 20000 {
		return c, fmt.Errorf("method cholesky with %d points would need a dense %d^2 matrix; use auto, statespace or rff", c.n+c.nTest, c.n+c.nTest)
	}
	return c, nil
}

func (g *generator) check(p map[string]any) error {
	if _, err := g.resolve(p); err != nil {
		return fmt.Errorf("datasets: %w", err)
	}
	return nil
}

// make draws one dataset.
func (g *generator) make(p map[string]any, rng *rand.Rand) (train, test gp.Data, notes []string, err error) {
	c, err := g.resolve(p)
	if err != nil {
		return train, test, nil, err
	}
	ntot := c.n + c.nTest
	x := mat.NewDense(ntot, c.dim, nil)
	for i := 0; i < ntot; i++ {
		for j := 0; j < c.dim; j++ {
			x.Set(i, j, drawInput(c, rng, i < c.n))
		}
	}
	f, method, err := sampleF(c, x, rng)
	if err != nil {
		return train, test, nil, err
	}
	y := make([]float64, ntot)
	sd := math.Sqrt(c.noise)
	for i := range y {
		y[i] = f[i] + sd*rng.NormFloat64()
	}
	all := gp.Data{X: x, Y: y}
	train = all.Subset(seq(0, c.n))
	if c.nTest > 0 {
		test = all.Subset(seq(c.n, ntot))
	}
	notes = append(notes, fmt.Sprintf("synthetic %s: kernel=%s structure=%s dim=%d l=%g var=%g noise_var=%g inputs=%s [%g,%g] draw=%s",
		g.doc, c.kernel, c.structure, c.dim, c.ls, c.variance, c.noise, c.inputs, c.low, c.high, method))
	return train, test, notes, nil
}

// VOF mixture: weights 0.7/0.3, variances 1/0.5, mean 0, sd 3 overall.
const mixMu1, mixMu2 = -1.868919, 4.360810

func drawInput(c config, rng *rand.Rand, training bool) float64 {
	switch c.inputs {
	case "gaussian":
		return c.inputStd * rng.NormFloat64()
	case "mixture":
		if rng.Float64() < 0.7 {
			return mixMu1 + rng.NormFloat64()
		}
		return mixMu2 + math.Sqrt(0.5)*rng.NormFloat64()
	case "uniform-gap":
		if training {
			w := (c.high - c.low) - (c.gapHigh - c.gapLow)
			u := c.low + w*rng.Float64()
			if u > c.gapLow {
				u += c.gapHigh - c.gapLow
			}
			return u
		}
	}
	return c.low + (c.high-c.low)*rng.Float64()
}

// kernelFunc returns k(r)/variance for the scaled distance r.
func kernelFunc(name string) func(r float64) float64 {
	switch name {
	case "se":
		return func(r float64) float64 { return math.Exp(-r * r / 2) }
	case "matern12":
		return func(r float64) float64 { return math.Exp(-r) }
	case "matern32":
		return func(r float64) float64 { s := math.Sqrt(3) * r; return (1 + s) * math.Exp(-s) }
	case "matern52":
		return func(r float64) float64 { s := math.Sqrt(5) * r; return (1 + s + s*s/3) * math.Exp(-s) }
	}
	return nil
}

// maternNu returns ν for Matérn kernels, 0 for SE.
func maternNu(name string) float64 {
	switch name {
	case "matern12":
		return 0.5
	case "matern32":
		return 1.5
	case "matern52":
		return 2.5
	}
	return 0
}

// sampleF draws f at the rows of x.
func sampleF(c config, x *mat.Dense, rng *rand.Rand) ([]float64, string, error) {
	n, dim := x.Dims()
	if c.structure == "additive" && dim > 1 {
		f := make([]float64, n)
		var method string
		for j := 0; j < dim; j++ {
			col := mat.NewDense(n, 1, mat.Col(nil, j, x))
			fj, m, err := sampleF(config{kernel: c.kernel, structure: "ard", method: c.method, ls: c.ls, variance: c.variance, rffFeatures: c.rffFeatures}, col, rng)
			if err != nil {
				return nil, "", err
			}
			method = "additive(" + m + ")"
			for i := range f {
				f[i] += fj[i]
			}
		}
		return f, method, nil
	}
	method := c.method
	if method == "auto" {
		switch {
		case n <= 3000:
			method = "cholesky"
		case dim == 1 && c.kernel != "se":
			method = "statespace"
		default:
			method = "rff"
		}
	}
	switch method {
	case "cholesky":
		f, err := sampleCholesky(c, x, rng)
		return f, "exact cholesky", err
	case "statespace":
		f, err := sampleStateSpace(c, mat.Col(nil, 0, x), rng)
		return f, "exact state-space (Matern SDE)", err
	}
	nf := c.rffFeatures
	if c.method == "auto" && nf < 10000 {
		nf = 10000
	}
	return sampleRFF(c, x, nf, rng), fmt.Sprintf("random Fourier features (%d)", nf), nil
}

func sampleCholesky(c config, x *mat.Dense, rng *rand.Rand) ([]float64, error) {
	n, dim := x.Dims()
	k := kernelFunc(c.kernel)
	K := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			var r2 float64
			for d := 0; d < dim; d++ {
				t := (x.At(i, d) - x.At(j, d)) / c.ls
				r2 += t * t
			}
			K.SetSym(i, j, c.variance*k(math.Sqrt(r2)))
		}
	}
	var ch mat.Cholesky
	jitter := 1e-10 * c.variance
	for try := 0; ; try++ {
		if ch.Factorize(K) {
			break
		}
		if try == 8 {
			return nil, errors.New("GP draw: kernel matrix not positive definite even with jitter")
		}
		for i := 0; i < n; i++ {
			K.SetSym(i, i, K.At(i, i)+jitter)
		}
		jitter *= 10
	}
	var L mat.TriDense
	ch.LTo(&L)
	z := make([]float64, n)
	for i := range z {
		z[i] = rng.NormFloat64()
	}
	f := mat.NewVecDense(n, nil)
	f.MulVec(&L, mat.NewVecDense(n, z))
	return f.RawVector().Data, nil
}

// sampleStateSpace draws a 1-D Matérn GP exactly in O(N) from its SDE
// representation (Hartikainen & Särkkä 2010) on the sorted inputs.
func sampleStateSpace(c config, x []float64, rng *rand.Rand) ([]float64, error) {
	v := c.variance
	var F, P *mat.Dense
	switch maternNu(c.kernel) {
	case 0.5:
		l := 1 / c.ls
		F, P = mat.NewDense(1, 1, []float64{-l}), mat.NewDense(1, 1, []float64{v})
	case 1.5:
		l := math.Sqrt(3) / c.ls
		F = mat.NewDense(2, 2, []float64{0, 1, -l * l, -2 * l})
		P = mat.NewDense(2, 2, []float64{v, 0, 0, l * l * v})
	case 2.5:
		l := math.Sqrt(5) / c.ls
		kap := v * l * l / 3
		F = mat.NewDense(3, 3, []float64{0, 1, 0, 0, 0, 1, -l * l * l, -3 * l * l, -3 * l})
		P = mat.NewDense(3, 3, []float64{v, 0, -kap, 0, kap, 0, -kap, 0, v * l * l * l * l})
	default:
		return nil, fmt.Errorf("state-space draw needs a Matern kernel, not %q", c.kernel)
	}
	m, _ := F.Dims()
	order := seq(0, len(x))
	sort.Slice(order, func(a, b int) bool { return x[order[a]] < x[order[b]] })
	state := mat.NewVecDense(m, nil)
	noise := func(cov mat.Matrix, out *mat.VecDense) {
		sym := mat.NewSymDense(m, nil)
		for i := 0; i < m; i++ {
			for j := 0; j <= i; j++ {
				sym.SetSym(i, j, (cov.At(i, j)+cov.At(j, i))/2)
			}
		}
		var es mat.EigenSym
		es.Factorize(sym, true)
		vals := es.Values(nil)
		var vecs mat.Dense
		es.VectorsTo(&vecs)
		z := mat.NewVecDense(m, nil)
		for i, ev := range vals {
			z.SetVec(i, math.Sqrt(math.Max(ev, 0))*rng.NormFloat64())
		}
		out.MulVec(&vecs, z)
	}
	noise(P, state)
	f := make([]float64, len(x))
	prev := x[order[0]]
	var A, AP, Q mat.Dense
	w := mat.NewVecDense(m, nil)
	for k, i := range order {
		if dt := x[i] - prev; k > 0 && dt > 0 {
			var Fdt mat.Dense
			Fdt.Scale(dt, F)
			A.Exp(&Fdt)
			AP.Mul(&A, P)
			Q.Mul(&AP, A.T())
			Q.Sub(P, &Q)
			next := mat.NewVecDense(m, nil)
			next.MulVec(&A, state)
			noise(&Q, w)
			next.AddVec(next, w)
			state = next
			prev = x[i]
		}
		f[i] = state.AtVec(0)
	}
	return f, nil
}

// sampleRFF draws from the random-feature approximation
// f(x) = sqrt(2v/F) Σ cos(ωᵀx/l + b), ω from the kernel's spectral density
// (Gaussian for SE; multivariate Student-t with 2ν d.o.f. for Matérn-ν).
func sampleRFF(c config, x *mat.Dense, nf int, rng *rand.Rand) []float64 {
	n, dim := x.Dims()
	nu := maternNu(c.kernel)
	omega := make([]float64, nf*dim)
	b := make([]float64, nf)
	for k := 0; k < nf; k++ {
		scale := 1.0
		if nu > 0 {
			var g float64
			for i := 0; i < int(2*nu); i++ {
				z := rng.NormFloat64()
				g += z * z
			}
			scale = math.Sqrt(2 * nu / g)
		}
		for d := 0; d < dim; d++ {
			omega[k*dim+d] = scale * rng.NormFloat64() / c.ls
		}
		b[k] = 2 * math.Pi * rng.Float64()
	}
	amp := math.Sqrt(2 * c.variance / float64(nf))
	f := make([]float64, n)
	workers := runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; i < n; i += workers {
				row := x.RawRowView(i)
				var s float64
				for k := 0; k < nf; k++ {
					a := b[k]
					for d, xd := range row {
						a += omega[k*dim+d] * xd
					}
					s += math.Cos(a)
				}
				f[i] = amp * s
			}
		}(w)
	}
	wg.Wait()
	return f
}
