//go:build !unix

package runner

// processCPUSeconds is NaN where getrusage is not available.
func processCPUSeconds() float64 { return nan() }

// processPeakRSS is NaN where getrusage is not available.
func processPeakRSS() float64 { return nan() }
