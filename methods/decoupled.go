package methods

import (
	"context"
	"fmt"
	"strings"
	"time"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp"
	"sgplab/gp/ad"
	"sgplab/gp/features"
	"sgplab/gp/inducing"
	"sgplab/gp/inference"
	"sgplab/gp/kernels"
	"sgplab/gp/likelihoods"
	"sgplab/gp/optim"
	"sgplab/gp/param"
)

// Orthogonally decoupled methods (ODVGP, ODVFF, SOLVE-GP,
// spherical-orthogonal) share one model: a base set u with q(u) = N(m, C),
// an orthogonal set v with q(v') on v' = v − Kvu Kuu⁻¹ u (full Gaussian, or
// mean-only for ODVGP/ODVFF), and the ELBO of inference.Decoupled built
// from the blocks Kuu, Kuf, Kvv, Kvf, Kvu of the two feature sets.
//
// In the ODVGP/ODVFF papers' notation, the base set is β (mean and
// covariance basis) and the orthogonal set is γ (mean-only basis).

// Parameter names of the decoupled methods.
const (
	BasePrefix = "base."   // base feature set u (β)
	OrthPrefix = "orth."   // orthogonal feature set v (γ)
	QuMuName   = "qu.mu"   // mean of q(u), M×1
	QuSqrtName = "qu.sqrt" // square root of C_u, M×M (lower triangle)
	QvMuName   = "qv.mu"   // mean of q(v') (K×1), or a_γ for mean-only
	QvSqrtName = "qv.sqrt" // square root of C_v', K×K; absent for mean-only
)

// Basis kinds a decoupled model can use for either set.
const (
	basisPoints = "points"
	basisVFF    = "vff"
)

type decoupledKind struct {
	method   string
	base     string // basisPoints, basisVFF, … ; "" reads the "base" parameter
	orth     string
	meanOnly bool // ODVGP/ODVFF: C_v' = S_vv, q(v') holds a_γ only
	lbfgs    bool // default optimiser L-BFGS (the spherical-orthogonal recipe) rather than Adam
}

