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
// New operations outside this package are written with Custom, which takes
// the forward value and a function mapping the output gradient to one
// gradient per input.
//
// A Tape is not safe for concurrent use; individual operations may use
// several goroutines internally (gonum's BLAS does).
package ad
