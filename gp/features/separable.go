package features

import (
	"fmt"
	"strconv"
	"strings"

	"sgplab/gp/ad"
	"sgplab/gp/kernels"
	"sgplab/gp/param"
)

// Separable is the product kernel k(x, z) = Π_d k_d(x_d, z_d) of 1-D
// kernels, one per input dimension: the prior of Kronecker-structured VFF
// and B-spline features. (kernels.Product multiplies kernels on the same
// inputs, which is a different kernel for Matérn: Π_d exp(−|τ_d|/ℓ_d) is
// not exp(−‖τ‖_ℓ).) Component d's hyperparameters live under
// prefix+"d<d>."; only the product of the component variances is
// identifiable, so callers usually fix all but the first.
type Separable struct{ parts []kernels.Kernel }

// NewSeparable returns the product of the 1-D kernels ks, kernel d acting
// on input dimension d.
func NewSeparable(ks ...kernels.Kernel) (*Separable, error) {
	if len(ks) == 0 {
		return nil, fmt.Errorf("features: separable kernel needs one 1-D kernel per dimension, got none")
	}
	for d, k := range ks {
		if k == nil {
			return nil, fmt.Errorf("features: separable kernel: component %d is nil", d)
		}
		if dim := kernels.Dim(k); dim != 1 {
			return nil, fmt.Errorf("features: separable kernel: component %d (%s) has dimension %d, want 1", d, k.Name(), dim)
		}
	}
	return &Separable{parts: append([]kernels.Kernel(nil), ks...)}, nil
}

// Name is "separable(k1,…,kD)".
func (s *Separable) Name() string {
	n := make([]string, len(s.parts))
	for i, k := range s.parts {
		n[i] = k.Name()
	}
	return "separable(" + strings.Join(n, ",") + ")"
}

// Dim is the number of input dimensions.
func (s *Separable) Dim() int { return len(s.parts) }

// Parts returns the per-dimension kernels.
func (s *Separable) Parts() []kernels.Kernel { return append([]kernels.Kernel(nil), s.parts...) }

// ComponentPrefix is the parameter prefix of component d.
func ComponentPrefix(prefix string, d int) string { return prefix + "d" + strconv.Itoa(d) + "." }

// Declare registers each component under prefix+"d<d>.".
func (s *Separable) Declare(set *param.Set, prefix string) error {
	for d, k := range s.parts {
		if err := k.Declare(set, ComponentPrefix(prefix, d)); err != nil {
			return err
		}
	}
	return nil
}

// Bind binds every component.
func (s *Separable) Bind(b *param.Bound, prefix string) kernels.Bound {
	sb := &separableBound{parts: make([]kernels.Bound, len(s.parts))}
	for d, k := range s.parts {
		sb.parts[d] = k.Bind(b, ComponentPrefix(prefix, d))
	}
	return sb
}

type separableBound struct{ parts []kernels.Bound }

// Parts returns the bound per-dimension kernels.
func (s *separableBound) Parts() []kernels.Bound { return s.parts }

func (s *separableBound) check(nodes ...*ad.Node) {
	for _, n := range nodes {
		if _, c := n.Dims(); c != len(s.parts) {
			panic(fmt.Sprintf("features: separable kernel on %d dimensions given %d-column inputs", len(s.parts), c))
		}
	}
}

func (s *separableBound) K(x, z *ad.Node) *ad.Node {
	s.check(x, z)
	nx, _ := x.Dims()
	nz, _ := z.Dims()
	var out *ad.Node
	for d, p := range s.parts {
		k := p.K(ad.Slice(x, 0, nx, d, d+1), ad.Slice(z, 0, nz, d, d+1))
		if out == nil {
			out = k
		} else {
			out = ad.Mul(out, k)
		}
	}
	return out
}

func (s *separableBound) Diag(x *ad.Node) *ad.Node {
	s.check(x)
	n, _ := x.Dims()
	var out *ad.Node
	for d, p := range s.parts {
		k := p.Diag(ad.Slice(x, 0, n, d, d+1))
		if out == nil {
			out = k
		} else {
			out = ad.Mul(out, k)
		}
	}
	return out
}

// KAtSelf is Π_d k_d(0) when every component has a constant diagonal
// (kernels.ConstantDiag), in Diag's order of multiplication.
func (s *separableBound) KAtSelf() *ad.Node {
	var out *ad.Node
	for _, p := range s.parts {
		c, ok := p.(kernels.ConstantDiag)
		if !ok {
			return nil
		}
		k := c.KAtSelf()
		if k == nil {
			return nil
		}
		if out == nil {
			out = k
		} else {
			out = ad.Mul(out, k)
		}
	}
	return out
}
