package inference

import (
	"runtime"
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
)

// gramChunk is the number of columns of a per syrk call; small enough to
// split work across cores, large enough to keep BLAS efficient.
const gramChunk = 4096

// gram records G = a aᵀ for a wide a (M×N), the O(NM²) step of the collapsed
// bound. The forward pass runs rank-k updates over column chunks of a on
// every core; the adjoint is ā = (Ḡ + Ḡᵀ) a, one product instead of the two
// a generic a·bᵀ needs.
func gram(a *ad.Node) *ad.Node {
	av := a.Value()
	m, n := av.Dims()
	ar := av.RawMatrix()
	workers := min(runtime.GOMAXPROCS(0), (n+gramChunk-1)/gramChunk)
	partial := make([]*mat.Dense, workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		partial[w] = mat.NewDense(m, m, nil)
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			out := partial[w].RawMatrix()
			sym := blas64.Symmetric{Uplo: blas.Upper, N: m, Stride: out.Stride, Data: out.Data}
			for lo := w * gramChunk; lo < n; lo += workers * gramChunk {
				hi := min(lo+gramChunk, n)
				chunk := blas64.General{Rows: m, Cols: hi - lo, Stride: ar.Stride, Data: ar.Data[lo:]}
				blas64.Syrk(blas.NoTrans, 1, chunk, 1, sym)
			}
		}(w)
	}
	wg.Wait()
	g := partial[0]
	for _, p := range partial[1:] {
		g.Add(g, p)
	}
	raw := g.RawMatrix()
	for i := 0; i < m; i++ {
		for j := 0; j < i; j++ {
			raw.Data[i*raw.Stride+j] = raw.Data[j*raw.Stride+i]
		}
	}
	return ad.Custom(g, func(gbar *mat.Dense) []*mat.Dense {
		s := mat.NewDense(m, m, nil)
		s.Add(gbar, gbar.T())
		out := mat.NewDense(m, n, nil)
		out.Mul(s, av)
		return []*mat.Dense{out}
	}, a)
}
