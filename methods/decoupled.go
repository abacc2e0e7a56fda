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
// mean-only for ODVGP/ODVFF), and the two-block ELBO of inference.BlockELBO
// built from the sets' Kuu (with structure), Kuf and Kvu = features.Kuv.
//
// In the ODVGP/ODVFF papers' notation, the base set is β (mean and
// covariance basis) and the orthogonal set is γ (mean-only basis).

// The parameters of the two sets are named by their methods.Group: the
// base set u (β of ODVGP/ODVFF) and the orthogonal set v (γ), e.g.
// beta.q_mu, gamma.inducing.z, u.q_sqrt. A mean-only set's q_mu holds the
// weights a_γ (m_v' = S_vv a_γ), as the ODVGP code does.

// Basis kinds a decoupled model can use for either set.
const (
	basisPoints     = "points"
	basisVFF        = "vff"
	basisActivation = "activation"
	basisHarmonics  = "harmonics"
)

type decoupledKind struct {
	method   string
	groups   [2]Group // parameter names of the base and orthogonal sets
	base     string   // basisPoints, basisVFF, … ; "" reads the "base" parameter
	orth     string
	meanOnly bool // ODVGP/ODVFF: C_v' = S_vv, q(v') holds a_γ only
	lbfgs    bool // default optimiser L-BFGS (the spherical-orthogonal recipe) rather than Adam
	zonal    bool // one zonal kernel for every set (the spherical methods)
}

