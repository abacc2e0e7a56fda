package methods

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"time"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp"
	"sgplab/gp/ad"
	"sgplab/gp/features"
	"sgplab/gp/inference"
	"sgplab/gp/kernels"
	"sgplab/gp/likelihoods"
	"sgplab/gp/optim"
	"sgplab/gp/param"
)

// The one sparse model. Every sparse method (sgpr, svgp, vff, avff,
// bspline, iff, vish, activated-svgp, odvgp, odvff, solvegp,
// spherical-orthogonal) is a sparseDecl: which kernel, which feature
// builder(s) for its one or two blocks, which objective and which
// defaults. The model then does the same for all of them: build the kernel
// and the likelihood, build and declare the feature sets, declare q, train
// (the collapsed bound, from statistics precomputed once when every Kuf is
// fixed; or the ELBO of one block or two by the variational recipe),
// condition, report the full-data ELBO after minibatches, predict, and
// export artifacts.

// objective is what a sparse model maximises.
type objective int

const (
	// collapsed is Titsias' bound (Gaussian likelihood, one block): from
	// ΦΦᵀ, Φy, yᵀy precomputed once when the block's Kuf is fixed (O(M³)
	// per step), else O(NM²) per step.
	collapsed objective = iota + 1
	// elbo is the uncollapsed ELBO: SVGP for one block, the orthogonally
	// decoupled two-block bound for two; any likelihood, minibatches.
	elbo
)

// kernelBuilder builds a sparse model's kernel on dim inputs and declares
// it in s under KernelPrefix with the trainable flags the parameters set.
type kernelBuilder func(p Params, dim int, s *param.Set) (kernels.Kernel, error)

// sparseDecl declares a sparse method over the one sparse model.
type sparseDecl struct {
	name   string
	tasks  []Task
	kernel kernelBuilder
	blocks []blockDecl
	// objective is the method's objective for parameters p.
	objective func(p Params) objective
	// optimizer is the ELBO's default optimiser for full batches before
	// the method declared a recipe (the collapsed bound and minibatches
	// always defaulted to L-BFGS and Adam): legacy.
	optimizer string
	// qPrior starts q(u) at the prior N(0, Kuu) (Block.DeclareQ; N(0, I)
	// over v when whitened); otherwise at N(0, I) whatever the
	// parameterisation (the spherical and decoupled papers' recipe).
	qPrior bool
	// initPhase: init_iterations first trains only the blocks' own
	// parameters (q, inducing inputs, unit directions), kernel and
	// likelihood fixed (Tiao et al. 2023, App. B.3).
	initPhase bool
	// extrapolate lets Predict evaluate features beyond the inputs they
	// accept (their CheckInputs) by their edge formulas, as the ODVFF
	// authors' code does; otherwise test inputs outside are an error.
	extrapolate bool
	// exactLML: the fitted model offers ExactLML (the gap to the exact
	// log marginal likelihood, on request of a grid).
	exactLML bool
	// size maps num_inducing onto the first block's structure (nil: the
	// block's size parameter is num_inducing itself, or it has none).
	size *sizeRule
}

// blockDecl declares one block of a sparse method.
type blockDecl struct {
	Block
	// feature names the block's feature builder for parameters p.
	feature func(p Params) string
	// size is the parameter with the block's requested size ("": none),
	// and sizeFallback the one whose value it takes when not given
	// (num_orthogonal: num_inducing).
	size, sizeFallback string
	// meanOnly: q(v') holds weights a only (ODVGP/ODVFF's γ).
	meanOnly bool
	// stream is the random stream of the builder's own draws.
	stream uint64
}

// request is the block's requested size: its size parameter, else the
// one it falls back to, else 0 (none).
func (b blockDecl) request(p Params) int {
	switch {
	case b.size == "":
		return 0
	case p.Has(b.size):
		return p.Int(b.size)
	case b.sizeFallback != "":
		return p.Int(b.sizeFallback)
	}
	return 0
}

// builder names a fixed feature builder.
func builder(name string) func(Params) string { return func(Params) string { return name } }

// builderParam reads the feature builder's name from a parameter.
func builderParam(name string) func(Params) string {
	return func(p Params) string { return p.String(name) }
}

// objectiveParam reads the objective from the "objective" parameter
// (collapsed or svgp).
func objectiveParam(p Params) objective {
	if p.String("objective") == "svgp" {
		return elbo
	}
	return collapsed
}

func always(o objective) func(Params) objective { return func(Params) objective { return o } }

// method registers the declaration as a Method with the given metadata.
func (d *sparseDecl) method(m Method) Method {
	m.Name, m.Tasks = d.name, d.tasks
	m.New = func(p Params) (Model, error) {
		s := &sparseModel{decl: d, p: p}
		if d.exactLML {
			return &exactSparseModel{s}, nil
		}
		return s, nil
	}
	m.Needs = d.needs
	m.Fit, m.Legacy = d.defaultFit, d.legacy
	if m.QInit == "" {
		m.QInit = d.qInit(m)
	}
	if m.FitDoc == "" {
		m.FitDoc = d.fitDoc(m)
	}
	return m
}

