package inducing

import (
	"bufio"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp/kernels"
	"sgplab/gp/param"
)

// ErrExhausted is wrapped by Greedy's error when the residual variance of
// every remaining point is zero (duplicate inputs or a low-rank kernel)
// before m points were chosen; the points chosen so far are returned.
var ErrExhausted = errors.New("inducing: residual variance exhausted")

func checkArgs(who string, x *mat.Dense, m int) (n, d int, err error) {
	if x == nil || x.IsEmpty() {
		return 0, 0, fmt.Errorf("inducing: %s: no input points", who)
	}
	n, d = x.Dims()
	if m <= 0 {
		return n, d, fmt.Errorf("inducing: %s: number of inducing points %d, want ≥ 1", who, m)
	}
	if m > n {
		return n, d, fmt.Errorf("inducing: %s: %d inducing points requested from only %d inputs", who, m, n)
	}
	return n, d, nil
}

func rowsOf(x *mat.Dense, idx []int) *mat.Dense {
	_, d := x.Dims()
	z := mat.NewDense(len(idx), d, nil)
	for i, k := range idx {
		z.SetRow(i, x.RawRowView(k))
	}
	return z
}

// RandomSubset returns m distinct rows of x chosen uniformly at random.
func RandomSubset(x *mat.Dense, m int, rng *rand.Rand) (*mat.Dense, error) {
	idx, err := RandomIndices(x, m, rng)
	if err != nil {
		return nil, err
	}
	return rowsOf(x, idx), nil
}

// RandomIndices returns m distinct row indices of x chosen uniformly at
// random (a partial Fisher–Yates shuffle).
func RandomIndices(x *mat.Dense, m int, rng *rand.Rand) ([]int, error) {
	n, _, err := checkArgs("RandomSubset", x, m)
	if err != nil {
		return nil, err
	}
	if rng == nil {
		return nil, errors.New("inducing: RandomSubset: nil random source")
	}
	perm := make([]int, n)
	for i := range perm {
		perm[i] = i
	}
	for i := 0; i < m; i++ {
		j := i + rng.IntN(n-i)
		perm[i], perm[j] = perm[j], perm[i]
	}
	return perm[:m:m], nil
}

// Greedy selects m rows of x by greedy conditional variance: each step takes
// the point with the largest residual variance k(x,x) − Q(x,x) given the
// points chosen so far (ties go to the lowest index), which is partial
// pivoted Cholesky of K_ff. It returns Z and the chosen row indices.
// Cost O(NM²) time and O(NM) memory; K_ff is never formed.
func Greedy(x *mat.Dense, m int, kern kernels.Kernel, s *param.Set, prefix string) (*mat.Dense, []int, error) {
	idx, _, err := greedy(x, m, kern, s, prefix)
	if idx == nil {
		return nil, nil, err
	}
	return rowsOf(x, idx), idx, err
}

// greedy also returns the residual trace tr(K − Q) after each selection.
func greedy(x *mat.Dense, m int, kern kernels.Kernel, s *param.Set, prefix string) ([]int, []float64, error) {
	n, _, err := checkArgs("Greedy", x, m)
	if err != nil {
		return nil, nil, err
	}
	if kern == nil || s == nil {
		return nil, nil, errors.New("inducing: Greedy: nil kernel or parameter set")
	}
	resid := kernels.DiagValues(kern, s, prefix, x)
	if len(resid) != n {
		return nil, nil, fmt.Errorf("inducing: Greedy: kernel diagonal has %d entries for %d inputs", len(resid), n)
	}
	scale := 0.0
	for i, v := range resid {
		if !(v >= 0) || math.IsInf(v, 0) {
			return nil, nil, fmt.Errorf("inducing: Greedy: kernel variance %g at input %d", v, i)
		}
		scale = math.Max(scale, v)
	}
	// Column j of c is the j-th column of the partial Cholesky factor of K_ff.
	c := mat.NewDense(n, m, nil)
	idx := make([]int, 0, m)
	traces := make([]float64, 0, m)
	chosen := make([]bool, n)
	col := mat.NewVecDense(n, nil)
	for j := 0; j < m; j++ {
		p, best := -1, 0.0
		for i, v := range resid {
			if !chosen[i] && v > best {
				p, best = i, v
			}
		}
		// Relative threshold: below it the pivot is rounding noise.
		if p < 0 || best <= 1e-12*scale {
			return idx, traces, fmt.Errorf("%w after %d of %d points", ErrExhausted, j, m)
		}
		kcol := kernels.Matrix(kern, s, prefix, x, x.Slice(p, p+1, 0, x.RawMatrix().Cols).(*mat.Dense))
		col.CopyVec(kcol.ColView(0))
		if j > 0 {
			// col −= C[:, :j] · C[p, :j]ᵀ
			cj := c.Slice(0, n, 0, j)
			col.MulVec(cj, mat.NewVecDense(j, append([]float64(nil), c.RawRowView(p)[:j]...)))
			col.SubVec(kcol.ColView(0), col)
		}
		inv := 1 / math.Sqrt(best)
		var tr float64
		for i := 0; i < n; i++ {
			v := col.AtVec(i) * inv
			c.Set(i, j, v)
			resid[i] = math.Max(resid[i]-v*v, 0)
			tr += resid[i]
		}
		resid[p] = 0
		chosen[p] = true
		idx = append(idx, p)
		traces = append(traces, tr)
	}
	return idx, traces, nil
}

// FromCSV reads inducing inputs from a CSV file with dim numbers per row
// (dim 0 takes the width of the first row). Blank lines and lines starting
// with '#' are skipped; a first line with no numeric field is a header.
// Errors name the file and line.
func FromCSV(path string, dim int) (*mat.Dense, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("inducing: %w", err)
	}
	defer f.Close()
	var data []float64
	rows := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<16), 1<<26)
	line := 0
	first := true
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		isFirst := first
		first = false
		fields := strings.Split(text, ",")
		vals := make([]float64, len(fields))
		numeric := 0
		var perr error
		for i, fld := range fields {
			v, err := strconv.ParseFloat(strings.TrimSpace(fld), 64)
			if errors.Is(err, strconv.ErrRange) {
				// A number, so the row is not a header, but beyond float64.
				perr = fmt.Errorf("inducing: %s:%d: field %d %q is beyond float64's range ±1.8e308 (overflow)", path, line, i+1, strings.TrimSpace(fld))
				numeric++
				continue
			}
			if err != nil {
				if perr == nil {
					perr = fmt.Errorf("inducing: %s:%d: field %d %q is not a number", path, line, i+1, strings.TrimSpace(fld))
				}
				continue
			}
			if math.IsNaN(v) || math.IsInf(v, 0) {
				perr = fmt.Errorf("inducing: %s:%d: field %d is %v", path, line, i+1, v)
				continue
			}
			vals[i] = v
			numeric++
		}
		if perr != nil {
			if isFirst && numeric == 0 {
				continue // header
			}
			return nil, perr
		}
		if dim == 0 {
			dim = len(vals)
		}
		if len(vals) != dim {
			return nil, fmt.Errorf("inducing: %s:%d: %d values, want %d", path, line, len(vals), dim)
		}
		data = append(data, vals...)
		rows++
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("inducing: %s:%d: %w", path, line+1, err)
	}
	if rows == 0 {
		return nil, fmt.Errorf("inducing: %s: no data rows", path)
	}
	return mat.NewDense(rows, dim, data), nil
}
