package ad

import (
	"fmt"

	"gonum.org/v1/gonum/mat"
)

// Segments let an operation trade time for memory (checkpointing): it
// records a sub-computation, keeps only the values it needs, drops the
// sub-computation's nodes with Truncate, and in its own backward pass
// records the sub-computation again and propagates its gradient through it
// with BackwardSegment. The collapsed SGPR bound uses this to form Kuf in
// chunks of the data, so that no N×M matrix is ever held.

// Len returns the number of nodes recorded on the tape, the mark that
// Truncate and BackwardSegment take.
func (t *Tape) Len() int { return len(t.nodes) }

// Truncate drops the nodes recorded after the first n and returns the
// distinct earlier nodes that the dropped ones take gradients into: the
// inputs an operation replaying the segment must declare (with Custom) so
// that Backward calls it. Dropped nodes leave the tape (their Tape is nil),
// so a dropped node that is used again, for example one cached by a kernel
// during the segment, fails loudly instead of losing its gradient.
func (t *Tape) Truncate(n int) []*Node {
	if n < 0 || n > len(t.nodes) {
		panic(fmt.Sprintf("ad: Truncate(%d) of a tape with %d nodes", n, len(t.nodes)))
	}
	seg := t.nodes[n:]
	in := make(map[*Node]bool, len(seg))
	for _, nd := range seg {
		in[nd] = true
	}
	var ext []*Node
	seen := map[*Node]bool{}
	for _, nd := range seg {
		for _, x := range nd.inputs {
			if !in[x] && x.needsGrad && !seen[x] {
				seen[x] = true
				ext = append(ext, x)
			}
		}
	}
	for _, nd := range seg {
		nd.tape, nd.grad, nd.gradShared = nil, nil, false
	}
	clear(seg)
	t.nodes = t.nodes[:n]
	return ext
}

// BackwardSegment propagates seed, the gradient of an outer objective with
// respect to out, back through the nodes recorded after the first n, and
// accumulates the result into the gradients of the earlier nodes they use.
// out must have been recorded after the first n; seed (shaped as out) is
// taken over and may be modified. It is meant to be called from a Custom
// backward function during Tape.Backward: the earlier nodes have not been
// visited yet, so what reaches them propagates on from there.
func (t *Tape) BackwardSegment(n int, out *Node, seed *mat.Dense) {
	if out.tape != t {
		panic("ad: BackwardSegment of a node from another tape")
	}
	start := -1
	for i := len(t.nodes) - 1; i >= n; i-- {
		if t.nodes[i] == out {
			start = i
			break
		}
	}
	if start < 0 {
		panic(fmt.Sprintf("ad: BackwardSegment: output not among the nodes after the first %d", n))
	}
	r, c := out.val.Dims()
	if sr, sc := seed.Dims(); sr != r || sc != c {
		panic(fmt.Sprintf("ad: BackwardSegment: seed %d×%d for a %d×%d output", sr, sc, r, c))
	}
	for _, nd := range t.nodes[n:] {
		nd.grad, nd.gradShared = nil, false
	}
	out.grad = seed
	for i := start; i >= n; i-- {
		t.nodes[i].propagate()
	}
}

// propagate hands the node's gradient to its inputs through its backward
// function.
func (n *Node) propagate() {
	if n.grad == nil || n.backward == nil {
		return
	}
	gs := n.backward(n.grad)
	if len(gs) != len(n.inputs) {
		panic(fmt.Sprintf("ad: backward returned %d gradients for %d inputs", len(gs), len(n.inputs)))
	}
	for k, in := range n.inputs {
		if gs[k] == nil || !in.needsGrad {
			continue
		}
		in.accumulate(gs[k])
	}
}
