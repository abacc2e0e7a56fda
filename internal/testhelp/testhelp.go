// Package testhelp holds the helpers that tests across sgplab share:
// relative errors, random matrices, the naive dense formulas that the
// structured implementations are checked against, and the first line where
// an output differs from its golden copy. It is imported by tests only.
package testhelp

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"

	"gonum.org/v1/gonum/mat"
)

// RelErr is |got − want| / max(1, |want|): relative for large values,
// absolute near zero.
func RelErr(got, want float64) float64 {
	return math.Abs(got-want) / math.Max(1, math.Abs(want))
}

// RelNormErr is ‖got − want‖₂ / ‖want‖₂ of two vectors of equal length.
func RelNormErr(got, want []float64) float64 {
	var num, den float64
	for i := range got {
		num += (got[i] - want[i]) * (got[i] - want[i])
		den += want[i] * want[i]
	}
	return math.Sqrt(num / math.Max(den, 1e-300))
}

// RandMat is an r×c matrix of independent N(0, scale²) entries, drawn row
// by row.
func RandMat(rng *rand.Rand, r, c int, scale float64) *mat.Dense {
	m := mat.NewDense(r, c, nil)
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			m.Set(i, j, scale*rng.NormFloat64())
		}
	}
	return m
}

// RandQ is a random q(u) = N(μ, SSᵀ) of size m: μ standard normal and S
// lower triangular, N(0, 0.3²) below a diagonal in [0.5, 1.5), drawn row
// by row (μ_i, then row i of S).
func RandQ(rng *rand.Rand, m int) (mu, sqrt *mat.Dense) {
	mu = mat.NewDense(m, 1, nil)
	sqrt = mat.NewDense(m, m, nil)
	for i := 0; i < m; i++ {
		mu.Set(i, 0, rng.NormFloat64())
		for j := 0; j <= i; j++ {
			sqrt.Set(i, j, 0.3*rng.NormFloat64())
		}
		sqrt.Set(i, i, 0.5+rng.Float64())
	}
	return mu, sqrt
}

// RandSPD is B Bᵀ/n + jitter·I for an n×n B of standard normal entries:
// symmetric positive definite, with eigenvalues of order one above jitter.
func RandSPD(rng *rand.Rand, n int, jitter float64) *mat.SymDense {
	b := RandMat(rng, n, n, 1)
	s := mat.NewSymDense(n, nil)
	s.SymOuterK(1/float64(n), b)
	for i := 0; i < n; i++ {
		s.SetSym(i, i, s.At(i, i)+jitter)
	}
	return s
}

// TitsiasBound is the collapsed SGPR bound computed the naive way, with
// N×N dense matrices (small N only):
//
//	log N(y | 0, Qff + σ²I) − tr(Kff − Qff)/(2σ²),  Qff = Kfu Kuu⁻¹ Kuf,
//
// from Kuu (with any jitter already added), Kuf, the diagonal of Kff and
// the noise variance σ².
func TitsiasBound(kuu, kuf *mat.Dense, kffDiag, y []float64, noise float64) (float64, error) {
	n := len(y)
	var kinv mat.Dense
	if err := kinv.Inverse(kuu); err != nil {
		return 0, err
	}
	var tmp, q mat.Dense
	tmp.Mul(&kinv, kuf)
	q.Mul(kuf.T(), &tmp)
	trace := 0.0
	c := mat.NewSymDense(n, nil)
	for a := 0; a < n; a++ {
		trace += kffDiag[a] - q.At(a, a)
		for b := a; b < n; b++ {
			v := q.At(a, b)
			if a == b {
				v += noise
			}
			c.SetSym(a, b, v)
		}
	}
	var chol mat.Cholesky
	if !chol.Factorize(c) {
		return 0, errors.New("testhelp: Qff + σ²I is not positive definite")
	}
	yv := mat.NewVecDense(n, append([]float64(nil), y...))
	var alpha mat.VecDense
	if err := chol.SolveVecTo(&alpha, yv); err != nil {
		return 0, err
	}
	return -0.5*mat.Dot(yv, &alpha) - 0.5*chol.LogDet() - 0.5*float64(n)*math.Log(2*math.Pi) - trace/(2*noise), nil
}

// FirstDiff returns the first line (from 1) where got and want differ, with
// both versions of it ("" past the end of either, which differs even from
// an empty line); n is 0 when they are equal.
func FirstDiff(got, want string) (n int, g, w string) {
	gl, wl := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < max(len(gl), len(wl)); i++ {
		switch {
		case i >= len(gl):
			return i + 1, "", wl[i]
		case i >= len(wl):
			return i + 1, gl[i], ""
		case gl[i] != wl[i]:
			return i + 1, gl[i], wl[i]
		}
	}
	return 0, "", ""
}

// SameBits reports whether a and b have the same shape and the same bits
// in every entry (so −0 differs from +0 and a NaN equals only its own bits).
func SameBits(a, b *mat.Dense) bool {
	ar, ac := a.Dims()
	br, bc := b.Dims()
	if ar != br || ac != bc {
		return false
	}
	for i := range ar {
		for j := range ac {
			if math.Float64bits(a.At(i, j)) != math.Float64bits(b.At(i, j)) {
				return false
			}
		}
	}
	return true
}
