package datasets

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sort"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp"
	"sgplab/gp/kernels"
	"sgplab/gp/param"
	"sgplab/internal/goroutines"
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
	// derive fills paper-specific derived values (negative width or
	// input_std mean "derive from the other parameters").
	derive func(c *config) error
	// draw and validate replace the GP draw for generators that are not
	// GP samples (airline-synthetic); params then lists their parameters.
	draw     func(p map[string]any, rng *rand.Rand) (train, test gp.Data, notes []string, err error)
	validate func(p map[string]any) error
}

var genParams = []paramSpec{
	{"kernel", "string", "se | matern12 | matern32 | matern52"},
	{"dim", "int", "input dimension"},
	{"n", "int", "training points"},
	{"n_test", "int", "test points (same realisation)"},
	{"lengthscale", "float", "lengthscale, every dimension"},
	{"variance", "float", "signal variance (per component when structure = additive)"},
	{"noise_variance", "float", "Gaussian noise variance on y"},
	{"snr", "float", "if > 0: noise_variance = variance/snr (IFF's SNR v = sigma_f^2/sigma^2); exclusive with noise_variance"},
	{"inputs", "string", "uniform | gaussian | mixture | uniform-gap"},
	{"low", "float", "uniform lower bound"},
	{"high", "float", "uniform upper bound"},
	{"width", "float", "if > 0: uniform on [-width/2, width/2]; < 0: the paper's derived width"},
	{"input_std", "float", "gaussian input std; < 0: the paper's derived std"},
	{"gap_low", "float", "uniform-gap: no training inputs in (gap_low, gap_high)"},
	{"gap_high", "float", "uniform-gap upper end"},
	{"structure", "string", "ard (one D-dim GP) | additive (sum of independent 1-D GPs)"},
	{"method", "string", "auto | cholesky | statespace | rff"},
	{"rff_features", "int", "random Fourier features for method rff (>= 10000 under auto)"},
	{"periodic_variance", "float", "if > 0 (1-D only): add an independent periodic GP draw (GPflow form) of this variance, by exact Cholesky"},
	{"period", "float", "period of the added periodic component"},
	{"periodic_lengthscale", "float", "lengthscale of the added periodic component"},
}

