package inference

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"sgplab/internal/goroutines"
)

// A panic on one of ComputeStats's goroutines reaches its caller as a
// *goroutines.Panic carrying the stack where it began; before, it ended
// the process (issue 27: Kronecker VFF on yacht, 31⁶ features).
func TestComputeStatsPanicReachesCaller(t *testing.T) {
	defer func(f, r, m int) { statsChunkFloats, statsChunkRows, statsChunkMinRows = f, r, m }(statsChunkFloats, statsChunkRows, statsChunkMinRows)
	statsChunkRows, statsChunkMinRows = 10, 1
	const n = 200 // 20 chunks in up to 8 groups
	x := mat.NewDense(n, 1, nil)
	y := make([]float64, n)
	for i := range y {
		x.Set(i, 0, float64(i))
		y[i] = float64(i % 3)
	}
	features := func(_, x *mat.Dense) (*mat.Dense, error) {
		r, _ := x.Dims()
		if x.At(0, 0) == 150 {
			panic(fmt.Sprintf("feature map: bad rows from %v", x.At(0, 0)))
		}
		return mat.NewDense(2, r, nil), nil
	}
	outOfRange := func(_, x *mat.Dense) (*mat.Dense, error) {
		r, _ := x.Dims()
		if x.At(0, 0) == 150 {
			rows := make([]int, r)
			_ = rows[r+int(x.At(0, 0))]
		}
		return mat.NewDense(3, r, nil), nil
	}
	for _, tc := range []struct {
		name  string
		m     int
		phi   FeatureMap
		want  string
		frame string
	}{
		{"feature map panics", 2, features, "feature map: bad rows from 150", "TestComputeStatsPanicReachesCaller.func2"},
		// A runtime error on a worker (an index out of range, as a bad
		// feature map would make) keeps its type. A feature count too large
		// to allocate is refused before any goroutine starts
		// (TestStatsBadInput/too_many_features).
		{"runtime error on a worker", 3, outOfRange, "index out of range", "TestComputeStatsPanicReachesCaller.func3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r any
			func() {
				defer func() { r = recover() }()
				s, err := ComputeStats(x, y, tc.m, tc.phi)
				t.Errorf("ComputeStats returned %v, %v; want a panic", s, err)
			}()
			p, ok := r.(*goroutines.Panic)
			if !ok {
				t.Fatalf("recovered %v (%T), want a *goroutines.Panic", r, r)
			}
			if !strings.Contains(p.Error(), tc.want) {
				t.Errorf("panic %q, want %q", p.Error(), tc.want)
			}
			if !strings.Contains(p.Stack, tc.frame) || !strings.Contains(p.Stack, "created by sgplab/internal/goroutines.(*Group).Go") {
				t.Errorf("stack is not that of the ComputeStats goroutine that panicked:\n%s", p.Stack)
			}
			var re runtime.Error
			if tc.m > 2 && !errors.As(p, &re) {
				t.Errorf("errors.As does not find the runtime.Error in %v", p)
			}
		})
	}
}
