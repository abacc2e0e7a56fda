package metrics

import (
	"errors"
	"fmt"
	"math"
	"sort"
)

// Names of the metrics returned by Regression and Classification.
const (
	RMSEName       = "rmse"
	MSEName        = "mse"
	NLPDName       = "nlpd"
	TestLogLikName = "test_loglik"
	Coverage95Name = "coverage95"
	AccuracyName   = "accuracy"
	AUCName        = "auc"
)

// z95 is the two-sided 95% standard normal quantile.
const z95 = 1.959963984540054

// Scale maps standardised predictions to original units:
// y = Shift + Scale·y_std. The zero value (Scale 0) is the identity.
type Scale struct {
	Shift, Scale float64
}

func (sc Scale) factor() float64 {
	if sc.Scale == 0 {
		return 1
	}
	return sc.Scale
}

func (sc Scale) validate() error {
	s := sc.factor()
	if !(s > 0) || math.IsInf(s, 0) || math.IsNaN(sc.Shift) || math.IsInf(sc.Shift, 0) {
		return fmt.Errorf("metrics: invalid scale {Shift: %g, Scale: %g}; want a finite shift and a positive finite scale", sc.Shift, sc.Scale)
	}
	return nil
}

// Mean maps standardised means (or targets) to original units.
func (sc Scale) Mean(m []float64) []float64 {
	s := sc.factor()
	out := make([]float64, len(m))
	for i, v := range m {
		out[i] = sc.Shift + s*v
	}
	return out
}

// Var maps standardised variances to original units.
func (sc Scale) Var(v []float64) []float64 {
	s2 := sc.factor() * sc.factor()
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = s2 * x
	}
	return out
}

func checkLens(what string, n int, others ...[]float64) error {
	if n == 0 {
		return errors.New("metrics: " + what + ": no test points")
	}
	for _, o := range others {
		if len(o) != n {
			return fmt.Errorf("metrics: %s: %d targets but %d predictions", what, n, len(o))
		}
	}
	return nil
}

// MSE is the mean squared error of mean against y.
func MSE(y, mean []float64) (float64, error) {
	if err := checkLens("MSE", len(y), mean); err != nil {
		return 0, err
	}
	var s float64
	for i, yi := range y {
		d := yi - mean[i]
		s += d * d
	}
	return s / float64(len(y)), nil
}

// RMSE is the root mean squared error of mean against y.
func RMSE(y, mean []float64) (float64, error) {
	m, err := MSE(y, mean)
	return math.Sqrt(m), err
}

// NLPD is the mean negative log density of y under independent Gaussian
// predictives N(mean_n, varY_n); varY must include the observation noise.
func NLPD(y, mean, varY []float64) (float64, error) {
	if err := checkLens("NLPD", len(y), mean, varY); err != nil {
		return 0, err
	}
	var s float64
	for i, yi := range y {
		v := varY[i]
		if !(v > 0) {
			return 0, fmt.Errorf("metrics: NLPD: predictive variance %g at test point %d is not positive", v, i)
		}
		d := yi - mean[i]
		s += 0.5 * (math.Log(2*math.Pi*v) + d*d/v)
	}
	return s / float64(len(y)), nil
}

// TestLogLik is the mean log predictive density, −NLPD.
func TestLogLik(y, mean, varY []float64) (float64, error) {
	v, err := NLPD(y, mean, varY)
	return -v, err
}

// Coverage95 is the fraction of y inside mean ± 1.96·√varY.
func Coverage95(y, mean, varY []float64) (float64, error) {
	if err := checkLens("coverage", len(y), mean, varY); err != nil {
		return 0, err
	}
	in := 0
	for i, yi := range y {
		if v := varY[i]; v < 0 || math.IsNaN(v) {
			return 0, fmt.Errorf("metrics: coverage: predictive variance %g at test point %d is negative", v, i)
		}
		if math.Abs(yi-mean[i]) <= z95*math.Sqrt(varY[i]) {
			in++
		}
	}
	return float64(in) / float64(len(y)), nil
}

// Regression scores Gaussian predictives. y is in original units; mean and
// varY (predictive variance of y, noise included) are in the model's
// standardised units and are mapped back with sc before scoring.
// Keys: "rmse", "mse", "nlpd", "test_loglik", "coverage95".
//
// The scores are streamed over the test points in order, each point mapped
// back as Scale.Mean and Scale.Var map it: no copy of the predictions is
// made (millions of test points), and the sums are bitwise those of MSE,
// NLPD and Coverage95 on the mapped copies.
func Regression(y, mean, varY []float64, sc Scale) (map[string]float64, error) {
	if err := sc.validate(); err != nil {
		return nil, err
	}
	if err := checkLens("regression", len(y), mean, varY); err != nil {
		return nil, err
	}
	s, err := scoreRegression(y, mean, varY, sc, false)
	if err != nil {
		return nil, err
	}
	return s.scores(), nil
}

// regressionSums are the running sums of the regression scores: the squared
// errors over every point, the NLPD terms and the count inside the 95%
// interval over the points scored for density (n of them).
type regressionSums struct {
	sq, nlpd  float64
	in, n, nY int
}

func (s regressionSums) scores() map[string]float64 {
	mse := s.sq / float64(s.nY)
	nlpd := s.nlpd / float64(s.n)
	return map[string]float64{
		RMSEName:       math.Sqrt(mse),
		MSEName:        mse,
		NLPDName:       nlpd,
		TestLogLikName: -nlpd,
		Coverage95Name: float64(s.in) / float64(s.n),
	}
}

