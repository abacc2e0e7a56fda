package runner

import "syscall"

// MachineMemory is the machine's physical memory in bytes (0 when unknown).
func MachineMemory() float64 {
	var si syscall.Sysinfo_t
	if err := syscall.Sysinfo(&si); err != nil {
		return 0
	}
	return float64(si.Totalram) * float64(si.Unit)
}
