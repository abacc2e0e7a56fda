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

func init() {
	Register(Method{
		Name:    "sgpr",
		Summary: "sparse GP regression with inducing points: collapsed bound, O(NM²) per step, L-BFGS",
		Paper:   "Titsias (2009)",
		Tasks:   []Task{Regression},
		Params: concat(KernelParams(), NoiseParams(), InducingParams(100), NumericParams(), []ParamDoc{
			{Name: "reselect_rounds", Kind: Int, Default: 0,
				Doc: "rounds of greedy conditional-variance re-selection of Z alternating with training the hyperparameters " +
					"(the IFF paper: up to 20), stopping at and restoring the best round once a round does not improve the bound; " +
					"iterations is the budget per round; needs inducing_init = greedy and train_inducing = false; 0 = off"},
			{Name: "gram_order", Kind: String, Default: "whiten_first", Choices: []string{"whiten_first", "gram_first"},
				Doc: "order of the O(NM²) step: whiten_first forms A = L⁻¹Kuf and then AAᵀ (accurate to the float64 limit on " +
					"ill-conditioned Kuu, rounding amplified by about √cond(Kuu)); gram_first forms Kuf Kfu and whitens it " +
					"afterwards (one triangular solve of Kuf fewer per step, 3 instead of 5 N·M² flops, but rounding amplified " +
					"by about cond(Kuu): only for well-conditioned Kuu)"},
		}),
		New: func(p Params) (Model, error) {
			if err := checkPositive("sgpr", p, "variance", "noise_variance"); err != nil {
				return nil, err
			}
			if err := checkJitter("sgpr", p); err != nil {
				return nil, err
			}
			if r := p.Int("reselect_rounds"); r < 0 {
				return nil, fmt.Errorf("sgpr: reselect_rounds must be ≥ 0, got %d", r)
			} else if r > 0 && (p.String("inducing_init") != "greedy" || p.Bool("train_inducing")) {
				return nil, fmt.Errorf("sgpr: reselect_rounds = %d re-selects Z greedily between rounds, so it needs inducing_init = \"greedy\" "+
					"and train_inducing = false (got %q and %v)", r, p.String("inducing_init"), p.Bool("train_inducing"))
			}
			return &sgprModel{p: p}, nil
		},
	})
}

// sgprModel is the Titsias collapsed bound with inducing points; q(u) is
// the optimal one for the final hyperparameters.
type sgprModel struct {
	p    Params
	kern kernels.Kernel
	feat *features.InducingPoints
	set  *param.Set
	post *inference.Posterior
	dim  int
}

func (m *sgprModel) opts() inference.Options {
	return inference.Options{Jitter: m.p.Float("jitter"), GramFirst: m.p.String("gram_order") == "gram_first"}
}

// setup declares kernel, noise and Z (shared with svgp).
func setupSparse(method string, p Params, train gp.Data, opt FitOptions, lik likelihoods.Likelihood) (
	kernels.Kernel, *features.InducingPoints, *param.Set, error) {
	kern, err := NewKernel(p, train.D())
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%s: %w", method, err)
	}
	s := param.NewSet()
	if err := kern.Declare(s, KernelPrefix); err != nil {
		return nil, nil, nil, fmt.Errorf("%s: %w", method, err)
	}
	if err := lik.Declare(s, likelihoodPfx); err != nil {
		return nil, nil, nil, fmt.Errorf("%s: %w", method, err)
	}
	z, err := InitInducing(p, train.X, kern, s, fitRNG(opt, 1))
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%s: inducing inputs: %w", method, err)
	}
	if _, zd := z.Dims(); zd != train.D() {
		return nil, nil, nil, fmt.Errorf("%s: inducing inputs have %d columns, data %d", method, zd, train.D())
	}
	feat := &features.InducingPoints{Z: z, Fixed: !p.Bool("train_inducing")}
	if err := feat.Declare(s, inducingPfx); err != nil {
		return nil, nil, nil, fmt.Errorf("%s: %w", method, err)
	}
	return kern, feat, s, nil
}