func init() {
	common := func(whiten bool) []ParamDoc {
		return concat(NoiseParams(), NumericParams(), []ParamDoc{
			{Name: "num_orthogonal", Kind: Int, Default: 100, Doc: "number of orthogonal inducing inputs K (the mean basis γ of ODVGP/ODVFF)"},
			{Name: "inducing_init", Kind: String, Default: "kmeans", Choices: []string{"kmeans", "random"},
				Doc: "initial inducing inputs: k-means centres of the training inputs (one run with M + K centres split base-first, as the SOLVE-GP code does) or a random subset"},
			{Name: "train_inducing", Kind: Bool, Default: true, Doc: "optimise the inducing inputs with the hyperparameters"},
			{Name: "whiten", Kind: Bool, Default: whiten, Doc: "parametrise q(u) (and a full q(v')) over whitened variables (u = L w, Kuu = LLᵀ; v' = R w, S_vv = RRᵀ)"},
			{Name: "likelihood", Kind: String, Default: "auto", Choices: []string{"auto", "gaussian", "bernoulli"},
				Doc: "auto: gaussian for regression, bernoulli (probit) for classification"},
			{Name: "init_phase_iterations", Kind: Int, Default: 100,
				Doc: "L-BFGS: first optimise only q and the inducing inputs for up to this many iterations (Tiao et al. 2023, App. B.3), then everything"},
		})
	}
	pointsBase := []ParamDoc{{Name: "num_inducing", Kind: Int, Default: 100, Doc: "number of base inducing inputs M (the mean-and-covariance basis β of ODVGP)"}}
	Register(Method{
		Name:    "odvgp",
		Summary: "orthogonally decoupled variational GP: inducing points β (mean and covariance) and γ (mean only, orthogonal to β)",
		Paper:   "Salimbeni, Cheng, Boots & Deisenroth (2018)",
		Tasks:   []Task{Regression, Classification},
		Params:  concat(KernelParams(), pointsBase, common(false)),
		New:     newDecoupled(decoupledKind{method: "odvgp", base: basisPoints, orth: basisPoints, meanOnly: true}),
	})
	Register(Method{
		Name:    "solvegp",
		Summary: "SOLVE-GP: inducing points u with q(u) and orthogonal inducing points v with a full q(v')",
		Paper:   "Shi, Titsias & Mnih (2020)",
		Tasks:   []Task{Regression, Classification},
		Params:  concat(KernelParams(), pointsBase, common(false)),
		New:     newDecoupled(decoupledKind{method: "solvegp", base: basisPoints, orth: basisPoints, lbfgs: true}),
	})
	var vffDocs []ParamDoc
	for _, d := range intervalParams("matern32", "additive", []ParamDoc{{Name: "frequencies", Kind: Int, Default: 51,
		Doc: "frequencies per dimension including 0: |β| = 2·frequencies − 1 features per dimension (the paper's |β| = 100 → 51)"},
		{Name: "beta", Kind: String, Default: "vff", Choices: []string{"vff", "hybrid"},
			Doc: "vff: Fourier features of the Matérn kernel per dimension; hybrid (1-D, App. C): kernel + periodic, with Fourier features of the Matérn part and periodic_inducing inducing points of the periodic part"},
		{Name: "periodic_inducing", Kind: Int, Default: 20, Doc: "hybrid: inducing points of the periodic component (half of |β| in App. C)"},
		{Name: "period", Kind: Float, Default: 0.5, Doc: "hybrid: initial period of the periodic component"},
		{Name: "periodic_variance", Kind: Float, Default: 1.0, Doc: "hybrid: initial variance of the periodic component"},
		{Name: "periodic_lengthscale", Kind: Float, Default: 0.2, Doc: "hybrid: initial lengthscale of the periodic component"}}) {
		switch d.Name {
		case "objective", "whiten", "noise_variance":
			continue
		}
		vffDocs = append(vffDocs, d)
	}
	Register(Method{
		Name:    "odvff",
		Summary: "orthogonally decoupled variational Fourier features: VFF β (mean and covariance) and inducing points γ (mean only)",
		Paper:   "Azzimonti, Schürch, Benavoli & Zaffalon (2020)",
		Tasks:   []Task{Regression, Classification},
		Params:  concat(vffDocs, common(true)),
		New:     newDecoupled(decoupledKind{method: "odvff", base: basisVFF, orth: basisPoints, meanOnly: true}),
	})
}

func newDecoupled(kind decoupledKind) func(Params) (Model, error) {
	return func(p Params) (Model, error) {
		if err := checkPositive(kind.method, p, "variance", "noise_variance", "period", "periodic_variance", "periodic_lengthscale"); err != nil {
			return nil, err
		}
		if err := checkJitter(kind.method, p); err != nil {
			return nil, err
		}
		for _, n := range []string{"num_inducing", "num_orthogonal", "frequencies"} {
			if p.Has(n) && p.Int(n) < 1 {
				return nil, fmt.Errorf("%s: %s must be ≥ 1, got %d", kind.method, n, p.Int(n))
			}
		}
		if v := p.Int("init_phase_iterations"); v < 0 {
			return nil, fmt.Errorf("%s: init_phase_iterations must be ≥ 0, got %d", kind.method, v)
		}
		return &decoupledModel{kind: kind, p: p}, nil
	}
}

type decoupledModel struct {
	kind       decoupledKind
	p          Params
	kern       kernels.Kernel
	base, orth features.Feature
	lik        likelihoods.Likelihood
	set        *param.Set
	dim        int
	fitted     bool
}

func (m *decoupledModel) opts() inference.Options {
	return inference.Options{Jitter: m.p.Float("jitter")}
}

