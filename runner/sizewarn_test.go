package runner

import (
	"strings"
	"testing"

	"sgplab/methods"
)

// TestRepeatedSizeWarnings: two values of num_inducing that give a method
// the same M on a dataset are named once, whatever the splits; values
// that give different M, and runs that differ in another parameter, are
// not.
func TestRepeatedSizeWarnings(t *testing.T) {
	run := func(method string, numInducing, m, split int, extra map[string]any) *RunSpec {
		p := map[string]any{"num_inducing": numInducing}
		for k, v := range extra {
			p[k] = v
		}
		return &RunSpec{Grid: "g", Method: method, Dataset: "yacht", Split: split, Params: p, Plan: methods.Plan{M: m}}
	}
	runs := []*RunSpec{
		run("vish", 32, 35, 0, nil), run("vish", 64, 35, 0, nil), run("vish", 32, 35, 1, nil), run("vish", 64, 35, 1, nil),
		run("vish", 16, 8, 0, nil),
		run("sgpr", 32, 32, 0, nil), run("sgpr", 64, 64, 0, nil),
		run("vff", 16, 18, 0, map[string]any{"structure": "additive"}), run("vff", 16, 18, 0, map[string]any{"structure": "kronecker"}),
	}
	got := repeatedSizeWarnings("f.toml", runs)
	if len(got) != 1 || !strings.Contains(got[0], "method vish on yacht: num_inducing = 32, 64 all give M = 35") {
		t.Errorf("warnings %q, want one on vish's 32 and 64", got)
	}
}
