package methods

import (
	"fmt"
	"math"
	"sort"
	"strings"
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
	Doc     string
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
			return Params{}, fmt.Errorf("method %s has no parameter %q; valid parameters: %s", m.Name, k, strings.Join(valid, ", "))
		}
		v, err := convert(d, raw[k])
		if err != nil {
			return Params{}, fmt.Errorf("method %s, parameter %q: %w", m.Name, k, err)
		}
		p.values[k] = v
	}
	for _, d := range m.Params {
		if _, set := p.values[d.Name]; !set && d.Default != nil {
			v, err := convert(d, d.Default)
			if err != nil {
				panic(fmt.Sprintf("methods: %s: bad default for %s: %v", m.Name, d.Name, err))
			}
			p.values[d.Name] = v
		}
	}
	return p, nil
}

func convert(d ParamDoc, v any) (any, error) {
	switch d.Kind {
	case Float:
		switch x := v.(type) {
		case float64:
			return x, nil
		case int64:
			return float64(x), nil
		case int:
			return float64(x), nil
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
				return nil, fmt.Errorf("%q is not one of: %s", s, strings.Join(d.Choices, ", "))
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
				switch n := e.(type) {
				case float64:
					out[i] = n
				case int64:
					out[i] = float64(n)
				default:
					return nil, fmt.Errorf("element %d is %T, want a number", i, e)
				}
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
