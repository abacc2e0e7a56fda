package ad

import (
	"fmt"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"sgplab/gp/linalg"
)

// gemm returns op(a)·op(b) as a new matrix; transposes are passed to dgemm
// as flags, so none is formed, and a large product is shared out over the
// cores (linalg.MulTo).
func gemm(t *Tape, a, b mat.Matrix) *mat.Dense {
	r, _ := a.Dims()
	_, c := b.Dims()
	out := t.NewDenseNonZeroed(r, c)
	linalg.MulTo(out, a, b)
	return out
}

func mulShapes(op string, a, b *Node, ak, bk int) {
	if ak != bk {
		panic(fmt.Sprintf("ad.%s: inner dimensions of %s and %s do not match", op, shapeOf(a), shapeOf(b)))
	}
}

// MatMul returns the matrix product a·b.
func MatMul(a, b *Node) *Node {
	_, ac := a.Dims()
	br, _ := b.Dims()
	mulShapes("MatMul", a, b, ac, br)
	return Custom(gemm(a.tape, a.val, b.val), func(g *mat.Dense) []*mat.Dense {
		var ga, gb *mat.Dense
		if a.needsGrad {
			ga = gemm(a.tape, g, b.val.T())
		}
		if b.needsGrad {
			gb = gemm(a.tape, a.val.T(), g)
		}
		return []*mat.Dense{ga, gb}
	}, a, b)
}

// MatMulTA returns aᵀ·b. MatMulTA(a, a) uses the symmetric rank-k update.
func MatMulTA(a, b *Node) *Node {
	ar, _ := a.Dims()
	br, _ := b.Dims()
	mulShapes("MatMulTA", a, b, ar, br)
	if a == b {
		// d(aᵀa) = daᵀa + aᵀda, so ā = a(Ḡ + Ḡᵀ) in one product.
		return Custom(gram(a.tape, a.val, blas.Trans), func(g *mat.Dense) []*mat.Dense {
			return []*mat.Dense{gemm(a.tape, a.val, symSum(a.tape, g)), nil}
		}, a, b)
	}
	return Custom(gemm(a.tape, a.val.T(), b.val), func(g *mat.Dense) []*mat.Dense {
		var ga, gb *mat.Dense
		if a.needsGrad {
			ga = gemm(a.tape, b.val, g.T())
		}
		if b.needsGrad {
			gb = gemm(a.tape, a.val, g)
		}
		return []*mat.Dense{ga, gb}
	}, a, b)
}

// MatMulTB returns a·bᵀ. MatMulTB(a, a) uses the symmetric rank-k update.
func MatMulTB(a, b *Node) *Node {
	_, ac := a.Dims()
	_, bc := b.Dims()
	mulShapes("MatMulTB", a, b, ac, bc)
	if a == b {
		// ā = (Ḡ + Ḡᵀ)a in one product.
		return Custom(linalg.Gram(a.val), func(g *mat.Dense) []*mat.Dense {
			return []*mat.Dense{gemm(a.tape, symSum(a.tape, g), a.val), nil}
		}, a, b)
	}
	return Custom(gemm(a.tape, a.val, b.val.T()), func(g *mat.Dense) []*mat.Dense {
		var ga, gb *mat.Dense
		if a.needsGrad {
			ga = gemm(a.tape, g, b.val)
		}
		if b.needsGrad {
			gb = gemm(a.tape, g.T(), a.val)
		}
		return []*mat.Dense{ga, gb}
	}, a, b)
}

// symSum returns g + gᵀ for a square g.
func symSum(t *Tape, g *mat.Dense) *mat.Dense {
	n, _ := g.Dims()
	s := t.NewDenseNonZeroed(n, n)
	s.Add(g, g.T())
	return s
}

// gram returns aᵀa (tr = Trans) or aaᵀ (tr = NoTrans) via dsyrk, which
// does half the work of dgemm and gives an exactly symmetric result.
func gram(t *Tape, a *mat.Dense, tr blas.Transpose) *mat.Dense {
	r, c := a.Dims()
	n := r
	if tr == blas.Trans {
		n = c
	}
	out := t.NewDenseNonZeroed(n, n)
	raw := out.RawMatrix()
	blas64.Syrk(tr, 1, a.RawMatrix(), 0, blas64.Symmetric{Uplo: blas.Upper, N: n, Stride: raw.Stride, Data: raw.Data})
	for i := 0; i < n; i++ {
		for j := 0; j < i; j++ {
			raw.Data[i*raw.Stride+j] = raw.Data[j*raw.Stride+i]
		}
	}
	return out
}
