// Package ad is reverse-mode automatic differentiation on dense float64
// matrices (gonum mat.Dense).
//
// A Tape records the operations of one evaluation. Leaves are constants
// (Tape.Const) or variables (Tape.Var); every operation returns a new *Node
// whose value is computed eagerly. Tape.Backward(out) propagates d out / d node
// for a 1×1 output to every node that depends on a variable; Node.Grad then
// holds the gradient, shaped as the node's value.
//
// Subgraphs that depend only on constants carry no backward work, so a
// θ-independent product (for example Φᵀ Φ of fixed features) costs nothing
// on the backward pass.
//
// The operations are grouped as
//
//   - elementwise: Add Sub Mul Div Neg Scale AddConst, the broadcasts
//     MulScalar DivScalar AddScalar MulColVec MulRowVec, and Exp Log Sqrt
//     Square Softplus Sin Cos Pow;
//   - reductions: Sum SumSquares RowSums ColSums ColSqNorms Dot Trace Diag;
//   - shape: T HCat VCat Slice DiagMat AddDiag Tril;
//   - products: MatMul MatMulTA MatMulTB (dgemm with transpose flags; dsyrk
//     for a Gram matrix such as MatMulTA(a, a));
//   - linear algebra: Cholesky CholeskyJitter SolveLower SolveLowerT
//     CholSolve LogDetChol (forward passes in package linalg);
//   - distances: SqDist.
//
// Shape mismatches are programmer errors and panic with the operation's name
// and both shapes; a matrix that is not positive definite is data-dependent
// and returns an error.
//
// New operations outside this package are written with Custom, which takes
// the forward value and a function mapping the output gradient to one
// gradient per input. CheckGradient compares any such operation, or a whole
// objective, with central finite differences in tests.
//
// Dense linear algebra uses gonum's pure-Go BLAS by default; building with
// -tags openblas (and CGO_LDFLAGS=-lopenblas) routes it through OpenBLAS
// for every package in the binary. BLASBackend reports which is in use.
//
// Tape.TimeOps with an OpTimes adds up each operation's wall time by the
// site that recorded it, forward and backward: where a step's time goes
// when its operations spread their work over goroutines.
//
// A Tape is not safe for concurrent use; individual operations may use
// several goroutines internally (gonum's BLAS does).
package ad
