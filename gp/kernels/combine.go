package kernels

import (
	"fmt"
	"strings"

	"sgplab/gp/ad"
	"sgplab/gp/param"
)

// Combination is a sum or elementwise product of kernels on the same inputs.
// Component i's hyperparameters live under prefix+"k<i>.".
type Combination struct {
	op    string // "sum" or "product"
	parts []Kernel
	dim   int
}

// Sum returns k_1 + k_2 + … .
func Sum(ks ...Kernel) (*Combination, error) { return combine("sum", ks) }

// Product returns k_1 · k_2 · … (elementwise).
func Product(ks ...Kernel) (*Combination, error) { return combine("product", ks) }

func combine(op string, ks []Kernel) (*Combination, error) {
	if len(ks) < 2 {
		return nil, fmt.Errorf("kernels: %s needs at least two kernels, got %d", op, len(ks))
	}
	dim := 0
	for i, k := range ks {
		if k == nil {
			return nil, fmt.Errorf("kernels: %s: kernel %d is nil", op, i)
		}
		if d := Dim(k); d != 0 {
			if dim != 0 && d != dim {
				return nil, fmt.Errorf("kernels: %s: kernel %d (%s) has dimension %d, kernel before it %d", op, i, k.Name(), d, dim)
			}
			dim = d
		}
	}
	return &Combination{op: op, parts: append([]Kernel(nil), ks...), dim: dim}, nil
}

func (c *Combination) Name() string {
	names := make([]string, len(c.parts))
	for i, k := range c.parts {
		names[i] = k.Name()
	}
	return c.op + "(" + strings.Join(names, ",") + ")"
}

func (c *Combination) Dim() int { return c.dim }

// Parts returns the components.
func (c *Combination) Parts() []Kernel { return append([]Kernel(nil), c.parts...) }

func subPrefix(prefix string, i int) string { return prefix + "k" + itoa(i) + "." }

func (c *Combination) Declare(s *param.Set, prefix string) error {
	for i, k := range c.parts {
		if err := k.Declare(s, subPrefix(prefix, i)); err != nil {
			return err
		}
	}
	return nil
}

func (c *Combination) Bind(b *param.Bound, prefix string) Bound {
	cb := &combinationBound{op: c.op, parts: make([]Bound, len(c.parts))}
	for i, k := range c.parts {
		cb.parts[i] = k.Bind(b, subPrefix(prefix, i))
	}
	return cb
}

type combinationBound struct {
	op    string
	parts []Bound
}

func (c *combinationBound) apply(f func(Bound) *ad.Node) *ad.Node {
	ns := make([]*ad.Node, len(c.parts))
	for i, p := range c.parts {
		ns[i] = f(p)
	}
	if c.op == "sum" {
		return sumNodes(ns)
	}
	return productNodes(ns)
}

// Parts returns the bound components, so that a feature set per component
// (features.Components) can be evaluated against its own kernel.
func (c *combinationBound) Parts() []Bound { return c.parts }

// Op is "sum" or "product".
func (c *combinationBound) Op() string { return c.op }

func (c *combinationBound) K(x, z *ad.Node) *ad.Node {
	return c.apply(func(b Bound) *ad.Node { return b.K(x, z) })
}

func (c *combinationBound) Diag(x *ad.Node) *ad.Node {
	return c.apply(func(b Bound) *ad.Node { return b.Diag(x) })
}

// AdditiveKernel is f = Σ_d f_d(x_d): one 1-D kernel per input dimension,
// each with its own hyperparameters under prefix+"d<d>.".
type AdditiveKernel struct {
	parts []Kernel
}

// Additive returns the additive kernel whose d-th component, a 1-D kernel,
// acts on input dimension d.
func Additive(ks ...Kernel) (*AdditiveKernel, error) {
	if len(ks) == 0 {
		return nil, fmt.Errorf("kernels: additive needs one kernel per dimension, got none")
	}
	for d, k := range ks {
		if k == nil {
			return nil, fmt.Errorf("kernels: additive: kernel %d is nil", d)
		}
		if dim := Dim(k); dim != 1 {
			return nil, fmt.Errorf("kernels: additive: kernel %d (%s) has dimension %d, want 1", d, k.Name(), dim)
		}
	}
	return &AdditiveKernel{parts: append([]Kernel(nil), ks...)}, nil
}

func (a *AdditiveKernel) Name() string {
	names := make([]string, len(a.parts))
	same := true
	for i, k := range a.parts {
		names[i] = k.Name()
		same = same && names[i] == names[0]
	}
	if same {
		return "additive(" + names[0] + ")"
	}
	return "additive(" + strings.Join(names, ",") + ")"
}

func (a *AdditiveKernel) Dim() int { return len(a.parts) }

// Parts returns the per-dimension kernels.
func (a *AdditiveKernel) Parts() []Kernel { return append([]Kernel(nil), a.parts...) }

func dimPrefix(prefix string, d int) string { return prefix + "d" + itoa(d) + "." }

func (a *AdditiveKernel) Declare(s *param.Set, prefix string) error {
	for d, k := range a.parts {
		if err := k.Declare(s, dimPrefix(prefix, d)); err != nil {
			return err
		}
	}
	return nil
}

func (a *AdditiveKernel) Bind(b *param.Bound, prefix string) Bound {
	ab := &additiveBound{parts: make([]Bound, len(a.parts))}
	for d, k := range a.parts {
		ab.parts[d] = k.Bind(b, dimPrefix(prefix, d))
	}
	return ab
}

type additiveBound struct{ parts []Bound }

// Parts returns the bound per-dimension kernels, for features that treat
// each dimension separately (additive VFF).
func (a *additiveBound) Parts() []Bound { return a.parts }

func (a *additiveBound) K(x, z *ad.Node) *ad.Node {
	checkInputs(a.name(), len(a.parts), x, z)
	ns := make([]*ad.Node, len(a.parts))
	for d, p := range a.parts {
		ns[d] = p.K(column(x, d), column(z, d))
	}
	return sumNodes(ns)
}

func (a *additiveBound) Diag(x *ad.Node) *ad.Node {
	checkInputs(a.name(), len(a.parts), x)
	ns := make([]*ad.Node, len(a.parts))
	for d, p := range a.parts {
		ns[d] = p.Diag(column(x, d))
	}
	return sumNodes(ns)
}

func (a *additiveBound) name() string { return "additive" }
