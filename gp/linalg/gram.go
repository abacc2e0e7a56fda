package linalg

import (
	"fmt"
	"math/bits"
	"runtime"
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"sgplab/gp/internal/workers"
)

// The O(NM²) products of the collapsed bound (A Aᵀ and its adjoint S A for a
// wide M×N matrix A) are split into column blocks of A handed out to
// goroutines, each making its own BLAS call. One call only keeps
// syrkThreads()/gemmThreads() cores busy: gonum's dsyrk is serial, and
// OpenBLAS runs with OPENBLAS_NUM_THREADS=1 in sgplab (its own worker
// threads spin against our goroutines), so without the split a single large
// product would leave every other core idle.
//
// The split depends only on the shape of the problem, never on the number
// of cores: the same BLAS calls on the same blocks run on any machine, and
// partial sums are combined in block order, so every result is bitwise the
// same under any GOMAXPROCS. The cores only decide how many goroutines
// share out the fixed blocks.
const (
	// minSumCols is the narrowest block of a rank-k update (dsyrk), whose
	// block width is its summed dimension k: below it the call runs below
	// its full rate.
	minSumCols = 256
	// minTaperCols is the narrowest of the last groups of a GramSum call.
	minTaperCols = 128
	// minBlockCols is the narrowest block of a product or solve whose block
	// width is only a free dimension (dgemm's n, dtrsm's right-hand sides).
	minBlockCols = 64
	// gramChunk bounds one BLAS call's block, so that a goroutine slowed by
	// other processes holds up the others by at most one such call.
	gramChunk = 4096
	// maxBlocks is the number of blocks a split aims at: several per core
	// on two to four cores, so that the goroutines balance their load on a
	// shared (busy) machine by taking more or fewer blocks.
	maxBlocks = 8
	// maxPartialFloats bounds the memory of the per-block partial sums of a
	// reduction (maxBlocks × r² would be 64 MiB at r = 1000).
	maxPartialFloats = 1 << 23
	// minSplitFlops is the work (rows²·cols) below which goroutines cost
	// more than they save.
	minSplitFlops = 1 << 21
)

// procs is the number of cores the goroutines are planned for; a variable
// so that the tests can run more goroutines than the machine has. It never
// changes the split, only how many goroutines share it.
var procs = func() int { return runtime.GOMAXPROCS(0) }

// splitCols returns the number of blocks c columns of a problem with r rows
// are split into, blocks at least minWidth wide (except when c is smaller)
// and at most gramChunk wide. It depends only on the shape.
func splitCols(r, c, minWidth int) int {
	if c == 0 || float64(r)*float64(r)*float64(c) < minSplitFlops {
		return 1
	}
	n := max(1, min(maxBlocks, c/minWidth))
	return max(n, (c+gramChunk-1)/gramChunk)
}

// blockBounds returns block b of c columns split into n nearly equal blocks.
func blockBounds(b, n, c int) (lo, hi int) {
	return b * c / n, (b + 1) * c / n
}

// forBlocks calls f(b) once for each b in [0, n), on as many goroutines as
// the cores that a BLAS call keeping threads cores busy leaves idle. Blocks
// are taken from a shared counter, so a goroutine slowed by other processes
// takes fewer of them; which goroutine runs a block must not (and, for
// every caller, does not) change what the block computes.
func forBlocks(n, threads int, f func(b int)) {
	workers.Run(n, procs()/max(threads, 1), f)
}

// forColBlocks calls f(lo, hi) on the fixed column blocks of an r×c problem
// (see splitCols) on every idle core. Blocks must be independent (no
// shared sums).
func forColBlocks(r, c, minWidth, threads int, f func(lo, hi int)) {
	n := splitCols(r, c, minWidth)
	forBlocks(n, threads, func(b int) { f(blockBounds(b, n, c)) })
}

// colView is columns [lo, hi) of the row-major raw matrix, without copying.
func colView(raw blas64.General, lo, hi int) blas64.General {
	return blas64.General{Rows: raw.Rows, Cols: hi - lo, Stride: raw.Stride, Data: raw.Data[lo:]}
}