// qInit says where the ELBO's q(u) starts ("" for a method whose only
// objective is the collapsed bound, which has no q(u)).
func (d *sparseDecl) qInit(m Method) string {
	choosesObjective := false
	for _, pd := range m.Params {
		choosesObjective = choosesObjective || pd.Name == "objective"
	}
	if !choosesObjective && d.objective(Params{}) == collapsed {
		return ""
	}
	where := "q(u) starts at N(0, I)"
	if d.qPrior {
		where = "q(u) starts at the prior N(0, Kuu) (N(0, I) over v when whitened)"
	}
	if choosesObjective {
		where = "with objective = \"svgp\", " + where
	}
	return where
}

// legacy is the default recipe of the sparse methods before they declared
// one: L-BFGS for the collapsed bound, Adam for minibatches, else the
// declaration's optimizer; Adam at optim.DefaultAdamLearningRate.
func (d *sparseDecl) legacy(p Params, c FitCase) Recipe {
	r := Recipe{Optimizer: d.optimizer, Iterations: 1000}
	switch {
	case d.objective(p) == collapsed:
		r.Optimizer = optim.LBFGS
	case c.Minibatch:
		r.Optimizer = optim.Adam
	}
	return r
}

// Budgets of the sparse methods' default recipes. Measured with
// stop_tol 1e-5 on yacht, energy and concrete at M = 16–64: the
// collapsed bound with trained inducing inputs stops after 500–2300 L-BFGS
// iterations (fixed features after 30–250), the uncollapsed ELBO, with
// q(u) trained too, after 1200–5000.
const (
	collapsedBudget      = 5000
	elboBudget           = 10000
	natGradMinibatchStep = 0.1 // γ with minibatches (Salimbeni et al. 2018; the ODVFF paper's)
	// minibatchStopWindow is the smallest window over which the stopping
	// rule judges a minibatch fit: the window the rule takes at the end of
	// a full budget (10 % of elboBudget). Over the default 10 iterations a
	// minibatch ELBO's noise hides its climb: SVGP on the reference recipe
	// (N = 10⁴, M = 200, B = 1000) stopped "converged" after 53 iterations
	// at an ELBO of −1.6·10⁵ that reaches +2.4·10³ by 4300 iterations; over
	// 1000 iterations the noise allows a slope of about the tolerance
	// (3·se ≈ 10⁻⁵·N for B = 1000), so the rule means what it says.
	minibatchStopWindow = elboBudget / 10
	// minibatchWarmStart and minibatchWarmPoints are the warm start of
	// every minibatch recipe with natural gradients (so that the methods
	// a grid compares train alike): L-BFGS on the ELBO of 2000 random
	// rows for 100 iterations brings the kernel, the noise and the
	// inducing variables near their optimum before the noisy steps begin.
	// Measured for svgp on the peer benchmark's problems (N = 10⁴ and
	// 5·10⁴, M = 200 and 500, B = 1000; docs/performance.md), it about
	// halves the minibatch steps to a given ELBO.
	minibatchWarmStart  = 100
	minibatchWarmPoints = 2000
)

// defaultFit is the sparse methods' default recipe: L-BFGS on the
// collapsed bound and on the full-batch ELBO (whitened q(u) by default),
// both up to their budget until converged; with minibatches Adam at 0.01,
// with natural gradients (γ = 0.1) on q(u) for a Gaussian likelihood
// after an L-BFGS warm start on a subset,
// judged converged over at least minibatchStopWindow iterations.
func (d *sparseDecl) defaultFit(p Params, c FitCase) Recipe {
	if d.objective(p) == collapsed {
		return Recipe{Optimizer: optim.LBFGS, Iterations: collapsedBudget, StopTol: DefaultStopTol}
	}
	if !c.Minibatch {
		return Recipe{Optimizer: optim.LBFGS, Iterations: elboBudget, StopTol: DefaultStopTol}
	}
	r := Recipe{Optimizer: optim.Adam, LearningRate: optim.DefaultAdamLearningRate, Iterations: elboBudget, StopTol: DefaultStopTol,
		StopWindow: minibatchStopWindow}
	if gaussianLikelihood(p, c.Task) && p.Has(natGradParam) == false && d.hasNatGrad() {
		r.NatGrad = natGradMinibatchStep
		r.WarmStart, r.WarmStartPoints = minibatchWarmStart, minibatchWarmPoints
	}
	return r
}

// hasNatGrad reports whether the method's q(u) can move by natural
// gradients (every block but a mean-only one is a full Gaussian).
func (d *sparseDecl) hasNatGrad() bool {
	for _, b := range d.blocks {
		if !b.meanOnly {
			return true
		}
	}
	return false
}

// gaussianLikelihood reports whether the fit's likelihood is Gaussian.
func gaussianLikelihood(p Params, task Task) bool {
	switch p.String("likelihood") {
	case "gaussian":
		return true
	case "", "auto":
		return task != Classification
	}
	return false
}

// fitDoc says how the default recipe depends on the objective, for a
// method that has both.
func (d *sparseDecl) fitDoc(m Method) string {
	var objectives []string
	for _, pd := range m.Params {
		if pd.Name == "objective" {
			objectives = pd.Choices
		}
	}
	if len(objectives) < 2 {
		return ""
	}
	p, err := m.Validate(map[string]any{"objective": "svgp"})
	if err != nil {
		return ""
	}
	full, mini := d.defaultFit(p, FitCase{Task: Regression}), d.defaultFit(p, FitCase{Task: Regression, Minibatch: true})
	return fmt.Sprintf("objective = \"svgp\": %s; with batch_size %s", full, mini)
}

