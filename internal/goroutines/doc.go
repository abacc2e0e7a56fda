// Package goroutines hands a panic on a goroutine started for some work
// back to the goroutine that waits for that work.
//
// A panic that no function on its own goroutine recovers ends the whole
// process. The runner recovers a run's panics on the run's goroutine, so a
// parallel loop of the numerical code must not let one escape on a
// goroutine of its own: it recovers it there (Recovered), waits for the
// rest of the loop and raises it again on the goroutine that started the
// loop (Group, and the pool of gp/internal/workers), where the runner
// records the run as failed and the sweep goes on.
//
// The value raised again is a *Panic: the original value, which its
// message and errors.As still see, and the trimmed stack of the goroutine
// that panicked, which the stack of the goroutine that raises it again no
// longer shows.
package goroutines
