package ski

import (
	"gonum.org/v1/gonum/dsp/fourier"
)

// toeplitz multiplies by a symmetric n×n Toeplitz matrix T (first column t)
// through its circulant embedding: C is L×L circulant with first column
// c = [t₀ … t_{n−1}, 0 … 0, t_{n−1} … t₁], L ≥ 2n−1, and T v is the first n
// entries of C [v; 0]. C = F⁻¹ diag(λ) F with λ = F c real (c is symmetric),
// so one product costs two real FFTs of length L: O(L log L), never the
// O(n²) of the dense T.
type toeplitz struct {
	n, l int
	eig  []float64 // λ_k, k = 0 … L/2 (the real FFT's half spectrum), divided by L
}

// fftLen is the smallest 2^a·3^b·5^c ≥ m, a length gonum's FFT (FFTPACK)
// handles in O(m log m).
func fftLen(m int) int {
	for l := max(m, 1); ; l++ {
		r := l
		for _, p := range []int{2, 3, 5} {
			for r%p == 0 {
				r /= p
			}
		}
		if r == 1 {
			return l
		}
	}
}

// fftWork is one goroutine's FFT plan and buffers for length l.
type fftWork struct {
	fft  *fourier.FFT
	seq  []float64
	coef []complex128
}

func newFFTWork(l int) *fftWork {
	return &fftWork{fft: fourier.NewFFT(l), seq: make([]float64, l), coef: make([]complex128, l/2+1)}
}

// newToeplitz embeds the symmetric Toeplitz matrix with first column col.
func newToeplitz(col []float64, w *fftWork) *toeplitz {
	n := len(col)
	l := w.fft.Len()
	c := w.seq
	for i := range c {
		c[i] = 0
	}
	copy(c, col)
	for i := 1; i < n; i++ {
		c[l-i] = col[i]
	}
	coef := w.fft.Coefficients(w.coef, c)
	t := &toeplitz{n: n, l: l, eig: make([]float64, len(coef))}
	for k, z := range coef {
		t.eig[k] = real(z) / float64(l)
	}
	return t
}

// mulStrided replaces the n entries v[off], v[off+stride], … by T times them.
func (t *toeplitz) mulStrided(v []float64, off, stride int, w *fftWork) {
	seq := w.seq
	for j := 0; j < t.n; j++ {
		seq[j] = v[off+j*stride]
	}
	for j := t.n; j < t.l; j++ {
		seq[j] = 0
	}
	coef := w.fft.Coefficients(w.coef, seq)
	for k := range coef {
		coef[k] *= complex(t.eig[k], 0)
	}
	seq = w.fft.Sequence(seq, coef)
	for j := 0; j < t.n; j++ {
		v[off+j*stride] = seq[j]
	}
}

// kronMul replaces g (length Π sizes, row-major, last dimension fastest) by
// (⊗_d T_d) g, applying each factor along its own axis: for a grid of M
// points and n_d points per axis this costs O(M Σ_d log n_d).
func kronMul(g []float64, ts []*toeplitz, work []*fftWork) {
	m := len(g)
	inner := m
	for d, t := range ts {
		inner /= t.n
		outer := m / (inner * t.n)
		for o := 0; o < outer; o++ {
			base := o * t.n * inner
			for i := 0; i < inner; i++ {
				t.mulStrided(g, base+i, inner, work[d])
			}
		}
	}
}
