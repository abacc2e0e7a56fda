package methods

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"sgplab/internal/anyconv"
	"sgplab/internal/suggest"
)

// Kind is the type of a method parameter.
type Kind int

const (
	Float Kind = iota
	Int
	String
	Bool
	Floats // list of numbers
)

func (k Kind) String() string {
	switch k {
	case Float:
		return "number"
	case Int:
		return "integer"
	case String:
		return "string"
	case Bool:
		return "boolean"
	case Floats:
		return "list of numbers"
	}
	return "unknown"
}

// ParamDoc documents one method parameter.
type ParamDoc struct {
	Name    string
	Kind    Kind
	Default any      // nil means "no default" (optional, method decides)
	Choices []string // valid values of a String parameter; empty means any
	// Range is the valid range of an Int or Float parameter, or of every
	// element of a Floats one; nil accepts any finite number. Every Float
	// and Floats value must be finite and a Floats list non-empty whatever
	// the range.
	Range *Range
	Doc   string
	// Chooses names the parameter a value of this one sets (num_inducing
	// of a feature set with a structure: frequencies, freqs_per_dim,
	// max_level, bases; see the method's size rule). Given, it leaves the
	// chosen parameter without its default; giving both is an error.
	Chooses string
}

// Range is an interval of valid numbers: Min and Max are its ends when
// HasMin and HasMax are set, excluded when MinOpen or MaxOpen is. Zero
// additionally accepts 0 (a parameter's "automatic" value) outside it.
type Range struct {
	Min, Max         float64
	HasMin, HasMax   bool
	MinOpen, MaxOpen bool
	Zero             bool
}

// AtLeast is [v, ∞).
func AtLeast(v float64) *Range { return &Range{Min: v, HasMin: true} }

// Above is (v, ∞).
func Above(v float64) *Range { return &Range{Min: v, HasMin: true, MinOpen: true} }

// Between is [lo, hi].
func Between(lo, hi float64) *Range { return &Range{Min: lo, Max: hi, HasMin: true, HasMax: true} }

// Ranges shared by many parameters.
var (
	Positive    = Above(0)   // variances, lengthscales, step sizes
	NonNegative = AtLeast(0) // jitter, margins, iteration counts
	Count       = AtLeast(1) // numbers of inducing variables, levels, samples
)

// OrZero is r that also accepts 0 ("automatic").
func (r Range) OrZero() *Range { r.Zero = true; return &r }

// Contains reports whether v lies in the range.
func (r *Range) Contains(v float64) bool {
	if r == nil {
		return true
	}
	if r.Zero && v == 0 {
		return true
	}
	if r.HasMin && (v < r.Min || r.MinOpen && v == r.Min) {
		return false
	}
	return !(r.HasMax && (v > r.Max || r.MaxOpen && v == r.Max))
}

// String is the range in words, e.g. "> 0", "≥ 1", "in [0, 200]", "0 or ≥ 5".
func (r *Range) String() string {
	if r == nil {
		return "any finite number"
	}
	num := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	var s string
	switch {
	case r.HasMin && r.HasMax:
		lo, hi := "[", "]"
		if r.MinOpen {
			lo = "("
		}
		if r.MaxOpen {
			hi = ")"
		}
		s = "in " + lo + num(r.Min) + ", " + num(r.Max) + hi
	case r.HasMin && r.MinOpen:
		s = "> " + num(r.Min)
	case r.HasMin:
		s = "≥ " + num(r.Min)
	case r.HasMax && r.MaxOpen:
		s = "< " + num(r.Max)
	case r.HasMax:
		s = "≤ " + num(r.Max)
	default:
		s = "any finite number"
	}
	if r.Zero {
		s = "0 or " + s
	}
	return s
}

// check reports a value of d outside its range, or not finite.
func (d ParamDoc) check(v any) error {
	var xs []float64
	switch x := v.(type) {
	case float64:
		xs = []float64{x}
	case int:
		xs = []float64{float64(x)}
	case []float64:
		if len(x) == 0 {
			return fmt.Errorf("empty list; give at least one value (or leave %s out)", d.Name)
		}
		xs = x
	default:
		return nil
	}
	for i, x := range xs {
		what := fmt.Sprint(x)
		if d.Kind == Floats {
			what = fmt.Sprintf("element %d (%v)", i, x)
		}
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("%s is not finite; want a number %s", what, d.Range)
		}
		if !d.Range.Contains(x) {
			return fmt.Errorf("%s is out of range: want %s", what, d.Range)
		}
	}
	return nil
}

// Params are validated method parameters with defaults filled in.
type Params struct {
	method string
	values map[string]any
}

