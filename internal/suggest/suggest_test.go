package suggest

import "testing"

func TestClosest(t *testing.T) {
	valid := []string{"num_inducing", "noise_variance", "lengthscales", "kernel", "max_level", "se", "matern32", "matern52"}
	for _, c := range []struct{ in, want string }{
		{"num_inducng", "num_inducing"},
		{"noise_varaince", "noise_variance"},
		{"lengthscale", "lengthscales"},
		{"Kernel", "kernel"},
		{"matern23", "matern32"},
		{"maxlevel", "max_level"},
		{"learning_rate", ""}, // nothing near
		{"xx", ""},
		{"kernel", ""}, // exact: nothing to suggest
	} {
		if got := Closest(c.in, valid); got != c.want {
			t.Errorf("Closest(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if h := Hint("num_inducng", valid); h != `; did you mean "num_inducing"?` {
		t.Errorf("Hint = %q", h)
	}
	if h := Hint("zzz", valid); h != "" {
		t.Errorf("Hint for no match = %q", h)
	}
}
