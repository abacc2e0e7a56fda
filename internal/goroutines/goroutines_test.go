package goroutines

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// catch runs f and returns what it panicked with.
func catch(f func()) (r any) {
	defer func() { r = recover() }()
	f()
	return nil
}

func TestGroupWaitsWithoutPanic(t *testing.T) {
	var g Group
	var ran atomic.Int64
	for range 8 {
		g.Go(func() { ran.Add(1) })
	}
	if r := catch(g.Wait); r != nil {
		t.Fatalf("Wait panicked with %v", r)
	}
	if ran.Load() != 8 {
		t.Errorf("%d of 8 functions ran before Wait returned", ran.Load())
	}
}

// A panic on one goroutine of a group is raised by Wait once the others
// have returned, with the original value and the stack of the goroutine
// that panicked, from the panic down to the group that started it.
func TestGroupRaisesPanicOnWaiter(t *testing.T) {
	var g Group
	var others atomic.Int64
	for k := range 4 {
		g.Go(func() {
			if k == 2 {
				var s []int
				_ = s[k] // a runtime error
			}
			time.Sleep(10 * time.Millisecond)
			others.Add(1)
		})
	}
	r := catch(g.Wait)
	p, ok := r.(*Panic)
	if !ok {
		t.Fatalf("Wait raised %v (%T), want a *Panic", r, r)
	}
	if others.Load() != 3 {
		t.Errorf("raised after %d of the 3 other goroutines returned", others.Load())
	}
	var re runtime.Error
	if !errors.As(p, &re) || !strings.Contains(p.Error(), "index out of range [2] with length 0") {
		t.Errorf("panic %q (%T), want the runtime.Error of the index", p.Error(), p.Value)
	}
	lines := strings.Split(p.Stack, "\n")
	if !strings.HasPrefix(lines[0], "goroutine ") || !strings.Contains(lines[1], "TestGroupRaisesPanicOnWaiter") {
		t.Errorf("stack does not start with the panicking frame:\n%s", p.Stack)
	}
	if !strings.HasPrefix(lines[len(lines)-2], "created by sgplab/internal/goroutines.(*Group).Go") {
		t.Errorf("stack does not end with the goroutine's creator:\n%s", p.Stack)
	}
	for _, frame := range []string{"runtime/debug.Stack", "goroutines.Recovered", "panic("} {
		if strings.Contains(p.Stack, frame) {
			t.Errorf("stack keeps the recovery's frame %s:\n%s", frame, p.Stack)
		}
	}
}

// A Panic raised again through another group keeps its value and stack.
func TestGroupNested(t *testing.T) {
	var outer Group
	outer.Go(func() {
		var inner Group
		inner.Go(func() { panic("inner") })
		inner.Wait()
	})
	p, ok := catch(outer.Wait).(*Panic)
	if !ok || p.Value != "inner" {
		t.Fatalf("recovered %#v, want the inner panic", p)
	}
	if !strings.Contains(p.Stack, "TestGroupNested.func1.1") {
		t.Errorf("stack is not the inner goroutine's:\n%s", p.Stack)
	}
}

// runtime.Goexit in a group's function is not a function that returned.
func TestGroupGoexit(t *testing.T) {
	var g Group
	g.Go(runtime.Goexit)
	p, ok := catch(g.Wait).(*Panic)
	if !ok || !errors.Is(p, ErrGoexit) {
		t.Fatalf("recovered %v, want ErrGoexit", p)
	}
	if !strings.Contains(p.Stack, "TestGroupGoexit") && !strings.Contains(p.Stack, "(*Group).Go.func1") {
		t.Errorf("stack does not show where Goexit was called:\n%s", p.Stack)
	}
}

func TestTrim(t *testing.T) {
	frame := func(i int) string { return fmt.Sprintf("pkg.f%d()\n\t/src/f.go:%d +0x1", i, i) }
	frames := func(lo, hi int) string {
		var s []string
		for i := lo; i < hi; i++ {
			s = append(s, frame(i))
		}
		return strings.Join(s, "\n")
	}
	recovery := "runtime/debug.Stack()\n\t/go/debug/stack.go:26 +0x5e\npkg.recover()\n\t/src/r.go:1 +0x1\npanic({0x1, 0x2})\n\t/go/runtime/panic.go:783 +0x132\n"
	created := "\ncreated by pkg.loop in goroutine 7\n\t/src/loop.go:9 +0x4"
	for _, tt := range []struct {
		name, in, want string
	}{
		{"short", "goroutine 9 [running]:\n" + recovery + frames(0, 3) + created + "\n",
			"goroutine 9 [running]:\n" + frames(0, 3) + created},
		{"long", "goroutine 9 [running]:\n" + recovery + frames(0, 40) + created + "\n",
			"goroutine 9 [running]:\n" + frames(0, maxFrames) + "\n...28 more frames" + created},
		{"main goroutine", "goroutine 1 [running]:\n" + recovery + frames(0, 2) + "\n",
			"goroutine 1 [running]:\n" + frames(0, 2)},
		{"no panic frame", "goroutine 9 [running]:\n" + frames(0, 2) + created,
			"goroutine 9 [running]:\n" + frames(0, 2) + created},
	} {
		if got := trim(tt.in); got != tt.want {
			t.Errorf("%s: trim gives\n%s\nwant\n%s", tt.name, got, tt.want)
		}
	}
}
