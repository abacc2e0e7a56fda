package methods

import (
	"context"
	"fmt"
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

// The one training recipe of the ELBO of the sparse model (one block or
// two, inference.SVGP or inference.BlockELBO): q declared by the model
// (Block.DeclareQ), one minibatch sampler outside the objective (seeded
// epochs of FitOptions.Seed, stream 2), the shared optimiser settings, and
// either one optimiser over everything or natural gradients on the q's
// with Adam on the rest (natgrad_step), then the shared result.

// VariationalParams documents the parameters of the variational recipe.
// natgrad_step has no default, so grids that do not set it keep their run
// identities.
func VariationalParams() []ParamDoc {
	return append([]ParamDoc{{Name: "natgrad_step", Kind: Float, Range: Positive,
		Doc: "natural-gradient step size γ for q(u) (Salimbeni et al. 2018; 1 is exact for a Gaussian likelihood); when set, q(u) moves by natural gradients and the other parameters by Adam (learning_rate), from one minibatch and one backward pass per step; the grid must say optimizer = \"adam\"; unset: q(u) is trained with the other parameters by the optimizer"}},
		warmStartParams()...)
}

// Batch is one minibatch handed to a variational objective: inputs, targets
// as a column, the size N of the data set it is drawn from (the ELBO's
// data term is scaled by N/|batch|), and whether it is the whole training
// set the fit was given (in the set's order), so that objectives can reuse
// quantities precomputed on it. A warm-start phase on a subset has
// Full = false even when its batch is the whole subset.
type Batch struct {
	X, Y *mat.Dense
	N    int
	Full bool
}

// warmStartParams document the warm start of the variational recipe: the
// VISH paper's large-data protocol (§4.4, SUSY: "first L-BFGS on a 20,000
// point subset, then Adam on the whole dataset"). Unset, the recipe's
// default holds: with minibatches and natural gradients (a Gaussian
// likelihood, no optimizer named) 100 iterations on 2000 rows, which a
// run relying on it records (fit.warm_start_iterations and
// fit.warm_start_points); otherwise none.
func warmStartParams() []ParamDoc {
	return []ParamDoc{
		{Name: "warm_start_iterations", Kind: Int, Range: NonNegative,
			Doc: "before the main fit, up to this many full-batch L-BFGS steps on everything trainable, on a seeded random subset of warm_start_points training rows (all rows when there are fewer); 0 skips it; unset: the default recipe's (with minibatches, a Gaussian likelihood and no optimizer named: 100 on 2000 rows; otherwise none)"},
		{Name: "warm_start_points", Kind: Int, Range: Count,
			Doc: "size of the warm-start subset; unset: 20000 (the VISH paper's) when warm_start_iterations is set, else the default recipe's"},
	}
}

// defaultWarmStartPoints is the VISH paper's warm-start subset size.
const defaultWarmStartPoints = 20000

// batcher yields minibatches from a seeded permutation, reshuffled every
// epoch, so a fit is reproducible from FitOptions.Seed.
type batcher struct {
	data gp.Data
	size int
	perm []int
	pos  int
	rng  interface{ Perm(int) []int }
	yAll *mat.Dense // full-batch targets as a column, built once
}

func (bt *batcher) next() (*mat.Dense, *mat.Dense) {
	n := bt.data.N()
	if bt.size >= n {
		if bt.yAll == nil {
			bt.yAll = columnOf(bt.data.Y)
		}
		return bt.data.X, bt.yAll
	}
	if bt.perm == nil || bt.pos+bt.size > n {
		bt.perm, bt.pos = bt.rng.Perm(n), 0
	}
	sub := bt.data.Subset(bt.perm[bt.pos : bt.pos+bt.size])
	bt.pos += bt.size
	return sub.X, columnOf(sub.Y)
}

// variationalFit is one variational method's training: its parameters,
// q groups and objective on a batch.
type variationalFit struct {
	method string
	set    *param.Set
	groups []Block // q's, natural-gradient targets
	// recipe is the fit's optimiser, step size and natural-gradient step
	// (sparseDecl.recipe).
	recipe    Recipe
	objective func(t *ad.Tape, b *param.Bound, batch Batch) (*ad.Node, error)
	// initNames and initIterations make a first phase of up to
	// initIterations steps in which only initNames move (the variational
	// parameters and inducing inputs or directions, kernel and likelihood
	// fixed: Tiao et al. 2023, App. B.3), before everything moves.
	initNames      []string
	initIterations int
	// warmIterations and warmPoints make a warm start (warmStartParams)
	// before everything else.
	warmIterations int
	warmPoints     int
}

// withWarmStart sets the warm start from the fit's recipe (its default,
// or the method's parameters).
func (v variationalFit) withWarmStart() variationalFit {
	v.warmIterations, v.warmPoints = v.recipe.WarmStart, v.recipe.WarmStartPoints
	return v
}

// batchSize is the effective minibatch size (n for full batch).
func batchSize(opt FitOptions, n int) int {
	if opt.BatchSize <= 0 || opt.BatchSize > n {
		return n
	}
	return opt.BatchSize
}

// variationalSettings are the optimiser settings of a variational fit on n
// points by recipe r, and an error for L-BFGS with minibatches.
func variationalSettings(opt FitOptions, n int, r Recipe) (optim.Settings, error) {
	batch := batchSize(opt, n)
	st, err := r.settings(opt)
	if err != nil {
		return optim.Settings{}, err
	}
	if st.Method == optim.LBFGS && batch < n {
		return optim.Settings{}, fmt.Errorf("L-BFGS needs full-batch gradients; got batch size %d of %d (use adam)", batch, n)
	}
	return st, nil
}

// train runs the recipe on the training data: with initNames and
// initIterations, in two phases (first initIterations steps on initNames
// only, then opt.Iterations on everything trainable), each a run of the
// recipe (natural gradients included), with the reports joined
// (iterations and trace continue across phases).
func (v variationalFit) train(ctx context.Context, train gp.Data, opt FitOptions, start time.Time, progress func(Progress)) (optim.Report, error) {
	if v.warmIterations <= 0 || opt.Iterations == 0 {
		return v.trainPhases(ctx, train, opt, start, progress)
	}
	// Warm start: L-BFGS on a seeded subset (stream 4), with the ELBO of
	// the subset (its own N), then the fit as configured on all rows.
	sub, n := train, train.N()
	if n > v.warmPoints {
		sub = train.Subset(fitRNG(opt, 4).Perm(n)[:v.warmPoints])
	}
	o1 := opt
	o1.Iterations, o1.BatchSize = v.warmIterations, 0
	// The warm start is plain L-BFGS on everything, never natural
	// gradients.
	warm := v
	warm.recipe = Recipe{Optimizer: optim.LBFGS}
	rep1, err := warm.trainOnce(ctx, sub, false, o1, start, phaseProgress(progress, "warm", 0))
	if err != nil {
		return rep1, err
	}
	rep2, err := v.trainPhases(ctx, train, opt, start, phaseProgress(progress, "", rep1.Iterations))
	return joinReports(rep1, rep2), err
}

// phaseProgress relabels a phase's progress reports: its name (kept when
// empty) and iterations continued from offset.
func phaseProgress(progress func(Progress), name string, offset int) func(Progress) {
	return func(pr Progress) {
		if progress != nil {
			if name != "" {
				pr.Phase = name
			}
			pr.Iteration += offset
			progress(pr)
		}
	}
}

// joinReports continues the second phase's report after the first's:
// iterations and trace run on, rejected steps add up.
func joinReports(rep1, rep2 optim.Report) optim.Report {
	for i := range rep2.Trace {
		rep2.Trace[i].Iteration += rep1.Iterations
	}
	rep2.Trace = append(rep1.Trace, rep2.Trace...)
	rep2.Iterations += rep1.Iterations
	rep2.Rejected += rep1.Rejected
	return rep2
}

// trainPhases is train without the warm start: one run of the recipe, or
// the init phase and then everything.
func (v variationalFit) trainPhases(ctx context.Context, train gp.Data, opt FitOptions, start time.Time, progress func(Progress)) (optim.Report, error) {
	if v.initIterations <= 0 || opt.Iterations == 0 || len(v.initNames) == 0 {
		return v.trainOnce(ctx, train, true, opt, start, progress)
	}
	names := v.set.Names()
	flags := make([]bool, len(names))
	for i, n := range names {
		flags[i] = v.set.Trainable(n)
		v.set.SetTrainable(flags[i] && contains(v.initNames, n), n)
	}
	o1 := opt
	o1.Iterations = v.initIterations
	rep1, err := v.trainOnce(ctx, train, true, o1, start, phaseProgress(progress, "init", 0))
	for i, n := range names {
		v.set.SetTrainable(flags[i], n)
	}
	if err != nil {
		return rep1, err
	}
	rep2, err := v.trainOnce(ctx, train, true, opt, start, phaseProgress(progress, "all", rep1.Iterations))
	return joinReports(rep1, rep2), err
}

// trainOnce runs the recipe once over the trainable parameters on train,
// which is the fit's whole training set when whole is true.
func (v variationalFit) trainOnce(ctx context.Context, train gp.Data, whole bool, opt FitOptions, start time.Time, progress func(Progress)) (optim.Report, error) {
	n := train.N()
	batch := batchSize(opt, n)
	st, err := variationalSettings(opt, n, v.recipe)
	if err != nil {
		return optim.Report{}, err
	}
	bt := &batcher{data: train, size: batch, rng: fitRNG(opt, 2)}
	obj := func(t *ad.Tape, b *param.Bound) (*ad.Node, error) {
		x, y := bt.next()
		return v.objective(t, b, Batch{X: x, Y: y, N: n, Full: whole && batch == n})
	}
	if v.recipe.NatGrad == 0 {
		return Train(ctx, v.set, obj, st, st.Method, start, progress)
	}
	gamma := v.recipe.NatGrad
	if st.Method != optim.Adam {
		return optim.Report{}, fmt.Errorf("natgrad_step pairs natural gradients on q(u) with Adam on the other parameters; optimizer %q is not supported with it", st.Method)
	}
	var qs []optim.Gaussian
	for _, g := range v.groups {
		if v.set.Trainable(g.QMu()) {
			qs = append(qs, optim.Gaussian{Mu: g.QMu(), Sqrt: g.QSqrt()})
		}
	}
	return optim.TrainNatGrad(ctx, v.set, obj, qs, optim.NatGradSettings{MaxIter: st.MaxIter, Gamma: gamma, LearningRate: st.LearningRate, Stop: st.Stop},
		func(pr optim.Progress) {
			if progress != nil {
				progress(Progress{Phase: pr.Phase, Iteration: pr.Iteration, Objective: pr.Objective, Elapsed: time.Since(start)})
			}
		})
}

// fullDataELBO is the ELBO over all of data at the current parameters,
// without gradients, for reporting after minibatch training (the last
// minibatch value is a noisy estimate): the marginals of q(f) from the
// posterior post (O(N + M·PredictChunk) memory) and the KL term kl.
func fullDataELBO(data gp.Data, set *param.Set, post *inference.Posterior, bind inference.Binder, lik likelihoods.Likelihood,
	kl func(b *param.Bound) (*ad.Node, error)) (float64, error) {
	mean, varf, err := post.Predict(data.X, bind)
	if err != nil {
		return 0, err
	}
	n := data.N()
	t := ad.NewTape()
	b := set.Bind(t)
	expect := ad.Sum(lik.VarExp(b, likelihoodPfx, t.Const(mat.NewDense(n, 1, mean)), t.Const(mat.NewDense(n, 1, varf)), columnOf(data.Y)))
	k, err := kl(b)
	if err != nil {
		return 0, err
	}
	return expect.Scalar() - k.Scalar(), nil
}

// collapsedStats is the collapsed-bound recipe for features whose Kuf = Φ
// does not depend on the hyperparameters (IFF, VFF, B-splines): ΦΦᵀ, Φy,
// yᵀy precomputed once, then O(M³) per step with the feature's Kuu
// structure and Σ_n k(x_n, x_n) from kernels.DiagSum (or the feature's
// closed form of the trace term).
type collapsedStats struct {
	kern   kernels.Kernel
	feat   features.Feature
	prefix string // the feature's parameter prefix (its Block's)
	set    *param.Set
	stats  *inference.Stats
	trainX *mat.Dense // the training inputs while fitting, nil after
}

// precompute builds the statistics (the O(NM²) pass).
func (c *collapsedStats) precompute(train gp.Data, m int, phi inference.FeatureMap) error {
	var err error
	c.stats, err = inference.ComputeStats(train.X, train.Y, m, phi)
	c.trainX = train.X
	return err
}

func (c *collapsedStats) kuu(b *param.Bound) (kernels.Bound, features.Bound, inference.Kuu, error) {
	kb, fb := c.kern.Bind(b, KernelPrefix), c.feat.Bind(b, c.prefix)
	kuu, err := features.StructureOf(kb, fb, inference.DefaultMaxTries, features.AllForms)
	return kb, fb, kuu, err
}

// objective is the collapsed bound from the statistics, with the trace
// term in closed form when the feature has one (features.TraceResidual).
func (c *collapsedStats) objective(t *ad.Tape, b *param.Bound) (*ad.Node, error) {
	kb, fb, kuu, err := c.kuu(b)
	if err != nil {
		return nil, err
	}
	diagSum := kernels.DiagSum(t, kb, c.trainX)
	if res, ok := features.TraceResidualOf(t, kb, fb, c.trainX); ok {
		out, _, err := inference.CollapsedFromStatsResidual(c.stats, kuu, res, diagSum, b.Get(noiseName), inference.Options{})
		return out, err
	}
	out, _, err := inference.CollapsedFromStats(c.stats, kuu, diagSum, b.Get(noiseName), inference.Options{})
	return out, err
}

// posterior is the predictive posterior at the current parameters.
func (c *collapsedStats) posterior() (*inference.Posterior, error) {
	t := ad.NewTape()
	b := c.set.Bind(t)
	_, _, kuu, err := c.kuu(b)
	if err != nil {
		return nil, err
	}
	return inference.StatsPosterior(c.stats, kuu, b.Get(noiseName), inference.Options{})
}

// fit trains the bound (L-BFGS by default) and summarises the result;
// trace times include the precompute (the IFF paper's protocol).
func (c *collapsedStats) fit(ctx context.Context, r Recipe, opt FitOptions, start time.Time, precompute float64, progress func(Progress)) (FitResult, error) {
	st, err := r.settings(opt)
	if err != nil {
		return FitResult{}, err
	}
	rep, terr := Train(ctx, c.set, c.objective, st, st.Method, start, progress)
	// Only the bound's trace term reads the training inputs; the posterior
	// is the statistics': a fitted model leaves millions of rows to the
	// collector once its caller drops them.
	c.trainX = nil
	res := NewFitResult(rep, c.set)
	res.Extra["precompute_seconds"] = precompute
	for i := range res.Trace {
		res.Trace[i].Elapsed += precompute
	}
	return res, terr
}
