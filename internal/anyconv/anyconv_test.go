package anyconv

import (
	"math"
	"testing"
)

func TestFloat(t *testing.T) {
	for _, c := range []struct {
		in   any
		want float64
		ok   bool
	}{
		{2.5, 2.5, true},
		{float32(0.5), 0.5, true},
		{int64(-3), -3, true},
		{7, 7, true},
		{int32(4), 4, true},
		{uint64(1 << 40), 1 << 40, true},
		{uint(9), 9, true},
		{uint32(8), 8, true},
		{"1.5", 0, false},
		{[]byte("1.5"), 0, false},
		{true, 0, false},
		{nil, 0, false},
		{[]any{1.0}, 0, false},
	} {
		got, ok := Float(c.in)
		if got != c.want || ok != c.ok {
			t.Errorf("Float(%#v) = %v, %v; want %v, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

func TestFloatOrText(t *testing.T) {
	for _, c := range []struct {
		in   any
		want float64
		ok   bool
	}{
		{int64(3), 3, true},
		{" 1.5 ", 1.5, true},
		{[]byte("-2e3"), -2000, true},
		{"inf", math.Inf(1), true},
		{"abc", 0, false},
		{"", 0, false},
		{nil, 0, false},
		{false, 0, false},
	} {
		got, ok := FloatOrText(c.in)
		if got != c.want || ok != c.ok {
			t.Errorf("FloatOrText(%#v) = %v, %v; want %v, %v", c.in, got, ok, c.want, c.ok)
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
