// Package workers runs the parallel loops of sgplab's numerical packages
// (linalg's blocked BLAS calls, the kernels' row chunks, the tape's
// elementwise passes) on a pool of goroutines that spin briefly between
// loops before they sleep.
//
// An objective and its gradient start a few hundred such loops, often
// only tens of microseconds apart. A goroutine started for each loop
// waits for the runtime to wake an idle thread, and on a virtual machine
// for the host to wake an idle virtual CPU: up to a quarter of a
// millisecond, during which the core that could run it sits idle (7% of
// an SVGP step at M = 500 on the 2-core reference machine). The pool's
// workers stay awake for spinFor after a loop and take the next one at
// once.
//
// Which goroutine runs an index never matters to the callers: each index
// computes the same thing wherever it runs, so results do not depend on
// the pool.
//
// Nor does a panic escape on whichever goroutine it happens: the loop
// skips the indices not yet started, waits for those running, and raises
// it again on its caller as a *goroutines.Panic (sgplab/internal/goroutines)
// with the stack where it began, so the run that started the loop fails
// and the process and the pool live on.
package workers