func init() {
	common := func(whiten bool) []ParamDoc {
		return concat(NoiseParams(), NumericParams(), VariationalParams(), []ParamDoc{
			{Name: "num_orthogonal", Kind: Int, Default: 100, Doc: "number of orthogonal inducing inputs K (the mean basis γ of ODVGP/ODVFF)"},
			{Name: "inducing_init", Kind: String, Default: "kmeans", Choices: []string{"kmeans", "random"},
				Doc: "initial inducing inputs: k-means centres of the training inputs (one run with M + K centres split base-first, as the SOLVE-GP code does) or a random subset"},
			{Name: "train_inducing", Kind: Bool, Default: true, Doc: "optimise the inducing inputs with the hyperparameters"},
			{Name: "whiten", Kind: Bool, Default: whiten, Doc: "parametrise q(u) (and a full q(v')) over whitened variables (u = L w, Kuu = LLᵀ; v' = R w, S_vv = RRᵀ)"},
			{Name: "likelihood", Kind: String, Default: "auto", Choices: []string{"auto", "gaussian", "bernoulli"},
				Doc: "auto: gaussian for regression, bernoulli (probit) for classification"},
			{Name: "init_iterations", Kind: Int, Default: 100,
				Doc: "solvegp and spherical-orthogonal (the Tiao et al. 2023 recipe, App. B.3): first optimise only q and the inducing inputs / unit directions for up to this many iterations, kernel and likelihood fixed, then everything; 0 skips it (odvgp/odvff ignore it)"},
		})
	}
	pointsBase := []ParamDoc{{Name: "num_inducing", Kind: Int, Default: 100, Doc: "number of base inducing inputs M (the mean-and-covariance basis β of ODVGP)"}}
	Register(Method{
		Name:    "odvgp",
		Summary: "orthogonally decoupled variational GP: inducing points β (mean and covariance) and γ (mean only, orthogonal to β)",
		Paper:   "Salimbeni, Cheng, Boots & Deisenroth (2018)",
		Tasks:   []Task{Regression, Classification},
		Params:  concat(KernelParams(), pointsBase, common(false)),
		New:     newDecoupled(decoupledKind{method: "odvgp", groups: betaGamma, base: basisPoints, orth: basisPoints, meanOnly: true}),
	})
	Register(Method{
		Name:    "solvegp",
		Summary: "SOLVE-GP: inducing points u with q(u) and orthogonal inducing points v with a full q(v')",
		Paper:   "Shi, Titsias & Mnih (2020)",
		Tasks:   []Task{Regression, Classification},
		Params:  concat(KernelParams(), pointsBase, common(false)),
		New:     newDecoupled(decoupledKind{method: "solvegp", groups: uv, base: basisPoints, orth: basisPoints, lbfgs: true}),
	})
	Register(Method{
		Name: "spherical-orthogonal",
		Summary: "orthogonally decoupled GP with spherical features: base set u and orthogonal set v each of activation units, spherical harmonics or inducing points " +
			"(default: activation base, inducing-point orthogonal set, the paper's proposal), one zonal kernel, full q(u) and q(v')",
		Paper: "Tiao, Dutordoir & Picheny (2023)",
		Tasks: []Task{Regression, Classification},
		Params: concat(zonalKernelParams("arccos1"), []ParamDoc{
			{Name: "base", Kind: String, Default: basisActivation, Choices: []string{basisActivation, basisHarmonics, basisPoints},
				Doc: "base set u (App. A rows): activation units H_m, spherical harmonics Y_m, or inducing points k(z_m, ·)"},
			{Name: "orthogonal", Kind: String, Default: basisPoints, Choices: []string{basisPoints, basisActivation, basisHarmonics},
				Doc: "orthogonal set v (App. A columns); the pair needs a cross-covariance Kvu: inducing points against anything (the feature evaluated at the points), or a pair the features define"},
			{Name: "num_inducing", Kind: Int, Default: 128, Doc: "size M of the base set when it is activation units or inducing points"},
			{Name: "activation", Kind: String, Default: "softplus", Choices: features.Activations(),
				Doc: "σ of the units H_m(x) = ρ(x)σ(ẑ_mᵀx̂); relu has an infinite RKHS norm (Kuu grows without bound with activation_levels), softplus converges"},
			{Name: "activation_levels", Kind: Int, Default: 6, Doc: "truncation L of the units and their Kuu and Kvu (levels 0…L−1 with a non-zero kernel coefficient)"},
			{Name: "directions_init", Kind: String, Default: "data", Choices: []string{"data", "random"},
				Doc: "initial unit directions: the augmented inputs x̃ of random training points, or N(0, I) draws (seeded)"},
			{Name: "train_directions", Kind: Bool, Default: true, Doc: "optimise the unit directions"},
			{Name: "max_level", Kind: Int, Default: 3, Doc: "spherical harmonics: the complete levels 0…max_level (levels with a zero kernel coefficient dropped)"},
			{Name: "train_weights", Kind: Bool, Default: true, Doc: "optimise the kernel's weight and bias variances"},
		}, common(false)),
		New: newDecoupled(decoupledKind{method: "spherical-orthogonal", groups: uv, lbfgs: true, zonal: true}),
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
		case "objective", "whiten", "noise_variance", "natgrad_step":
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
		New:     newDecoupled(decoupledKind{method: "odvff", groups: betaGamma, base: basisVFF, orth: basisPoints, meanOnly: true}),
	})
}

var (
	betaGamma = [2]Group{{Name: "beta"}, {Name: "gamma"}}
	uv        = [2]Group{{Name: "u"}, {Name: "v"}}
)

