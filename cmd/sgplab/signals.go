package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// stopSignals are the signals that stop a sweep cleanly: Ctrl-C, and the
// SIGTERM a batch scheduler (Slurm, Kubernetes) sends before killing a job.
var stopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM}

// signalCause is the context cause recorded when a stop signal arrives.
type signalCause struct{ sig os.Signal }

func (c signalCause) Error() string { return "received " + c.sig.String() }

// interruptContext returns a context that the first SIGINT or SIGTERM
// cancels, with a message on stderr. Delivery to this process's handler
// stops right after that first signal, so a second one gets the default
// action and kills the process at once, without waiting for runs in flight
// to be recorded. release must be called when the command ends; it stops
// listening and prints nothing (a normal exit is silent).
func interruptContext(parent context.Context, what string, stderr io.Writer) (ctx context.Context, release func()) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, stopSignals...)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	stop := func(sig os.Signal) {
		signal.Stop(ch)
		fmt.Fprintf(stderr, "\n%s: %s (send it again to kill at once)\n", sig, what)
		cancel(signalCause{sig})
	}
	go func() {
		defer wg.Done()
		select {
		case sig := <-ch:
			stop(sig)
		case <-done:
			// A signal that arrived as the command ended is still
			// reported (select would pick between the two at random).
			select {
			case sig := <-ch:
				stop(sig)
			default:
			}
		}
	}()
	var once sync.Once
	return ctx, func() {
		once.Do(func() {
			signal.Stop(ch)
			close(done)
			wg.Wait()
			cancel(context.Canceled)
		})
	}
}

// exitError carries a specific exit status for Main.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// interrupted wraps err, an interruption of ctx, with the shell's exit
// status for the signal that caused it: 128 + the signal number (130 for
// SIGINT, 143 for SIGTERM).
func interrupted(ctx context.Context, err error) error {
	var c signalCause
	if errors.As(context.Cause(ctx), &c) {
		if s, ok := c.sig.(syscall.Signal); ok {
			return &exitError{code: 128 + int(s), err: fmt.Errorf("%s: %w", c.sig, err)}
		}
	}
	return err
}
