//go:build !unix

package runner

import "math"

// processCPUSeconds is unknown (NaN) where getrusage is not available.
func processCPUSeconds() float64 { return math.NaN() }