// scoreRegression streams the sums of Regression; with positiveOnly the
// points whose standardised variance is not positive count in the squared
// error only (RegressionPositiveVar).
func scoreRegression(y, mean, varY []float64, sc Scale, positiveOnly bool) (regressionSums, error) {
	f := sc.factor()
	f2 := f * f
	s := regressionSums{nY: len(y)}
	for i, yi := range y {
		m := sc.Shift + f*mean[i] // Scale.Mean's value
		d := yi - m
		s.sq += d * d
		if positiveOnly && !(varY[i] > 0) {
			continue
		}
		v := f2 * varY[i] // Scale.Var's value
		if !(v > 0) {
			return s, fmt.Errorf("metrics: NLPD: predictive variance %g at test point %d is not positive", v, i)
		}
		s.nlpd += 0.5 * (math.Log(2*math.Pi*v) + d*d/v)
		if math.Abs(d) <= z95*math.Sqrt(v) {
			s.in++
		}
		s.n++
	}
	return s, nil
}

// NonPositiveVarName counts the test points RegressionPositiveVar left out
// of NLPD and coverage.
const NonPositiveVarName = "x_nonpositive_variances"

// RegressionPositiveVar scores like Regression, except that NLPD,
// test_loglik and coverage95 average over the test points whose predictive
// variance is positive only, and NonPositiveVarName counts the others. RMSE
// and MSE use every point. This is how the IFF paper (Cheema & Rasmussen
// 2023) scores SKI, whose approximate predictive variances can be negative;
// use it only for such methods, so that a bad variance elsewhere still fails.
func RegressionPositiveVar(y, mean, varY []float64, sc Scale) (map[string]float64, error) {
	if err := checkLens("regression", len(y), mean, varY); err != nil {
		return nil, err
	}
	positive := 0
	for _, v := range varY {
		if v > 0 {
			positive++
		}
	}
	if positive == 0 {
		return nil, fmt.Errorf("metrics: no test point of %d has a positive predictive variance", len(y))
	}
	if err := sc.validate(); err != nil {
		return nil, err
	}
	s, err := scoreRegression(y, mean, varY, sc, true)
	if err != nil {
		return nil, err
	}
	out := s.scores()
	out[NonPositiveVarName] = float64(len(y) - s.n)
	return out, nil
}

// positive reads a binary label: +1 is positive, −1 or 0 negative.
func positive(y float64, i int) (bool, error) {
	switch y {
	case 1:
		return true, nil
	case -1, 0:
		return false, nil
	}
	return false, fmt.Errorf("metrics: label %g at test point %d; want −1/+1 or 0/1", y, i)
}

// Accuracy is the fraction of points whose label matches p ≥ ½ ↔ positive.
// Labels are +1 (positive) and −1 or 0 (negative); p is p(y = +1).
func Accuracy(y, p []float64) (float64, error) {
	if err := checkLens("accuracy", len(y), p); err != nil {
		return 0, err
	}
	ok := 0
	for i, yi := range y {
		pos, err := positive(yi, i)
		if err != nil {
			return 0, err
		}
		if pos == (p[i] >= 0.5) {
			ok++
		}
	}
	return float64(ok) / float64(len(y)), nil
}

// AUC is the area under the ROC curve of score p for labels y, computed from
// ranks (Mann–Whitney U); tied scores get their average rank, so a tie
// between a positive and a negative counts one half. It fails unless both
// classes are present.
func AUC(y, p []float64) (float64, error) {
	if err := checkLens("AUC", len(y), p); err != nil {
		return 0, err
	}
	idx := make([]int, len(p))
	for i := range idx {
		idx[i] = i
		if math.IsNaN(p[i]) {
			return 0, fmt.Errorf("metrics: AUC: score at test point %d is NaN", i)
		}
	}
	sort.SliceStable(idx, func(a, b int) bool { return p[idx[a]] < p[idx[b]] })
	var rankSumPos float64
	nPos := 0
	for start := 0; start < len(idx); {
		end := start + 1
		for end < len(idx) && p[idx[end]] == p[idx[start]] {
			end++
		}
		avg := float64(start+end+1) / 2 // mean of 1-based ranks start+1 … end
		for _, k := range idx[start:end] {
			pos, err := positive(y[k], k)
			if err != nil {
				return 0, err
			}
			if pos {
				rankSumPos += avg
				nPos++
			}
		}
		start = end
	}
	nNeg := len(y) - nPos
	if nPos == 0 || nNeg == 0 {
		return 0, fmt.Errorf("metrics: AUC needs both classes; got %d positive and %d negative labels", nPos, nNeg)
	}
	u := rankSumPos - float64(nPos)*float64(nPos+1)/2
	return u / (float64(nPos) * float64(nNeg)), nil
}

// Classification scores predicted probabilities p = p(y = +1) of binary
// labels y (+1 positive; −1 or 0 negative).
// Keys: "accuracy", "auc", "nlpd", "test_loglik". "auc" is NaN when the test
// set holds a single class.
func Classification(y, p []float64) (map[string]float64, error) {
	if err := checkLens("classification", len(y), p); err != nil {
		return nil, err
	}
	var nll float64
	for i, yi := range y {
		if !(p[i] >= 0 && p[i] <= 1) {
			return nil, fmt.Errorf("metrics: probability %g at test point %d is outside [0, 1]", p[i], i)
		}
		pos, err := positive(yi, i)
		if err != nil {
			return nil, err
		}
		if pos {
			nll -= math.Log(p[i])
		} else {
			nll -= math.Log1p(-p[i])
		}
	}
	nlpd := nll / float64(len(y))
	acc, err := Accuracy(y, p)
	if err != nil {
		return nil, err
	}
	auc, err := AUC(y, p)
	if err != nil {
		auc = math.NaN()
	}
	return map[string]float64{
		AccuracyName:   acc,
		AUCName:        auc,
		NLPDName:       nlpd,
		TestLogLikName: -nlpd,
	}, nil
}
