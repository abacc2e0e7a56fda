package features

import (
	"errors"
	"fmt"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
	"sgplab/gp/kernels"
	"sgplab/gp/param"
)

// InducingPoints are function values u = f(Z) at M inducing inputs Z (M×D),
// registered as the parameter prefix+"z".
type InducingPoints struct {
	Z *mat.Dense
	// Fixed keeps Z out of training.
	Fixed bool
}

// NewInducingPoints returns trainable inducing points initialised at z
// (copied).
func NewInducingPoints(z *mat.Dense) *InducingPoints {
	return &InducingPoints{Z: mat.DenseCopyOf(z)}
}

// Name returns "inducing_points".
func (p *InducingPoints) Name() string { return "inducing_points" }

// Declare registers prefix+"z" in s.
func (p *InducingPoints) Declare(s *param.Set, prefix string) error {
	if p.Z == nil {
		return errors.New("features: inducing points: Z is nil")
	}
	if m, d := p.Z.Dims(); m == 0 || d == 0 {
		return fmt.Errorf("features: inducing points: Z is %d×%d", m, d)
	}
	if err := s.Add(prefix+"z", mat.DenseCopyOf(p.Z), param.Identity{}); err != nil {
		return err
	}
	if p.Fixed {
		s.SetTrainable(false, prefix+"z")
	}
	return nil
}

// Bind records Z on the tape of b.
func (p *InducingPoints) Bind(b *param.Bound, prefix string) Bound {
	return BoundPoints{Z: b.Get(prefix + "z")}
}

// BoundPoints are inducing points recorded on a tape. It is exported so that
// other features (for example orthogonally decoupled bases) can evaluate
// covariances at arbitrary point sets.
type BoundPoints struct{ Z *ad.Node }

// M is the number of inducing points.
func (p BoundPoints) M() int { m, _ := p.Z.Dims(); return m }

// Kuu is K(Z, Z).
func (p BoundPoints) Kuu(k kernels.Bound) *ad.Node { return k.K(p.Z, p.Z) }

// Kuf is K(Z, X).
func (p BoundPoints) Kuf(k kernels.Bound, x *ad.Node) *ad.Node { return k.K(p.Z, x) }
