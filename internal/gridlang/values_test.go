package gridlang

import (
	"reflect"
	"testing"
)

// TestInterpolate checks the writing of expressions into text: a string
// that is one expression becomes its value, {{ and }} write braces, and
// a brace that opens no expression is an error.
func TestInterpolate(t *testing.T) {
	cases := []struct {
		src  string
		want any
		err  bool
	}{
		{src: "plain", want: "plain"},
		{src: "{x}", want: []any{int64(1), 2.5}},
		{src: "{2 * 3}", want: int64(6)},
		{src: "M = {2 * 3} of {{1, 2}}", want: "M = 6 of {1, 2}"},
		{src: "{{x}}", want: "{x}"},
		{src: "a } b", want: "a } b"},
		{src: "{{{2 * 3}}}", want: "{6}"},
		{src: "sizes {1, 2", err: true},
		{src: "list {x} in text", err: true},
	}
	for _, c := range cases {
		got, err := interpolate(c.src, noNames{})
		if (err != nil) != c.err {
			t.Errorf("%q: error %v, want error %v", c.src, err, c.err)
			continue
		}
		if err == nil && !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q = %#v, want %#v", c.src, got, c.want)
		}
	}
}
