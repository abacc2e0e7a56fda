package goroutines

import (
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
)

// ErrGoexit is the value of the Panic of a goroutine that called
// runtime.Goexit (t.FailNow, log.Fatal's cousins in tests) in the middle of
// some work: that work did not finish, so the waiter must not go on as if it
// had.
var ErrGoexit = errors.New("runtime.Goexit called on a goroutine of a parallel loop")

// A Panic is a panic recovered on one goroutine, to be raised again on
// another.
type Panic struct {
	Value any    // the value passed to panic
	Stack string // the panicking goroutine's frames from the panic down, trimmed
}

// Error is the message of the original value, as an unrecovered panic
// would print it.
func (p *Panic) Error() string {
	if err, ok := p.Value.(error); ok {
		return err.Error()
	}
	return fmt.Sprint(p.Value)
}

// Unwrap returns the original value if it is an error (a runtime.Error,
// for one), so errors.As finds it.
func (p *Panic) Unwrap() error {
	err, _ := p.Value.(error)
	return err
}

// Recovered returns the Panic of v, what recover returned in a function
// deferred on this goroutine, with this goroutine's stack. v == nil means
// the goroutine is exiting through runtime.Goexit (since Go 1.21 panic(nil)
// recovers as a *runtime.PanicNilError). A *Panic raised again from
// another goroutine is returned as it is, keeping the stack where it began.
func Recovered(v any) *Panic {
	if p, ok := v.(*Panic); ok {
		return p
	}
	if v == nil {
		v = ErrGoexit
	}
	return &Panic{Value: v, Stack: Stack()}
}

// Stack is the calling goroutine's stack, called from a deferred function
// while it panics: its header and the frames below the innermost panic (or
// runtime.Goexit), at most maxFrames of them, and its "created by" line.
func Stack() string { return trim(string(debug.Stack())) }

// maxFrames is how many frames from the panic down a Panic keeps: the
// failing function and its callers up to the loop body, without the
// scheduler's frames of a deep fit.
const maxFrames = 12

// trim keeps the goroutine header and the frames below the panic (or
// runtime.Goexit), dropping those of the recovery itself (debug.Stack,
// Recovered, the deferred function, runtime.gopanic), at most maxFrames of
// them, and the "created by" line that says which loop the goroutine ran.
func trim(stack string) string {
	lines := strings.Split(strings.TrimRight(stack, "\n"), "\n")
	if len(lines) == 0 {
		return stack
	}
	header, frames := lines[0], lines[1:]
	for i := 0; i+1 < len(frames); i += 2 {
		if strings.HasPrefix(frames[i], "panic(") || strings.HasPrefix(frames[i], "runtime.Goexit(") {
			frames = frames[i+2:]
			break
		}
	}
	var created []string
	if n := len(frames); n >= 2 && strings.HasPrefix(frames[n-2], "created by ") {
		created, frames = frames[n-2:], frames[:n-2]
	}
	out := append([]string{header}, frames[:min(len(frames), 2*maxFrames)]...)
	if len(frames) > 2*maxFrames {
		out = append(out, fmt.Sprintf("...%d more frames", (len(frames)-2*maxFrames)/2))
	}
	return strings.Join(append(out, created...), "\n")
}

// A Group runs functions on goroutines of their own and waits for them,
// raising on the waiter a panic that one of them recovered. The zero Group
// is ready to use; a Group must not be copied after its first use.
type Group struct {
	wg    sync.WaitGroup
	first atomic.Pointer[Panic]
}

// Go runs f on a new goroutine. A panic in f (or runtime.Goexit) ends only
// f: it is kept for Wait, and the other functions of the group run on.
func (g *Group) Go(f func()) {
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		returned := false
		defer func() {
			if !returned {
				g.first.CompareAndSwap(nil, Recovered(recover()))
			}
		}()
		f()
		returned = true
	}()
}

// Wait waits until every function started by Go has returned or
// panicked, then panics with the first Panic recovered, if any.
func (g *Group) Wait() {
	g.wg.Wait()
	if p := g.first.Load(); p != nil {
		panic(p)
	}
}
