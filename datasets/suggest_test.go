package datasets

import "testing"

func TestEditDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"", "abc", 3}, {"abc", "", 3}, {"yield", "yield", 0},
		{"yeild", "yield", 1},            // adjacent swap
		{"temprature", "temperature", 1}, // dropped letter
		{"x1", "x2", 1}, {"kitten", "sitting", 3}, {"ca", "abc", 3},
		{"δx", "xδ", 1},
	} {
		if got := editDistance(c.a, c.b); got != c.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
		if got := editDistance(c.b, c.a); got != c.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d (symmetric)", c.b, c.a, got, c.want)
		}
	}
}

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