// variationalLikelihood resolves the "likelihood" parameter for task.
func variationalLikelihood(p Params, task Task) (likelihoods.Likelihood, error) {
	name := p.String("likelihood")
	if name == "auto" {
		name = "gaussian"
		if task == Classification {
			name = "bernoulli"
		}
	}
	if name == "gaussian" {
		return likelihoods.NewGaussian(p.Float("noise_variance")), nil
	}
	return likelihoods.New(name)
}

// build declares the kernel, likelihood, both feature sets and q.
func (m *decoupledModel) build(train gp.Data, opt FitOptions) error {
	x := train.X
	n, d := x.Dims()
	var err error
	var vff *features.IntervalFeature
	switch m.kind.base {
	case basisVFF:
		im := &intervalModel{method: "vff", p: m.p}
		if err := im.build(x); err != nil {
			return err
		}
		m.kern, m.set, vff = im.kern, im.set, im.feat
		m.base = vff
		if err := vff.CheckInputs(x); err != nil {
			return fmt.Errorf("training inputs: %w", err)
		}
		if m.p.String("beta") == "hybrid" {
			if err := m.hybridBase(im, x, opt); err != nil {
				return err
			}
		}
	default:
		if m.kern, err = NewKernel(m.p, d); err != nil {
			return err
		}
		m.set = param.NewSet()
		if err := m.kern.Declare(m.set, KernelPrefix); err != nil {
			return err
		}
	}
	if err := m.lik.Declare(m.set, likelihoodPfx); err != nil {
		return err
	}
	// Inducing inputs: one draw for both point sets, base first.
	k := m.p.Int("num_orthogonal")
	mBase := 0
	if m.kind.base == basisPoints {
		mBase = m.p.Int("num_inducing")
	}
	if mBase+k > n {
		return fmt.Errorf("num_inducing + num_orthogonal = %d exceeds the %d training inputs", mBase+k, n)
	}
	rng := fitRNG(opt, 1)
	var z *mat.Dense
	if m.p.String("inducing_init") == "random" {
		z, err = inducing.RandomSubset(x, mBase+k, rng)
	} else {
		z, err = kmeansZ(x, mBase+k, rng)
	}
	if err != nil {
		return fmt.Errorf("inducing inputs: %w", err)
	}
	fixed := !m.p.Bool("train_inducing")
	if mBase > 0 {
		m.base = &features.InducingPoints{Z: mat.DenseCopyOf(z.Slice(0, mBase, 0, d)), Fixed: fixed}
	}
	m.orth = &features.InducingPoints{Z: mat.DenseCopyOf(z.Slice(mBase, mBase+k, 0, d)), Fixed: fixed}
	if vff != nil {
		// Kvu = Φ(Z_γ)ᵀ needs the γ inputs inside the box.
		if err := vff.CheckInputs(m.orth.(*features.InducingPoints).Z); err != nil {
			return fmt.Errorf("orthogonal inputs γ: %w", err)
		}
	}
	for _, f := range []struct {
		feat features.Feature
		pfx  string
	}{{m.base, BasePrefix}, {m.orth, OrthPrefix}} {
		if err := f.feat.Declare(m.set, f.pfx); err != nil {
			return err
		}
	}
	// q(u) = N(0, I) and q(v') = N(0, I) (or a_γ = 0): the paper's m = 0,
	// C = I (Tiao et al. App. B.3; Salimbeni's ODVGP code).
	mu := m.boundBase().M()
	if err := m.set.Add(QuMuName, mat.NewDense(mu, 1, nil), param.Identity{}); err != nil {
		return err
	}
	if err := m.set.Add(QuSqrtName, identity(mu), param.Identity{}); err != nil {
		return err
	}
	if err := m.set.Add(QvMuName, mat.NewDense(k, 1, nil), param.Identity{}); err != nil {
		return err
	}
	if !m.kind.meanOnly {
		if err := m.set.Add(QvSqrtName, identity(k), param.Identity{}); err != nil {
			return err
		}
	}
	return nil
}