func newDecoupled(kind decoupledKind) func(Params) (Model, error) {
	return func(p Params) (Model, error) {
		if err := checkPositive(kind.method, p, "variance", "noise_variance", "period", "periodic_variance", "periodic_lengthscale"); err != nil {
			return nil, err
		}
		if err := checkJitter(kind.method, p); err != nil {
			return nil, err
		}
		if err := checkNatGradStep(kind.method, p); err != nil {
			return nil, err
		}
		for _, n := range []string{"num_inducing", "num_orthogonal", "frequencies", "activation_levels"} {
			if p.Has(n) && p.Int(n) < 1 {
				return nil, fmt.Errorf("%s: %s must be ≥ 1, got %d", kind.method, n, p.Int(n))
			}
		}
		if p.String("base") == basisHarmonics && p.String("orthogonal") == basisHarmonics {
			return nil, fmt.Errorf("%s: base = orthogonal = harmonics (App. A.2.2) has Kvu = Kuu, so S_vv = 0 and the model collapses to SVGP with harmonics (method vish); choose another orthogonal set", kind.method)
		}
		if v := p.Int("init_iterations"); v < 0 {
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

// basisKinds returns the kinds of the base and orthogonal sets.
func (m *decoupledModel) basisKinds() (base, orth string) {
	base, orth = m.kind.base, m.kind.orth
	if base == "" {
		base = m.p.String("base")
	}
	if orth == "" {
		orth = m.p.String("orthogonal")
	}
	return base, orth
}

// build declares the kernel, likelihood, both feature sets and q.
func (m *decoupledModel) build(train gp.Data, opt FitOptions) error {
	x := train.X
	n, d := x.Dims()
	var err error
	baseKind, orthKind := m.basisKinds()
	switch {
	case baseKind == basisVFF:
		im := &intervalModel{method: "vff", p: m.p, newFeature: vffFeature}
		if err := im.build(x); err != nil {
			return err
		}
		vff := im.feat
		m.kern, m.set, m.base = im.kern, im.set, vff
		if err := vff.CheckInputs(x); err != nil {
			return fmt.Errorf("training inputs: %w", err)
		}
		if m.p.String("beta") == "hybrid" {
			if err := m.hybridBase(im, x, opt); err != nil {
				return err
			}
		}
	case m.kind.zonal:
		if m.kern, err = newZonalKernel(m.kind.method, m.p, d); err != nil {
			return err
		}
		m.set = param.NewSet()
		if err := m.kern.Declare(m.set, KernelPrefix); err != nil {
			return err
		}
		m.set.SetTrainable(m.p.Bool("train_weights"), KernelPrefix+"weight_variances", KernelPrefix+"bias_variance")
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
	// Inducing inputs: one draw for both point sets, base first (the
	// SOLVE-GP code's k-means with M + K centres).
	counts := [2]int{m.p.Int("num_inducing"), m.p.Int("num_orthogonal")}
	kinds := [2]string{baseKind, orthKind}
	nz := 0
	for i, kd := range kinds {
		if kd == basisPoints {
			nz += counts[i]
		}
	}
	if nz > n {
		return fmt.Errorf("the inducing inputs of both sets (%d) exceed the %d training inputs", nz, n)
	}
	var z *mat.Dense
	if nz > 0 {
		rng := fitRNG(opt, 1)
		if m.p.String("inducing_init") == "random" {
			z, err = inducing.RandomSubset(x, nz, rng)
		} else {
			z, err = kmeansZ(x, nz, rng)
		}
		if err != nil {
			return fmt.Errorf("inducing inputs: %w", err)
		}
	}
	sets := [2]*features.Feature{&m.base, &m.orth}
	off := 0
	for i, kd := range kinds {
		if i == 0 && kd == basisVFF {
			continue
		}
		f, err := m.newSet(kd, i, counts[i], z, &off, train, opt)
		if err != nil {
			return fmt.Errorf("%s set: %w", [2]string{"base", "orthogonal"}[i], err)
		}
		*sets[i] = f
	}
	gb, gv := m.kind.groups[0], m.kind.groups[1]
	if err := m.base.Declare(m.set, gb.FeaturePrefix()); err != nil {
		return err
	}
	if err := m.orth.Declare(m.set, gv.FeaturePrefix()); err != nil {
		return err
	}
	// A pair without a cross-covariance fails here, before training.
	scratch0 := m.set.Bind(ad.NewTape())
	if _, err := features.Kuv(m.kern.Bind(scratch0, KernelPrefix), gb.Bind(scratch0, m.base), gv.Bind(scratch0, m.orth)); err != nil {
		return err
	}
	for i, g := range m.kind.groups {
		switch kinds[i] {
		case basisPoints:
			m.set.SetTrainable(m.p.Bool("train_inducing"), g.Z())
		case basisActivation:
			m.set.SetTrainable(m.p.Bool("train_directions"), g.FeaturePrefix()+"directions")
		}
	}
	// q(u) = N(0, I) and q(v') = N(0, I) (or a_γ = 0): the paper's m = 0,
	// C = I (Tiao et al. App. B.3; Salimbeni's ODVGP code).
	scratch := m.set.Bind(ad.NewTape())
	mu, k := gb.Bind(scratch, m.base).M(), gv.Bind(scratch, m.orth).M()
	add := func(name string, v *mat.Dense) error { return m.set.Add(name, v, param.Identity{}) }
	if err := add(gb.QMu(), mat.NewDense(mu, 1, nil)); err != nil {
		return err
	}
	if err := add(gb.QSqrt(), identity(mu)); err != nil {
		return err
	}
	if err := add(gv.QMu(), mat.NewDense(k, 1, nil)); err != nil {
		return err
	}
	if !m.kind.meanOnly {
		return add(gv.QSqrt(), identity(k))
	}
	return nil
}

// newSet builds set i (0 base, 1 orthogonal) of kind kd with count
// members: inducing points take the next count rows of z (at *off),
// activation units draw their directions, spherical harmonics take the
// complete levels 0…max_level.
func (m *decoupledModel) newSet(kd string, i, count int, z *mat.Dense, off *int, train gp.Data, opt FitOptions) (features.Feature, error) {
	switch kd {
	case basisPoints:
		_, d := z.Dims()
		f := features.NewInducingPoints(z.Slice(*off, *off+count, 0, d).(*mat.Dense))
		*off += count
		return f, nil
	case basisActivation, basisHarmonics:
		kb, ok := m.kern.Bind(m.set.Bind(ad.NewTape()), KernelPrefix).(kernels.ZonalBound)
		if !ok {
			return nil, fmt.Errorf("%s features need a zonal kernel, not %s", kd, m.kern.Name())
		}
		if kd == basisHarmonics {
			f, err := features.NewSphericalHarmonicsFor(kb, m.p.Int("max_level"))
			if err != nil {
				return nil, err
			}
			return f, f.CheckKernel(kb)
		}
		dirs, err := initialDirections(m.p.String("directions_init"), count, kb, train, fitRNG(opt, uint64(4+i)))
		if err != nil {
			return nil, err
		}
		f, err := features.NewActivation(m.p.String("activation"), dirs, m.p.Int("activation_levels"))
		if err != nil {
			return nil, err
		}
		return f, f.CheckKernel(kb)
	}
	return nil, fmt.Errorf("unknown basis %q; valid: %s, %s, %s", kd, basisPoints, basisActivation, basisHarmonics)
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

// blocks returns the two blocks of the bound on b: the base set with q(u)
// and the orthogonal set with q(v') (a weights block for ODVGP/ODVFF). The
// bound reads the base set's Kuu structure (a VFF root when whitened) and
// Kvu through features.Kuv.
func (m *decoupledModel) blocks(b *param.Bound) []inference.Block {
	whiten := m.p.Bool("whiten")
	gb, gv := m.kind.groups[0], m.kind.groups[1]
	out := []inference.Block{
		{Feature: gb.Bind(b, m.base), Q: gb.Variational(b, whiten)},
		{Feature: gv.Bind(b, m.orth), Q: inference.Variational{Mu: b.Get(gv.QMu())}},
	}
	if m.kind.meanOnly {
		out[1].Weights = true
	} else {
		out[1].Q = gv.Variational(b, whiten)
	}
	return out
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
	n := train.N()
	if _, err := variationalSettings(opt, n, def); err != nil {
		return FitResult{}, fmt.Errorf("%s: %w", name, err)
	}
	var err error
	if m.lik, err = zonalLikelihood(name, m.p.String("likelihood"), opt.Task, m.p.Float("noise_variance"), train.Y); err != nil {
		return FitResult{}, err
	}
	m.dim = train.D()
	if err := m.build(train, opt); err != nil {
		return FitResult{}, fmt.Errorf("%s: %w", name, err)
	}
	fit := variationalFit{method: name, set: m.set, defaultOptimizer: def,
		objective: func(t *ad.Tape, b *param.Bound, batch Batch) (*ad.Node, error) {
			ve := func(mu, v *ad.Node) *ad.Node { return m.lik.VarExp(b, likelihoodPfx, mu, v, batch.Y) }
			out, _, err := inference.BlockELBO(m.kern.Bind(b, KernelPrefix), m.blocks(b), t.Const(batch.X), ve, batch.N, m.opts())
			return out, err
		},
	}
	if m.kind.lbfgs {
		// The spherical-orthogonal recipe (also for Adam: spec §6.11).
		fit.initIterations = m.p.Int("init_iterations")
	}
	// Natural gradients move the full Gaussian q's; a_γ moves with Adam.
	fit.groups = m.kind.groups[:1]
	if !m.kind.meanOnly {
		fit.groups = m.kind.groups[:]
	}
	for _, nm := range trainableNames(m.set) {
		if m.groupParam(nm) {
			fit.initNames = append(fit.initNames, nm)
		}
	}
	rep, terr := fit.train(ctx, m.p, train, opt, start, progress)
	var hide []string
	for _, nm := range m.set.Names() {
		if m.groupParam(nm) {
			hide = append(hide, nm)
		}
	}
	res := NewFitResult(rep, m.set, hide...)
	res.Extra["num_base"] = float64(m.base.Bind(m.set.Bind(ad.NewTape()), m.kind.groups[0].FeaturePrefix()).M())
	res.Extra["num_orthogonal"] = float64(m.p.Int("num_orthogonal"))
	if terr != nil && rep.Trace == nil {
		return res, trainErr(name, terr)
	}
	m.fitted = true
	if batchSize(opt, n) < n {
		// A minibatch objective is noisy: report the full-data ELBO.
		if res.Objective, err = m.fullELBO(train); err != nil {
			return res, fmt.Errorf("%s: %w", name, err)
		}
		res.Extra["last_minibatch_objective"] = rep.Objective
	}
	return res, trainErr(name, terr)
}

// groupParam reports whether a parameter belongs to one of the two sets
// (their inputs and q), not to the kernel or likelihood.
func (m *decoupledModel) groupParam(name string) bool {
	for _, g := range m.kind.groups {
		if strings.HasPrefix(name, g.Name+".") {
			return true
		}
	}
	return false
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
	kl, err := inference.BlockKL(m.kern.Bind(b, KernelPrefix), m.blocks(b), m.opts())
	if err != nil {
		return 0, err
	}
	return expect.Scalar() - kl.Scalar(), nil
}

// PredictTerms returns the predictive decomposition of eq. (12) of Shi et
// al. (2020) at the rows of x, term by term (Fig. 5 of Tiao et al. 2023):
// block 0 is the base set, block 1 the orthogonal set.
func (m *decoupledModel) PredictTerms(x *mat.Dense) (*inference.BlockPrediction, error) {
	if err := checkInputs(m.kind.method, m.fitted, x, m.dim); err != nil {
		return nil, err
	}
	return inference.BlockPredict(x, func(t *ad.Tape) (kernels.Bound, []inference.Block, error) {
		b := m.set.Bind(t)
		return m.kern.Bind(b, KernelPrefix), m.blocks(b), nil
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

// Artifact exports ArtifactVarianceTerms (1-D inputs: eq. (12) term by
// term on a dense grid, Fig. 5 of Tiao et al. 2023) and
// ArtifactInducingInputs (the point sets among base and orthogonal).
func (m *decoupledModel) Artifact(name string, train, _ gp.Data) (Artifact, error) {
	if !m.fitted {
		return Artifact{}, fmt.Errorf("%s: artifact %q before Fit", m.kind.method, name)
	}
	switch name {
	case ArtifactVarianceTerms:
		return varianceTermsArtifact(m.kind.method, train, func(t *ad.Tape) (kernels.Bound, []inference.Block, error) {
			b := m.set.Bind(t)
			return m.kern.Bind(b, KernelPrefix), m.blocks(b), nil
		}, m.opts())
	case ArtifactInducingInputs:
		baseKind, orthKind := m.basisKinds()
		var zs [2]*mat.Dense
		for i, kd := range [2]string{baseKind, orthKind} {
			if kd == basisPoints {
				zs[i] = m.set.Value(m.kind.groups[i].Z())
			}
		}
		return inducingInputsArtifact(zs[0], zs[1])
	}
	return Artifact{}, unknownArtifact(m.kind.method, name, ArtifactVarianceTerms, ArtifactInducingInputs)
}
