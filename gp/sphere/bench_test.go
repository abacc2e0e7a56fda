//go:build unix

package sphere

import (
	"math/rand/v2"
	"syscall"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// cpuSeconds is the process's user and system CPU time: on a shared
// machine it, unlike ns/op, hardly depends on the load.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)*1e-6
}

// BenchmarkEval is the harmonics of one chunk of the statistics'
// precompute: VISH's d = 9 (eight inputs and the bias), levels 0…3
// (M = 210), 10 000 points. cpu-ms/op is the CPU time over all cores.
func BenchmarkEval(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	basis, _ := NewBasis(9, 3)
	x := randomUnit(rng, 10000, 9)
	out := mat.NewDense(basis.M(), 10000, nil)
	c0 := cpuSeconds()
	for b.Loop() {
		basis.EvalInto(out, x)
	}
	b.ReportMetric((cpuSeconds()-c0)*1e3/float64(b.N), "cpu-ms/op")
}
