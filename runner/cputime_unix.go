//go:build unix

package runner

import "syscall"

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