// Gram returns A Aᵀ (exactly symmetric) for an r×c matrix A by rank-k
// updates (dsyrk, half the work of dgemm). Fixed groups of columns of A are
// accumulated on every core into one r×r partial per group, then summed in
// group order. (dgemm tiles over the upper block triangle were measured slower
// than this on the pure-Go backend.)
func Gram(a *mat.Dense) *mat.Dense {
	g, _ := gramVec(a, nil)
	return g
}

// GramVec returns A Aᵀ (as Gram) and A v for an r×c A and a length-c v, in
// one pass over A: each block's matrix-vector product runs while the block
// is still in cache from its rank-k update.
func GramVec(a *mat.Dense, v []float64) (*mat.Dense, []float64) {
	if r, c := a.Dims(); len(v) != c {
		panic(fmt.Sprintf("linalg.GramVec: v has %d values for a %d×%d matrix", len(v), r, c))
	}
	return gramVec(a, v)
}

func gramVec(a *mat.Dense, v []float64) (*mat.Dense, []float64) {
	r, _ := a.Dims()
	var av []float64
	if v != nil {
		av = make([]float64, r)
	}
	if r == 0 {
		return &mat.Dense{}, av
	}
	out := mat.NewDense(r, r, nil)
	AddGramVec(out, av, a, v)
	MirrorUpper(out)
	return out, av
}

// AddGramVec adds A Aᵀ to the upper triangle of the r×r g (its strict
// lower triangle is not touched) and, when v is not nil, A v to av, for an
// r×c A and a length-c v: GramVec accumulated in place, for callers that
// sum the products of many blocks of columns without allocating. The sum
// is split into fixed groups of columns, each accumulated into its own
// partial, added in group order: the same bits on any number of cores.
func AddGramVec(g *mat.Dense, av []float64, a *mat.Dense, v []float64) {
	AddWhitenedGramVec(g, av, nil, a, v)
}

// whitenCols is the width of the blocks that AddWhitenedGramVec and
// WhitenedAdjoint whiten at a time: small enough for the block to stay in
// cache between its triangular solve and its product, wide enough for both
// to run at full rate.
const whitenCols = 512

// AddWhitenedGramVec is AddGramVec for L⁻¹A instead of A when l (r×r,
// lower triangular, only its lower triangle read) is not nil: it adds
// (L⁻¹A)(L⁻¹A)ᵀ to the upper triangle of g and (L⁻¹A) v to av, whitening
// A block by block (at most whitenCols columns at a time, in a scratch
// block), so that L⁻¹A is never held whole.
func AddWhitenedGramVec(g *mat.Dense, av []float64, l, a *mat.Dense, v []float64) {
	s := NewGramSum(g, av, l)
	s.Add(a, v)
	s.Finish()
}

// A GramSum accumulates AddWhitenedGramVec over many blocks of columns
// given one after another (the chunks of a Kuf too large to hold whole):
// each call's columns are split into groups that narrow towards the end
// (so that the cores finish a call together), group k of every call adds
// into the same partial k, and Finish adds the partials into g in order.
// The groups depend only on the shapes, so the sums have the same bits on
// any number of cores; the partials are added once, not once per call.
type GramSum struct {
	g     *mat.Dense
	av    []float64
	l     *mat.Dense
	r     int
	parts []*[]float64 // partial k+1: r×r upper triangle, then r for A v
}

// NewGramSum returns a GramSum adding into the upper triangle of the r×r
// g and into av (nil when no vector is summed), whitening by the lower
// triangle of l when l is not nil.
func NewGramSum(g *mat.Dense, av []float64, l *mat.Dense) *GramSum {
	r, c := g.Dims()
	if r != c {
		panic(fmt.Sprintf("linalg.GramSum: G is %d×%d, want square", r, c))
	}
	return &GramSum{g: g, av: av, l: l, r: r}
}

// groups returns the bounds of the groups of c columns, at most
// maxPartialFloats of partials in all.
func (s *GramSum) groups(c, step int) []int {
	r := s.r
	if splitCols(r, c, minSumCols) == 1 {
		return []int{0, c}
	}
	b := taperedBlocks(c, step, minTaperCols)
	if most := max(1, maxPartialFloats/(r*r+r)); len(b)-1 > most {
		b = b[:0]
		for k := 0; k <= most; k++ {
			lo, _ := blockBounds(k, most, c)
			b = append(b, lo)
		}
	}
	return b
}

