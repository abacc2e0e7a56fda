package features

import (
	"fmt"
	"math"
	"math/bits"

	"sgplab/gp/sphere"
)

// The number of inducing variables a feature set will have, from its
// parameters alone: what a caller checks before building the set (a
// Kronecker product over D dimensions grows as a power of D). The counts
// are those of the constructors, which enumerate the same grids.

// maskedGrid visits, in lexicographic order (dimension 0 slowest), the
// index tuples idx (idx[d] < sizes[d]) with Σ_d term(d, idx[d]) ≤ limit,
// summing the terms in dimension order; terms must be ≥ 0, so a partial
// sum above limit prunes every tuple that extends it. visit may stop the
// walk by returning false.
func maskedGrid(sizes []int, term func(d, i int) float64, limit float64, visit func(idx []int) bool) {
	idx := make([]int, len(sizes))
	var walk func(d int, q float64) bool
	walk = func(d int, q float64) bool {
		if d == len(sizes) {
			return visit(idx)
		}
		for i := 0; i < sizes[d]; i++ {
			r := q + term(d, i)
			if r > limit {
				continue
			}
			idx[d] = i
			if !walk(d+1, r) {
				return false
			}
		}
		return true
	}
	walk(0, 0)
}

// mulCount is a·b, or an error when it overflows an int.
func mulCount(a, b int) (int, error) {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi != 0 || lo > math.MaxInt {
		return 0, fmt.Errorf("more than %d features", math.MaxInt)
	}
	return int(lo), nil
}

// maskLimit is the tolerance of the interval features' spherical mask.
const maskLimit = 1 + 1e-12

// intervalCount is the number of features of an interval feature set with
// per-dimension bases of size sizes[d] and maximum frequencies maxFreq[d]
// (freq maps a basis index to its frequency) under structure s, masked to
// the spherical grid (Kronecker only) when mask is set.
func intervalCount(sizes []int, freq func(d, i int) int, maxFreq []int, s Structure, mask bool) (int, error) {
	switch s {
	case Additive:
		if mask {
			return 0, fmt.Errorf("a frequency mask applies to the Kronecker structure only")
		}
		m := 0
		for _, n := range sizes {
			m += n
		}
		return m, nil
	case Kronecker:
		if !mask {
			m := 1
			for _, n := range sizes {
				var err error
				if m, err = mulCount(m, n); err != nil {
					return 0, err
				}
			}
			return m, nil
		}
		m := 0
		maskedGrid(sizes, maskTerm(freq, maxFreq), maskLimit, func([]int) bool { m++; return true })
		return m, nil
	}
	return 0, fmt.Errorf("unknown structure %d", s)
}

// maskTerm is (m_d / max_d)² of the spherical mask, 0 in a dimension
// without frequencies above 0.
func maskTerm(freq func(d, i int) int, maxFreq []int) func(d, i int) float64 {
	return func(d, i int) float64 {
		mf := maxFreq[d]
		if mf <= 0 {
			return 0
		}
		t := float64(freq(d, i)) / float64(mf)
		return t * t
	}
}

// VFFCount is the number of features NewVFF gives for frequencies per
// dimension on dim input dimensions: 2·frequencies − 1 per dimension, added
// (Additive) or multiplied (Kronecker; the grid points inside the sphere
// with mask).
func VFFCount(frequencies, dim int, s Structure, mask bool) (int, error) {
	if frequencies < 1 || dim < 1 {
		return 0, fmt.Errorf("features: vff: %d frequencies on %d dimensions, want ≥ 1 of each", frequencies, dim)
	}
	sizes, maxFreq := make([]int, dim), make([]int, dim)
	for d := range sizes {
		sizes[d], maxFreq[d] = 2*frequencies-1, frequencies-1
	}
	if s == Kronecker && mask {
		// Walk the frequency tuples, not the basis tuples: frequency 0 has
		// one basis function (cos), every other two (cos, sin), and the
		// mask depends on the frequencies only: 2^D fewer points to visit.
		freqs := make([]int, dim)
		for d := range freqs {
			freqs[d] = frequencies
		}
		m := 0
		maskedGrid(freqs, maskTerm(func(_, f int) int { return f }, maxFreq), maskLimit, func(tuple []int) bool {
			w := 1
			for _, f := range tuple {
				if f > 0 {
					w *= 2
				}
			}
			m += w
			return true
		})
		return m, nil
	}
	b := &fourierBasis{nfreq: frequencies}
	m, err := intervalCount(sizes, func(_, i int) int { return b.freq(i) }, maxFreq, s, mask)
	if err != nil {
		return 0, fmt.Errorf("features: vff: %w", err)
	}
	return m, nil
}