func (m *sgprModel) Fit(ctx context.Context, train gp.Data, opt FitOptions, progress func(Progress)) (FitResult, error) {
	start := time.Now()
	if err := checkTask("sgpr", opt, Regression); err != nil {
		return FitResult{}, err
	}
	if err := train.Validate(); err != nil {
		return FitResult{}, fmt.Errorf("sgpr: %w", err)
	}
	st, err := Settings(opt, optim.LBFGS)
	if err != nil {
		return FitResult{}, fmt.Errorf("sgpr: %w", err)
	}
	m.dim = train.D()
	m.kern, m.feat, m.set, err = setupSparse("sgpr", m.p, train, opt, likelihoods.NewGaussian(m.p.Float("noise_variance")))
	if err != nil {
		return FitResult{}, err
	}
	x := mat.DenseCopyOf(train.X)
	obj := func(t *ad.Tape, b *param.Bound) (*ad.Node, error) {
		out, _, err := inference.SGPR(m.kern.Bind(b, KernelPrefix), m.feat.Bind(b, inducingPfx), t.Const(x), train.Y, b.Get(noiseName), m.opts())
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
	res := NewFitResult(rep, m.set, InducingName)
	res.Extra["num_inducing"] = float64(m.feat.Z.RawMatrix().Rows)
	if rounds > 0 {
		res.Extra["reselect_rounds_run"] = float64(rounds)
	}
	if terr != nil && rep.Trace == nil {
		return res, trainErr("sgpr", terr)
	}
	// The reported bound and jitter belong to the parameters the model
	// keeps, not to the optimiser's last trial point.
	t := ad.NewTape()
	b := m.set.Bind(t)
	final, info, err := inference.SGPR(m.kern.Bind(b, KernelPrefix), m.feat.Bind(b, inducingPfx), t.Const(x), train.Y, b.Get(noiseName), m.opts())
	if err != nil {
		return res, fmt.Errorf("sgpr: bound at the final parameters: %w", err)
	}
	res.Objective = final.Scalar()
	res.Extra["jitter"] = info.Jitter
	m.post, _, err = inference.SGPRPosterior(m.kern.Bind(b, KernelPrefix), m.feat.Bind(b, inducingPfx), t.Const(x), train.Y, b.Get(noiseName), m.opts())
	if err != nil {
		return res, fmt.Errorf("sgpr: posterior: %w", err)
	}
	return res, trainErr("sgpr", terr)
}

// reselectTrain runs the IFF paper's protocol (reselectLoop): greedy Z, then
// training of the hyperparameters, for up to rounds rounds. The trace and
// progress count iterations and time across rounds.
func (m *sgprModel) reselectTrain(ctx context.Context, x *mat.Dense, obj func(*ad.Tape, *param.Bound) (*ad.Node, error),
	st optim.Settings, rounds int, start time.Time, progress func(Progress)) (optim.Report, int, error) {
	var all optim.Report
	r := reselect{x: x, m: m.feat.Z.RawMatrix().Rows, kern: m.kern, kernelPrefix: KernelPrefix, zName: InducingName}
	train := func(ctx context.Context, round int) (optim.Report, error) {
		base, offset := all.Iterations, time.Since(start)
		phase := fmt.Sprintf("%s round %d", st.Method, round+1)
		rep, err := Train(ctx, m.set, obj, st, phase, start, func(p Progress) {
			if progress != nil {
				p.Iteration += base
				progress(p)
			}
		})
		for _, p := range rep.Trace {
			p.Iteration += base
			p.Elapsed += offset
			all.Trace = append(all.Trace, p)
		}
		all.Iterations += rep.Iterations
		all.Status = rep.Status
		all.Rejected += rep.Rejected
		if all.FirstRejection == nil {
			all.FirstRejection = rep.FirstRejection
		}
		return rep, err
	}
	best, _, run, err := reselectLoop(ctx, m.set, r, rounds, train)
	all.Objective = best
	return all, run, err
}

func (m *sgprModel) Predict(x *mat.Dense) (Prediction, error) {
	if err := checkInputs("sgpr", m.post != nil, x, m.dim); err != nil {
		return Prediction{}, err
	}
	mean, varf, err := m.post.Predict(x, pointsBinder(m.set, m.kern, m.feat))
	if err != nil {
		return Prediction{}, fmt.Errorf("sgpr: %w", err)
	}
	return regressionPrediction(mean, varf, m.set.Scalar(noiseName)), nil
}

// ExactLML is the exact log marginal likelihood at the fitted kernel.
func (m *sgprModel) ExactLML(train gp.Data) (float64, error) {
	return exactLMLOf(m.kern, m.set, KernelPrefix, noiseName, train)
}

// inducingZ returns the current inducing inputs.
func (m *sgprModel) inducingZ() *mat.Dense { return m.set.Value(InducingName) }
