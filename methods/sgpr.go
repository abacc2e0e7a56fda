package methods

import (
	"context"
	"fmt"
	"time"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
	"sgplab/gp/optim"
	"sgplab/gp/param"
)

// sgpr is Titsias' collapsed bound with inducing points (O(NM²) per step);
// q(u) is the optimal one for the final hyperparameters.
var sgprDecl = &sparseDecl{
	name: "sgpr", tasks: []Task{Regression},
	kernel:    standardKernel,
	blocks:    []blockDecl{{feature: builder("points"), size: "num_inducing", stream: 1}},
	objective: always(collapsed), exactLML: true,
}

func init() {
	Register(sgprDecl.method(Method{
		Summary: "sparse GP regression with inducing points: collapsed bound, O(NM²) per step, L-BFGS",
		Paper:   "Titsias (2009)",
		Params: concat(KernelParams(), NoiseParams(), InducingParams(100), NumericParams(), []ParamDoc{
			{Name: "reselect_rounds", Kind: Int, Default: 0, Range: NonNegative,
				Doc: "rounds of greedy conditional-variance re-selection of Z alternating with training the hyperparameters " +
					"(the IFF paper: up to 20), stopping at and restoring the best round once a round does not improve the bound; " +
					"iterations is the budget per round; needs inducing_init = greedy and train_inducing = false; 0 = off"},
			{Name: "gram_order", Kind: String, Default: "whiten_first", Choices: []string{"whiten_first", "gram_first"},
				Doc: "order of the O(NM²) step: whiten_first forms A = L⁻¹Kuf and then AAᵀ (accurate to the float64 limit on " +
					"ill-conditioned Kuu, rounding amplified by about √cond(Kuu)); gram_first forms Kuf Kfu and whitens it " +
					"afterwards (one triangular solve of Kuf fewer per step, 3 instead of 5 N·M² flops, but rounding amplified " +
					"by about cond(Kuu): only for well-conditioned Kuu)"},
		}),
		Check: func(p Params) error {
			if r := p.Int("reselect_rounds"); r > 0 && (p.String("inducing_init") != "greedy" || p.Bool("train_inducing")) {
				return paramErr("reselect_rounds", fmt.Errorf("%d re-selects Z greedily between rounds, so it needs inducing_init = \"greedy\" "+
					"and train_inducing = false (got %q and %v)", r, p.String("inducing_init"), p.Bool("train_inducing")))
			}
			return nil
		},
	}))
}

// reselectTrain runs the IFF paper's protocol (reselectLoop): greedy Z, then
// training of the hyperparameters, for up to rounds rounds. The trace and
// progress count iterations and time across rounds.
func (m *sparseModel) reselectTrain(ctx context.Context, x *mat.Dense, obj func(*ad.Tape, *param.Bound) (*ad.Node, error),
	st optim.Settings, rounds int, start time.Time, progress func(Progress)) (optim.Report, int, error) {
	var all optim.Report
	r := reselect{x: x, m: m.inducingZ().RawMatrix().Rows, kern: m.kern, kernelPrefix: KernelPrefix, zName: m.blocks[0].Z()}
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