// BSplineCount is the number of features NewBSplines gives: bases per
// dimension, added (Additive) or multiplied (Kronecker).
func BSplineCount(bases, dim int, s Structure) (int, error) {
	if bases < 4 || dim < 1 {
		return 0, fmt.Errorf("features: bspline: %d bases on %d dimensions, want ≥ 4 bases and ≥ 1 dimension", bases, dim)
	}
	sizes := make([]int, dim)
	for d := range sizes {
		sizes[d] = bases
	}
	m, err := intervalCount(sizes, nil, nil, s, false)
	if err != nil {
		return 0, fmt.Errorf("features: bspline: %w", err)
	}
	return m, nil
}

// iffMaxGrid bounds the frequency grid IFF enumerates.
const iffMaxGrid = 1 << 24

// iffGrid validates the frequency counts of IFF and visits the kept grid
// tuples in lexicographic order.
func iffGrid(perDim []int, mask bool, visit func(tuple []int) bool) error {
	dim := len(perDim)
	if dim == 0 {
		return fmt.Errorf("features: IFF: no input dimensions")
	}
	if dim > 16 {
		return fmt.Errorf("features: IFF: %d input dimensions; the 2^D features per frequency make D > 16 impossible (the paper targets D ≤ 3)", dim)
	}
	total := 1
	for d, n := range perDim {
		if n < 1 {
			return fmt.Errorf("features: IFF: dimension %d has %d positive frequencies, want ≥ 1", d, n)
		}
		total *= n
		if total > iffMaxGrid {
			return fmt.Errorf("features: IFF: frequency grid %v is too large", perDim)
		}
	}
	term := func(int, int) float64 { return 0 }
	if mask {
		term = func(d, j int) float64 {
			u := (float64(j) + 0.5) / float64(perDim[d])
			return u * u
		}
	}
	maskedGrid(perDim, term, 1, visit)
	return nil
}

// IFFCount is the number of features NewIFF gives for perDim positive
// frequencies per dimension: 2^D per kept grid point.
func IFFCount(perDim []int, mask bool) (int, error) {
	kept := 0
	if err := iffGrid(perDim, mask, func([]int) bool { kept++; return true }); err != nil {
		return 0, err
	}
	if kept == 0 {
		return 0, iffEmptyMask(perDim)
	}
	return mulCount(kept, 1<<len(perDim))
}

func iffEmptyMask(perDim []int) error {
	return fmt.Errorf("features: IFF: the spherical mask keeps no frequency of the grid %v in %d dimensions; use more frequencies per dimension (≥ %d) or no mask",
		perDim, len(perDim), int(math.Ceil(math.Sqrt(float64(len(perDim)))/2)))
}

// SphericalHarmonicsCount is the number of features NewSphericalHarmonics
// gives: the harmonics of the levels 0…maxLevel of S^{d−1} that do not
// vanish under parity.
func SphericalHarmonicsCount(d, maxLevel int, parity sphere.Parity) (int, error) {
	if d < 2 || maxLevel < 0 {
		return 0, fmt.Errorf("features: spherical harmonics: sphere dimension %d and maximum level %d, want ≥ 2 and ≥ 0", d, maxLevel)
	}
	m := 0
	for l := 0; l <= maxLevel; l++ {
		if !parity.Zero(l) {
			m += sphere.LevelCount(d, l)
			if m > sphere.MaxBasisSize {
				return 0, fmt.Errorf("features: spherical harmonics: levels 0…%d in d = %d give more than %d harmonics", maxLevel, d, sphere.MaxBasisSize)
			}
		}
	}
	return m, nil
}
