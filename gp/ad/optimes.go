package ad

import (
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"time"
)

// OpTimes accumulates the wall time of a tape's operations by the site that
// recorded them, forward and backward: where a step's time goes when its
// operations spread their work over goroutines and BLAS calls, which a CPU
// profile adds up by function instead. A site is the operation of this
// package and its first caller outside it, as "ad.SolveLower <
// inference.(*denseFactor).solveL"; operations written with Custom are
// "ad.Custom < " their caller.
//
// The forward time of a node is the wall time since the tape recorded the
// node before it (or since Tape.TimeOps or Tape.Reset): it includes work
// done between the two outside this package. The backward time is that of
// the node's backward function and of adding its results into its inputs'
// gradients. Timing costs a stack walk per node; leave it off when not
// looking.
type OpTimes struct {
	Forward, Backward map[string]time.Duration
	last              time.Time
}

// NewOpTimes returns empty OpTimes.
func NewOpTimes() *OpTimes {
	return &OpTimes{Forward: map[string]time.Duration{}, Backward: map[string]time.Duration{}}
}

// TimeOps makes t add its operations' times to o from now on; nil stops.
func (t *Tape) TimeOps(o *OpTimes) {
	t.ops = o
	if o != nil {
		o.last = time.Now()
	}
}

// recorded notes a node the tape has just recorded.
func (o *OpTimes) recorded(n *Node) {
	now := time.Now()
	n.site = opSite()
	o.Forward[n.site] += now.Sub(o.last)
	o.last = time.Now() // the stack walk is not the next node's
}

// adPrefix is this package's import path and a dot, as function names
// start.
var adPrefix = reflect.TypeFor[Tape]().PkgPath() + "."

// opSite names the outermost function of this package on the stack and
// its caller.
func opSite() string {
	pcs := make([]uintptr, 32)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(3, pcs)])
	op := ""
	for {
		f, more := frames.Next()
		if !strings.HasPrefix(f.Function, adPrefix) {
			return shortName(op) + " < " + shortName(f.Function)
		}
		op = f.Function
		if !more {
			return shortName(op)
		}
	}
}

// shortName drops the import path before the package name.
func shortName(fn string) string {
	return fn[strings.LastIndex(fn, "/")+1:]
}

// Table lists the sites by their forward plus backward time, per step over
// steps steps, with their totals.
func (o *OpTimes) Table(steps int) string {
	sites := map[string]bool{}
	var fwd, bwd time.Duration
	for s, d := range o.Forward {
		sites[s] = true
		fwd += d
	}
	for s, d := range o.Backward {
		sites[s] = true
		bwd += d
	}
	order := make([]string, 0, len(sites))
	for s := range sites {
		order = append(order, s)
	}
	total := func(s string) time.Duration { return o.Forward[s] + o.Backward[s] }
	slices.SortFunc(order, func(a, b string) int {
		if c := total(b) - total(a); c != 0 {
			return int(c)
		}
		return strings.Compare(a, b)
	})
	ms := func(d time.Duration) float64 { return d.Seconds() * 1e3 / float64(max(steps, 1)) }
	var b strings.Builder
	fmt.Fprintf(&b, "%10s %10s  %s (ms per step over %d steps)\n", "forward", "backward", "site", steps)
	for _, s := range order {
		name := s
		if name == "" {
			name = "(nodes recorded before TimeOps)"
		}
		fmt.Fprintf(&b, "%10.3f %10.3f  %s\n", ms(o.Forward[s]), ms(o.Backward[s]), name)
	}
	fmt.Fprintf(&b, "%10.3f %10.3f  total\n", ms(fwd), ms(bwd))
	return b.String()
}
