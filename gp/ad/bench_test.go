package ad

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/blas/blas64"
)

func TestBLASBackend(t *testing.T) {
	impl := fmt.Sprintf("%T", blas64.Implementation())
	if isNetlib := strings.Contains(impl, "netlib"); isNetlib != (BLASBackend() == "openblas") {
		t.Errorf("BLASBackend() = %q but blas64 uses %s", BLASBackend(), impl)
	}
	t.Logf("BLAS backend %s (%s)", BLASBackend(), impl)
}

func BenchmarkMatMul(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	x, y := draw(rng, n(1000, 500)), draw(rng, n(500, 1000))
	b.Run("forward", func(b *testing.B) {
		for b.Loop() {
			t := NewTape()
			MatMul(t.Const(x), t.Const(y))
		}
	})
	b.Run("forward+backward", func(b *testing.B) {
		w := draw(rng, n(1000, 1000))
		for b.Loop() {
			t := NewTape()
			t.Backward(Dot(MatMul(t.Var(x), t.Var(y)), t.Const(w)))
		}
	})
}

func BenchmarkCholesky(b *testing.B) {
	rng := rand.New(rand.NewPCG(2, 2))
	a := draw(rng, pd(1000))
	w := draw(rng, n(1000, 1000))
	b.Run("forward", func(b *testing.B) {
		for b.Loop() {
			t := NewTape()
			if _, err := Cholesky(t.Const(a)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("forward+backward", func(b *testing.B) {
		for b.Loop() {
			t := NewTape()
			l, err := Cholesky(t.Var(a))
			if err != nil {
				b.Fatal(err)
			}
			t.Backward(Dot(l, t.Const(w)))
		}
	})
}

func BenchmarkSqDist(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 3))
	x, z := draw(rng, n(10000, 8)), draw(rng, n(500, 8))
	w := draw(rng, n(10000, 500))
	b.Run("forward", func(b *testing.B) {
		for b.Loop() {
			t := NewTape()
			SqDist(t.Const(x), t.Const(z))
		}
	})
	b.Run("forward+backward", func(b *testing.B) {
		for b.Loop() {
			t := NewTape()
			t.Backward(Dot(SqDist(t.Var(x), t.Var(z)), t.Const(w)))
		}
	})
}

// BenchmarkSolveLower is the O(n²k) triangular solve used for L⁻¹Kuf.
func BenchmarkSolveLower(b *testing.B) {
	rng := rand.New(rand.NewPCG(4, 4))
	l := draw(rng, lf(500))
	kuf := draw(rng, n(500, 5000))
	for b.Loop() {
		t := NewTape()
		SolveLower(t.Const(l), t.Const(kuf))
	}
}
