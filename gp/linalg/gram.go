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
const (
	// minSumCols is the narrowest block of a rank-k update (dsyrk), whose
	// block width is its summed dimension k: below it the call runs below
	// its full rate.
	minSumCols = 256
	// minBlockCols is the narrowest block of a product or solve whose block
	// width is only a free dimension (dgemm's n, dtrsm's right-hand sides).
	minBlockCols = 64
	// gramChunk bounds a block so that the goroutines can balance their
	// load on a shared (busy) machine by taking several blocks each.
	gramChunk = 4096
	// minSplitFlops is the work (rows²·cols) below which goroutines cost
	// more than they save.
	minSplitFlops = 1 << 21
)

// procs is the number of cores the split plans for; a variable so that the
// tests can exercise the split with more goroutines than the machine has.
var procs = func() int { return runtime.GOMAXPROCS(0) }

// colBlocks plans the split of c columns of a problem with r rows for a
// BLAS routine that keeps threads cores busy, in blocks at least minWidth
// wide: the number of goroutines and the block width they take blocks of.
func colBlocks(r, c, threads, minWidth int) (workers, width int) {
	workers = min(procs()/max(threads, 1), c/minWidth)
	if workers < 2 || float64(r)*float64(r)*float64(c) < minSplitFlops {
		return 1, c
	}
	width = min(max((c+4*workers-1)/(4*workers), minWidth), gramChunk)
	return workers, width
}

// forBlocks runs f(w, lo, hi) over the column blocks [lo, hi) of width
// width covering [0, c) on workers goroutines, w being the goroutine's
// index. Blocks are taken from a shared counter, so a goroutine slowed by
// other processes takes fewer of them.
func forBlocks(c, workers, width int, f func(w, lo, hi int)) {
	if workers == 1 {
		f(0, 0, c)
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				lo := int(next.Add(int64(width))) - width
				if lo >= c {
					return
				}
				f(w, lo, min(lo+width, c))
			}
		}()
	}
	wg.Wait()
}

// colView is columns [lo, hi) of the row-major raw matrix, without copying.
func colView(raw blas64.General, lo, hi int) blas64.General {
	return blas64.General{Rows: raw.Rows, Cols: hi - lo, Stride: raw.Stride, Data: raw.Data[lo:]}
}

// Gram returns A Aᵀ (exactly symmetric) for an r×c matrix A by rank-k
// updates (dsyrk, half the work of dgemm). Column blocks of A are
// accumulated on every core into one r×r partial per goroutine, then
// summed. (dgemm tiles over the upper block triangle were measured slower
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
	ar := a.RawMatrix()
	r, c := ar.Rows, ar.Cols
	var av []float64
	if v != nil {
		av = make([]float64, r)
	}
	if r == 0 {
		return &mat.Dense{}, av
	}
	out := mat.NewDense(r, r, nil)
	if c == 0 {
		return out, av
	}
	raw := out.RawMatrix()
	sym := func(d []float64) blas64.Symmetric {
		return blas64.Symmetric{Uplo: blas.Upper, N: r, Stride: r, Data: d}
	}
	workers, width := colBlocks(r, c, syrkThreads(), minSumCols)
	partial := make([][]float64, workers)
	pvec := make([][]float64, workers)
	partial[0], pvec[0] = raw.Data, av
	for w := 1; w < workers; w++ {
		partial[w] = make([]float64, r*r)
		if v != nil {
			pvec[w] = make([]float64, r)
		}
	}
	forBlocks(c, workers, width, func(w, lo, hi int) {
		blk := colView(ar, lo, hi)
		blas64.Syrk(blas.NoTrans, 1, blk, 1, sym(partial[w]))
		if v != nil {
			blas64.Gemv(blas.NoTrans, 1, blk, blas64.Vector{N: hi - lo, Inc: 1, Data: v[lo:hi]}, 1, blas64.Vector{N: r, Inc: 1, Data: pvec[w]})
		}
	})
	for w, p := range partial[1:] {
		for i := 0; i < r; i++ {
			row, src := raw.Data[i*r+i:(i+1)*r], p[i*r+i:(i+1)*r]
			for j, x := range src {
				row[j] += x
			}
		}
		for i, x := range pvec[w+1] {
			av[i] += x
		}
	}
	mirrorUpper(raw)
	return out, av
}

// GramAdjoint returns (Ḡ + Ḡᵀ) A + u vᵀ for an r×r Ḡ, an r×c A, and
// optional u (length r) and v (length c): the gradient with respect to A of
// a function of G = A Aᵀ and A v, given Ḡ and u = the gradient with respect
// to A v. Column blocks of A and of the result are shared out over the
// cores (one dgemm and one rank-1 update per block, so the block of the
// result is still in cache for the update). u and v are nil together or
// not at all.
func GramAdjoint(gbar, a *mat.Dense, u, v []float64) *mat.Dense {
	ar := a.RawMatrix()
	r, c := ar.Rows, ar.Cols
	if gr, gc := gbar.Dims(); gr != r || gc != r {
		panic(fmt.Sprintf("linalg.GramAdjoint: Ḡ is %d×%d, A is %d×%d", gr, gc, r, c))
	}
	if (u == nil) != (v == nil) || (u != nil && (len(u) != r || len(v) != c)) {
		panic(fmt.Sprintf("linalg.GramAdjoint: u (%d) and v (%d) do not match A (%d×%d)", len(u), len(v), r, c))
	}
	if r == 0 || c == 0 {
		return &mat.Dense{}
	}
	s := mat.NewDense(r, r, nil)
	s.Add(gbar, gbar.T())
	sr := s.RawMatrix()
	out := mat.NewDense(r, c, nil)
	or := out.RawMatrix()
	workers, width := colBlocks(r, c, gemmThreads(), minBlockCols)
	forBlocks(c, workers, width, func(_, lo, hi int) {
		blk := colView(or, lo, hi)
		blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, sr, colView(ar, lo, hi), 0, blk)
		if u != nil {
			blas64.Ger(1, blas64.Vector{N: r, Inc: 1, Data: u}, blas64.Vector{N: hi - lo, Inc: 1, Data: v[lo:hi]}, blk)
		}
	})
	return out
}

// mirrorUpper copies the upper triangle of the square raw into its lower
// triangle.
func mirrorUpper(raw blas64.General) {
	for i := 0; i < raw.Rows; i++ {
		for j := 0; j < i; j++ {
			raw.Data[i*raw.Stride+j] = raw.Data[j*raw.Stride+i]
		}
	}
}