// Add adds (L⁻¹A)(L⁻¹A)ᵀ and, when v is not nil, (L⁻¹A) v for the r×c a
// and length-c v.
func (s *GramSum) Add(a *mat.Dense, v []float64) {
	ar := a.RawMatrix()
	r, c := ar.Rows, ar.Cols
	if r != s.r {
		panic(fmt.Sprintf("linalg.AddGramVec: G is %d×%d, A is %d×%d", s.r, s.r, r, c))
	}
	if v != nil && (len(v) != c || len(s.av) != r) {
		panic(fmt.Sprintf("linalg.AddGramVec: v (%d) and A v (%d) do not match A (%d×%d)", len(v), len(s.av), r, c))
	}
	if r == 0 || c == 0 {
		return
	}
	step := gramChunk
	var tri blas64.Triangular
	if s.l != nil {
		tri = lowerOf("AddWhitenedGramVec", s.l, a)
		step = whitenCols
	}
	bounds := s.groups(c, step)
	groups := len(bounds) - 1
	for len(s.parts) < groups-1 {
		s.parts = append(s.parts, getBuf(r*r+r))
	}
	gr := s.g.RawMatrix()
	partial := func(k int) (blas64.Symmetric, []float64) {
		if k == 0 {
			return blas64.Symmetric{Uplo: blas.Upper, N: r, Stride: gr.Stride, Data: gr.Data}, s.av
		}
		p := *s.parts[k-1]
		return blas64.Symmetric{Uplo: blas.Upper, N: r, Stride: r, Data: p[:r*r]}, p[r*r:]
	}
	widest := 0
	for k := range groups {
		widest = max(widest, bounds[k+1]-bounds[k])
	}
	forBlocks(groups, syrkThreads(), func(k int) {
		glo, ghi := bounds[k], bounds[k+1]
		sym, pv := partial(k)
		// Equal blocks of about step columns: a group of 524 columns is
		// one block, not 512 and a 12-column remainder (a rank-12 update
		// that reads and writes the whole partial for little work).
		nb := max(1, (ghi-glo+step/2)/step)
		var scratch *[]float64
		if s.l != nil {
			scratch = getBuf(r * ((widest + nb - 1) / nb))
			defer putBuf(scratch)
		}
		for b := range nb {
			lo, hi := glo+b*(ghi-glo)/nb, glo+(b+1)*(ghi-glo)/nb
			blk := colView(ar, lo, hi)
			if s.l != nil {
				blk = whitenBlock(tri, blk, *scratch)
			}
			blas64.Syrk(blas.NoTrans, 1, blk, 1, sym)
			if v != nil {
				blas64.Gemv(blas.NoTrans, 1, blk, blas64.Vector{N: hi - lo, Inc: 1, Data: v[lo:hi]}, 1, blas64.Vector{N: r, Inc: 1, Data: pv})
			}
		}
	})
}

// Finish adds the partials into g and av, in order, and returns their
// memory to the pool; the GramSum is empty again afterwards.
func (s *GramSum) Finish() {
	r := s.r
	gr := s.g.RawMatrix()
	for _, b := range s.parts {
		p := *b
		for i := 0; i < r; i++ {
			row, src := gr.Data[i*gr.Stride+i:i*gr.Stride+r], p[i*r+i:(i+1)*r]
			for j, x := range src {
				row[j] += x
			}
		}
		if s.av != nil {
			for i, x := range p[r*r:] {
				s.av[i] += x
			}
		}
		putBuf(b)
	}
	s.parts = s.parts[:0]
}

// whitenBlock copies blk into scratch and returns L⁻¹blk there.
func whitenBlock(tri blas64.Triangular, blk blas64.General, scratch []float64) blas64.General {
	out := blas64.General{Rows: blk.Rows, Cols: blk.Cols, Stride: blk.Cols, Data: scratch[:blk.Rows*blk.Cols]}
	for i := 0; i < blk.Rows; i++ {
		copy(out.Data[i*out.Stride:(i+1)*out.Stride], blk.Data[i*blk.Stride:i*blk.Stride+blk.Cols])
	}
	trsmRec(blas.NoTrans, tri, out)
	return out
}

