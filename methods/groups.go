package methods

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
	"sgplab/gp/features"
	"sgplab/gp/inference"
	"sgplab/gp/kernels"
	"sgplab/gp/param"
)

// Group names the parameters of one feature set and its q(u) in a method's
// param.Set, so that two feature sets (ODVGP's mean basis γ and covariance
// basis β, SOLVE-GP's u and v) and their q's bind without prefix
// collisions. The zero Group is the single-set method's names (inducing.z,
// q_mu, q_sqrt); Group{Name: "gamma"} gives gamma.inducing.z, gamma.q_mu,
// gamma.q_sqrt. The kernel and likelihood parameters are shared by the
// groups (KernelPrefix, noise_variance).
type Group struct{ Name string }

func (g Group) prefix() string {
	if g.Name == "" {
		return ""
	}
	return g.Name + "."
}

// FeaturePrefix is the prefix under which the group's feature declares its
// parameters (e.g. inducing inputs FeaturePrefix()+"z").
func (g Group) FeaturePrefix() string { return g.prefix() + inducingPfx }

// Z is the name of the group's inducing inputs.
func (g Group) Z() string { return g.FeaturePrefix() + "z" }

// QMu and QSqrt are the names of q(u)'s mean (M×1) and lower-triangular
// square root (M×M).
func (g Group) QMu() string   { return g.prefix() + QMuName }
func (g Group) QSqrt() string { return g.prefix() + QSqrtName }

// Names lists the group's point and q parameters present in s (to hide
// them from FitResult.Hyper).
func (g Group) Names(s *param.Set) []string {
	var out []string
	for _, n := range []string{g.Z(), g.QMu(), g.QSqrt()} {
		if s.Has(n) {
			out = append(out, n)
		}
	}
	return out
}

// Bind returns the group's feature on b.
func (g Group) Bind(b *param.Bound, f features.Feature) features.Bound {
	return f.Bind(b, g.FeaturePrefix())
}

// Variational returns the group's q(u) on b.
func (g Group) Variational(b *param.Bound, whiten bool) inference.Variational {
	return inference.Variational{Mu: b.Get(g.QMu()), Sqrt: b.Get(g.QSqrt()), Whiten: whiten}
}

// DeclareQ adds q(u) = N(0, S) to s with S at the prior: I when whitened,
// otherwise Kuu of the bound feature at the initial parameters (its
// Cholesky factor, with jitter added to the diagonal), so the KL term
// starts at zero. The feature's Kuu structure is read (a diagonal or
// precision Kuu needs no factorisation; a structured root is only ever
// used whitened, so its dense Kuu is factorised here).
func (g Group) DeclareQ(s *param.Set, k kernels.Kernel, f features.Feature, whiten bool, jitter float64) error {
	t := ad.NewTape()
	b := s.Bind(t)
	fb := g.Bind(b, f)
	m := fb.M()
	sqrt := mat.NewDense(m, m, nil)
	for i := 0; i < m; i++ {
		sqrt.Set(i, i, 1)
	}
	if !whiten {
		kb := k.Bind(b, KernelPrefix)
		st, err := features.StructureOf(kb, fb, inference.DefaultMaxTries, features.FactorForms)
		if err != nil {
			return err
		}
		switch {
		case st.Diag != nil:
			for i := 0; i < m; i++ {
				sqrt.Set(i, i, sqrtPos(st.Diag.Value().At(i, 0)+jitter))
			}
		case st.Precision != nil:
			for i := 0; i < m; i++ {
				p := st.Precision.Value().At(i, 0)
				if !(p > 0) {
					return fmt.Errorf("%s: precision entry %d of Kuu is %v; a feature with infinite prior variance needs whiten = true", g.label(), i, p)
				}
				sqrt.Set(i, i, sqrtPos(1/p+jitter))
			}
		default:
			l, err := cholJitter(st.Dense.Value(), jitter)
			if err != nil {
				return fmt.Errorf("%s: Kuu (%d×%d) at the initial parameters not positive definite; raise jitter", g.label(), m, m)
			}
			sqrt = l
		}
	}
	if err := s.Add(g.QMu(), mat.NewDense(m, 1, nil), param.Identity{}); err != nil {
		return err
	}
	return s.Add(g.QSqrt(), sqrt, param.Identity{})
}

func (g Group) label() string {
	if g.Name == "" {
		return "q(u)"
	}
	return "q(u) of " + g.Name
}

// InitInducingCount is InitInducing with the number of inducing inputs m
// given (for a second point set with its own count parameter).
func InitInducingCount(p Params, m int, x *mat.Dense, kern kernels.Kernel, s *param.Set, rng *rand.Rand) (*mat.Dense, error) {
	return initInducing(p, m, x, kern, s, rng)
}

func sqrtPos(v float64) float64 { return math.Sqrt(v) }

// cholJitter is the lower Cholesky factor of the symmetric a (its upper
// triangle is read) with jitter added to the diagonal.
func cholJitter(a *mat.Dense, jitter float64) (*mat.Dense, error) {
	m, _ := a.Dims()
	sym := mat.NewSymDense(m, nil)
	for i := 0; i < m; i++ {
		for j := i; j < m; j++ {
			sym.SetSym(i, j, a.At(i, j))
		}
		sym.SetSym(i, i, a.At(i, i)+jitter)
	}
	var c mat.Cholesky
	if !c.Factorize(sym) {
		return nil, fmt.Errorf("not positive definite")
	}
	var l mat.TriDense
	c.LTo(&l)
	return mat.DenseCopyOf(&l), nil
}
