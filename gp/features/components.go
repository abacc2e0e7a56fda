package features

import (
	"errors"
	"fmt"
	"strings"

	"sgplab/gp/ad"
	"sgplab/gp/kernels"
	"sgplab/gp/param"
)

// Components is a feature set for a sum kernel k = Σ_i k_i built from one
// feature set per component: u = (u_1, …, u_P) with u_i inter-domain
// variables of f_i ~ GP(0, k_i). The components are independent a priori,
// so
//
//	Kuu = blockdiag_i Kuu_i(k_i),   Kuf = [Kuf_i(k_i, x)]_i,
//
// since Cov(u_i, f) = Cov(u_i, f_i). It is the hybrid β basis of ODVFF
// (Azzimonti et al., App. C): Fourier features of a stationary Matérn
// component beside inducing points of a periodic one, for which no VFF
// exist. A nil part contributes no features for its component.
type Components struct {
	Parts []Feature
}

// NewComponents returns the union of parts, part i belonging to component i
// of the sum kernel it is used with.
func NewComponents(parts ...Feature) (*Components, error) {
	n := 0
	for _, p := range parts {
		if p != nil {
			n++
		}
	}
	if n == 0 {
		return nil, errors.New("features: components: every part is nil")
	}
	return &Components{Parts: append([]Feature(nil), parts...)}, nil
}

// Name lists the parts, e.g. "components(vff(additive),inducing_points,-)".
func (c *Components) Name() string {
	names := make([]string, len(c.Parts))
	for i, p := range c.Parts {
		names[i] = "-"
		if p != nil {
			names[i] = p.Name()
		}
	}
	return "components(" + strings.Join(names, ",") + ")"
}

// componentPart is the parameter prefix of part i under prefix.
func componentPart(prefix string, i int) string { return fmt.Sprintf("%sc%d.", prefix, i) }

// Declare registers each part under prefix+"c<i>.".
func (c *Components) Declare(s *param.Set, prefix string) error {
	for i, p := range c.Parts {
		if p == nil {
			continue
		}
		if err := p.Declare(s, componentPart(prefix, i)); err != nil {
			return err
		}
	}
	return nil
}

// Bind binds every part.
func (c *Components) Bind(b *param.Bound, prefix string) Bound {
	out := boundComponents{name: c.Name(), parts: make([]Bound, len(c.Parts))}
	for i, p := range c.Parts {
		if p != nil {
			out.parts[i] = p.Bind(b, componentPart(prefix, i))
		}
	}
	return out
}

type boundComponents struct {
	name  string
	parts []Bound
}

func (b boundComponents) M() int {
	m := 0
	for _, p := range b.parts {
		if p != nil {
			m += p.M()
		}
	}
	return m
}

// kernels returns the components of k, one per part. A kernel that is not
// a sum of as many components is a programming error of the caller (the
// method builds both), reported by panic as Kuu/Kuf cannot return errors.
func (b boundComponents) kernels(k kernels.Bound) []kernels.Bound {
	s, ok := k.(interface {
		Parts() []kernels.Bound
		Op() string
	})
	if !ok || s.Op() != "sum" || len(s.Parts()) != len(b.parts) {
		panic(fmt.Sprintf("features: %s needs a sum kernel with %d components, got %T", b.name, len(b.parts), k))
	}
	return s.Parts()
}

func (b boundComponents) Kuu(k kernels.Bound) *ad.Node {
	ks := b.kernels(k)
	var blocks []*ad.Node
	for i, p := range b.parts {
		if p != nil {
			blocks = append(blocks, p.Kuu(ks[i]))
		}
	}
	return BlockDiag(blocks...)
}

func (b boundComponents) Kuf(k kernels.Bound, x *ad.Node) *ad.Node {
	ks := b.kernels(k)
	var rows []*ad.Node
	for i, p := range b.parts {
		if p != nil {
			rows = append(rows, p.Kuf(ks[i], x))
		}
	}
	if len(rows) == 1 {
		return rows[0]
	}
	return ad.VCat(rows...)
}
