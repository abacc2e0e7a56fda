package methods

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp/inducing"
	"sgplab/gp/kernels"
	"sgplab/gp/optim"
	"sgplab/gp/param"
)

// The IFF paper's inducing-point protocols for SGPR (iff-spec §1.14):
// greedy conditional-variance re-selection of Z alternating with L-BFGS on
// the hyperparameters (variational EM, Burt et al. 2020), and k-means Z kept
// fixed.

// DefaultReselectRounds is the paper's bound on re-selection rounds.
const DefaultReselectRounds = 20

// KMeansMaxPoints is the paper's cap on the inputs k-means sees.
const KMeansMaxPoints = 20000

// reselect describes the inducing inputs of a model for reselectLoop.
type reselect struct {
	x            *mat.Dense
	m            int
	kern         kernels.Kernel
	kernelPrefix string
	zName        string // the parameter holding Z (M×D)
}

// greedyZ selects Z by greedy conditional variance with the kernel at its
// current hyperparameters in set.
func (r reselect) greedyZ(set *param.Set) error {
	z, _, err := inducing.Greedy(r.x, r.m, r.kern, set, r.kernelPrefix)
	if err != nil && !errors.Is(err, inducing.ErrExhausted) {
		return fmt.Errorf("greedy selection of %d inducing inputs: %w", r.m, err)
	}
	if z == nil {
		return fmt.Errorf("greedy selection of %d inducing inputs: %w", r.m, err)
	}
	if zr, _ := z.Dims(); zr != r.m {
		return fmt.Errorf("greedy selection found only %d of %d inducing inputs (residual variance exhausted; use fewer)", zr, r.m)
	}
	return set.SetValue(r.zName, z)
}

// reselectLoop runs up to rounds rounds of (a) train, with Z fixed, then
// (b) greedy re-selection of Z with the learnt kernel. Z is selected once
// before the first round. It stops when a round does not improve the
// objective and then restores the parameters (Z and hyperparameters) of the
// best round. A round whose training fails (for example a Cholesky failure
// with the new Z) counts as no improvement. It returns the best objective,
// the total iterations and the number of rounds run.
func reselectLoop(ctx context.Context, set *param.Set, r reselect, rounds int,
	train func(ctx context.Context, round int) (optim.Report, error)) (best float64, iters, run int, err error) {
	if rounds < 1 {
		return 0, 0, 0, fmt.Errorf("reselect rounds must be ≥ 1, got %d", rounds)
	}
	if err := r.greedyZ(set); err != nil {
		return 0, 0, 0, err
	}
	best = math.Inf(-1)
	var snap []*mat.Dense
	for round := 0; round < rounds; round++ {
		run++
		rep, terr := train(ctx, round)
		iters += rep.Iterations
		if ctxErr := ctx.Err(); ctxErr != nil {
			if snap != nil && !(rep.Objective > best) {
				set.Restore(snap)
			}
			return math.Max(best, rep.Objective), iters, run, ctxErr
		}
		if terr != nil && round == 0 {
			return 0, iters, run, terr
		}
		if terr != nil || !(rep.Objective > best) {
			set.Restore(snap)
			break
		}
		best, snap = rep.Objective, set.Snapshot()
		if round == rounds-1 {
			break
		}
		if err := r.greedyZ(set); err != nil {
			set.Restore(snap)
			break
		}
	}
	return best, iters, run, nil
}

// kmeansZ returns k-means centres of at most KMeansMaxPoints random rows of
// x (all rows when there are fewer), seeded by rng.
func kmeansZ(x *mat.Dense, m int, rng *rand.Rand) (*mat.Dense, error) {
	n, d := x.Dims()
	sub := x
	if n > KMeansMaxPoints {
		idx := rng.Perm(n)[:KMeansMaxPoints]
		sub = mat.NewDense(KMeansMaxPoints, d, nil)
		for i, j := range idx {
			sub.SetRow(i, x.RawRowView(j))
		}
	}
	return inducing.KMeans(sub, m, rng)
}
