package gridlang

import (
	"fmt"
	"math"
	"testing"
	"time"
)

type noNames struct{}

func (noNames) lookup(name string) (any, error) {
	if name == "x" {
		return []any{1.0, 2.5}, nil
	}
	return 3.0, nil
}
func (noNames) names() []string { return []string{"x"} }

// FuzzEval evaluates arbitrary expressions: an error or a value, never a
// panic, and the same value twice.
func FuzzEval(f *testing.F) {
	for _, s := range []string{"sig(0.5 / (6 * sqrt(1000 / 2)), 10)", "ceil(trunc([0.4, 1.8] / 0.003) / 2)",
		"concat(linspace(0.1, 1.5, 30), 0.95)", "atmost(round(x * 1000), 1100)", "-x ^ 2", "[[1, 2], 3]", "((", "1e", "sig(1, 99)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		done := make(chan bool)
		go func() {
			select {
			case <-done:
			case <-time.After(2 * time.Second):
				panic(fmt.Sprintf("eval(%q) runs for more than 2 s", src))
			}
		}()
		defer close(done)
		a, errA := eval(src, noNames{})
		b, errB := eval(src, noNames{})
		if (errA == nil) != (errB == nil) || errA == nil && !sameValue(a, b) {
			t.Fatalf("%q: %v (%v), then %v (%v)", src, a, errA, b, errB)
		}
	})
}

func sameValue(a, b any) bool {
	switch x := a.(type) {
	case float64:
		y, ok := b.(float64)
		return ok && (x == y || math.IsNaN(x) && math.IsNaN(y))
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !sameValue(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	return a == b
}
