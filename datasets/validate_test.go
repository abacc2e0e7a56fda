package datasets

import (
	"strings"
	"testing"
)

// TestValidate checks that every kind of bad dataset reference is caught
// before a sweep starts, with a message naming the parameter and the valid
// choices, and that good references pass.
func TestValidate(t *testing.T) {
	cases := []struct {
		name   string
		params map[string]any
		want   string // substring of the error; "" for none
	}{
		{"gp-sample", nil, ""},
		{"gp-sample", map[string]any{"n": int64(50), "lengthscale": 0.3, "kernel": "matern32"}, ""},
		{"gp-sample", map[string]any{"n": 50.0}, ""}, // JSON numbers are float64
		{"boston", map[string]any{"n": int64(100)}, ""},
		{"airline", map[string]any{"months": "1-4"}, ""},
		{"nosuch", nil, `unknown dataset "nosuch"; valid names:`},
		{"gp-sample", map[string]any{"colour": "red"}, `gp-sample: unknown param "colour"; valid:`},
		{"gp-sample", map[string]any{"n": 2.5}, "param n = 2.5 (float64) should be int"},
		{"gp-sample", map[string]any{"kernel": 3}, "param kernel = 3 (int) should be string"},
		{"gp-sample", map[string]any{"lengthscale": -1.0}, "need lengthscale > 0"},
		{"gp-sample", map[string]any{"kernel": "rbf"}, `unknown kernel "rbf"; valid:`},
		{"boston", map[string]any{"stride": int64(2)}, `boston: unknown param "stride"`},
		{"airline", map[string]any{"months": "13"}, `bad months "13"`},
		{"precipitation", map[string]any{"stride": int64(0)}, "param stride = 0, need >= 1"},
		// With several bad parameters the first in name order is reported,
		// whatever the map's iteration order.
		{"gp-sample", map[string]any{"zz": 1, "aa": 1, "mm": 1}, `unknown param "aa"`},
	}
	for _, c := range cases {
		for range 5 {
			err := Validate(c.name, c.params)
			switch {
			case c.want == "" && err != nil:
				t.Errorf("Validate(%s, %v): %v", c.name, c.params, err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Errorf("Validate(%s, %v) = %v, want an error containing %q", c.name, c.params, err, c.want)
			}
		}
	}
}
