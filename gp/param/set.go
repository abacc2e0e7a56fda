package param

import (
	"fmt"
	"strconv"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
)

type entry struct {
	name      string
	raw       *mat.Dense // unconstrained
	tr        Transform
	trainable bool
}

// Set is an ordered collection of named parameters. The order of Add calls
// fixes the layout of the flat vector, so it never depends on map order.
type Set struct {
	entries []*entry
	index   map[string]int
}

// NewSet returns an empty set.
func NewSet() *Set { return &Set{index: map[string]int{}} }

// Add registers a trainable parameter with its value in natural units.
// It fails if the name is taken or a value is outside the transform's range.
func (s *Set) Add(name string, value *mat.Dense, tr Transform) error {
	if _, dup := s.index[name]; dup {
		return fmt.Errorf("param: %q added twice", name)
	}
	if tr == nil {
		tr = Identity{}
	}
	r, c := value.Dims()
	raw := mat.NewDense(r, c, nil)
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			u, err := tr.Inverse(value.At(i, j))
			if err != nil {
				return fmt.Errorf("param: %s[%d,%d]: %w", name, i, j, err)
			}
			raw.Set(i, j, u)
		}
	}
	s.index[name] = len(s.entries)
	s.entries = append(s.entries, &entry{name: name, raw: raw, tr: tr, trainable: true})
	return nil
}

// AddScalar registers a 1×1 parameter.
func (s *Set) AddScalar(name string, v float64, tr Transform) error {
	return s.Add(name, mat.NewDense(1, 1, []float64{v}), tr)
}

// MustAdd is Add for values known to be valid; it panics otherwise.
func (s *Set) MustAdd(name string, value *mat.Dense, tr Transform) {
	if err := s.Add(name, value, tr); err != nil {
		panic(err)
	}
}

// Has reports whether name is registered.
func (s *Set) Has(name string) bool { _, ok := s.index[name]; return ok }

// Names returns the parameter names in registration order.
func (s *Set) Names() []string {
	out := make([]string, len(s.entries))
	for i, e := range s.entries {
		out[i] = e.name
	}
	return out
}

func (s *Set) get(name string) *entry {
	i, ok := s.index[name]
	if !ok {
		panic(fmt.Sprintf("param: no parameter %q (have %v)", name, s.Names()))
	}
	return s.entries[i]
}

// SetTrainable fixes (false) or releases (true) the named parameters.
func (s *Set) SetTrainable(trainable bool, names ...string) {
	for _, n := range names {
		s.get(n).trainable = trainable
	}
}

// SetAllTrainable fixes or releases every parameter.
func (s *Set) SetAllTrainable(trainable bool) {
	for _, e := range s.entries {
		e.trainable = trainable
	}
}

// Trainable reports whether the named parameter is trainable.
func (s *Set) Trainable(name string) bool { return s.get(name).trainable }

// Value returns the named parameter in natural units (a fresh copy).
func (s *Set) Value(name string) *mat.Dense {
	e := s.get(name)
	r, c := e.raw.Dims()
	v := mat.NewDense(r, c, nil)
	v.Apply(func(i, j int, u float64) float64 { return e.tr.Forward(u) }, e.raw)
	return v
}

// Scalar returns a 1×1 parameter in natural units.
func (s *Set) Scalar(name string) float64 { return s.Value(name).At(0, 0) }

// SetValue replaces the named parameter's value, given in natural units.
func (s *Set) SetValue(name string, value *mat.Dense) error {
	e := s.get(name)
	r, c := e.raw.Dims()
	if vr, vc := value.Dims(); vr != r || vc != c {
		return fmt.Errorf("param: %s is %d×%d, got %d×%d", name, r, c, vr, vc)
	}
	raw := mat.NewDense(r, c, nil)
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			u, err := e.tr.Inverse(value.At(i, j))
			if err != nil {
				return fmt.Errorf("param: %s[%d,%d]: %w", name, i, j, err)
			}
			raw.Set(i, j, u)
		}
	}
	e.raw = raw
	return nil
}

