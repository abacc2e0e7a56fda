package anyconv

import (
	"math"
	"testing"
)

// TestFloat: Float takes numbers of every Go type and nothing else;
// FloatOrText also the number a text spells.
func TestFloat(t *testing.T) {
	for _, c := range []struct {
		in       any
		want     float64
		ok, text bool // Float's ok; FloatOrText's
	}{
		{2.5, 2.5, true, true},
		{float32(0.5), 0.5, true, true},
		{int64(-3), -3, true, true},
		{7, 7, true, true},
		{int32(4), 4, true, true},
		{uint64(1 << 40), 1 << 40, true, true},
		{uint(9), 9, true, true},
		{uint32(8), 8, true, true},
		{" 1.5 ", 1.5, false, true},
		{[]byte("-2e3"), -2000, false, true},
		{"inf", math.Inf(1), false, true},
		{"abc", 0, false, false},
		{"", 0, false, false},
		{true, 0, false, false},
		{nil, 0, false, false},
		{[]any{1.0}, 0, false, false},
	} {
		want := c.want
		if !c.ok {
			want = 0
		}
		if got, ok := Float(c.in); got != want || ok != c.ok {
			t.Errorf("Float(%#v) = %v, %v; want %v, %v", c.in, got, ok, want, c.ok)
		}
		want = c.want
		if !c.text {
			want = 0
		}
		if got, ok := FloatOrText(c.in); got != want || ok != c.text {
			t.Errorf("FloatOrText(%#v) = %v, %v; want %v, %v", c.in, got, ok, want, c.text)
		}
	}
}

func TestStringAndInt64(t *testing.T) {
	for _, c := range []struct {
		in any
		s  string
		n  int64
	}{
		{nil, "", 0},
		{"12", "12", 12},
		{[]byte("7"), "7", 7},
		{int64(5), "5", 5},
		{9, "9", 9},
		{2.9, "2.9", 2},
		{"x", "x", 0},
		{true, "true", 0},
	} {
		if got := String(c.in); got != c.s {
			t.Errorf("String(%#v) = %q, want %q", c.in, got, c.s)
		}
		if got := Int64(c.in); got != c.n {
			t.Errorf("Int64(%#v) = %d, want %d", c.in, got, c.n)
		}
	}
}

func TestTypeName(t *testing.T) {
	for _, tc := range []struct {
		v    any
		want string
	}{
		{"se", `string "se"`}, {int64(3), "integer 3"}, {2.5, "number 2.5"}, {true, "boolean true"},
		{[]any{1}, "a list"}, {map[string]any{}, "a table"}, {[]map[string]any{}, "an array of tables"}, {nil, "nothing"}, {int32(1), "int32"},
	} {
		if got := TypeName(tc.v); got != tc.want {
			t.Errorf("TypeName(%#v) = %q, want %q", tc.v, got, tc.want)
		}
	}
}
