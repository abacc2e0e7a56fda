package ad

import (
	"fmt"
	"time"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// Tape records the nodes of one evaluation in creation order, which is a
// topological order of the computation graph.
type Tape struct {
	nodes []*Node
	arena arena
	ops   *OpTimes // nil unless TimeOps
}

// NewTape returns an empty tape.
func NewTape() *Tape { return &Tape{} }

// Node is a matrix-valued value on a tape.
type Node struct {
	tape      *Tape
	val       *mat.Dense
	grad      *mat.Dense
	inputs    []*Node
	backward  func(g *mat.Dense) []*mat.Dense
	needsGrad bool
	// gradShared marks a grad that is a backward function's result taken
	// over without copying: it may also be another node's grad (a backward
	// function may return its incoming gradient, or one matrix for several
	// inputs), so it is copied before it is first added to.
	gradShared bool
	site       string // the recording site, when the tape times its operations
}

// Const records m as a constant leaf. m is not copied: the caller must not
// modify it while the tape is in use.
func (t *Tape) Const(m *mat.Dense) *Node {
	n := &Node{tape: t, val: m}
	t.record(n)
	return n
}

// Var records m as a variable leaf whose gradient is wanted. m is not copied.
func (t *Tape) Var(m *mat.Dense) *Node {
	n := &Node{tape: t, val: m, needsGrad: true}
	t.record(n)
	return n
}

// Scalar records a 1×1 constant.
func (t *Tape) Scalar(v float64) *Node {
	return t.Const(t.scalar(v))
}

// Value returns the node's value. It must not be modified.
func (n *Node) Value() *mat.Dense { return n.val }

// Dims returns the shape of the node's value.
func (n *Node) Dims() (r, c int) { return n.val.Dims() }

// Scalar returns the value of a 1×1 node.
func (n *Node) Scalar() float64 {
	if r, c := n.val.Dims(); r != 1 || c != 1 {
		panic(fmt.Sprintf("ad: Scalar of a %d×%d node", r, c))
	}
	return n.val.At(0, 0)
}

// Tape returns the tape the node was recorded on.
func (n *Node) Tape() *Tape { return n.tape }

// NeedsGrad reports whether the node depends on a variable.
func (n *Node) NeedsGrad() bool { return n.needsGrad }

// Grad returns d out / d n after Tape.Backward(out). It is a zero matrix of
// the node's shape when out does not depend on n. It must not be modified
// (it may be shared with other nodes' gradients).
func (n *Node) Grad() *mat.Dense {
	if n.grad == nil {
		r, c := n.val.Dims()
		n.grad = mat.NewDense(r, c, nil)
	}
	return n.grad
}

// Custom records an operation computed outside this package. value is the
// forward result; backward maps the gradient with respect to the output to
// one gradient per input, each shaped as that input (nil for "no
// contribution"). backward is only called when some input needs a gradient;
// it may return nil for inputs that do not (see Node.NeedsGrad).
func Custom(value *mat.Dense, backward func(g *mat.Dense) []*mat.Dense, inputs ...*Node) *Node {
	if len(inputs) == 0 {
		panic("ad: Custom needs at least one input")
	}
	t := inputs[0].tape
	n := &Node{tape: t, val: value}
	for _, in := range inputs {
		if in.tape != t {
			panic("ad: nodes from different tapes")
		}
		if in.needsGrad {
			n.needsGrad = true
		}
	}
	if n.needsGrad {
		n.inputs = inputs
		n.backward = backward
	}
	t.record(n)
	return n
}

// Backward computes d out / d node for every node that out depends on
// through a variable. out must be 1×1. Gradients from an earlier Backward on
// the same tape are cleared first.
func (t *Tape) Backward(out *Node) {
	if out.tape != t {
		panic("ad: Backward of a node from another tape")
	}
	if r, c := out.val.Dims(); r != 1 || c != 1 {
		panic(fmt.Sprintf("ad: Backward of a %d×%d node; want 1×1", r, c))
	}
	for _, n := range t.nodes {
		n.grad, n.gradShared = nil, false
	}
	out.grad = t.NewDenseNonZeroed(1, 1)
	out.grad.Set(0, 0, 1)
	// Nodes are in topological order; walk them backwards from out.
	start := -1
	for i := len(t.nodes) - 1; i >= 0; i-- {
		if t.nodes[i] == out {
			start = i
			break
		}
	}
	for i := start; i >= 0; i-- {
		n := t.nodes[i]
		if t.ops == nil {
			n.propagate()
			continue
		}
		t0 := time.Now()
		n.propagate()
		t.ops.Backward[n.site] += time.Since(t0)
	}
}

// record appends n to the tape.
func (t *Tape) record(n *Node) {
	if t.ops != nil {
		t.ops.recorded(n)
	}
	t.nodes = append(t.nodes, n)
}

func (n *Node) accumulate(g *mat.Dense) {
	r, c := n.val.Dims()
	if gr, gc := g.Dims(); gr != r || gc != c {
		panic(fmt.Sprintf("ad: gradient of shape %d×%d for a %d×%d node", gr, gc, r, c))
	}
	if n.grad == nil {
		// Taken over without a copy (most nodes get one gradient); copied
		// on the first addition instead.
		n.grad, n.gradShared = g, true
		return
	}
	if n.gradShared {
		sum := n.tape.NewDenseNonZeroed(r, c)
		addTo(sum, n.grad, g)
		n.grad, n.gradShared = sum, false
		return
	}
	addTo(n.grad, n.grad, g)
}

// addTo sets dst = a + b (all of one shape; dst may be a or b), by rows
// on every core when large.
func addTo(dst, a, b *mat.Dense) {
	d, ar, br := dst.RawMatrix(), a.RawMatrix(), b.RawMatrix()
	if d.Rows*d.Cols < parallelElems {
		addRows(d, ar, br, 0, d.Rows) // no goroutines, no closure on the heap
		return
	}
	byRows(d.Rows, d.Cols, func(i0, i1 int) { addRows(d, ar, br, i0, i1) })
}

// addRows sets rows [i0, i1) of d to those of a + b.
func addRows(d, a, b blas64.General, i0, i1 int) {
	for i := i0; i < i1; i++ {
		di := d.Data[i*d.Stride : i*d.Stride+d.Cols]
		ai := a.Data[i*a.Stride : i*a.Stride+d.Cols]
		bi := b.Data[i*b.Stride : i*b.Stride+d.Cols]
		for j, x := range ai {
			di[j] = x + bi[j]
		}
	}
}
