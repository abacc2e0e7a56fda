package ski

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// Axis is a regular grid along one input dimension: Size points Lo + j·Step,
// j = 0 … Size−1.
type Axis struct {
	Lo, Step float64
	Size     int
}

// MinGridSize is the smallest grid per dimension: cubic interpolation needs
// four points, and the bounds rule below needs Size > 4.02.
const MinGridSize = 5

// AutoSize is GPyTorch's choose_grid_size rule (ratio 1, Kronecker
// structure): ⌊N^{1/D}⌋ points per dimension, so the grid has about as many
// points as there are data. It never returns less than MinGridSize.
func AutoSize(n, d int) int {
	if n < 1 || d < 1 {
		return MinGridSize
	}
	return max(MinGridSize, int(math.Pow(float64(n), 1/float64(d))))
}

// NewAxis places size points over the data range [lo, hi] as GPyTorch's
// GridInterpolationKernel does when it is not given bounds: with
// h = (hi−lo)/(size−4.02) the bounds are [lo−2.01h, hi+2.01h], and the grid
// is linspace(bLo−δ, bHi+δ, size) with δ = (bHi−bLo)/(size−2). Every point of
// [lo, hi] then has the two grid points either side that cubic interpolation
// needs, with about one spacing to spare.
func NewAxis(lo, hi float64, size int) (Axis, error) {
	if size < MinGridSize {
		return Axis{}, fmt.Errorf("ski: grid size %d is too small; need at least %d points per dimension", size, MinGridSize)
	}
	if !(hi > lo) || math.IsInf(hi-lo, 0) {
		return Axis{}, fmt.Errorf("ski: input range [%v, %v] must be finite and non-empty (a constant input dimension has no grid)", lo, hi)
	}
	g := float64(size)
	h := (hi - lo) / (g - 4.02)
	bLo, bHi := lo-2.01*h, hi+2.01*h
	delta := (bHi - bLo) / (g - 2)
	return Axis{Lo: bLo - delta, Step: (bHi - bLo + 2*delta) / (g - 1), Size: size}, nil
}

// Point is the j-th grid coordinate.
func (a Axis) Point(j int) float64 { return a.Lo + float64(j)*a.Step }

// keys is the cubic convolution kernel of Keys (1981) with a = −1/2, the one
// GPyTorch uses: it interpolates (u(0) = 1, u(k) = 0 at other integers) and
// reproduces quadratics, so the interpolation error is O(Step³).
func keys(s float64) float64 {
	s = math.Abs(s)
	switch {
	case s <= 1:
		return (1.5*s-2.5)*s*s + 1
	case s < 2:
		return ((-0.5*s+2.5)*s-4)*s + 2
	}
	return 0
}

// stencil returns the first of the four grid indices that interpolate x and
// their weights; clamped reports that x lay outside [Point(1), Point(Size−2)],
// the range cubic interpolation covers, and was moved to its nearest end.
func (a Axis) stencil(x float64) (first int, w [4]float64, clamped bool) {
	u := (x - a.Lo) / a.Step
	hiU := float64(a.Size - 2)
	if u < 1 || u > hiU {
		clamped = true
		u = math.Min(math.Max(u, 1), hiU)
	}
	j := int(math.Floor(u))
	if j > a.Size-3 { // u = Size−2 exactly: the same weights from the left cell
		j = a.Size - 3
	}
	t := u - float64(j)
	w = [4]float64{keys(1 + t), keys(t), keys(1 - t), keys(2 - t)}
	return j - 1, w, clamped
}

// Grid is the tensor product of one Axis per input dimension. Grid points are
// numbered row-major: the last dimension varies fastest.
type Grid struct {
	Axes []Axis
}

// NewGrid builds the grid GPyTorch would for inputs x (N×D) with size points
// per dimension (sizes holds one value, or one per dimension).
func NewGrid(x *mat.Dense, sizes []int) (*Grid, error) {
	if x == nil {
		return nil, errors.New("ski: no inputs")
	}
	n, d := x.Dims()
	if n == 0 || d == 0 {
		return nil, errors.New("ski: no inputs")
	}
	if len(sizes) != 1 && len(sizes) != d {
		return nil, fmt.Errorf("ski: %d grid sizes for %d input dimensions; give one size or one per dimension", len(sizes), d)
	}
	g := &Grid{Axes: make([]Axis, d)}
	for k := 0; k < d; k++ {
		lo, hi := math.Inf(1), math.Inf(-1)
		for i := 0; i < n; i++ {
			v := x.At(i, k)
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("ski: input [%d,%d] = %v is not finite", i, k, v)
			}
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
		size := sizes[0]
		if len(sizes) == d {
			size = sizes[k]
		}
		a, err := NewAxis(lo, hi, size)
		if err != nil {
			return nil, fmt.Errorf("dimension %d: %w", k, err)
		}
		g.Axes[k] = a
	}
	return g, nil
}