// WhitenedAdjoint returns T (L⁻¹A) + u vᵀ for r×r T and lower-triangular
// L, an r×c A and optional u (length r) and v (length c): the gradient
// with respect to A of a function of A-first sums, given T = L⁻ᵀ(Ḡ + Ḡᵀ)
// and u = L⁻ᵀ times the gradient with respect to (L⁻¹A)v. Each column block
// is whitened in scratch and multiplied while in cache; blocks are shared
// out over the cores.
func WhitenedAdjoint(t, l, a *mat.Dense, u, v []float64) *mat.Dense {
	r, c := a.Dims()
	adjointShapes("WhitenedAdjoint", "T", t, a, u, v)
	if r == 0 || c == 0 {
		return &mat.Dense{}
	}
	out := mat.NewDense(r, c, nil)
	WhitenedAdjointTo(out, t, l, a, u, v)
	return out
}

// WhitenedAdjointTo is WhitenedAdjoint writing into dst (r×c, overwritten;
// it must not share memory with the other arguments).
func WhitenedAdjointTo(out, t, l, a *mat.Dense, u, v []float64) {
	ar := a.RawMatrix()
	r, c := ar.Rows, ar.Cols
	adjointShapes("WhitenedAdjoint", "T", t, a, u, v)
	if r == 0 || c == 0 {
		return
	}
	adjointShapes("WhitenedAdjoint", "destination", nil, a, nil, nil, out)
	tri := lowerOf("WhitenedAdjoint", l, a)
	trw := t.RawMatrix()
	or := out.RawMatrix()
	var bounds []int
	if splitCols(r, c, minBlockCols) == 1 {
		bounds = []int{0, c}
	} else {
		bounds = taperedBlocks(c, whitenCols, minBlockCols)
	}
	widest := 0
	for b := 1; b < len(bounds); b++ {
		widest = max(widest, bounds[b]-bounds[b-1])
	}
	forBlocks(len(bounds)-1, gemmThreads(), func(b int) {
		lo, hi := bounds[b], bounds[b+1]
		// One size for every block, so that the pool's buffers fit them all.
		scratch := getBuf(r * widest)
		defer putBuf(scratch)
		w := whitenBlock(tri, colView(ar, lo, hi), *scratch)
		blk := colView(or, lo, hi)
		blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, trw, w, 0, blk)
		if u != nil {
			blas64.Ger(1, blas64.Vector{N: r, Inc: 1, Data: u}, blas64.Vector{N: hi - lo, Inc: 1, Data: v[lo:hi]}, blk)
		}
	})
}

// taperedBlocks splits c columns into blocks of at most width columns
// that narrow towards the end, and returns their bounds: counted from the
// end, each block is a third of the columns after it, at least minWidth
// (the first block takes what is left, up to width + minWidth). Taken in
// order from a shared counter, the last blocks are short, so the cores
// finish together: with equal blocks of 512 columns one core idled for
// half a block (about 4 ms at M = 500) at the end of every chunk of Kuf.
func taperedBlocks(c, width, minWidth int) []int {
	var sizes []int // from the end
	for covered := 0; covered < c; {
		w := min(width, max(minWidth, covered/3), c-covered)
		sizes = append(sizes, w)
		covered += w
	}
	if k := len(sizes); k > 1 && sizes[k-1] < minWidth {
		sizes[k-2] += sizes[k-1]
		sizes = sizes[:k-1]
	}
	bounds := []int{0}
	for i := len(sizes) - 1; i >= 0; i-- {
		bounds = append(bounds, bounds[len(bounds)-1]+sizes[i])
	}
	return bounds
}

// bufPools recycle the partial sums and scratch blocks of AddGramVec and
// WhitenedAdjoint, so that a bound summed over many chunks, step after
// step, does not grow the heap. One pool per power-of-two capacity: a
// single pool handing a small buffer to a larger request would drop it
// and allocate, as blocks of several widths ask in turn.
var bufPools [64]sync.Pool

