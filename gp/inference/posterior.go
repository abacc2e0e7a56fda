package inference

import (
	"fmt"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
	"sgplab/gp/features"
	"sgplab/gp/kernels"
)

// Posterior is a Gaussian posterior over f expressed through the
// covariances k(x) (M×1) between f(x) and M basis variables:
//
//	mean(x) = k(x)ᵀ α,   var(x) = k(x, x) − ‖A k(x)‖² + ‖B k(x)‖².
//
// Writing the variance as a difference of two squared norms (rather than
// through one M×M matrix) keeps each term non-negative and well conditioned.
type Posterior struct {
	Alpha *mat.Dense // M×1
	A     *mat.Dense // M×M; nil drops the term
	B     *mat.Dense // R×M; nil drops the term
}

// Marginals returns the mean and variance of f at the inputs whose
// covariances with the basis variables are the columns of kux (M×n) and
// whose prior variances are kdiag (length n).
func (p *Posterior) Marginals(kux *mat.Dense, kdiag []float64) (mean, variance []float64, err error) {
	m, n := kux.Dims()
	if ar, _ := p.Alpha.Dims(); ar != m {
		return nil, nil, fmt.Errorf("inference: posterior has %d basis variables but Kux has %d rows", ar, m)
	}
	if len(kdiag) != n {
		return nil, nil, fmt.Errorf("inference: Kux has %d columns but %d prior variances were given", n, len(kdiag))
	}
	mean = make([]float64, n)
	mu := mat.NewVecDense(n, mean)
	mu.MulVec(kux.T(), p.Alpha.ColView(0))
	variance = append([]float64(nil), kdiag...)
	subtractColNorms := func(f *mat.Dense, sign float64) {
		r, _ := f.Dims()
		tmp := mat.NewDense(r, n, nil)
		tmp.Mul(f, kux)
		for i := 0; i < r; i++ {
			for j, v := range tmp.RawRowView(i) {
				variance[j] -= sign * v * v
			}
		}
	}
	if p.A != nil {
		subtractColNorms(p.A, 1)
	}
	if p.B != nil {
		subtractColNorms(p.B, -1)
	}
	return mean, variance, nil
}

// Binder records the kernel and the basis feature on a tape, for Predict.
type Binder func(t *ad.Tape) (kernels.Bound, features.Bound)

// PredictChunk is the number of test inputs Predict handles at a time.
const PredictChunk = 2048

// Predict returns the latent mean and variance at the rows of x. It works in
// chunks of PredictChunk rows, so memory is O(M·PredictChunk).
func (p *Posterior) Predict(x *mat.Dense, bind Binder) (mean, variance []float64, err error) {
	n, d := x.Dims()
	mean = make([]float64, 0, n)
	variance = make([]float64, 0, n)
	for lo := 0; lo < n; lo += PredictChunk {
		hi := min(lo+PredictChunk, n)
		xc := mat.DenseCopyOf(x.Slice(lo, hi, 0, d))
		t := ad.NewTape()
		k, f := bind(t)
		xn := t.Const(xc)
		kux := f.Kuf(k, xn).Value()
		kd := k.Diag(xn).Value()
		kdiag := make([]float64, hi-lo)
		for i := range kdiag {
			kdiag[i] = kd.At(i, 0)
		}
		mc, vc, err := p.Marginals(kux, kdiag)
		if err != nil {
			return nil, nil, err
		}
		mean = append(mean, mc...)
		variance = append(variance, vc...)
	}
	return mean, variance, nil
}

// solveLower returns L⁻¹B (or L⁻ᵀB when trans) for lower-triangular L.
func solveLower(l, b *mat.Dense, trans bool) *mat.Dense {
	n, _ := l.Dims()
	x := mat.DenseCopyOf(b)
	tA := blas.NoTrans
	if trans {
		tA = blas.Trans
	}
	lr := l.RawMatrix()
	blas64.Trsm(blas.Left, tA, 1,
		blas64.Triangular{Uplo: blas.Lower, Diag: blas.NonUnit, N: n, Stride: lr.Stride, Data: lr.Data},
		x.RawMatrix())
	return x
}

// invLower returns L⁻¹ for lower-triangular L.
func invLower(l *mat.Dense) *mat.Dense {
	n, _ := l.Dims()
	id := mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		id.Set(i, i, 1)
	}
	return solveLower(l, id, false)
}