// hybridBase replaces the VFF base by the hybrid β of Azzimonti et al.
// (App. C): k = k_S + k_P with a stationary Matérn k_S (VFF features) and a
// periodic k_P (inducing points R, for which no Fourier features exist);
// Kuu = blockdiag(Kφφ(k_S), k_P(R, R)) and Kuf = [φ(x); k_P(R, x)].
func (m *decoupledModel) hybridBase(im *intervalModel, x *mat.Dense, opt FitOptions) error {
	n, d := x.Dims()
	if d != 1 {
		return fmt.Errorf("beta = hybrid is the 1-D basis of App. C; inputs have %d dimensions (use beta = vff)", d)
	}
	r := m.p.Int("periodic_inducing")
	if r < 1 || r > n {
		return fmt.Errorf("periodic_inducing must be in [1, %d], got %d", n, r)
	}
	per, err := kernels.New("periodic", 1, kernels.Options{Variance: m.p.Float("periodic_variance"),
		Lengthscales: []float64{m.p.Float("periodic_lengthscale")}, Period: m.p.Float("period")})
	if err != nil {
		return err
	}
	if m.kern, err = kernels.Sum(im.kern, per); err != nil {
		return err
	}
	z, err := kmeansZ(x, r, fitRNG(opt, 3))
	if err != nil {
		return fmt.Errorf("periodic inducing inputs: %w", err)
	}
	if m.base, err = features.NewComponents(im.feat, &features.InducingPoints{Z: z, Fixed: !m.p.Bool("train_inducing")}); err != nil {
		return err
	}
	m.set = param.NewSet()
	return m.kern.Declare(m.set, KernelPrefix)
}

func identity(n int) *mat.Dense {
	out := mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		out.Set(i, i, 1)
	}
	return out
}

// boundBase binds the base feature on a scratch tape (for its size).
func (m *decoupledModel) boundBase() features.Bound {
	return m.base.Bind(m.set.Bind(ad.NewTape()), BasePrefix)
}

func (m *decoupledModel) q(b *param.Bound) (inference.Variational, inference.Orthogonal) {
	whiten := m.p.Bool("whiten")
	qu := inference.Variational{Mu: b.Get(QuMuName), Sqrt: b.Get(QuSqrtName), Whiten: whiten}
	if m.kind.meanOnly {
		return qu, inference.Orthogonal{Mu: b.Get(QvMuName), MeanOnly: true}
	}
	return qu, inference.Orthogonal{Mu: b.Get(QvMuName), Sqrt: b.Get(QvSqrtName), Whiten: whiten}
}

// blocks returns the covariances of both sets at x on the tape of b.
func (m *decoupledModel) blocks(b *param.Bound, x *ad.Node) (inference.Blocks, error) {
	kb := m.kern.Bind(b, KernelPrefix)
	ub, vb := m.base.Bind(b, BasePrefix), m.orth.Bind(b, OrthPrefix)
	if err := m.checkBox(vb); err != nil {
		return inference.Blocks{}, err
	}
	kvu, err := crossCovariance(kb, ub, vb)
	if err != nil {
		return inference.Blocks{}, err
	}
	kuu := inference.Kuu{}
	switch f := m.base.(type) {
	case *features.IntervalFeature:
		if m.p.Bool("whiten") {
			w, err := f.Whitener(kb, inference.DefaultMaxTries)
			if err != nil {
				return inference.Blocks{}, err
			}
			kuu.Whiten = w
		} else {
			kuu.Dense = ub.Kuu(kb)
		}
	default:
		if dg, ok := ub.(features.DiagonalKuu); ok {
			kuu.Diag = dg.KuuDiag(kb)
		} else {
			kuu.Dense = ub.Kuu(kb)
		}
	}
	return inference.Blocks{Kuu: kuu, Kuf: ub.Kuf(kb, x), Kvv: vb.Kuu(kb), Kvf: vb.Kuf(kb, x), Kvu: kvu, Kff: kb.Diag(x)}, nil
}