// Dim is the number of input dimensions.
func (g *Grid) Dim() int { return len(g.Axes) }

// Len is the number of grid points M = Π_d Size_d.
func (g *Grid) Len() int {
	m := 1
	for _, a := range g.Axes {
		m *= a.Size
	}
	return m
}

// Points returns the M grid points (M×D), row-major as the grid numbers
// them. It is for tests and small grids.
func (g *Grid) Points() *mat.Dense {
	d, m := g.Dim(), g.Len()
	out := mat.NewDense(m, d, nil)
	for p := 0; p < m; p++ {
		rest := p
		for k := d - 1; k >= 0; k-- {
			a := g.Axes[k]
			out.Set(p, k, a.Point(rest%a.Size))
			rest /= a.Size
		}
	}
	return out
}

// Interp is the sparse interpolation matrix W (N×M) of N inputs onto a
// grid: row n has 4^D non-zeros, the tensor product of each dimension's four
// cubic weights. Row n's entries are Idx[n·S : (n+1)·S] and Val[…] with
// S = Stencil.
type Interp struct {
	N, M    int
	Stencil int       // non-zeros per row, 4^D
	Idx     []int32   // grid indices
	Val     []float64 // weights
	// First and Wts keep the per-dimension factors (first index and the four
	// weights of input n in dimension d at n·D+d), from which quadratic
	// forms with Kronecker matrices factorise.
	First   []int32
	Wts     [][4]float64
	Clamped int // inputs outside the grid's interpolation range, moved to its edge
}

// Interpolate builds W for inputs x (N×D) on g. Inputs outside the range the
// grid interpolates (possible at test points beyond the training range) are
// clamped to its edge and counted in Clamped.
func (g *Grid) Interpolate(x *mat.Dense) (*Interp, error) {
	if x == nil {
		return nil, errors.New("ski: no inputs")
	}
	n, d := x.Dims()
	if d != g.Dim() {
		return nil, fmt.Errorf("ski: inputs have %d columns, the grid has %d dimensions", d, g.Dim())
	}
	s := 1
	for k := 0; k < d; k++ {
		s *= 4
	}
	w := &Interp{N: n, M: g.Len(), Stencil: s, Idx: make([]int32, n*s), Val: make([]float64, n*s),
		First: make([]int32, n*d), Wts: make([][4]float64, n*d)}
	strides := make([]int, d)
	strides[d-1] = 1
	for k := d - 2; k >= 0; k-- {
		strides[k] = strides[k+1] * g.Axes[k+1].Size
	}
	digits := make([]int, d)
	for i := 0; i < n; i++ {
		out := false
		for k := 0; k < d; k++ {
			v := x.At(i, k)
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("ski: input [%d,%d] = %v is not finite", i, k, v)
			}
			f, wt, c := g.Axes[k].stencil(v)
			out = out || c
			w.First[i*d+k], w.Wts[i*d+k] = int32(f), wt
		}
		if out {
			w.Clamped++
		}
		// Odometer over the 4^D stencil, last dimension fastest.
		for k := range digits {
			digits[k] = 0
		}
		for e := 0; e < s; e++ {
			idx, val := 0, 1.0
			for k := 0; k < d; k++ {
				idx += (int(w.First[i*d+k]) + digits[k]) * strides[k]
				val *= w.Wts[i*d+k][digits[k]]
			}
			w.Idx[i*s+e], w.Val[i*s+e] = int32(idx), val
			for k := d - 1; k >= 0; k-- {
				if digits[k]++; digits[k] < 4 {
					break
				}
				digits[k] = 0
			}
		}
	}
	return w, nil
}

// ScatterAdd adds Wᵀv to grid (length M).
func (w *Interp) ScatterAdd(grid, v []float64) {
	s := w.Stencil
	for i, vi := range v {
		if vi == 0 {
			continue
		}
		idx, val := w.Idx[i*s:(i+1)*s], w.Val[i*s:(i+1)*s]
		for e, j := range idx {
			grid[j] += val[e] * vi
		}
	}
}

// Gather sets dst = W·grid.
func (w *Interp) Gather(dst, grid []float64) {
	s := w.Stencil
	for i := range dst {
		idx, val := w.Idx[i*s:(i+1)*s], w.Val[i*s:(i+1)*s]
		var acc float64
		for e, j := range idx {
			acc += val[e] * grid[j]
		}
		dst[i] = acc
	}
}

// Dense returns W as a dense N×M matrix, for tests on small problems.
func (w *Interp) Dense() *mat.Dense {
	out := mat.NewDense(w.N, w.M, nil)
	for i := 0; i < w.N; i++ {
		for e := 0; e < w.Stencil; e++ {
			j := int(w.Idx[i*w.Stencil+e])
			out.Set(i, j, out.At(i, j)+w.Val[i*w.Stencil+e])
		}
	}
	return out
}