func gen(doc string, kv ...any) *generator {
	g := &generator{doc: doc, params: genParams, defaults: map[string]any{
		"kernel": "se", "dim": 1, "n": 500, "n_test": 500, "lengthscale": 1.0, "variance": 1.0,
		"noise_variance": 0.01, "snr": 0.0, "inputs": "uniform", "low": 0.0, "high": 1.0, "width": 0.0, "input_std": 1.0,
		"gap_low": 0.45, "gap_high": 0.55, "structure": "ard", "method": "auto", "rff_features": 10000,
		"periodic_variance": 0.0, "period": 1.0, "periodic_lengthscale": 1.0,
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
	// vof-spec §3.2 (Figure 2).
	synth("vof-regression", []string{pVOF}, gen("VOF Exp. B (Fig. 2): 80 inputs U[-3,3], Matern-5/2 l=0.2 v=1, noise sd 0.03",
		"kernel", "matern52", "n", 80, "n_test", 0, "lengthscale", 0.2, "noise_variance", 0.03*0.03, "low", -3.0, "high", 3.0))
	// vof-spec §3.3 (Figure 3) with D9 (literal U[-√108, √108]) and D10.
	synth("vof-inputs", []string{pVOF}, gen("VOF Exp. C (Fig. 3): 1000 inputs (gaussian N(0,9) | uniform +-sqrt(108), or low/high +-sqrt(27) for the std-3 reading | mixture 0.7 N(-1.868919,1) + 0.3 N(4.360810,0.5)), SE v=0.5 l=0.5, noise sd 0.01",
		"n", 1000, "n_test", 0, "variance", 0.5, "lengthscale", 0.5, "noise_variance", 0.01*0.01, "inputs", "gaussian",
		"input_std", 3.0, "low", -math.Sqrt(108), "high", math.Sqrt(108)))
	// iff-spec §3.2 (Figures 3, 4) with §6 items 5, 9, 10.
	g := gen("IFF Sec. 5.1 (Figs. 3-4): N=10000, SE or Matern-5/2, unit l and variance, SNR 0.774 (noise var 1/0.774), uniform width 6 sqrt(N/2) in 1-D, 30 per dim ([-15,15]^2) in 2-D",
		"n", 10000, "n_test", 0, "noise_variance", 1/0.774, "width", -1.0)
	g.derive = func(c *config) error {
		if c.width >= 0 {
			return nil
		}
		switch c.dim {
		case 1:
			c.width = 6 * math.Sqrt(float64(c.n)/2)
		case 2:
			// iff-spec §6 item 9 (corrected from the authors' notebook):
			// width = 5/λ and x = 6·width·U − 3·width, i.e. [−15, 15]².
			c.width = 30
		default:
			return fmt.Errorf("the IFF width is defined for dim 1 and 2 only; set width for dim %d", c.dim)
		}
		return nil
	}
	synth("iff-synthetic", []string{pIFF}, g)
	// iff-spec §3.1 (Figure 2 and the variants of Figs. 7-12) with §6 items 5-7.
	g = gen("IFF gap study (Fig. 2, 7-12): N=1000 inputs N(0,(W/6)^2) (inputs=uniform: U[-W/2,W/2], Fig. 12), W = 6 sqrt(N/2)/l, SE or Matern-3/2, l=1, var 0.5422^2 = 0.29398, SNR 1.255 (noise var 0.23425)",
		"n", 1000, "n_test", 0, "variance", 0.29398, "noise_variance", 0.23425, "inputs", "gaussian", "input_std", -1.0, "width", -1.0)
	g.derive = func(c *config) error {
		w := 6 * math.Sqrt(float64(c.n)/2) / c.ls
		if c.width < 0 {
			c.width = w
		}
		if c.inputStd < 0 {
			c.inputStd = w / 6
		}
		return nil
	}
	synth("iff-gap", []string{pIFF}, g)
	synth("odvff-gap", []string{pODVFF}, gen("ODVFF Fig. 1/2: U[0,1] with no training data in [0.45,0.55], Matern-3/2 l=0.1 v=1, noise var 0.15, 2000 train / 1000 test on [0,1]",
		"kernel", "matern32", "n", 2000, "n_test", 1000, "lengthscale", 0.1, "noise_variance", 0.15, "inputs", "uniform-gap"))
	// vish-spec §3.3 (Table 2 timing): the flight records are not staged.
	add(&entry{name: "airline-synthetic", task: Regression, papers: []string{pVISH}, format: fmtSynthetic, protocol: ProtoSynthetic,
		scaling: ScaleUnitBox, gen: airlineSyntheticGenerator(), n: airlineSynthRows, d: 8,
		notes: "SYNTHETIC: airline-shaped (N, D = 8, column marginals, explained variance 0.17), not flight data; for timing only"})
	// odvff-spec §3 E5 (App. C, Fig. 3) with decision §6.17: domain [0,1],
	// both variances 1, noise variance 0.01.
	synth("odvff-periodic", []string{pODVFF}, gen("ODVFF App. C (Fig. 3): U[0,1], Matern-3/2 l=0.2 v=1 plus periodic (period 0.5, l=0.2, v=1), noise var 0.01, 1000 train / 3000 test",
		"kernel", "matern32", "n", 1000, "n_test", 3000, "lengthscale", 0.2, "noise_variance", 0.01,
		"periodic_variance", 1.0, "period", 0.5, "periodic_lengthscale", 0.2, "method", "cholesky"))
	synth("odvff-synthetic", []string{pODVFF}, gen("ODVFF Sec. 5.1: U[0,1]^D, Matern-3/2 l=0.1 v=1, noise var 0.2, N in {50000,100000}, 1000 test; additive generator by default (spec §6.4)",
		"kernel", "matern32", "n", 50000, "n_test", 1000, "lengthscale", 0.1, "noise_variance", 0.2, "structure", "additive"))
}

func intDefault(g *generator, k string) int { return g.defaults[k].(int) }

// config is the resolved parameter set.
type config struct {
	kernel, inputs, structure, method string
	dim, n, nTest, rffFeatures        int
	ls, variance, noise               float64
	periodicVariance, period, perLs   float64
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
	c.periodicVariance, c.period, c.perLs = fl("periodic_variance"), fl("period"), fl("periodic_lengthscale")
	snr := fl("snr")
	if err := errors.Join(errs...); err != nil {
		return c, err
	}
	if snr != 0 {
		_, explicit := p["noise_variance"]
		switch {
		case explicit:
			return c, errors.New("set either snr or noise_variance, not both")
		case !(snr > 0):
			return c, fmt.Errorf("need snr > 0 (got %v)", snr)
		}
		c.noise = c.variance / snr
	}
	if g.derive != nil && c.ls > 0 && c.n > 0 && c.dim > 0 {
		if err := g.derive(&c); err != nil {
			return c, err
		}
	}
	if c.width < 0 || c.inputStd < 0 {
		return c, errors.New("need width >= 0 and input_std >= 0")
	}
	if c.width > 0 {
		c.low, c.high = -c.width/2, c.width/2
	}
	switch {
	case c.kernel != "se" && maternNu(c.kernel) == 0:
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
	case c.periodicVariance < 0 || (c.periodicVariance > 0 && (c.dim != 1 || !(c.period > 0) || !(c.perLs > 0))):
		return c, fmt.Errorf("periodic_variance > 0 needs dim = 1, period > 0 and periodic_lengthscale > 0 (got periodic_variance %v, dim %d, period %v, periodic_lengthscale %v)",
			c.periodicVariance, c.dim, c.period, c.perLs)
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
	if g.validate != nil {
		if err := g.validate(p); err != nil {
			return fmt.Errorf("datasets: %w", err)
		}
		return nil
	}
	if _, err := g.resolve(p); err != nil {
		return fmt.Errorf("datasets: %w", err)
	}
	return nil
}

// make draws one dataset.
func (g *generator) make(p map[string]any, rng *rand.Rand) (train, test gp.Data, notes []string, err error) {
	if g.draw != nil {
		return g.draw(p, rng)
	}
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
	if c.periodicVariance > 0 {
		// f + g with g an independent periodic GP is a draw of the sum
		// kernel (ODVFF App. C: Matérn-3/2 + periodic).
		cp := c
		cp.kernel, cp.variance, cp.ls = "periodic", c.periodicVariance, c.perLs
		g, err := sampleCholesky(cp, x, rng)
		if err != nil {
			return train, test, nil, err
		}
		for i := range f {
			f[i] += g[i]
		}
		method += fmt.Sprintf(" + periodic(var=%g, period=%g, l=%g, exact cholesky)", c.periodicVariance, c.period, c.perLs)
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

// maternNu returns ν for the Matérn kernels and 0 for SE.
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

// groundTruth builds the generating kernel with gp/kernels, the project's
// one kernel implementation, and its hyperparameters.
func groundTruth(c config, dim int) (kernels.Kernel, *param.Set, error) {
	k, err := kernels.New(c.kernel, dim, kernels.Options{Variance: c.variance, Lengthscales: []float64{c.ls}, Period: c.period})
	if err != nil {
		return nil, nil, err
	}
	s := param.NewSet()
	if err := k.Declare(s, ""); err != nil {
		return nil, nil, err
	}
	return k, s, nil
}

// sampleF draws f at the rows of x.
func sampleF(c config, x *mat.Dense, rng *rand.Rand) ([]float64, string, error) {
	n, dim := x.Dims()
	if c.structure == "additive" && dim > 1 {
		f := make([]float64, n)
		var method string
		for j := 0; j < dim; j++ {
			col := mat.NewDense(n, 1, mat.Col(nil, j, x))
			cj := c
			cj.structure = "ard"
			fj, m, err := sampleF(cj, col, rng)
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
		case n <= autoCholeskyMax:
			// Small sets: a joint Cholesky draw (VOF spec D18 asks for it).
			method = "cholesky"
		case dim == 1 && c.kernel != "se":
			method = "statespace"
		case n <= 3000:
			method = "cholesky"
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

// autoCholeskyMax is the largest set drawn by Cholesky under method auto
// even when an O(N) exact method exists.
const autoCholeskyMax = 1000

func sampleCholesky(c config, x *mat.Dense, rng *rand.Rand) ([]float64, error) {
	n, dim := x.Dims()
	k, s, err := groundTruth(c, dim)
	if err != nil {
		return nil, err
	}
	km := kernels.Matrix(k, s, "", x, x)
	K := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			K.SetSym(i, j, (km.At(i, j)+km.At(j, i))/2)
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

// sde is the state-space form of a 1-D Matérn-(m−½) GP (Hartikainen &
// Särkkä 2010): state (f, f', …) of size m, drift F the companion matrix of
// (s+λ)^m with λ = √(2ν)/ℓ, stationary covariance pinf.
type sde struct {
	m      int
	lambda float64
	pinf   [3][3]float64
}

func newSDE(kernel string, variance, ls float64) (sde, error) {
	nu := maternNu(kernel)
	if nu == 0 {
		return sde{}, fmt.Errorf("state-space draw needs a Matern kernel, not %q", kernel)
	}
	l := math.Sqrt(2*nu) / ls
	s := sde{m: int(nu + 0.5), lambda: l}
	switch s.m {
	case 1:
		s.pinf[0][0] = variance
	case 2:
		s.pinf[0][0], s.pinf[1][1] = variance, l*l*variance
	case 3:
		kap := variance * l * l / 3
		s.pinf[0][0], s.pinf[1][1], s.pinf[2][2] = variance, kap, variance*l*l*l*l
		s.pinf[0][2], s.pinf[2][0] = -kap, -kap
	}
	return s, nil
}

// drift returns F.
func (s sde) drift() [3][3]float64 {
	var f [3][3]float64
	l := s.lambda
	coef := [][]float64{nil, {l}, {l * l, 2 * l}, {l * l * l, 3 * l * l, 3 * l}}[s.m]
	for i := 0; i+1 < s.m; i++ {
		f[i][i+1] = 1
	}
	for j := 0; j < s.m; j++ {
		f[s.m-1][j] = -coef[j]
	}
	return f
}

// transition returns A = exp(F dt) in closed form: F + λI is nilpotent of
// order m (Cayley–Hamilton on (s+λ)^m), so exp(F dt) = e^{−λdt} Σ_{k<m}
// (dt(F+λI))^k/k!.
func (s sde) transition(dt float64) [3][3]float64 {
	n := s.drift()
	for i := 0; i < s.m; i++ {
		n[i][i] += s.lambda
	}
	var a, term [3][3]float64
	for i := 0; i < s.m; i++ {
		a[i][i], term[i][i] = 1, 1
	}
	for k := 1; k < s.m; k++ {
		var next [3][3]float64
		for i := 0; i < s.m; i++ {
			for j := 0; j < s.m; j++ {
				for l := 0; l < s.m; l++ {
					next[i][j] += term[i][l] * n[l][j]
				}
				next[i][j] *= dt / float64(k)
			}
		}
		term = next
		for i := 0; i < s.m; i++ {
			for j := 0; j < s.m; j++ {
				a[i][j] += term[i][j]
			}
		}
	}
	e := math.Exp(-s.lambda * dt)
	for i := 0; i < s.m; i++ {
		for j := 0; j < s.m; j++ {
			a[i][j] *= e
		}
	}
	return a
}

// processNoise returns Q = P∞ − A P∞ Aᵀ, the covariance of the state
// innovation over a step with transition A (exact for a stationary SDE).
func (s sde) processNoise(a [3][3]float64) [3][3]float64 {
	var ap, q [3][3]float64
	for i := 0; i < s.m; i++ {
		for j := 0; j < s.m; j++ {
			for l := 0; l < s.m; l++ {
				ap[i][j] += a[i][l] * s.pinf[l][j]
			}
		}
	}
	for i := 0; i < s.m; i++ {
		for j := 0; j <= i; j++ {
			var v float64
			for l := 0; l < s.m; l++ {
				v += ap[i][l] * a[j][l]
			}
			q[i][j] = s.pinf[i][j] - v
			q[j][i] = q[i][j]
		}
	}
	return q
}

// cholPSD factors a positive semi-definite m×m matrix. Pivots below a
// relative tolerance of the stationary variances (cancellation noise in
// P∞ − AP∞Aᵀ for short steps) are treated as exact zeros.
func (s sde) cholPSD(q [3][3]float64) [3][3]float64 {
	var l [3][3]float64
	for j := 0; j < s.m; j++ {
		d := q[j][j]
		for k := 0; k < j; k++ {
			d -= l[j][k] * l[j][k]
		}
		if d <= 1e-13*s.pinf[j][j] {
			continue // column j stays zero
		}
		l[j][j] = math.Sqrt(d)
		for i := j + 1; i < s.m; i++ {
			v := q[i][j]
			for k := 0; k < j; k++ {
				v -= l[i][k] * l[j][k]
			}
			l[i][j] = v / l[j][j]
		}
	}
	return l
}

// sampleStateSpace draws a 1-D Matérn GP exactly in O(N) from its SDE on the
// sorted inputs. The step matrices are reused while the spacing repeats
// (grids).
func sampleStateSpace(c config, x []float64, rng *rand.Rand) ([]float64, error) {
	s, err := newSDE(c.kernel, c.variance, c.ls)
	if err != nil {
		return nil, err
	}
	m := s.m
	order := seq(0, len(x))
	sort.Slice(order, func(a, b int) bool { return x[order[a]] < x[order[b]] })
	var state, next, z [3]float64
	addNoise := func(l [3][3]float64, out *[3]float64) {
		for i := 0; i < m; i++ {
			z[i] = rng.NormFloat64()
		}
		for i := 0; i < m; i++ {
			for k := 0; k <= i; k++ {
				out[i] += l[i][k] * z[k]
			}
		}
	}
	addNoise(s.cholPSD(s.pinf), &state)
	f := make([]float64, len(x))
	prev, lastDt := x[order[0]], math.NaN()
	var a, lq [3][3]float64
	for k, i := range order {
		if dt := x[i] - prev; k > 0 && dt > 0 {
			if dt != lastDt {
				a = s.transition(dt)
				lq = s.cholPSD(s.processNoise(a))
				lastDt = dt
			}
			next = [3]float64{}
			for r := 0; r < m; r++ {
				for q := 0; q < m; q++ {
					next[r] += a[r][q] * state[q]
				}
			}
			addNoise(lq, &next)
			state = next
			prev = x[i]
		}
		f[i] = state[0]
	}
	return f, nil
}

// rffFrequencies draws nf frequencies (cycles per unit, row-major nf×dim)
// from the normalised spectral density S(ξ)/σ² of the kernels package:
// Gaussian with sd 1/(2πℓ) for SE, and for Matérn-ν the multivariate
// Student-t with 2ν degrees of freedom and scale 1/(2πℓ), a Gaussian scale
// mixture with precision χ²_{2ν}/(2ν).
func rffFrequencies(kernel string, dim, nf int, ls float64, rng *rand.Rand) []float64 {
	nu := maternNu(kernel)
	xi := make([]float64, nf*dim)
	for k := 0; k < nf; k++ {
		scale := 1 / (2 * math.Pi * ls)
		if nu > 0 {
			var g float64
			for i := 0; i < int(2*nu+0.5); i++ {
				z := rng.NormFloat64()
				g += z * z
			}
			scale *= math.Sqrt(2 * nu / g)
		}
		for d := 0; d < dim; d++ {
			xi[k*dim+d] = scale * rng.NormFloat64()
		}
	}
	return xi
}

// sampleRFF draws from the random-feature approximation
// f(x) = √(2σ²/F) Σ_k cos(2π ξ_kᵀx + b_k), ξ_k ~ S/σ², b_k ~ U[0, 2π),
// whose covariance is exactly k in expectation over the features (Bochner).
func sampleRFF(c config, x *mat.Dense, nf int, rng *rand.Rand) []float64 {
	n, dim := x.Dims()
	xi := rffFrequencies(c.kernel, dim, nf, c.ls, rng)
	for i := range xi {
		xi[i] *= 2 * math.Pi
	}
	b := make([]float64, nf)
	for k := range b {
		b[k] = 2 * math.Pi * rng.Float64()
	}
	amp := math.Sqrt(2 * c.variance / float64(nf))
	f := make([]float64, n)
	workers := runtime.GOMAXPROCS(0)
	var g goroutines.Group
	for w := 0; w < workers; w++ {
		g.Go(func() {
			for i := w; i < n; i += workers {
				row := x.RawRowView(i)
				var s float64
				for k := 0; k < nf; k++ {
					a := b[k]
					for d, xd := range row {
						a += xi[k*dim+d] * xd
					}
					s += math.Cos(a)
				}
				f[i] = amp * s
			}
		})
	}
	g.Wait()
	return f
}
