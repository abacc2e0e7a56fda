package features

import (
	"errors"
	"fmt"

	"sgplab/gp/ad"
	"sgplab/gp/kernels"
)

// KuuStructure describes Kuu = Cov(u, u) in the one form every inference
// path reads (the collapsed bound from statistics, SGPR, SVGP and the block
// variational bounds). Exactly one field is set.
type KuuStructure struct {
	// Dense is the full M×M Kuu, factorised by Cholesky (with
	// inference.Options.Jitter and escalation).
	Dense *ad.Node
	// Diag is the M×1 diagonal of a diagonal Kuu, all entries positive
	// (inference adds its jitter).
	Diag *ad.Node
	// Precision is the M×1 diagonal of Kuu⁻¹ for a diagonal Kuu; entries may
	// be zero: a feature with infinite prior variance (an underflowed
	// spectral density, a vanishing Funk–Hecke coefficient) that drops out
	// of every bound and prediction, which Diag cannot express. No jitter.
	Precision *ad.Node
	// Whiten is b ↦ L⁻¹b (b is M×C) for a structured square root Kuu = LLᵀ
	// (block diagonal, Kronecker, diagonal plus low rank), recorded on the
	// tape. L need not be triangular: the paths that use it depend on L
	// only through L⁻¹ applied to something and LLᵀ. Paths that need
	// log|Kuu| or L⁻ᵀ (SGPR, non-whitened SVGP) fall back to the dense Kuu.
	Whiten func(*ad.Node) *ad.Node
}

// Form names the set field: "dense", "diagonal", "precision" or "root", or
// an error unless exactly one is set.
func (s KuuStructure) Form() (string, error) {
	var set []string
	if s.Dense != nil {
		set = append(set, "dense")
	}
	if s.Diag != nil {
		set = append(set, "diagonal")
	}
	if s.Precision != nil {
		set = append(set, "precision")
	}
	if s.Whiten != nil {
		set = append(set, "root")
	}
	if len(set) != 1 {
		return "", fmt.Errorf("features: Kuu structure: exactly one of Dense, Diag, Precision, Whiten must be set, got %d %v", len(set), set)
	}
	return set[0], nil
}

// Forms is a set of Kuu structure forms a consumer can use.
type Forms uint8

const (
	FormDense Forms = 1 << iota
	FormDiag
	FormPrecision
	FormRoot
	// AllForms: the whitened paths (collapsed from statistics, whitened
	// SVGP and block bounds) use every form.
	AllForms = FormDense | FormDiag | FormPrecision | FormRoot
	// FactorForms: the paths that need log|Kuu| and L⁻ᵀ (SGPR, non-whitened
	// SVGP) cannot use a structured root.
	FactorForms = FormDense | FormDiag | FormPrecision
)

var formBits = map[string]Forms{"dense": FormDense, "diagonal": FormDiag, "precision": FormPrecision, "root": FormRoot}

// StructuredKuu is implemented by bound features whose Kuu has a structure
// cheaper than a dense Cholesky factorisation. accept is the set of forms
// the caller can use: a feature returns one of them, or {Dense: Kuu}, and
// builds nothing the caller cannot use. maxTries bounds the jitter
// escalations of any small factorisation inside a structured root.
type StructuredKuu interface {
	KuuStructure(k kernels.Bound, maxTries int, accept Forms) (KuuStructure, error)
}

// StructureOf returns the structure of f's Kuu in one of the accepted forms
// (dense is always accepted), looking through wrappers: the feature's
// StructuredKuu, else {Diag: KuuDiag} for a DiagonalKuu (the shorthand for
// the diagonal form), else {Dense: f.Kuu(k)}.
func StructureOf(k kernels.Bound, f Bound, maxTries int, accept Forms) (KuuStructure, error) {
	if f == nil {
		return KuuStructure{}, errors.New("features: Kuu of a nil feature set")
	}
	accept |= FormDense
	if s, ok := As[StructuredKuu](f); ok {
		out, err := s.KuuStructure(k, maxTries, accept)
		if err != nil {
			return KuuStructure{}, fmt.Errorf("features: %s: Kuu structure: %w", typeName(f), err)
		}
		form, err := out.Form()
		if err != nil {
			return KuuStructure{}, err
		}
		if formBits[form]&accept == 0 {
			return KuuStructure{}, fmt.Errorf("features: %s returned a %s Kuu structure, which the caller does not accept", typeName(f), form)
		}
		return out, nil
	}
	if d, ok := As[DiagonalKuu](f); ok && accept&FormDiag != 0 {
		return KuuStructure{Diag: d.KuuDiag(k)}, nil
	}
	return KuuStructure{Dense: f.Kuu(k)}, nil
}

// WithKuu returns f with its Kuu structure given by s, leaving every other
// matrix as f has it (the wrapper is transparent to Unwrap and As). It lets
// a caller attach a structure the feature type does not know, or test one.
// s is called only when form is accepted; otherwise the dense Kuu is used.
func WithKuu(f Bound, form Forms, s func(k kernels.Bound, maxTries int) (KuuStructure, error)) Bound {
	return withKuu{Bound: f, form: form, s: s}
}

type withKuu struct {
	Bound
	form Forms
	s    func(k kernels.Bound, maxTries int) (KuuStructure, error)
}

func (w withKuu) Unwrap() Bound { return w.Bound }

func (w withKuu) KuuStructure(k kernels.Bound, maxTries int, accept Forms) (KuuStructure, error) {
	if w.form&accept == 0 {
		return KuuStructure{Dense: w.Bound.Kuu(k)}, nil
	}
	if w.s == nil {
		return KuuStructure{}, errors.New("features: WithKuu: nil structure")
	}
	return w.s(k, maxTries)
}

// DenseKuu returns f with its Kuu structure hidden: every path factorises
// the dense Kuu (a reference for tests and benchmarks).
func DenseKuu(f Bound) Bound { return WithKuu(f, 0, nil) }