// bufClass is the pool of buffers of capacity 2^bufClass(n) ≥ n.
func bufClass(n int) int { return bits.Len(uint(max(n, 1) - 1)) }

// getBuf returns a zeroed buffer of n floats.
func getBuf(n int) *[]float64 {
	c := bufClass(n)
	if b, ok := bufPools[c].Get().(*[]float64); ok {
		*b = (*b)[:n]
		clear(*b)
		return b
	}
	b := make([]float64, n, 1<<c)
	return &b
}

func putBuf(b *[]float64) { bufPools[bufClass(cap(*b))].Put(b) }

// GramAdjoint returns (Ḡ + Ḡᵀ) A + u vᵀ for an r×r Ḡ, an r×c A, and
// optional u (length r) and v (length c): the gradient with respect to A of
// a function of G = A Aᵀ and A v, given Ḡ and u = the gradient with respect
// to A v. Column blocks of A and of the result are shared out over the
// cores (one dgemm and one rank-1 update per block, so the block of the
// result is still in cache for the update). u and v are nil together or
// not at all.
func GramAdjoint(gbar, a *mat.Dense, u, v []float64) *mat.Dense {
	r, c := a.Dims()
	adjointShapes("GramAdjoint", "Ḡ", gbar, a, u, v)
	if r == 0 || c == 0 {
		return &mat.Dense{}
	}
	s := mat.NewDense(r, r, nil)
	s.Add(gbar, gbar.T())
	out := mat.NewDense(r, c, nil)
	SymAdjointTo(out, s, a, u, v)
	return out
}

// SymAdjointTo writes S A + u vᵀ into dst (r×c, overwritten; it must not
// share memory with the other arguments) for an r×r S: GramAdjoint given
// S = Ḡ + Ḡᵀ.
func SymAdjointTo(out, s, a *mat.Dense, u, v []float64) {
	ar := a.RawMatrix()
	r, c := ar.Rows, ar.Cols
	adjointShapes("GramAdjoint", "Ḡ", s, a, u, v)
	if r == 0 || c == 0 {
		return
	}
	adjointShapes("GramAdjoint", "destination", nil, a, nil, nil, out)
	sr := s.RawMatrix()
	or := out.RawMatrix()
	forColBlocks(r, c, minBlockCols, gemmThreads(), func(lo, hi int) {
		blk := colView(or, lo, hi)
		blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, sr, colView(ar, lo, hi), 0, blk)
		if u != nil {
			blas64.Ger(1, blas64.Vector{N: r, Inc: 1, Data: u}, blas64.Vector{N: hi - lo, Inc: 1, Data: v[lo:hi]}, blk)
		}
	})
}

// adjointShapes panics, naming op, unless the square t (named tname; nil
// for none) is r×r, u and v match the r×c a (both nil or lengths r and c),
// and each dst is r×c.
func adjointShapes(op, tname string, t, a *mat.Dense, u, v []float64, dst ...*mat.Dense) {
	r, c := a.Dims()
	if t != nil {
		if tr, tc := t.Dims(); tr != r || tc != r {
			panic(fmt.Sprintf("linalg.%s: %s is %d×%d, A is %d×%d", op, tname, tr, tc, r, c))
		}
	}
	if (u == nil) != (v == nil) || (u != nil && (len(u) != r || len(v) != c)) {
		panic(fmt.Sprintf("linalg.%s: u (%d) and v (%d) do not match A (%d×%d)", op, len(u), len(v), r, c))
	}
	for _, d := range dst {
		if dr, dc := d.Dims(); dr != r || dc != c {
			panic(fmt.Sprintf("linalg.%s: %s is %d×%d, A is %d×%d", op, tname, dr, dc, r, c))
		}
	}
}

// MirrorUpper copies the upper triangle of the square a into its lower
// triangle.
func MirrorUpper(a *mat.Dense) {
	raw := a.RawMatrix()
	for i := 0; i < raw.Rows; i++ {
		for j := 0; j < i; j++ {
			raw.Data[i*raw.Stride+j] = raw.Data[j*raw.Stride+i]
		}
	}
}