// Validate checks raw (as decoded from TOML: int64, float64, string, bool,
// []any) against the documented parameters and fills in defaults. Errors
// name the key and list the valid keys or choices.
func (m Method) Validate(raw map[string]any) (Params, error) {
	docs := map[string]ParamDoc{}
	valid := make([]string, 0, len(m.Params))
	for _, d := range m.Params {
		docs[d.Name] = d
		valid = append(valid, d.Name)
	}
	sort.Strings(valid)
	p := Params{method: m.Name, values: map[string]any{}}
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		d, ok := docs[k]
		if !ok {
			return Params{}, fmt.Errorf("method %s has no parameter %q%s; valid parameters: %s", m.Name, k, suggest.Hint(k, valid), strings.Join(valid, ", "))
		}
		v, err := convert(d, raw[k])
		if err == nil {
			err = d.check(v)
		}
		if err != nil {
			return Params{}, fmt.Errorf("method %s, parameter %q: %w", m.Name, k, err)
		}
		p.values[k] = v
	}
	for _, k := range keys {
		if c := docs[k].Chooses; c != "" {
			if _, both := raw[c]; both {
				return Params{}, &ParamError{Param: k, Err: fmt.Errorf("method %s chooses %s from it; give %s or %s, not both", m.Name, c, k, c)}
			}
		}
	}
	for _, d := range m.Defaulted(raw) {
		v, err := convert(d, d.Default)
		if err == nil {
			err = d.check(v)
		}
		if err != nil {
			panic(fmt.Sprintf("methods: %s: bad default for %s: %v", m.Name, d.Name, err))
		}
		p.values[d.Name] = v
	}
	return p, nil
}

// Defaulted are the parameters whose defaults apply when raw gives the
// others: those with a default that raw neither gives nor chooses by
// another parameter (ParamDoc.Chooses).
func (m Method) Defaulted(raw map[string]any) []ParamDoc {
	chosen := map[string]bool{}
	for _, d := range m.Params {
		if _, given := raw[d.Name]; given && d.Chooses != "" {
			chosen[d.Chooses] = true
		}
	}
	var out []ParamDoc
	for _, d := range m.Params {
		if _, given := raw[d.Name]; !given && d.Default != nil && !chosen[d.Name] {
			out = append(out, d)
		}
	}
	return out
}

func convert(d ParamDoc, v any) (any, error) {
	switch d.Kind {
	case Float:
		if f, ok := anyconv.Float(v); ok {
			return f, nil
		}
	case Int:
		switch x := v.(type) {
		case int64:
			return int(x), nil
		case int:
			return x, nil
		case float64:
			if x == math.Trunc(x) {
				return int(x), nil
			}
		}
	case String:
		if s, ok := v.(string); ok {
			if len(d.Choices) > 0 && !contains(d.Choices, s) {
				return nil, fmt.Errorf("%q is not one of: %s%s", s, strings.Join(d.Choices, ", "), suggest.Hint(s, d.Choices))
			}
			return s, nil
		}
	case Bool:
		if b, ok := v.(bool); ok {
			return b, nil
		}
	case Floats:
		switch x := v.(type) {
		case []float64:
			return append([]float64(nil), x...), nil
		case []any:
			out := make([]float64, len(x))
			for i, e := range x {
				n, ok := anyconv.Float(e)
				if !ok {
					return nil, fmt.Errorf("element %d is %T, want a number", i, e)
				}
				out[i] = n
			}
			return out, nil
		case float64:
			return []float64{x}, nil
		case int64:
			return []float64{float64(x)}, nil
		}
	}
	return nil, fmt.Errorf("got %v (%T), want a %s", v, v, d.Kind)
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

// NewParams builds Params directly (for tests and programmatic use),
// validating like Method.Validate.
func NewParams(m Method, raw map[string]any) (Params, error) { return m.Validate(raw) }

// Has reports whether the parameter was given or has a default.
func (p Params) Has(name string) bool { _, ok := p.values[name]; return ok }

// Float returns a Float parameter (0 if unset).
func (p Params) Float(name string) float64 { v, _ := p.values[name].(float64); return v }

// Int returns an Int parameter (0 if unset).
func (p Params) Int(name string) int { v, _ := p.values[name].(int); return v }

// String returns a String parameter ("" if unset).
func (p Params) String(name string) string { v, _ := p.values[name].(string); return v }

// Bool returns a Bool parameter (false if unset).
func (p Params) Bool(name string) bool { v, _ := p.values[name].(bool); return v }

// Floats returns a Floats parameter (nil if unset).
func (p Params) Floats(name string) []float64 {
	v, _ := p.values[name].([]float64)
	return append([]float64(nil), v...)
}

// Method returns the name of the method the parameters belong to.
func (p Params) Method() string { return p.method }
