package methods

import (
	"strings"
	"testing"
)

// TestNatGradStepNeedsQ: natgrad_step on a method whose objective has no
// q(u) is refused (VISH's default collapsed objective used to ignore it
// and run L-BFGS, as if it had not been set).
func TestNatGradStepNeedsQ(t *testing.T) {
	for _, tc := range []struct {
		method  string
		params  map[string]any
		wantErr string
	}{
		{"vish", map[string]any{"natgrad_step": 1.0}, "collapsed objective has no q(u)"},
		{"vish", map[string]any{"natgrad_step": 1.0, "objective": "svgp"}, ""},
		{"vff", map[string]any{"natgrad_step": 1.0}, "collapsed objective has no q(u)"},
		{"svgp", map[string]any{"natgrad_step": 1.0}, ""},
	} {
		_, err := Build(tc.method, tc.params)
		if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
			t.Errorf("%s %v: error %v, want %q", tc.method, tc.params, err, tc.wantErr)
		}
	}
}
