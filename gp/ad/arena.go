package ad

import (
	"sync"
	"time"

	"gonum.org/v1/gonum/mat"
)

// A tape owns the matrices its operations allocate (values, gradients and
// the scratch of backward functions, through Tape.NewDense) and recycles
// them: Reset hands every one back for the next evaluation, so an
// optimiser that evaluates its objective step after step on one tape
// allocates the same matrices once, and the heap stops growing after the
// first step. Free hands back the matrices of a checkpointed segment
// (see Truncate) as soon as the segment is done, so that a chunked
// computation holds one chunk's matrices at a time.
//
// Matrices not allocated by the tape (Const and Var leaves, values that
// Custom callers made themselves) are never touched.

// arena holds a tape's matrices: owned in allocation order, free by size.
type arena struct {
	mu    sync.Mutex
	owned [][]float64
	free  map[int][][]float64
}

// NewDense returns a zeroed r×c matrix owned by the tape: valid until the
// tape is Reset (or, if allocated after a Mark, until Free of that mark).
// Operations recording on the tape use it for their values, gradients and
// scratch, so that Reset can recycle them.
func (t *Tape) NewDense(r, c int) *mat.Dense {
	m := t.NewDenseNonZeroed(r, c)
	clear(m.RawMatrix().Data)
	return m
}

// NewDenseNonZeroed is NewDense without clearing: the caller overwrites
// every entry.
func (t *Tape) NewDenseNonZeroed(r, c int) *mat.Dense {
	n := r * c
	if n == 0 {
		return mat.NewDense(r, c, nil) // panics with gonum's message
	}
	a := &t.arena
	a.mu.Lock()
	var buf []float64
	if l := a.free[n]; len(l) > 0 {
		buf = l[len(l)-1]
		l[len(l)-1] = nil
		a.free[n] = l[:len(l)-1]
	} else {
		buf = make([]float64, n)
	}
	a.owned = append(a.owned, buf)
	a.mu.Unlock()
	return mat.NewDense(r, c, buf)
}

// copyOf returns a tape-owned copy of m (a large dense m copied by rows
// on every core).
func (t *Tape) copyOf(m mat.Matrix) *mat.Dense {
	r, c := m.Dims()
	out := t.NewDenseNonZeroed(r, c)
	src, ok := m.(*mat.Dense)
	if !ok || r*c < parallelElems {
		out.Copy(m)
		return out
	}
	od, sr := out.RawMatrix().Data, src.RawMatrix()
	byRows(r, c, func(i0, i1 int) {
		for i := i0; i < i1; i++ {
			copy(od[i*c:(i+1)*c], sr.Data[i*sr.Stride:i*sr.Stride+c])
		}
	})
	return out
}

// denseOf returns a tape-owned matrix shaped as m, not cleared.
func (t *Tape) denseOf(m mat.Matrix) *mat.Dense {
	r, c := m.Dims()
	return t.NewDenseNonZeroed(r, c)
}

// Reset drops every node and recycles every matrix the tape allocated, for
// the next evaluation on the same tape. Nodes recorded before, their values
// and gradients, and any matrix from NewDense must not be used afterwards.
func (t *Tape) Reset() {
	for _, n := range t.nodes {
		n.tape, n.grad, n.gradShared = nil, nil, false
	}
	clear(t.nodes)
	t.nodes = t.nodes[:0]
	if t.ops != nil {
		t.ops.last = time.Now()
	}
	a := &t.arena
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, b := range a.owned {
		a.release(b)
	}
	clear(a.owned)
	a.owned = a.owned[:0]
}

func (a *arena) release(b []float64) {
	if a.free == nil {
		a.free = make(map[int][][]float64)
	}
	a.free[len(b)] = append(a.free[len(b)], b)
}

// Mark is a position on a tape: its node count (the n of Truncate and
// BackwardSegment) and its count of allocated matrices.
type Mark struct {
	Nodes int
	bufs  int
}

// Mark returns the tape's current position.
func (t *Tape) Mark() Mark {
	t.arena.mu.Lock()
	defer t.arena.mu.Unlock()
	return Mark{Nodes: len(t.nodes), bufs: len(t.arena.owned)}
}

// Free recycles the matrices the tape allocated after m, except those that
// became (or back) the gradient of a node recorded before m (gradients a
// segment's backward pass handed to the nodes it uses). Call it after
// Truncate(m.Nodes), when nothing else allocated since m is used any more:
// the values of the dropped nodes, the seed of BackwardSegment and every
// gradient inside the segment are recycled.
func (t *Tape) Free(m Mark) {
	if m.Nodes > len(t.nodes) {
		panic("ad: Free of a mark past the tape's end; Truncate first")
	}
	keep := map[*float64]bool{}
	for _, n := range t.nodes[:m.Nodes] {
		if n.grad != nil {
			if e := backingEnd(n.grad.RawMatrix().Data); e != nil {
				keep[e] = true
			}
		}
	}
	a := &t.arena
	a.mu.Lock()
	defer a.mu.Unlock()
	kept := a.owned[:m.bufs]
	for _, b := range a.owned[m.bufs:] {
		if keep[backingEnd(b)] {
			kept = append(kept, b)
			continue
		}
		a.release(b)
	}
	clear(a.owned[len(kept):])
	a.owned = kept
}

// Recycle hands one matrix from NewDense back to the tape before Reset. The
// caller guarantees that nothing refers to it any more. Matrices the tape
// does not own are ignored.
func (t *Tape) Recycle(m *mat.Dense) {
	if m == nil {
		return
	}
	e := backingEnd(m.RawMatrix().Data)
	if e == nil {
		return
	}
	a := &t.arena
	a.mu.Lock()
	defer a.mu.Unlock()
	for i := len(a.owned) - 1; i >= 0; i-- {
		if backingEnd(a.owned[i]) == e {
			a.release(a.owned[i])
			copy(a.owned[i:], a.owned[i+1:])
			a.owned[len(a.owned)-1] = nil
			a.owned = a.owned[:len(a.owned)-1]
			return
		}
	}
}

// backingEnd identifies the array behind s (and behind every view of it):
// the address of its last element.
func backingEnd(s []float64) *float64 {
	if cap(s) == 0 {
		return nil
	}
	return &s[:cap(s)][cap(s)-1]
}
