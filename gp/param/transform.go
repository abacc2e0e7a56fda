package param

import (
	"math"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
)

// Transform maps an unconstrained value to natural units, elementwise.
type Transform interface {
	// Forward maps unconstrained u to natural units.
	Forward(u float64) float64
	// Inverse maps a natural value back; it fails for values outside the range.
	Inverse(v float64) (float64, error)
	// Deriv is d Forward / d u at u.
	Deriv(u float64) float64
	// Name identifies the transform in messages.
	Name() string
}

// Identity leaves values unchanged.
type Identity struct{}

func (Identity) Forward(u float64) float64          { return u }
func (Identity) Inverse(v float64) (float64, error) { return v, nil }
func (Identity) Deriv(float64) float64              { return 1 }
func (Identity) Name() string                       { return "identity" }

// Positive is softplus shifted by a lower bound: v = Lower + log(1 + eᵘ).
// The shift keeps variances and lengthscales away from zero, as GPflow does.
type Positive struct{ Lower float64 }

// DefaultPositive is the transform used for variances and lengthscales.
var DefaultPositive = Positive{Lower: 1e-6}

func (p Positive) Forward(u float64) float64 { return p.Lower + softplus(u) }

func (p Positive) Inverse(v float64) (float64, error) {
	x := v - p.Lower
	if !(x > 0) || math.IsInf(x, 0) {
		return 0, &RangeError{Value: v, Transform: p.Name()}
	}
	// log(eˣ − 1), stable for large and small x.
	if x > 30 {
		return x + math.Log1p(-math.Exp(-x)), nil
	}
	return math.Log(math.Expm1(x)), nil
}

func (p Positive) Deriv(u float64) float64 { return 1 / (1 + math.Exp(-u)) }
func (p Positive) Name() string            { return "positive" }

func softplus(u float64) float64 {
	if u > 30 {
		return u + math.Log1p(math.Exp(-u))
	}
	return math.Log1p(math.Exp(u))
}

// RangeError reports a natural value that a transform cannot represent.
type RangeError struct {
	Value     float64
	Transform string
}

func (e *RangeError) Error() string {
	return "param: value " + formatFloat(e.Value) + " is outside the range of the " + e.Transform + " transform"
}

// apply records Forward elementwise on the tape, with its derivative for backward.
func apply(tr Transform, u *ad.Node) *ad.Node {
	if _, ok := tr.(Identity); ok {
		return u
	}
	uv := u.Value()
	r, c := uv.Dims()
	out := mat.NewDense(r, c, nil)
	out.Apply(func(i, j int, x float64) float64 { return tr.Forward(x) }, uv)
	return ad.Custom(out, func(g *mat.Dense) []*mat.Dense {
		d := mat.NewDense(r, c, nil)
		d.Apply(func(i, j int, x float64) float64 { return tr.Deriv(uv.At(i, j)) * x }, g)
		return []*mat.Dense{d}
	}, u)
}