// Len is the length of the flat vector of trainable unconstrained values.
func (s *Set) Len() int {
	n := 0
	for _, e := range s.entries {
		if e.trainable {
			r, c := e.raw.Dims()
			n += r * c
		}
	}
	return n
}

// Vector returns the trainable unconstrained values, row-major per entry.
func (s *Set) Vector() []float64 {
	out := make([]float64, 0, s.Len())
	for _, e := range s.entries {
		if e.trainable {
			out = appendRaw(out, e.raw)
		}
	}
	return out
}

// SetVector loads trainable unconstrained values laid out as in Vector.
func (s *Set) SetVector(x []float64) {
	if len(x) != s.Len() {
		panic(fmt.Sprintf("param: SetVector with %d values, want %d", len(x), s.Len()))
	}
	k := 0
	for _, e := range s.entries {
		if !e.trainable {
			continue
		}
		r, c := e.raw.Dims()
		for i := 0; i < r; i++ {
			for j := 0; j < c; j++ {
				e.raw.Set(i, j, x[k])
				k++
			}
		}
	}
}

// Snapshot returns every parameter's unconstrained value (trainable or not),
// for restoring later with Restore.
func (s *Set) Snapshot() []*mat.Dense {
	out := make([]*mat.Dense, len(s.entries))
	for i, e := range s.entries {
		out[i] = mat.DenseCopyOf(e.raw)
	}
	return out
}

// Restore loads values from Snapshot.
func (s *Set) Restore(snap []*mat.Dense) {
	for i, e := range s.entries {
		e.raw = mat.DenseCopyOf(snap[i])
	}
}

// Natural returns every parameter in natural units, in registration order,
// flattened row-major, for reporting.
func (s *Set) Natural() []Named {
	out := make([]Named, len(s.entries))
	for i, e := range s.entries {
		out[i] = Named{Name: e.name, Value: appendRaw(nil, s.Value(e.name))}
	}
	return out
}

// Named is one parameter's flattened natural value.
type Named struct {
	Name  string
	Value []float64
}

func appendRaw(dst []float64, m *mat.Dense) []float64 {
	r, c := m.Dims()
	for i := 0; i < r; i++ {
		dst = append(dst, m.RawRowView(i)[:c]...)
	}
	return dst
}

// Bound is a Set recorded on a tape.
type Bound struct {
	set    *Set
	leaves []*ad.Node // unconstrained leaves
	nat    []*ad.Node // natural-unit nodes
}

// Bind records every parameter on t: trainable ones as variables, fixed ones
// as constants, each followed by its transform.
func (s *Set) Bind(t *ad.Tape) *Bound {
	b := &Bound{set: s, leaves: make([]*ad.Node, len(s.entries)), nat: make([]*ad.Node, len(s.entries))}
	for i, e := range s.entries {
		var raw *mat.Dense
		if r, c := e.raw.Dims(); r*c > 0 {
			raw = t.NewDenseNonZeroed(r, c) // recycled by t.Reset
			raw.Copy(e.raw)
		} else {
			raw = mat.DenseCopyOf(e.raw)
		}
		if e.trainable {
			b.leaves[i] = t.Var(raw)
		} else {
			b.leaves[i] = t.Const(raw)
		}
		b.nat[i] = apply(e.tr, b.leaves[i])
	}
	return b
}

// Get returns the named parameter in natural units on the tape.
func (b *Bound) Get(name string) *ad.Node {
	i, ok := b.set.index[name]
	if !ok {
		panic(fmt.Sprintf("param: no parameter %q (have %v)", name, b.set.Names()))
	}
	return b.nat[i]
}

// Gradient returns d out / d Vector() after t.Backward(out).
func (b *Bound) Gradient() []float64 {
	return b.AppendGradient(make([]float64, 0, b.set.Len()))
}

// AppendGradient appends Gradient to dst and returns the extended slice,
// for a caller that reuses one buffer step after step.
func (b *Bound) AppendGradient(dst []float64) []float64 {
	out := dst
	for i, e := range b.set.entries {
		if e.trainable {
			out = appendRaw(out, b.leaves[i].Grad())
		}
	}
	return out
}

func formatFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
