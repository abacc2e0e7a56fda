//go:build !linux

package runner

// MachineMemory is the machine's physical memory in bytes (0 when unknown).
func MachineMemory() float64 { return 0 }