// checkBox reports orthogonal inputs that training moved outside the VFF
// box of the base set, where its Kuf is not defined.
func (m *decoupledModel) checkBox(vb features.Bound) error {
	p, ok := vb.(features.BoundPoints)
	if !ok {
		return nil
	}
	parts := []features.Feature{m.base}
	if c, ok := m.base.(*features.Components); ok {
		parts = c.Parts
	}
	for _, f := range parts {
		if iv, ok := f.(*features.IntervalFeature); ok {
			if err := iv.CheckInputs(p.Z.Value()); err != nil {
				return fmt.Errorf("orthogonal inputs γ: %w", err)
			}
		}
	}
	return nil
}

// crossCovariance is Kvu = Cov(v, u) (K×M) for the feature pairs where it
// is defined: inducing points against anything is the other feature's Kuf
// evaluated at the points.
func crossCovariance(k kernels.Bound, u, v features.Bound) (*ad.Node, error) {
	if p, ok := v.(features.BoundPoints); ok {
		return ad.T(u.Kuf(k, p.Z)), nil
	}
	if p, ok := u.(features.BoundPoints); ok {
		return v.Kuf(k, p.Z), nil
	}
	return nil, fmt.Errorf("no cross-covariance between %T and %T; defined pairs: inducing points × any feature", u, v)
}

func (m *decoupledModel) Fit(ctx context.Context, train gp.Data, opt FitOptions, progress func(Progress)) (FitResult, error) {
	name := m.kind.method
	start := time.Now()
	if err := checkTask(name, opt, Regression, Classification); err != nil {
		return FitResult{}, err
	}
	if err := train.Validate(); err != nil {
		return FitResult{}, fmt.Errorf("%s: %w", name, err)
	}
	def := optim.Adam
	if m.kind.lbfgs {
		def = optim.LBFGS
	}
	st, err := Settings(opt, def)
	if err != nil {
		return FitResult{}, fmt.Errorf("%s: %w", name, err)
	}
	n := train.N()
	batch := opt.BatchSize
	if batch <= 0 || batch > n {
		batch = n
	}
	if st.Method == optim.LBFGS && batch < n {
		return FitResult{}, fmt.Errorf("%s: L-BFGS needs full-batch gradients; got batch size %d of %d (use adam)", name, batch, n)
	}
	if m.lik, err = variationalLikelihood(m.p, opt.Task); err != nil {
		return FitResult{}, fmt.Errorf("%s: %w", name, err)
	}
	if m.lik.Name() == "bernoulli" {
		for i, y := range train.Y {
			if y != 1 && y != -1 {
				return FitResult{}, fmt.Errorf("%s: bernoulli likelihood needs labels ±1; y[%d] = %v", name, i, y)
			}
		}
	}
	m.dim = train.D()
	if err := m.build(train, opt); err != nil {
		return FitResult{}, fmt.Errorf("%s: %w", name, err)
	}
	bt := &batcher{data: train, size: batch, rng: fitRNG(opt, 2)}
	obj := func(t *ad.Tape, b *param.Bound) (*ad.Node, error) {
		x, y := bt.next()
		blk, err := m.blocks(b, t.Const(x))
		if err != nil {
			return nil, err
		}
		ve := func(mu, v *ad.Node) *ad.Node { return m.lik.VarExp(b, likelihoodPfx, mu, v, y) }
		qu, qv := m.q(b)
		out, _, err := inference.Decoupled(blk, ve, qu, qv, n, m.opts())
		return out, err
	}
	phases := []optim.Phase{{Name: st.Method, Trainable: trainableNames(m.set), Settings: st}}
	if st.Method == optim.LBFGS && m.p.Int("init_phase_iterations") > 0 && opt.Iterations > 0 {
		// Tiao et al. (2023, App. B.3): up to 100 iterations on the
		// variational parameters and inducing inputs first.
		var first []string
		for _, nm := range trainableNames(m.set) {
			if strings.HasPrefix(nm, BasePrefix) || strings.HasPrefix(nm, OrthPrefix) || strings.HasPrefix(nm, "qu.") || strings.HasPrefix(nm, "qv.") {
				first = append(first, nm)
			}
		}
		init := st
		init.MaxIter = m.p.Int("init_phase_iterations")
		phases = append([]optim.Phase{{Name: "init", Trainable: first, Settings: init}}, phases...)
	}
	rep, terr := optim.Train(ctx, m.set, obj, phases, func(p optim.Progress) {
		if progress != nil {
			progress(Progress{Phase: p.Phase, Iteration: p.Iteration, Objective: p.Objective, Elapsed: time.Since(start)})
		}
	})
	hide := []string{QuMuName, QuSqrtName, QvMuName, QvSqrtName}
	for _, nm := range m.set.Names() {
		if strings.HasPrefix(nm, BasePrefix) || strings.HasPrefix(nm, OrthPrefix) {
			hide = append(hide, nm)
		}
	}
	res := NewFitResult(rep, m.set, hide...)
	res.Extra["num_base"] = float64(m.boundBase().M())
	res.Extra["num_orthogonal"] = float64(m.p.Int("num_orthogonal"))
	if terr != nil && rep.Trace == nil {
		return res, trainErr(name, terr)
	}
	m.fitted = true
	if batch < n {
		// A minibatch objective is noisy: report the full-data ELBO.
		if res.Objective, err = m.fullELBO(train); err != nil {
			return res, fmt.Errorf("%s: %w", name, err)
		}
		res.Extra["last_minibatch_objective"] = rep.Objective
	}
	return res, trainErr(name, terr)
}

