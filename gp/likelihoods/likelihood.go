package likelihoods

import (
	"fmt"
	"sort"
	"strings"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
	"sgplab/gp/param"
)

// Likelihood is an observation model p(y | f), factorising over points.
type Likelihood interface {
	// Name is the registry key, e.g. "gaussian".
	Name() string
	// Declare registers the likelihood's parameters in s under prefix.
	Declare(s *param.Set, prefix string) error
	// VarExp returns the N×1 node of E_{N(f; mu_n, v_n)}[log p(y_n | f)],
	// differentiable in mu, v (N×1) and the likelihood's parameters. y is N×1.
	VarExp(b *param.Bound, prefix string, mu, v *ad.Node, y *mat.Dense) *ad.Node
	// Predict returns the predictive mean and variance of y given latent
	// marginals N(mu_n, v_n). For Bernoulli the mean is p(y = +1).
	Predict(s *param.Set, prefix string, mu, v []float64) (ymean, yvar []float64)
	// LogDensity returns log ∫ p(y_n | f) N(f | mu_n, v_n) df per point.
	LogDensity(s *param.Set, prefix string, mu, v, y []float64) []float64
}

var constructors = map[string]func() Likelihood{
	"gaussian":  func() Likelihood { return NewGaussian(1) },
	"bernoulli": func() Likelihood { return mustBernoulli(DefaultQuadraturePoints) },
}

// Names returns the valid names for New, sorted.
func Names() []string {
	out := make([]string, 0, len(constructors))
	for k := range constructors {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// New returns the named likelihood with default settings.
func New(name string) (Likelihood, error) {
	c, ok := constructors[strings.ToLower(name)]
	if !ok {
		return nil, fmt.Errorf("likelihoods: unknown likelihood %q (valid: %s)", name, strings.Join(Names(), ", "))
	}
	return c(), nil
}

// checkShapes panics with a clear message on mismatched inputs: they are
// programming errors of the calling inference code, not data errors.
func checkShapes(who string, mu, v *ad.Node, y *mat.Dense) int {
	n, c := mu.Dims()
	if c != 1 {
		panic(fmt.Sprintf("likelihoods: %s.VarExp: mu is %d×%d, want N×1", who, n, c))
	}
	if r, c := v.Dims(); r != n || c != 1 {
		panic(fmt.Sprintf("likelihoods: %s.VarExp: v is %d×%d, want %d×1", who, r, c, n))
	}
	if r, c := y.Dims(); r != n || c != 1 {
		panic(fmt.Sprintf("likelihoods: %s.VarExp: y is %d×%d, want %d×1", who, r, c, n))
	}
	return n
}

func checkLens(who string, n int, others ...[]float64) {
	for _, o := range others {
		if len(o) != n {
			panic(fmt.Sprintf("likelihoods: %s: inputs of lengths %d and %d", who, n, len(o)))
		}
	}
}
