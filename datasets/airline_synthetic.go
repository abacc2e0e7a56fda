package datasets

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp"
	"sgplab/internal/goroutines"
)

// The airline-shaped synthetic set stands in for the 2008 US flight records
// (not staged here) where only the *shape* of the data matters: the VISH
// paper's Table 2 timing columns (Dutordoir et al. 2020, §4.3). It has the
// same row count (5,929,413 by default), the same eight columns in the VFF
// script's order, with airline-like marginals, and a target whose
// explained-variance fraction (0.17) matches the paper's MSE ≈ 0.83 on
// standardised delays. It is not flight data and no accuracy number on it
// says anything about airline delays.
//
// Columns: Month ∈ {1..4}, DayofMonth ∈ {1..31}, DayOfWeek ∈ {1..7},
// plane_age ∈ {0..40} years, AirTime (minutes, log-normal, median 95),
// Distance (miles, ≈ 7.3 × AirTime with 8% scatter), DepTime and ArrTime
// (minutes after midnight, ArrTime = DepTime + AirTime + taxi, mod 1440).
//
// Target: y = f(x) + ε with f a sum of smooth effects of departure time,
// day of week, month, distance and plane age plus interactions (120 random
// Fourier features of a Matérn-3/2-like spectrum on the unit-scaled
// inputs), scaled to variance 0.17, and ε ~ N(0, 0.83).
const (
	airlineSynthRows       = 5929413
	airlineSynthSignalVar  = 0.17
	airlineSynthNoiseVar   = 0.83
	airlineSynthRFF        = 120
	airlineSynthRFFLength  = 0.3
	airlineSynthSeedStream = "airline-synthetic"
)

var airlineSynthParams = []paramSpec{
	{"n", "int", "total rows before the 2/3–1/3 split (default 5,929,413, the airline set's size)"},
}

func airlineSyntheticGenerator() *generator {
	g := &generator{
		doc: "SYNTHETIC airline-shaped set (not flight data): the airline set's N and 8 columns with airline-like marginals, " +
			"explained-variance fraction 0.17; first floor(2n/3) rows train, the rest test (VFF airline protocol)",
		params:   airlineSynthParams,
		defaults: map[string]any{"n": airlineSynthRows},
	}
	g.draw = func(p map[string]any, rng *rand.Rand) (gp.Data, gp.Data, []string, error) {
		n, ok, err := intParam(p, "n")
		if err != nil {
			return gp.Data{}, gp.Data{}, nil, err
		}
		if !ok {
			n = airlineSynthRows
		}
		train, test := drawAirlineSynthetic(n, rng)
		return train, test, []string{fmt.Sprintf("SYNTHETIC airline-shaped data, n = %d (train %d, test %d): not the flight records", n, train.N(), test.N())}, nil
	}
	g.validate = func(p map[string]any) error {
		n, ok, err := intParam(p, "n")
		if err != nil {
			return err
		}
		if ok && n < 3 {
			return fmt.Errorf("airline-synthetic: need n >= 3 for a 2/3–1/3 split, got %d", n)
		}
		return nil
	}
	return g
}

// drawAirlineSynthetic draws n rows and splits them 2/3 (floor) train, the
// rest test, as the VFF airline script does after its random permutation
// (the rows are exchangeable, so no permutation is needed). The rows are
// drawn straight into the training and test matrices and y overwrites f:
// at the full 5.9M rows the set is 427 MB, which a full matrix split by
// copying, and f beside y, would double.
func drawAirlineSynthetic(n int, rng *rand.Rand) (train, test gp.Data) {
	const dim = 8
	ntr := int(math.Floor(2 * float64(n) / 3))
	xtr, xte := mat.NewDense(ntr, dim, nil), mat.NewDense(n-ntr, dim, nil)
	row := func(i int) []float64 {
		if i < ntr {
			return xtr.RawRowView(i)
		}
		return xte.RawRowView(i - ntr)
	}
	for i := 0; i < n; i++ {
		r := row(i)
		r[0] = float64(1 + rng.IntN(4))  // Month
		r[1] = float64(1 + rng.IntN(31)) // DayofMonth
		r[2] = float64(1 + rng.IntN(7))  // DayOfWeek
		r[3] = math.Min(40, math.Floor(-9*math.Log(1-rng.Float64())))
		air := math.Min(660, math.Max(15, math.Exp(math.Log(95)+0.6*rng.NormFloat64())))
		r[4] = math.Round(air)                                              // AirTime
		r[5] = math.Round(math.Max(20, 7.3*air*(1+0.08*rng.NormFloat64()))) // Distance
		dep := math.Floor(300 + 1139*rng.Float64())                         // 05:00–23:59
		r[7] = dep
		r[6] = math.Mod(dep+r[4]+10+math.Floor(30*rng.Float64()), 1440) // ArrTime
	}
	// Random Fourier features for interactions: frequencies of a Student-t
	// (3 degrees of freedom, Matérn-3/2) spectrum on unit-scaled inputs.
	lo := []float64{1, 1, 1, 0, 15, 20, 0, 300}
	hi := []float64{4, 31, 7, 40, 660, 4818, 1439, 1439}
	w := make([]float64, airlineSynthRFF*dim)
	b := make([]float64, airlineSynthRFF)
	for k := 0; k < airlineSynthRFF; k++ {
		var g float64
		for j := 0; j < 3; j++ {
			z := rng.NormFloat64()
			g += z * z
		}
		s := math.Sqrt(3/g) / airlineSynthRFFLength
		for d := 0; d < dim; d++ {
			w[k*dim+d] = s * rng.NormFloat64() / (hi[d] - lo[d])
		}
		b[k] = 2 * math.Pi * rng.Float64()
	}
	f := make([]float64, n)
	workers := runtime.GOMAXPROCS(0)
	var g goroutines.Group
	for wk := 0; wk < workers; wk++ {
		g.Go(func() {
			for i := wk; i < n; i += workers {
				r := row(i)
				var inter float64
				for k := 0; k < airlineSynthRFF; k++ {
					a := b[k]
					for d := 0; d < dim; d++ {
						a += w[k*dim+d] * (r[d] - lo[d])
					}
					inter += math.Cos(a)
				}
				inter *= math.Sqrt(2.0 / airlineSynthRFF)
				t := 2 * math.Pi * r[7] / 1440
				f[i] = 0.8*math.Sin(t-2) + 0.4*math.Cos(2*t) + // delays build up through the day
					0.3*math.Cos(2*math.Pi*(r[2]-5)/7) + // Friday peak
					0.25*(r[0]-2.5) + // month trend
					0.3*math.Log(r[5]/800) + // distance
					0.01*r[3] + // plane age
					0.7*inter
			}
		})
	}
	g.Wait()
	// Scale f to the target explained variance (fixed partition and order:
	// a sequential pass, so the result is bitwise reproducible).
	var mean, sq float64
	for _, v := range f {
		mean += v
	}
	mean /= float64(n)
	for _, v := range f {
		sq += (v - mean) * (v - mean)
	}
	scale := math.Sqrt(airlineSynthSignalVar / (sq / float64(n)))
	y := f // f[i] is read only to make y[i]
	sd := math.Sqrt(airlineSynthNoiseVar)
	for i := range y {
		y[i] = (f[i]-mean)*scale + sd*rng.NormFloat64()
	}
	return gp.Data{X: xtr, Y: y[:ntr:ntr]}, gp.Data{X: xte, Y: y[ntr:]}
}