// recipe is what a fit with options opt runs on n training rows.
func (d *sparseDecl) recipe(p Params, opt FitOptions, n int) Recipe {
	return resolveRecipe(d.defaultFit(p, fitCase(opt, n)), p, opt)
}

// needs is the Plan of a sparse method: M from the builders' counts, the
// memory of its M×M (and M×N) matrices, and the checks that need the data's
// shape.
func (d *sparseDecl) needs(p Params, s Shape) (Plan, error) {
	p, sz, err := d.sized(p, s)
	if err != nil {
		return Plan{}, err
	}
	obj := d.objective(p)
	if obj == collapsed && s.Batch > 0 && (s.N == 0 || s.Batch < s.N) {
		return Plan{}, fmt.Errorf("the collapsed bound is full-batch; batch_size %d needs the ELBO (objective = \"svgp\" where the method has one) or no batch_size", s.Batch)
	}
	var plan Plan
	kernel := func() (kernels.Kernel, *param.Set, error) {
		set := param.NewSet()
		k, err := d.kernel(p, max(s.D, 1), set)
		return k, set, err
	}
	points, pointBlocks := 0, 0
	var grows []string
	if sz.note != "" {
		plan.Warnings = append(plan.Warnings, sz.note)
	}
	for _, b := range d.blocks {
		fb, err := Feature(b.feature(p))
		if err != nil {
			return Plan{}, err
		}
		req := b.request(p)
		m, err := fb.Count(CountContext{Params: p, Request: req, Shape: s, Kernel: kernel})
		if err != nil {
			return Plan{}, paramErr(b.size, err)
		}
		if fb.Points {
			points += m
			pointBlocks++
			if s.N > 0 && m > s.N && len(d.blocks) == 1 && capsAtN(p.String("inducing_init")) {
				rows := fmt.Sprintf("the at most %d training rows", s.N)
				if s.Exact {
					rows = fmt.Sprintf("the %d training rows", s.N)
				}
				plan.Warnings = append(plan.Warnings, fmt.Sprintf("%s = %d exceeds %s: M is capped at N (the M a run used is recorded as num_features)", b.size, m, rows))
				m = s.N
			}
		}
		plan.M += m
		grows = append(grows, fb.Grows)
		if plan.MemoryParam == "" {
			plan.MemoryParam = cmp.Or(fb.Param, b.size)
		}
	}
	if pointBlocks > 0 && len(d.blocks) > 1 && s.N > 0 && points > s.N {
		return Plan{}, fmt.Errorf("the inducing inputs of both sets (%d) exceed the at most %d training inputs; use fewer", points, s.N)
	}
	if s.D == 0 {
		return plan, nil // M and memory depend on the unknown dimension
	}
	plan.Params = d.trainedNumbers(p, s, kernel, obj)
	m, b := float64(plan.M), float64(s.rows())
	switch obj {
	case collapsed:
		// ΦΦᵀ or Kuu and the bound's M×M factor; per step without fixed
		// features also Kuf and L⁻¹Kuf (M×N each).
		plan.Memory = floatBytes(2 * m * m)
		if d.fixedKuf(p) {
			// ΦΦᵀ and Φy once (O(NM²)), then an M×M factorisation a step.
			plan.SetupFlops, plan.StepFlops = b*m*m, m*m*m
		}
	default:
		// Kuu and S (M×M), Kuf and L⁻¹Kuf for the rows of a step, or of
		// the warm start's subset when it has more.
		b = max(b, float64(warmRows(p, s)))
		plan.Memory = floatBytes(2*m*m + 2*m*b)
	}
	plan.MemoryWhat = fmt.Sprintf("M×M matrices of M = %d inducing variables; M grows as %s", plan.M, strings.Join(grows, "; "))
	return plan, nil
}

// warmRows is the number of rows a warm start of an ELBO fit may take in
// one step: the subset of warm_start_points (or the default recipe's) when
// the parameters ask for a warm start or leave the default to decide (a
// grid naming its optimizer drops the default's: an overestimate then),
// at most N; 0 when warm_start_iterations = 0.
func warmRows(p Params, s Shape) int {
	if p.Has(warmStartParam) && p.Int(warmStartParam) == 0 {
		return 0
	}
	points := minibatchWarmPoints
	switch {
	case p.Has(warmPointsParam):
		points = p.Int(warmPointsParam)
	case p.Has(warmStartParam):
		points = defaultWarmStartPoints
	}
	if s.N > 0 {
		points = min(points, s.N)
	}
	return points
}

// fixedKuf reports whether the collapsed bound will run on statistics
// precomputed once: one block whose builder declares a fixed Kuf for p.
func (d *sparseDecl) fixedKuf(p Params) bool {
	if len(d.blocks) != 1 {
		return false
	}
	fb, err := Feature(d.blocks[0].feature(p))
	return err == nil && fb.FixedKuf != nil && fb.FixedKuf(p)
}

