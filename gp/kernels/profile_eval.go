package kernels

import "math"

// eval returns f and df/d(r²) at r² for the chordal zonal kernels (which
// evaluate the stationary shape at the chordal distance). The Matérn-½
// derivative is infinite at r = 0 but always multiplies x − z there, so 0
// is returned (the symmetric subgradient, which is also what central
// differences give).
func (p profile) eval(r2 float64) (f, d float64) {
	switch p {
	case se:
		f = math.Exp(-r2 / 2)
		return f, -f / 2
	case matern12:
		r := math.Sqrt(r2)
		f = math.Exp(-r)
		if r == 0 {
			return f, 0
		}
		return f, -f / (2 * r)
	case matern32:
		r := math.Sqrt(3 * r2)
		e := math.Exp(-r)
		return (1 + r) * e, -1.5 * e
	case matern52:
		r := math.Sqrt(5 * r2)
		e := math.Exp(-r)
		return (1 + r + r*r/3) * e, -5.0 / 6 * (1 + r) * e
	}
	panic("kernels: unknown profile " + string(p))
}
