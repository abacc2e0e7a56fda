package features

import (
	"errors"
	"fmt"
	"strings"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
	"sgplab/gp/kernels"
)

// Stack returns the feature sets fs as one set u = (u₁; u₂; …): Kuf
// stacks the sets' Kuf, and Kuu is the block matrix with the sets' own Kuu
// on the diagonal and Kuv(k, u_i, u_j) off it. Predictions of a block
// variational posterior (inference.BlockPosterior) use it as their basis.
func Stack(fs ...Bound) (Bound, error) {
	if len(fs) == 0 {
		return nil, errors.New("features: Stack of no feature sets")
	}
	for i, f := range fs {
		if f == nil {
			return nil, fmt.Errorf("features: Stack: feature set %d is nil", i)
		}
	}
	return stacked(append([]Bound(nil), fs...)), nil
}

type stacked []Bound

func (s stacked) M() int {
	m := 0
	for _, f := range s {
		m += f.M()
	}
	return m
}

// Parts returns the stacked feature sets.
func (s stacked) Parts() []Bound { return append([]Bound(nil), s...) }

func (s stacked) Name() string {
	names := make([]string, len(s))
	for i, f := range s {
		names[i] = typeName(f)
	}
	return "stack(" + strings.Join(names, ",") + ")"
}

func (s stacked) Kuf(k kernels.Bound, x *ad.Node) *ad.Node {
	if len(s) == 1 {
		return s[0].Kuf(k, x)
	}
	parts := make([]*ad.Node, len(s))
	for i, f := range s {
		parts[i] = f.Kuf(k, x)
	}
	return ad.VCat(parts...)
}

// Kuu panics if a pair has no cross-covariance; KuuChecked returns the
// error.
func (s stacked) Kuu(k kernels.Bound) *ad.Node {
	out, err := s.KuuChecked(k)
	if err != nil {
		panic(err.Error())
	}
	return out
}

// KuuChecked is the block Kuu, or the error of the first pair without a
// cross-covariance.
func (s stacked) KuuChecked(k kernels.Bound) (*ad.Node, error) {
	if len(s) == 1 {
		return s[0].Kuu(k), nil
	}
	rows := make([]*ad.Node, len(s))
	blocks := make([][]*ad.Node, len(s))
	for i := range s {
		blocks[i] = make([]*ad.Node, len(s))
		blocks[i][i] = s[i].Kuu(k)
		for j := i + 1; j < len(s); j++ {
			kij, err := Kuv(k, s[i], s[j])
			if err != nil {
				return nil, err
			}
			blocks[i][j] = kij
		}
	}
	for i := range s {
		row := make([]*ad.Node, len(s))
		for j := range s {
			switch {
			case i == j:
				row[j] = blocks[i][i]
			case i < j:
				row[j] = blocks[i][j]
			default:
				row[j] = ad.T(blocks[j][i])
			}
		}
		rows[i] = ad.HCat(row...)
	}
	return ad.VCat(rows...), nil
}

// CheckInputs checks x against every set that checks its inputs.
func (s stacked) CheckInputs(x *mat.Dense) error {
	for _, f := range s {
		if ic, ok := As[InputChecker](f); ok {
			if err := ic.CheckInputs(x); err != nil {
				return err
			}
		}
	}
	return nil
}