// trainedNumbers is about how many numbers a fit trains (Plan.Params): the
// kernel's trainable hyperparameters and the noise, the inducing inputs or
// unit directions that train, and q(u) of the ELBO (a full Gaussian, or the
// weights of a mean-only block). The blocks' sizes are their requests
// (capped at N), as Count gives them.
func (d *sparseDecl) trainedNumbers(p Params, s Shape, kernel func() (kernels.Kernel, *param.Set, error), obj objective) int {
	_, set, err := kernel()
	if err != nil {
		return 0
	}
	n := set.Len() + 1
	for _, b := range d.blocks {
		fb, err := Feature(b.feature(p))
		if err != nil {
			return 0
		}
		m, err := fb.Count(CountContext{Params: p, Request: b.request(p), Shape: s, Kernel: kernel})
		if err != nil {
			return 0
		}
		if s.N > 0 && (!fb.Points || capsAtN(p.String("inducing_init"))) {
			m = min(m, s.N)
		}
		switch {
		case fb.Points && p.Bool("train_inducing"):
			n += m * s.D
		case fb.Name == "activation" && p.Bool("train_directions"):
			n += m * (s.D + 1)
		}
		switch {
		case obj != elbo:
		case b.meanOnly:
			n += m
		default:
			n += m + m*(m+1)/2
		}
	}
	return n
}

// sparseModel is the one sparse model.
type sparseModel struct {
	decl   *sparseDecl
	p      Params
	obj    objective
	rec    Recipe // the fit's recipe (check)
	kern   kernels.Kernel
	lik    likelihoods.Likelihood
	set    *param.Set
	blocks []*sparseBlock
	stats  *collapsedStats
	post   *inference.Posterior
	dim    int
	fitted bool
}

// sparseBlock is one built block.
type sparseBlock struct {
	blockDecl
	feat   features.Feature
	fixed  inference.FeatureMap
	points bool
	names  []string // its parameters in the set (feature and q)
	extra  map[string]float64
	// declared sets the trainable flags of the feature's parameters.
	declared func(s *param.Set, prefix string)
}

// exactSparseModel is a sparse model that offers the exact log marginal
// likelihood at its fitted kernel (sparseDecl.exactLML).
type exactSparseModel struct{ *sparseModel }

// ExactLML is the exact log marginal likelihood at the fitted kernel and
// noise.
func (m *exactSparseModel) ExactLML(train gp.Data) (float64, error) {
	return exactLMLOf(m.kern, m.set, KernelPrefix, noiseName, train)
}

func (m *sparseModel) opts() inference.Options {
	return inference.Options{Jitter: m.p.Float("jitter"), GramFirst: m.p.String("gram_order") == "gram_first"}
}

func (m *sparseModel) errf(format string, a ...any) error {
	return fmt.Errorf(m.decl.name+": "+format, a...)
}

// q is block i's q(u) on b.
func (m *sparseModel) q(b *param.Bound, i int) inference.Variational {
	return m.blocks[i].Variational(b, m.p.Bool("whiten"))
}

// bind binds the kernel and block i's feature on b.
func (m *sparseModel) bind(b *param.Bound, i int) (kernels.Bound, features.Bound) {
	return m.kern.Bind(b, KernelPrefix), m.blocks[i].Bind(b, m.blocks[i].feat)
}

// binder evaluates covariances against block 0, for predictions.
func (m *sparseModel) binder() inference.Binder {
	return func(t *ad.Tape) (kernels.Bound, features.Bound) { return m.bind(m.set.Bind(t), 0) }
}

// inferenceBlocks are the blocks of the ELBO on b: a full q(u) for each,
// or weights for a mean-only block (the bound reads each feature's Kuu
// structure and Kvu = features.Kuv).
func (m *sparseModel) inferenceBlocks(b *param.Bound) []inference.Block {
	out := make([]inference.Block, len(m.blocks))
	for i, blk := range m.blocks {
		out[i] = inference.Block{Feature: blk.Bind(b, blk.feat)}
		if blk.meanOnly {
			out[i].Q, out[i].Weights = inference.Variational{Mu: b.Get(blk.QMu())}, true
		} else {
			out[i].Q = m.q(b, i)
		}
	}
	return out
}

// blockBinder binds the model for BlockPredict.
func (m *sparseModel) blockBinder() inference.BlockBinder {
	return func(t *ad.Tape) (kernels.Bound, []inference.Block, error) {
		b := m.set.Bind(t)
		return m.kern.Bind(b, KernelPrefix), m.inferenceBlocks(b), nil
	}
}

// newLikelihood resolves likelihood = auto (or a method without the
// parameter) by the task and checks classification labels (±1).
func newLikelihood(name string, task Task, noise float64, y []float64) (likelihoods.Likelihood, error) {
	if name == "auto" || name == "" {
		name = "gaussian"
		if task == Classification {
			name = "bernoulli"
		}
	}
	if name == "gaussian" {
		return likelihoods.NewGaussian(noise), nil
	}
	lik, err := likelihoods.New(name)
	if err != nil {
		return nil, err
	}
	if lik.Name() == "bernoulli" {
		for i, v := range y {
			if v != 1 && v != -1 {
				return nil, fmt.Errorf("bernoulli likelihood needs labels ±1; y[%d] = %v", i, v)
			}
		}
	}
	return lik, nil
}

