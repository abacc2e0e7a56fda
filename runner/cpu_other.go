//go:build !unix

package runner

import "math"

// processCPUSeconds is not available on this platform.
func processCPUSeconds() float64 { return math.NaN() }
