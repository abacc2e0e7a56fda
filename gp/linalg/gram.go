package linalg

import (
	"runtime"
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/blas/gonum"
	"gonum.org/v1/gonum/mat"
)

// gramChunk is the number of columns of A per dsyrk call on the pure-Go
// backend: small enough to spread the work over the cores, large enough to
// keep each call efficient.
const gramChunk = 4096

// Gram returns A Aᵀ (exactly symmetric) for an r×c matrix A by rank-k
// updates (dsyrk, half the work of dgemm). An optimised BLAS gets one call,
// which it threads itself; gonum's dsyrk is serial, so there column chunks
// of A are accumulated on every core and summed. (dgemm tiles over the upper
// block triangle were measured slower than this on the pure-Go backend.)
func Gram(a *mat.Dense) *mat.Dense {
	ar := a.RawMatrix()
	r, c := ar.Rows, ar.Cols
	if r == 0 {
		return &mat.Dense{}
	}
	out := mat.NewDense(r, r, nil)
	if c == 0 {
		return out
	}
	raw := out.RawMatrix()
	sym := func(d []float64) blas64.Symmetric {
		return blas64.Symmetric{Uplo: blas.Upper, N: r, Stride: r, Data: d}
	}
	_, native := blas64.Implementation().(gonum.Implementation)
	workers := min(runtime.GOMAXPROCS(0), (c+gramChunk-1)/gramChunk)
	if !native || workers < 2 {
		blas64.Syrk(blas.NoTrans, 1, ar, 0, sym(raw.Data))
		mirrorUpper(raw)
		return out
	}
	partial := make([][]float64, workers)
	partial[0] = raw.Data
	var wg sync.WaitGroup
	for w := range workers {
		if w > 0 {
			partial[w] = make([]float64, r*r)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for lo := w * gramChunk; lo < c; lo += workers * gramChunk {
				hi := min(lo+gramChunk, c)
				chunk := blas64.General{Rows: r, Cols: hi - lo, Stride: ar.Stride, Data: ar.Data[lo:]}
				blas64.Syrk(blas.NoTrans, 1, chunk, 1, sym(partial[w]))
			}
		}()
	}
	wg.Wait()
	for _, p := range partial[1:] {
		for i := 0; i < r; i++ {
			row, src := raw.Data[i*r+i:(i+1)*r], p[i*r+i:(i+1)*r]
			for j, v := range src {
				row[j] += v
			}
		}
	}
	mirrorUpper(raw)
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
