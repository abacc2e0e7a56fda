package ad

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp/linalg"
)

// Cholesky returns the lower-triangular factor L of the symmetric positive
// definite a (L Lᵀ = ½(a + aᵀ); zeros above the diagonal). A matrix that is
// not positive definite returns an error wrapping
// linalg.ErrNotPositiveDefinite. The gradient with respect to a is
// symmetric.
func Cholesky(a *Node) (*Node, error) {
	mustSquare("Cholesky", a)
	l, err := linalg.Cholesky(a.val)
	if err != nil {
		return nil, err
	}
	return cholNode(l, a), nil
}

// CholeskyJitter is Cholesky with escalating diagonal jitter on failure: it
// tries the plain factorisation, then adds 1e-8·mean(diag a) to the
// diagonal, multiplying by ten on each of at most maxTries retries. It
// returns the factor and the jitter added. The jitter is treated as a
// constant in the backward pass.
func CholeskyJitter(a *Node, maxTries int) (*Node, float64, error) {
	mustSquare("CholeskyJitter", a)
	l, jitter, err := linalg.CholeskyJitter(a.val, maxTries)
	if err != nil {
		return nil, 0, err
	}
	return cholNode(l, a), jitter, nil
}

// cholNode records L = chol(A) with the symmetric backward pass of Murray
// (2016): Ā = sym(L⁻ᵀ Φ(Lᵀ L̄) L⁻¹), where Φ keeps the lower triangle and
// halves the diagonal, and sym(S) = ½(S + Sᵀ).
func cholNode(l *mat.Dense, a *Node) *Node {
	return Custom(l, func(g *mat.Dense) []*mat.Dense {
		n, _ := l.Dims()
		// P = Φ(Lᵀ tril(L̄)): only the lower triangle of L̄ is a real input.
		p := linalg.MulLowerT(l, tril(mat.DenseCopyOf(g)))
		phi(p)
		// S = L⁻ᵀ P L⁻¹ and Sᵀ = L⁻ᵀ (L⁻ᵀ P)ᵀ; as only sym(S) = sym(Sᵀ) is
		// needed, both solves act on columns (independent, parallel).
		y := linalg.SolveLowerT(l, p)
		st := linalg.SolveLowerT(l, y.T())
		raw := st.RawMatrix()
		for i := 0; i < n; i++ {
			for j := 0; j < i; j++ {
				s := 0.5 * (raw.Data[i*raw.Stride+j] + raw.Data[j*raw.Stride+i])
				raw.Data[i*raw.Stride+j] = s
				raw.Data[j*raw.Stride+i] = s
			}
		}
		return []*mat.Dense{st}
	}, a)
}

// phi keeps the lower triangle of the square m and halves its diagonal, in
// place.
func phi(m *mat.Dense) {
	tril(m)
	n, _ := m.Dims()
	for i := 0; i < n; i++ {
		m.Set(i, i, 0.5*m.At(i, i))
	}
}

func solveShapes(op string, l, b *Node) {
	n, c := l.Dims()
	br, _ := b.Dims()
	if n != c || br != n {
		panic(fmt.Sprintf("ad.%s: factor %s and right-hand side %s do not match", op, shapeOf(l), shapeOf(b)))
	}
}

// SolveLower returns L⁻¹B for lower-triangular L (only its lower triangle
// is read), by forward substitution.
func SolveLower(l, b *Node) *Node {
	solveShapes("SolveLower", l, b)
	x := linalg.SolveLower(l.val, b.val)
	return Custom(x, func(g *mat.Dense) []*mat.Dense {
		// B̄ = L⁻ᵀ X̄, L̄ = −tril(B̄ Xᵀ).
		gb := linalg.SolveLowerT(l.val, g)
		var gl *mat.Dense
		if l.needsGrad {
			gl = gemm(gb, x.T())
			gl.Scale(-1, gl)
			tril(gl)
		}
		return []*mat.Dense{gl, gb}
	}, l, b)
}

// SolveLowerT returns L⁻ᵀB for lower-triangular L, by back substitution.
func SolveLowerT(l, b *Node) *Node {
	solveShapes("SolveLowerT", l, b)
	x := linalg.SolveLowerT(l.val, b.val)
	return Custom(x, func(g *mat.Dense) []*mat.Dense {
		// B̄ = L⁻¹ X̄, L̄ = −tril(X B̄ᵀ).
		gb := linalg.SolveLower(l.val, g)
		var gl *mat.Dense
		if l.needsGrad {
			gl = gemm(x, gb.T())
			gl.Scale(-1, gl)
			tril(gl)
		}
		return []*mat.Dense{gl, gb}
	}, l, b)
}

// CholSolve returns (L Lᵀ)⁻¹B for a Cholesky factor L.
func CholSolve(l, b *Node) *Node {
	solveShapes("CholSolve", l, b)
	y := linalg.SolveLower(l.val, b.val)
	x := linalg.SolveLowerT(l.val, y)
	return Custom(x, func(g *mat.Dense) []*mat.Dense {
		// With Y = L⁻¹B and X = L⁻ᵀY: Ȳ = L⁻¹X̄, B̄ = L⁻ᵀȲ,
		// L̄ = −tril(X Ȳᵀ + B̄ Yᵀ).
		gy := linalg.SolveLower(l.val, g)
		gb := linalg.SolveLowerT(l.val, gy)
		var gl *mat.Dense
		if l.needsGrad {
			gl = gemm(x, gy.T())
			var t mat.Dense
			t.Mul(gb, y.T())
			gl.Add(gl, &t)
			gl.Scale(-1, gl)
			tril(gl)
		}
		return []*mat.Dense{gl, gb}
	}, l, b)
}

// LogDetChol returns log det(L Lᵀ) = 2 Σ log L_ii for a Cholesky factor L
// as a 1×1 node.
func LogDetChol(l *Node) *Node {
	n := mustSquare("LogDetChol", l)
	return Custom(scalar(linalg.LogDetChol(l.val)), func(g *mat.Dense) []*mat.Dense {
		gl := mat.NewDense(n, n, nil)
		s := 2 * g.At(0, 0)
		for i := 0; i < n; i++ {
			gl.Set(i, i, s/l.val.At(i, i))
		}
		return []*mat.Dense{gl}
	}, l)
}
