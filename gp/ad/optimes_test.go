package ad_test

import (
	"maps"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
)

// TestOpTimes: a timed tape files each operation under the operation and
// its caller outside package ad, forward and backward; a node's forward
// time includes the wait since the node before it (here a 20 ms sleep,
// filed under Exp and under nothing else), and Reset restarts the clock.
func TestOpTimes(t *testing.T) {
	const nap = 20 * time.Millisecond
	tape := ad.NewTape()
	ops := ad.NewOpTimes()
	tape.TimeOps(ops)
	step := func() {
		tape.Reset()
		x := tape.Var(mat.NewDense(2, 2, []float64{1, 2, 3, 4}))
		time.Sleep(nap)
		y := ad.Exp(x)
		out := ad.Sum(ad.MatMul(y, x))
		tape.Backward(out)
	}
	step()
	time.Sleep(2 * nap) // between steps: Reset restarts the clock
	step()
	const caller = " < ad_test.TestOpTimes.func1"
	exp, mul, sum, leaf := "ad.Exp"+caller, "ad.MatMul"+caller, "ad.Sum"+caller, "ad.(*Tape).Var"+caller
	for _, site := range []string{exp, mul, sum, leaf} {
		if _, ok := ops.Forward[site]; !ok {
			t.Errorf("no forward time for %q; sites %v", site, ops.Forward)
		}
	}
	for _, site := range []string{exp, mul, sum} {
		if _, ok := ops.Backward[site]; !ok {
			t.Errorf("no backward time for %q; sites %v", site, ops.Backward)
		}
	}
	if got := ops.Forward[exp]; got < 2*nap {
		t.Errorf("Exp's forward time %v over two steps, want at least the two naps before it (%v)", got, 2*nap)
	}
	for site, d := range ops.Forward {
		if site != exp && d >= nap {
			t.Errorf("%s took %v forward: a nap (or the wait between steps) was filed under it", site, d)
		}
	}
	table := ops.Table(2)
	if !strings.Contains(table, exp) || !strings.Contains(table, "total") {
		t.Errorf("table lacks %q or the totals:\n%s", exp, table)
	}
	if first := strings.Split(table, "\n")[1]; !strings.HasSuffix(first, exp) {
		t.Errorf("the slowest site (Exp, after the naps) is not first:\n%s", table)
	}

	tape.TimeOps(nil)
	fwd, bwd := maps.Clone(ops.Forward), maps.Clone(ops.Backward)
	step()
	if !maps.Equal(fwd, ops.Forward) || !maps.Equal(bwd, ops.Backward) {
		t.Errorf("a tape no longer timed still added to its OpTimes")
	}
}
