package datasets

import "testing"

func TestDidYouMean(t *testing.T) {
	cols := []string{"x1", "x2", "is_test", "y", "temperature"}
	for _, c := range []struct{ name, want string }{
		{"Y", ` (did you mean "y"?)`},
		{"x3", ` (did you mean "x1"?)`},
		{"istest", ` (did you mean "is_test"?)`},
		{"temprature", ` (did you mean "temperature"?)`},
		{"a", ""},        // one letter, all of it wrong
		{"pressure", ""}, // nothing near
	} {
		if got := didYouMean(c.name, cols); got != c.want {
			t.Errorf("didYouMean(%q) = %q, want %q", c.name, got, c.want)
		}
	}
}
