package gridlang

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"sgplab/internal/suggest"
)

// An expression's value is a float64, a string (a variable holding a
// variant's name) or a []any of values (a list). Arithmetic on a list
// applies element-wise and broadcasts a number over it, as numpy does.

// env resolves the names an expression may use.
type env interface {
	lookup(name string) (any, error)
	names() []string
}

// eval parses and evaluates one expression.
func eval(src string, e env) (any, error) {
	p := &parser{src: src, env: e}
	p.next()
	v, err := p.expr()
	if err != nil {
		return nil, err
	}
	if p.tok != "" {
		return nil, fmt.Errorf("unexpected %q after the expression", p.tok)
	}
	return v, nil
}

type parser struct {
	src string
	pos int
	tok string // current token; "" at the end
	env env
}

func (p *parser) next() {
	s := p.src
	for p.pos < len(s) && s[p.pos] == ' ' {
		p.pos++
	}
	if p.pos >= len(s) {
		p.tok = ""
		return
	}
	start := p.pos
	c := rune(s[p.pos])
	switch {
	case unicode.IsDigit(c) || c == '.':
		for p.pos < len(s) && (isDigit(s[p.pos]) || s[p.pos] == '.' ||
			(s[p.pos] == 'e' || s[p.pos] == 'E') ||
			((s[p.pos] == '-' || s[p.pos] == '+') && (s[p.pos-1] == 'e' || s[p.pos-1] == 'E'))) {
			p.pos++
		}
	case unicode.IsLetter(c) || c == '_':
		for p.pos < len(s) && (isDigit(s[p.pos]) || s[p.pos] == '_' || unicode.IsLetter(rune(s[p.pos]))) {
			p.pos++
		}
	default:
		p.pos++
	}
	p.tok = s[start:p.pos]
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// expr := term { (+|-) term }
func (p *parser) expr() (any, error) {
	v, err := p.term()
	for err == nil && (p.tok == "+" || p.tok == "-") {
		op := p.tok
		p.next()
		var w any
		if w, err = p.term(); err == nil {
			v, err = arith(op, v, w)
		}
	}
	return v, err
}

// term := power { (*|/) power }
func (p *parser) term() (any, error) {
	v, err := p.power()
	for err == nil && (p.tok == "*" || p.tok == "/") {
		op := p.tok
		p.next()
		var w any
		if w, err = p.power(); err == nil {
			v, err = arith(op, v, w)
		}
	}
	return v, err
}

// power := unary [ ^ power ]
func (p *parser) power() (any, error) {
	v, err := p.unary()
	if err == nil && p.tok == "^" {
		p.next()
		var w any
		if w, err = p.power(); err == nil {
			v, err = arith("^", v, w)
		}
	}
	return v, err
}

// unary := - unary | primary
func (p *parser) unary() (any, error) {
	if p.tok == "-" {
		p.next()
		v, err := p.unary()
		if err != nil {
			return nil, err
		}
		return arith("-", 0.0, v)
	}
	return p.primary()
}

// primary := number | name | name ( args ) | ( expr ) | [ args ]
func (p *parser) primary() (any, error) {
	tok := p.tok
	switch {
	case tok == "":
		return nil, fmt.Errorf("expression ends early")
	case tok == "(":
		p.next()
		v, err := p.expr()
		if err != nil {
			return nil, err
		}
		return v, p.expect(")")
	case tok == "[":
		p.next()
		args, err := p.args("]")
		return any(args), err
	case isDigit(tok[0]) || tok[0] == '.':
		f, err := strconv.ParseFloat(tok, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a number", tok)
		}
		p.next()
		return f, nil
	case unicode.IsLetter(rune(tok[0])) || tok[0] == '_':
		p.next()
		if p.tok != "(" {
			return p.env.lookup(tok)
		}
		fn, ok := funcs[tok]
		if !ok {
			return nil, fmt.Errorf("unknown function %q%s; functions: %s", tok, suggest.Hint(tok, funcNames()), strings.Join(funcNames(), ", "))
		}
		p.next()
		args, err := p.args(")")
		if err != nil {
			return nil, err
		}
		v, err := fn(args)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", tok, err)
		}
		return v, nil
	}
	return nil, fmt.Errorf("unexpected %q", tok)
}

// args parses a comma-separated list up to the closing token.
func (p *parser) args(close string) ([]any, error) {
	out := []any{}
	if p.tok == close {
		p.next()
		return out, nil
	}
	for {
		v, err := p.expr()
		if err != nil {
			return nil, err
		}
		out = append(out, v)
		if p.tok == "," {
			p.next()
			continue
		}
		return out, p.expect(close)
	}
}

func (p *parser) expect(tok string) error {
	if p.tok != tok {
		if p.tok == "" {
			return fmt.Errorf("missing %q", tok)
		}
		return fmt.Errorf("want %q, got %q", tok, p.tok)
	}
	p.next()
	return nil
}