// fullELBO evaluates the ELBO on all of data from chunked marginals.
func (m *decoupledModel) fullELBO(data gp.Data) (float64, error) {
	pred, err := m.PredictTerms(data.X)
	if err != nil {
		return 0, err
	}
	n := data.N()
	t := ad.NewTape()
	b := m.set.Bind(t)
	expect := ad.Sum(m.lik.VarExp(b, likelihoodPfx, t.Const(mat.NewDense(n, 1, pred.Mean)), t.Const(mat.NewDense(n, 1, pred.Var)), columnOf(data.Y)))
	blk, err := m.blocks(b, t.Const(mat.NewDense(1, m.dim, nil)))
	if err != nil {
		return 0, err
	}
	qu, qv := m.q(b)
	kl, err := inference.DecoupledKL(blk, qu, qv, m.opts())
	if err != nil {
		return 0, err
	}
	return expect.Scalar() - kl.Scalar(), nil
}

// PredictTerms returns the predictive decomposition of eq. (12) of
// Tiao et al. (2023) at the rows of x, term by term (their Fig. 5).
func (m *decoupledModel) PredictTerms(x *mat.Dense) (*inference.DecoupledPrediction, error) {
	if err := checkInputs(m.kind.method, m.fitted, x, m.dim); err != nil {
		return nil, err
	}
	if f, ok := m.base.(*features.IntervalFeature); ok {
		if err := f.CheckInputs(x); err != nil {
			return nil, fmt.Errorf("%s: %w", m.kind.method, err)
		}
	}
	return inference.DecoupledPredict(x, func(t *ad.Tape, xn *ad.Node) (inference.Blocks, inference.Variational, inference.Orthogonal, error) {
		b := m.set.Bind(t)
		blk, err := m.blocks(b, xn)
		qu, qv := m.q(b)
		return blk, qu, qv, err
	}, m.opts())
}

func (m *decoupledModel) Predict(x *mat.Dense) (Prediction, error) {
	pred, err := m.PredictTerms(x)
	if err != nil {
		return Prediction{}, err
	}
	if m.lik.Name() == "gaussian" {
		return regressionPrediction(pred.Mean, pred.Var, m.set.Scalar(noiseName)), nil
	}
	p, _ := m.lik.Predict(m.set, likelihoodPfx, pred.Mean, pred.Var)
	return Prediction{Mean: pred.Mean, VarF: pred.Var, ProbPositive: p}, nil
}