// check fails for what the fit cannot do before anything is built.
func (m *sparseModel) check(train gp.Data, opt FitOptions) error {
	tasks := m.decl.tasks
	if m.obj == collapsed {
		tasks = []Task{Regression}
	}
	if err := checkTask(m.decl.name, opt, tasks...); err != nil {
		if m.obj == collapsed && contains(m.decl.tasksNames(), string(Classification)) {
			return fmt.Errorf("%w; classification needs objective = svgp", err)
		}
		return err
	}
	if err := train.Validate(); err != nil {
		return m.errf("%w", err)
	}
	n := train.N()
	m.rec = m.decl.recipe(m.p, opt, n)
	if m.obj == collapsed {
		if batchSize(opt, n) < n {
			return m.errf("the collapsed objective is full-batch; batch_size %d needs objective = svgp", opt.BatchSize)
		}
		_, err := m.rec.settings(opt)
		return m.errfIf(err)
	}
	_, err := variationalSettings(opt, n, m.rec)
	return m.errfIf(err)
}

func (d *sparseDecl) tasksNames() []string {
	out := make([]string, len(d.tasks))
	for i, t := range d.tasks {
		out[i] = string(t)
	}
	return out
}

func (m *sparseModel) errfIf(err error) error {
	if err == nil {
		return nil
	}
	return m.errf("%w", err)
}

// build makes the kernel, likelihood, feature sets and q, in that order in
// the parameter set (the optimiser's vector follows it).
func (m *sparseModel) build(train gp.Data, opt FitOptions) error {
	m.dim = train.D()
	m.set = param.NewSet()
	var err error
	if m.kern, err = m.decl.kernel(m.p, m.dim, m.set); err != nil {
		return err
	}
	if m.obj == collapsed {
		m.lik = likelihoods.NewGaussian(m.p.Float("noise_variance"))
	} else if m.lik, err = newLikelihood(m.p.String("likelihood"), opt.Task, m.p.Float("noise_variance"), train.Y); err != nil {
		return err
	}
	if err := m.lik.Declare(m.set, likelihoodPfx); err != nil {
		return err
	}
	if err := m.buildBlocks(train, opt); err != nil {
		return err
	}
	if len(m.blocks) == 2 {
		// A pair without a cross-covariance fails here, before training.
		b := m.set.Bind(ad.NewTape())
		kb := m.kern.Bind(b, KernelPrefix)
		if _, err := features.Kuv(kb, m.blocks[0].Bind(b, m.blocks[0].feat), m.blocks[1].Bind(b, m.blocks[1].feat)); err != nil {
			return err
		}
	}
	if m.obj == elbo {
		return m.declareQ()
	}
	return nil
}

// buildBlocks builds and declares the feature sets. The point sets take
// their inputs from one draw (stream 1) of all their inputs at once, split
// in block order (the SOLVE-GP code's k-means with M + K centres); a single
// point set larger than the training set is capped at N, two are an error.
func (m *sparseModel) buildBlocks(train gp.Data, opt FitOptions) error {
	type plan struct {
		fb  FeatureBuilder
		req int
	}
	plans := make([]plan, len(m.decl.blocks))
	total, pointBlocks := 0, 0
	for i, bd := range m.decl.blocks {
		fb, err := Feature(bd.feature(m.p))
		if err != nil {
			return err
		}
		plans[i].fb = fb
		plans[i].req = bd.request(m.p)
		if fb.Points {
			total += plans[i].req
			pointBlocks++
		}
	}
	n, d := train.X.Dims()
	single := len(m.decl.blocks) == 1
	if pointBlocks > 0 && !single && total > n {
		return fmt.Errorf("the inducing inputs of both sets (%d) exceed the %d training inputs", total, n)
	}
	var z *mat.Dense
	draw := func() (*mat.Dense, error) {
		if z != nil {
			return z, nil
		}
		var err error
		if z, err = initInducing(m.p, total, train.X, m.kern, m.set, fitRNG(opt, 1)); err != nil {
			return nil, fmt.Errorf("inducing inputs: %w", err)
		}
		if _, zd := z.Dims(); zd != d {
			return nil, fmt.Errorf("inducing inputs have %d columns, data %d", zd, d)
		}
		return z, nil
	}
	off := 0
	for i, bd := range m.decl.blocks {
		pl := plans[i]
		ctx := &FeatureContext{Params: m.p, Request: pl.req, Kernel: m.kern, Set: m.set, Train: train, Block: bd.Block,
			RNG: fitRNG(opt, bd.stream), Stream: func(k uint64) *rand.Rand { return fitRNG(opt, k) }}
		if pl.fb.Points {
			ctx.Points = func() (*mat.Dense, error) {
				all, err := draw()
				if err != nil {
					return nil, err
				}
				k := pl.req
				if single { // capped at N, or the rows of z_file
					k, _ = all.Dims()
				}
				part := all.Slice(off, off+k, 0, d).(*mat.Dense)
				off += k
				return part, nil
			}
		}
		built, err := pl.fb.Build(ctx)
		if err != nil {
			if len(m.decl.blocks) > 1 {
				return fmt.Errorf("%s set: %w", [2]string{"base", "orthogonal"}[i], err)
			}
			return err
		}
		m.blocks = append(m.blocks, &sparseBlock{blockDecl: bd, feat: built.Feature, fixed: built.Fixed, points: pl.fb.Points,
			extra: built.Extra, declared: built.Declared})
	}
	for _, blk := range m.blocks {
		before := len(m.set.Names())
		if err := blk.feat.Declare(m.set, blk.FeaturePrefix()); err != nil {
			return err
		}
		blk.names = m.set.Names()[before:]
	}
	for _, blk := range m.blocks {
		if blk.declared != nil {
			blk.declared(m.set, blk.FeaturePrefix())
		}
	}
	return nil
}

