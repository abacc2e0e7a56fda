package linalg

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
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
	workers := min(n, procs()/max(threads, 1))
	if workers < 2 {
		for b := range n {
			f(b)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				b := int(next.Add(1)) - 1
				if b >= n {
					return
				}
				f(b)
			}
		}()
	}
	wg.Wait()
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
	ar := a.RawMatrix()
	r, c := ar.Rows, ar.Cols
	if gr, gc := g.Dims(); gr != r || gc != r {
		panic(fmt.Sprintf("linalg.AddGramVec: G is %d×%d, A is %d×%d", gr, gc, r, c))
	}
	if v != nil && (len(v) != c || len(av) != r) {
		panic(fmt.Sprintf("linalg.AddGramVec: v (%d) and A v (%d) do not match A (%d×%d)", len(v), len(av), r, c))
	}
	if r == 0 || c == 0 {
		return
	}
	gr := g.RawMatrix()
	groups := min(splitCols(r, c, minSumCols), max(1, maxPartialFloats/(r*r)))
	// Group 0 accumulates straight into g; the others into partials.
	partial := make([]blas64.Symmetric, groups)
	pvec := make([][]float64, groups)
	partial[0] = blas64.Symmetric{Uplo: blas.Upper, N: r, Stride: gr.Stride, Data: gr.Data}
	pvec[0] = av
	var bufs []*[]float64
	for k := 1; k < groups; k++ {
		b := getBuf(r*r + r)
		bufs = append(bufs, b)
		partial[k] = blas64.Symmetric{Uplo: blas.Upper, N: r, Stride: r, Data: (*b)[:r*r]}
		pvec[k] = (*b)[r*r:]
	}
	step := gramChunk
	var tri blas64.Triangular
	if l != nil {
		tri = lowerOf("AddWhitenedGramVec", l, a)
		step = whitenCols
	}
	forBlocks(groups, syrkThreads(), func(k int) {
		glo, ghi := blockBounds(k, groups, c)
		var scratch *[]float64
		if l != nil {
			scratch = getBuf(r * min(step, ghi-glo))
			defer putBuf(scratch)
		}
		for lo := glo; lo < ghi; lo += step {
			hi := min(lo+step, ghi)
			blk := colView(ar, lo, hi)
			if l != nil {
				blk = whitenBlock(tri, blk, *scratch)
			}
			blas64.Syrk(blas.NoTrans, 1, blk, 1, partial[k])
			if v != nil {
				blas64.Gemv(blas.NoTrans, 1, blk, blas64.Vector{N: hi - lo, Inc: 1, Data: v[lo:hi]}, 1, blas64.Vector{N: r, Inc: 1, Data: pvec[k]})
			}
		}
	})
	for k := 1; k < groups; k++ {
		p := partial[k].Data
		for i := 0; i < r; i++ {
			row, src := gr.Data[i*gr.Stride+i:i*gr.Stride+r], p[i*r+i:(i+1)*r]
			for j, x := range src {
				row[j] += x
			}
		}
		if v != nil {
			for i, x := range pvec[k] {
				av[i] += x
			}
		}
	}
	for _, b := range bufs {
		putBuf(b)
	}
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
	forColBlocks(r, c, minBlockCols, gemmThreads(), func(glo, ghi int) {
		scratch := getBuf(r * min(whitenCols, ghi-glo))
		defer putBuf(scratch)
		for lo := glo; lo < ghi; lo += whitenCols {
			hi := min(lo+whitenCols, ghi)
			w := whitenBlock(tri, colView(ar, lo, hi), *scratch)
			blk := colView(or, lo, hi)
			blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, trw, w, 0, blk)
			if u != nil {
				blas64.Ger(1, blas64.Vector{N: r, Inc: 1, Data: u}, blas64.Vector{N: hi - lo, Inc: 1, Data: v[lo:hi]}, blk)
			}
		}
	})
}

// bufPool recycles the partial sums and scratch blocks of AddGramVec and
// WhitenedAdjoint, so that a bound summed
// over many chunks, step after step, does not grow the heap.
var bufPool sync.Pool

// getBuf returns a zeroed buffer of n floats.
func getBuf(n int) *[]float64 {
	if b, ok := bufPool.Get().(*[]float64); ok && cap(*b) >= n {
		*b = (*b)[:n]
		clear(*b)
		return b
	}
	b := make([]float64, n)
	return &b
}

func putBuf(b *[]float64) { bufPool.Put(b) }

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
