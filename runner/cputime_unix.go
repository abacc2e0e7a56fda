//go:build unix

package runner

import (
	"runtime"
	"syscall"
)

// processCPUSeconds is the user plus system CPU time the process has used
// so far (getrusage RUSAGE_SELF), or NaN where it cannot be read.
func processCPUSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return nan()
	}
	return tvSeconds(ru.Utime) + tvSeconds(ru.Stime)
}

func tvSeconds(t syscall.Timeval) float64 {
	return float64(t.Sec) + float64(t.Usec)*1e-6
}

// processPeakRSS is the largest resident set size the process has had so
// far, in bytes (getrusage RUSAGE_SELF ru_maxrss), or NaN where it cannot
// be read.
func processPeakRSS() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return nan()
	}
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		return float64(ru.Maxrss) // bytes there, KiB elsewhere
	}
	return float64(ru.Maxrss) * 1024
}