// declareQ adds each block's q: at the prior (qPrior, one block, unless
// q_init = identity) or at N(0, I) (or weights a = 0 for a mean-only
// block).
func (m *sparseModel) declareQ() error {
	for _, blk := range m.blocks {
		before := len(m.set.Names())
		if m.decl.qPrior && m.p.String("q_init") != "identity" {
			if err := blk.DeclareQ(m.set, m.kern, blk.feat, m.p.Bool("whiten"), m.p.Float("jitter")); err != nil {
				return err
			}
		} else {
			mm := blk.Bind(m.set.Bind(ad.NewTape()), blk.feat).M()
			if err := m.set.Add(blk.QMu(), mat.NewDense(mm, 1, nil), param.Identity{}); err != nil {
				return err
			}
			if !blk.meanOnly {
				if err := m.set.Add(blk.QSqrt(), identity(mm), param.Identity{}); err != nil {
					return err
				}
			}
		}
		blk.names = append(blk.names, m.set.Names()[before:]...)
	}
	return nil
}

func identity(n int) *mat.Dense {
	out := mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		out.Set(i, i, 1)
	}
	return out
}

// blockNames are the parameters of every block (hidden from
// FitResult.Hyper, moved in the init phase).
func (m *sparseModel) blockNames() []string {
	var out []string
	for _, blk := range m.blocks {
		out = append(out, blk.names...)
	}
	return out
}

func (m *sparseModel) Fit(ctx context.Context, train gp.Data, opt FitOptions, progress func(Progress)) (FitResult, error) {
	start := time.Now()
	var sz sizing
	if err := train.Validate(); err == nil {
		var err error
		if m.p, sz, err = m.decl.sized(m.p, Shape{N: train.N(), D: train.D(), Exact: true}); err != nil {
			return FitResult{}, m.errf("%w", err)
		}
	}
	m.obj = m.decl.objective(m.p)
	if err := m.check(train, opt); err != nil {
		return FitResult{}, err
	}
	if err := m.build(train, opt); err != nil {
		return FitResult{}, m.errf("%w", err)
	}
	var (
		res  FitResult
		terr error
	)
	switch {
	case m.obj == elbo:
		res, terr = m.fitELBO(ctx, train, opt, start, progress)
	case m.blocks[0].fixed != nil:
		res, terr = m.fitStats(ctx, train, opt, start, progress)
	default:
		res, terr = m.fitCollapsed(ctx, train, opt, start, progress)
	}
	m.report(&res)
	if m.decl.size != nil && sz.m > 0 {
		res.Extra["x_"+m.decl.size.param] = float64(sz.value)
	}
	if terr != nil && len(res.Trace) == 0 {
		return res, trainErr(m.decl.name, terr)
	}
	if err := m.condition(train, opt, &res); err != nil {
		return res, m.errf("%w", err)
	}
	m.fitted = true
	return res, trainErr(m.decl.name, terr)
}

// report adds the metrics every sparse run records: num_features, the M
// the run used (all blocks), the two blocks' sizes, and the features' own.
func (m *sparseModel) report(res *FitResult) {
	if res.Extra == nil {
		res.Extra = map[string]float64{}
	}
	b := m.set.Bind(ad.NewTape())
	total := 0
	for i, blk := range m.blocks {
		mm := blk.Bind(b, blk.feat).M()
		total += mm
		if len(m.blocks) == 2 {
			res.Extra[[2]string{"num_base", "num_orthogonal"}[i]] = float64(mm)
		}
		for k, v := range blk.extra {
			res.Extra[k] = v
		}
	}
	res.Extra["num_features"] = float64(total)
}

// fitStats is the collapsed bound of a fixed Kuf: the O(NM²) precompute
// once, then O(M³) per step; trace times include the precompute.
func (m *sparseModel) fitStats(ctx context.Context, train gp.Data, opt FitOptions, start time.Time, progress func(Progress)) (FitResult, error) {
	blk := m.blocks[0]
	m.stats = &collapsedStats{kern: m.kern, feat: blk.feat, prefix: blk.FeaturePrefix(), set: m.set}
	if err := m.stats.precompute(train, blk.feat.Bind(m.set.Bind(ad.NewTape()), blk.FeaturePrefix()).M(), blk.fixed); err != nil {
		return FitResult{}, err
	}
	precompute := time.Since(start).Seconds()
	// The precompute's Φ buffers (M × StatsChunk per core, 34 MB at
	// M = 210) are dead now. Collected before the optimiser's steps
	// allocate, their pages serve the steps' garbage instead of adding to
	// the fit's peak memory; beside millions of rows of float arrays, the
	// collector would not run on its own until the heap had doubled.
	// Marking a heap of float arrays takes milliseconds.
	runtime.GC()
	return m.stats.fit(ctx, m.rec, opt, start, precompute, progress)
}

