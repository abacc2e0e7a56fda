package methods

import (
	"fmt"

	"sgplab/gp"
	"sgplab/gp/ad"
	"sgplab/gp/inference"
	"sgplab/gp/kernels"
	"sgplab/gp/param"
)

// ExactLMLModel is implemented by fitted regression models whose prior is a
// full GP (a kernel plus Gaussian noise). ExactLML returns the exact log
// marginal likelihood log p(y | X, θ) of the training data at the fitted
// hyperparameters θ, the L that sparse objectives bound (the IFF paper's
// gap L − 𝔉). It costs O(N³) time and O(N²) memory, so the runner calls it
// only when a grid lists the metric log_marginal_likelihood, and outside the
// timed Fit.
type ExactLMLModel interface {
	ExactLML(train gp.Data) (float64, error)
}

// exactLMLOf evaluates the exact log marginal likelihood of train under
// kern (declared in set under prefix) with the noise variance set[noise].
func exactLMLOf(kern kernels.Kernel, set *param.Set, prefix, noise string, train gp.Data) (float64, error) {
	if kern == nil || set == nil {
		return 0, fmt.Errorf("exact log marginal likelihood before Fit")
	}
	if err := train.Validate(); err != nil {
		return 0, err
	}
	t := ad.NewTape()
	b := set.Bind(t)
	lml, _, err := inference.ExactLML(kern.Bind(b, prefix), t.Const(train.X), train.Y, b.Get(noise), inference.Options{})
	if err != nil {
		return 0, fmt.Errorf("exact log marginal likelihood: %w", err)
	}
	return lml.Scalar(), nil
}