// arith applies a binary operator, element-wise over lists.
func arith(op string, a, b any) (any, error) {
	la, aList := a.([]any)
	lb, bList := b.([]any)
	switch {
	case aList && bList:
		if len(la) != len(lb) {
			return nil, fmt.Errorf("%s of lists of lengths %d and %d", op, len(la), len(lb))
		}
		out := make([]any, len(la))
		for i := range la {
			v, err := arith(op, la[i], lb[i])
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	case aList:
		return mapList(la, func(x any) (any, error) { return arith(op, x, b) })
	case bList:
		return mapList(lb, func(x any) (any, error) { return arith(op, a, x) })
	}
	x, okx := a.(float64)
	y, oky := b.(float64)
	if !okx || !oky {
		return nil, fmt.Errorf("%s needs numbers, got %s and %s", op, describe(a), describe(b))
	}
	switch op {
	case "+":
		return x + y, nil
	case "-":
		return x - y, nil
	case "*":
		return x * y, nil
	case "/":
		return x / y, nil
	}
	return math.Pow(x, y), nil
}

func mapList(l []any, f func(any) (any, error)) (any, error) {
	out := make([]any, len(l))
	for i, x := range l {
		v, err := f(x)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

func describe(v any) string {
	switch x := v.(type) {
	case string:
		return fmt.Sprintf("the name %q", x)
	case []any:
		return "a list"
	}
	return fmt.Sprint(v)
}

// maxList bounds the lists linspace makes: a grid sweeps tens of values,
// and a typo such as 1e9 should be an error, not an allocation.
const maxList = 100000

// funcs are the functions an expression may call.
var funcs = map[string]func([]any) (any, error){
	"sqrt":  unary(math.Sqrt),
	"exp":   unary(math.Exp),
	"log":   unary(math.Log),
	"abs":   unary(math.Abs),
	"ceil":  unary(math.Ceil),
	"floor": unary(math.Floor),
	"trunc": unary(math.Trunc),
	// round halves to even, as Python's round and numpy's do: the
	// scripts that wrote the paper configs' numbers used them.
	"round": unary(math.RoundToEven),
	"sig":   sigDigits,
	"linspace": func(a []any) (any, error) {
		if len(a) != 3 {
			return nil, fmt.Errorf("want (start, stop, n), got %d arguments", len(a))
		}
		start, ok1 := a[0].(float64)
		stop, ok2 := a[1].(float64)
		n, ok3 := a[2].(float64)
		if !ok1 || !ok2 || !ok3 || n < 2 || n > maxList || n != math.Trunc(n) {
			return nil, fmt.Errorf("want two numbers and a count from 2 to %d", maxList)
		}
		// numpy's: i·step + start, the last point exactly stop.
		step := (stop - start) / (n - 1)
		out := make([]any, int(n))
		for i := range out {
			out[i] = float64(i)*step + start
		}
		out[len(out)-1] = stop
		return out, nil
	},
	"concat": func(a []any) (any, error) {
		out := []any{}
		for _, x := range a {
			if l, ok := x.([]any); ok {
				out = append(out, l...)
			} else {
				out = append(out, x)
			}
		}
		return out, nil
	},
	"atmost": func(a []any) (any, error) {
		if len(a) != 2 {
			return nil, fmt.Errorf("want (list, max), got %d arguments", len(a))
		}
		l, ok1 := a[0].([]any)
		limit, ok2 := a[1].(float64)
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("want a list and a number")
		}
		out := []any{}
		for _, x := range l {
			if f, ok := x.(float64); ok && f <= limit {
				out = append(out, x)
			}
		}
		return out, nil
	},
}

func funcNames() []string {
	out := make([]string, 0, len(funcs))
	for k := range funcs {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// unary lifts a float function to numbers and lists.
func unary(f func(float64) float64) func([]any) (any, error) {
	var g func(any) (any, error)
	g = func(v any) (any, error) {
		switch x := v.(type) {
		case float64:
			return f(x), nil
		case []any:
			return mapList(x, g)
		}
		return nil, fmt.Errorf("needs a number, got %s", describe(v))
	}
	return func(a []any) (any, error) {
		if len(a) != 1 {
			return nil, fmt.Errorf("want one argument, got %d", len(a))
		}
		return g(a[0])
	}
}

// sigDigits rounds to n significant digits, as printf's %.ng does: the
// paper configs' hand-computed values were written that way.
func sigDigits(a []any) (any, error) {
	if len(a) != 2 {
		return nil, fmt.Errorf("want (x, digits), got %d arguments", len(a))
	}
	n, ok := a[1].(float64)
	if !ok || n < 1 || n > 17 || n != math.Trunc(n) {
		return nil, fmt.Errorf("digits must be a whole number from 1 to 17")
	}
	return unary(func(x float64) float64 {
		r, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'g', int(n), 64), 64)
		return r
	})(a[:1])
}

// toTOML converts an expression's value to the types the TOML decoder
// produces: whole numbers become int64 (so an integer key accepts them;
// a float parameter normalises them back, and both encode alike in a run's
// canonical JSON).
func toTOML(v any) any {
	switch x := v.(type) {
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return int64(x)
		}
		return x
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = toTOML(e)
		}
		return out
	}
	return v
}

// fromTOML converts a TOML value to an expression value.
func fromTOML(v any) (any, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case int64:
		return float64(x), true
	case string:
		return x, true
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			var ok bool
			if out[i], ok = fromTOML(e); !ok {
				return nil, false
			}
		}
		return out, true
	}
	return nil, false
}
