package figures

import (
	"testing"
)

func TestParseStylesErrors(t *testing.T) {
	for _, bad := range []map[string]string{{"a": "teal"}, {"a": "blue wavy"}, {"a": "#12345z"}, {"a": ""}} {
		if _, err := ParseStyles(bad); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
	st, err := ParseStyles(map[string]string{"a": "#1f77b4 dotted", "b": "green"})
	if err != nil || st["a"].Color.B != 0xb4 || len(st["a"].Dashes) != 2 || st["b"].Dashes != nil {
		t.Errorf("parsed %+v, %v", st, err)
	}
}

// Long single-panel titles are wrapped at spaces, never past the limit
// unless one word is longer; line breaks already there stay.
func TestWrapTitle(t *testing.T) {
	for _, c := range []struct {
		in   string
		max  int
		want string
	}{
		{"short title", 60, "short title"},
		{"Figure 2: ODVFF test log-likelihood against |β|, SGPR dashed (quick profile)", 40,
			"Figure 2: ODVFF test log-likelihood\nagainst |β|, SGPR dashed (quick profile)"},
		{"a verylongwordthatdoesnotfit b", 5, "a\nverylongwordthatdoesnotfit\nb"},
		{"first line\nsecond line here", 11, "first line\nsecond line\nhere"},
	} {
		if got := WrapTitle(c.in, c.max); got != c.want {
			t.Errorf("WrapTitle(%q, %d) = %q, want %q", c.in, c.max, got, c.want)
		}
	}
}
