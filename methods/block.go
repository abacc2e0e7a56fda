package methods

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
	"sgplab/gp/features"
	"sgplab/gp/inference"
	"sgplab/gp/kernels"
	"sgplab/gp/param"
)

// Block names the parameters of one block of a sparse model, a feature set
// and its q(u), in the model's param.Set: the declared side of an
// inference.Block (Bind gives the bound one). Two blocks (ODVGP's mean
// basis γ and covariance basis β, SOLVE-GP's u and v) bind without prefix
// collisions. The zero Block is the single-block names (inducing.z, q_mu,
// q_sqrt); Block{Name: "gamma"} gives gamma.inducing.z, gamma.q_mu,
// gamma.q_sqrt. One prefix rule holds for every feature type: its own
// parameters are FeaturePrefix()+name (inducing.z, inducing.directions,
// inducing.sigma_x). The kernel and likelihood parameters are shared by
// the blocks (KernelPrefix, noise_variance).
type Block struct{ Name string }

func (g Block) prefix() string {
	if g.Name == "" {
		return ""
	}
	return g.Name + "."
}

// FeaturePrefix is the prefix under which the block's feature declares its
// parameters (e.g. inducing inputs FeaturePrefix()+"z").
func (g Block) FeaturePrefix() string { return g.prefix() + inducingPfx }

// Z is the name of the block's inducing inputs.
func (g Block) Z() string { return g.FeaturePrefix() + "z" }

// QMu and QSqrt are the names of q(u)'s mean (M×1) and lower-triangular
// square root (M×M).
func (g Block) QMu() string   { return g.prefix() + QMuName }
func (g Block) QSqrt() string { return g.prefix() + QSqrtName }

// Names lists the block's point and q parameters present in s (to hide
// them from FitResult.Hyper).
func (g Block) Names(s *param.Set) []string {
	var out []string
	for _, n := range []string{g.Z(), g.QMu(), g.QSqrt()} {
		if s.Has(n) {
			out = append(out, n)
		}
	}
	return out
}

// Bind returns the block's feature on b.
func (g Block) Bind(b *param.Bound, f features.Feature) features.Bound {
	return f.Bind(b, g.FeaturePrefix())
}

// Variational returns the block's q(u) on b.
func (g Block) Variational(b *param.Bound, whiten bool) inference.Variational {
	return inference.Variational{Mu: b.Get(g.QMu()), Sqrt: b.Get(g.QSqrt()), Whiten: whiten}
}

// DeclareQ adds q(u) = N(0, S) to s with S at the prior: I when whitened,
// otherwise Kuu of the bound feature at the initial parameters (its
// Cholesky factor, with jitter added to the diagonal), so the KL term
// starts at zero. The feature's Kuu structure is read (a diagonal or
// precision Kuu needs no factorisation; a structured root is only ever
// used whitened, so its dense Kuu is factorised here).
func (g Block) DeclareQ(s *param.Set, k kernels.Kernel, f features.Feature, whiten bool, jitter float64) error {
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

func (g Block) label() string {
	if g.Name == "" {
		return "q(u)"
	}
	return "q(u) of " + g.Name
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
