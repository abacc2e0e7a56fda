//go:build unix && !linux

package runner

import "runtime/debug"

// setMemLimit sets the Go runtime's soft memory limit: a hard limit
// (RLIMIT_AS above the runtime's reservation) is implemented for Linux
// only.
func setMemLimit(limit int64) error {
	debug.SetMemoryLimit(limit)
	return nil
}