// fitCollapsed trains the collapsed bound at O(NM²) per step (Kuf moves
// with the parameters), with sgpr's greedy re-selection of Z when asked.
func (m *sparseModel) fitCollapsed(ctx context.Context, train gp.Data, opt FitOptions, start time.Time, progress func(Progress)) (FitResult, error) {
	st, err := m.rec.settings(opt)
	if err != nil {
		return FitResult{}, err
	}
	x := mat.DenseCopyOf(train.X)
	obj := func(t *ad.Tape, b *param.Bound) (*ad.Node, error) {
		kb, fb := m.bind(b, 0)
		out, _, err := inference.SGPR(kb, fb, t.Const(x), train.Y, b.Get(noiseName), m.opts())
		return out, err
	}
	var (
		rep    optim.Report
		terr   error
		rounds int
	)
	if r := m.p.Int("reselect_rounds"); r > 0 {
		rep, rounds, terr = m.reselectTrain(ctx, x, obj, st, r, start, progress)
	} else {
		rep, terr = Train(ctx, m.set, obj, st, st.Method, start, progress)
	}
	res := NewFitResult(rep, m.set, m.blockNames()...)
	if rounds > 0 {
		res.Extra["reselect_rounds_run"] = float64(rounds)
	}
	return res, terr
}

// fitELBO trains the ELBO of the blocks by the variational recipe. On the
// whole training set a single block's fixed Kuf is evaluated once.
func (m *sparseModel) fitELBO(ctx context.Context, train gp.Data, opt FitOptions, start time.Time, progress func(Progress)) (FitResult, error) {
	n := train.N()
	var phiAll *mat.Dense
	if len(m.blocks) == 1 && m.blocks[0].fixed != nil && batchSize(opt, n) == n {
		var err error
		if phiAll, err = m.blocks[0].fixed(nil, train.X); err != nil {
			return FitResult{}, err
		}
	}
	fit := variationalFit{method: m.decl.name, set: m.set, recipe: m.rec,
		objective: func(t *ad.Tape, b *param.Bound, batch Batch) (*ad.Node, error) {
			ve := func(mu, v *ad.Node) *ad.Node { return m.lik.VarExp(b, likelihoodPfx, mu, v, batch.Y) }
			kb := m.kern.Bind(b, KernelPrefix)
			if len(m.blocks) == 2 {
				out, _, err := inference.BlockELBO(kb, m.inferenceBlocks(b), t.Const(batch.X), ve, batch.N, m.opts())
				return out, err
			}
			var fb features.Bound = m.blocks[0].Bind(b, m.blocks[0].feat)
			if batch.Full && phiAll != nil {
				fb = fixedKuf{Bound: fb, phi: phiAll}
			}
			out, _, err := inference.SVGP(kb, fb, t.Const(batch.X), ve, m.q(b, 0), batch.N, m.opts())
			return out, err
		}}
	for _, blk := range m.blocks {
		if !blk.meanOnly {
			fit.groups = append(fit.groups, blk.Block)
		}
	}
	if m.decl.initPhase {
		fit.initIterations = m.p.Int("init_iterations")
		for _, nm := range trainableNames(m.set) {
			if contains(m.blockNames(), nm) {
				fit.initNames = append(fit.initNames, nm)
			}
		}
	}
	rep, terr := fit.withWarmStart().train(ctx, train, opt, start, progress)
	return NewFitResult(rep, m.set, m.blockNames()...), terr
}

// condition stores the predictive posterior at the current parameters and
// replaces a minibatch fit's last (noisy) objective by the full-data ELBO;
// the collapsed bound of a moving Kuf reports the bound and jitter at the
// parameters kept, not at the optimiser's last trial point.
func (m *sparseModel) condition(train gp.Data, opt FitOptions, res *FitResult) error {
	var err error
	switch {
	case m.stats != nil:
		m.post, err = m.stats.posterior()
	case m.obj == collapsed:
		t := ad.NewTape()
		b := m.set.Bind(t)
		kb, fb := m.bind(b, 0)
		x := t.Const(train.X)
		final, info, err := inference.SGPR(kb, fb, x, train.Y, b.Get(noiseName), m.opts())
		if err != nil {
			return fmt.Errorf("bound at the final parameters: %w", err)
		}
		res.Objective = final.Scalar()
		res.Extra["jitter"] = info.Jitter
		m.post, _, err = inference.SGPRPosterior(kb, fb, x, train.Y, b.Get(noiseName), m.opts())
		if err != nil {
			return fmt.Errorf("posterior: %w", err)
		}
	case len(m.blocks) == 1:
		b := m.set.Bind(ad.NewTape())
		kb, fb := m.bind(b, 0)
		m.post, err = inference.SVGPPosterior(kb, fb, m.q(b, 0), m.opts())
	}
	if err != nil {
		return fmt.Errorf("posterior: %w", err)
	}
	if m.obj != elbo || batchSize(opt, train.N()) == train.N() {
		return nil
	}
	full, err := m.fullELBO(train)
	if err != nil {
		return fmt.Errorf("full-data ELBO: %w", err)
	}
	res.Extra["last_minibatch_objective"] = res.Objective
	res.Objective = full
	return nil
}

// fullELBO evaluates the ELBO on all of data without gradients, from
// chunked marginals (O(N + M·PredictChunk) memory).
func (m *sparseModel) fullELBO(data gp.Data) (float64, error) {
	if len(m.blocks) == 1 {
		return fullDataELBO(data, m.set, m.post, m.binder(), m.lik, func(b *param.Bound) (*ad.Node, error) {
			kb, fb := m.bind(b, 0)
			return inference.KL(kb, fb, m.q(b, 0), m.opts())
		})
	}
	pred, err := inference.BlockPredict(data.X, m.blockBinder(), m.opts())
	if err != nil {
		return 0, err
	}
	n := data.N()
	t := ad.NewTape()
	b := m.set.Bind(t)
	expect := ad.Sum(m.lik.VarExp(b, likelihoodPfx, t.Const(mat.NewDense(n, 1, pred.Mean)), t.Const(mat.NewDense(n, 1, pred.Var)), columnOf(data.Y)))
	kl, err := inference.BlockKL(m.kern.Bind(b, KernelPrefix), m.inferenceBlocks(b), m.opts())
	if err != nil {
		return 0, err
	}
	return expect.Scalar() - kl.Scalar(), nil
}

// checkTest fails for test inputs the model cannot predict at.
func (m *sparseModel) checkTest(x *mat.Dense) error {
	if err := checkInputs(m.decl.name, m.fitted, x, m.dim); err != nil {
		return err
	}
	if m.decl.extrapolate {
		return nil
	}
	for _, blk := range m.blocks {
		if ic, ok := blk.feat.(features.InputChecker); ok {
			if err := ic.CheckInputs(x); err != nil {
				return m.errf("test inputs: %w", err)
			}
		}
	}
	return nil
}

// PredictTerms returns the predictive decomposition of eq. (12) of Shi et
// al. (2020) at the rows of x, term by term (Fig. 5 of Tiao et al. 2023),
// for a model trained by the ELBO: block 0 is the base set, block 1 the
// orthogonal set.
func (m *sparseModel) PredictTerms(x *mat.Dense) (*inference.BlockPrediction, error) {
	if err := m.checkTest(x); err != nil {
		return nil, err
	}
	if m.obj != elbo {
		return nil, m.errf("predictive terms need q(u): the collapsed bound has none")
	}
	return inference.BlockPredict(x, m.blockBinder(), m.opts())
}

func (m *sparseModel) Predict(x *mat.Dense) (Prediction, error) {
	if err := m.checkTest(x); err != nil {
		return Prediction{}, err
	}
	var mean, varf []float64
	if len(m.blocks) == 2 {
		pred, err := inference.BlockPredict(x, m.blockBinder(), m.opts())
		if err != nil {
			return Prediction{}, m.errf("%w", err)
		}
		mean, varf = pred.Mean, pred.Var
	} else {
		var err error
		if mean, varf, err = m.post.Predict(x, m.binder()); err != nil {
			return Prediction{}, m.errf("%w", err)
		}
	}
	// Rounding can leave a vanishing latent variance slightly negative.
	for i, v := range varf {
		varf[i] = math.Max(v, 0)
	}
	if m.lik.Name() == "gaussian" {
		return regressionPrediction(mean, varf, m.set.Scalar(noiseName)), nil
	}
	p, _ := m.lik.Predict(m.set, likelihoodPfx, mean, varf)
	return Prediction{Mean: mean, VarF: varf, ProbPositive: p}, nil
}

// Artifact exports ArtifactVarianceTerms (a model trained by the ELBO, 1-D
// inputs: eq. (12) of Tiao et al. 2023 term by term on a dense grid, Figs.
// 1, 3–5) and ArtifactInducingInputs (models with point sets).
func (m *sparseModel) Artifact(name string, train, _ gp.Data) (Artifact, error) {
	if !m.fitted {
		return Artifact{}, m.errf("artifact %q before Fit", name)
	}
	var offered []string
	if m.obj == elbo {
		offered = append(offered, ArtifactVarianceTerms)
	}
	zs := make([]*mat.Dense, len(m.blocks))
	for i, blk := range m.blocks {
		if blk.points {
			zs[i] = m.set.Value(blk.Z())
			if len(offered) == 0 || offered[len(offered)-1] != ArtifactInducingInputs {
				offered = append(offered, ArtifactInducingInputs)
			}
		}
	}
	switch {
	case name == ArtifactVarianceTerms && contains(offered, name):
		return varianceTermsArtifact(m.decl.name, train, m.blockBinder(), m.opts())
	case name == ArtifactInducingInputs && contains(offered, name):
		return inducingInputsArtifact(zs...)
	}
	return Artifact{}, unknownArtifact(m.decl.name, name, offered...)
}

// fixedKuf serves the precomputed Φ of the training inputs as Kuf.
type fixedKuf struct {
	features.Bound
	phi *mat.Dense
}

// Unwrap exposes the feature, whose Kuu structure the SVGP path reads.
func (f fixedKuf) Unwrap() features.Bound { return f.Bound }

func (f fixedKuf) Kuf(_ kernels.Bound, x *ad.Node) *ad.Node {
	if n, _ := x.Dims(); n != f.phi.RawMatrix().Cols {
		panic(fmt.Sprintf("methods: fixed Kuf of %d inputs used on %d", f.phi.RawMatrix().Cols, n))
	}
	return x.Tape().Const(f.phi)
}

// inducingZ returns the inducing inputs of block 0.
func (m *sparseModel) inducingZ() *mat.Dense { return m.set.Value(m.blocks[0].Z()) }
