package runner

import (
	"sgplab/gp/linalg"

	"fmt"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// memWatchEvery is how often a run's child with a memory limit checks
// what it uses.
const memWatchEvery = 10 * time.Millisecond

// setMemLimit bounds this process (a run's child) to limit bytes of data
// beyond what it had mapped at start (VmData: heap, C allocations, thread
// stacks). Three layers, because none alone fails cleanly:
//
//   - the Go runtime's soft limit makes the collector work hard before the
//     heap grows past limit;
//   - a watchdog reads VmData every memWatchEvery and, past limit, exits
//     with "memory limit exceeded" on stderr, which the parent records;
//   - RLIMIT_DATA at a quarter above that stops what grows faster than the
//     watchdog looks: the kernel refuses the memory, and the process dies
//     of Go's "fatal error: out of memory" (or, inside the collector, a
//     SIGSEGV or SIGABRT).
//
// RLIMIT_AS does not work here: the Go runtime reserves about a gigabyte
// of address space it never touches, and glibc reserves 64 MiB per thread
// that calls malloc, so a limit on address space failed runs that had
// allocated almost nothing.
func setMemLimit(limit int64) error {
	// OpenBLAS maps its work buffer at its first call; under the hard
	// limit that call was seen to spin instead of failing.
	linalg.WarmUp()
	base, err := vmData()
	if err != nil {
		return fmt.Errorf("memory limit: %w", err)
	}
	hard := uint64(base + limit + limit/4)
	if err := syscall.Setrlimit(syscall.RLIMIT_DATA, &syscall.Rlimit{Cur: hard, Max: hard}); err != nil {
		return fmt.Errorf("memory limit: setrlimit RLIMIT_DATA %d: %w", hard, err)
	}
	debug.SetMemoryLimit(limit)
	go watchMemory(base, limit)
	return nil
}

func watchMemory(base, limit int64) {
	for range time.Tick(memWatchEvery) {
		if d, err := vmData(); err == nil && d-base > limit {
			fmt.Fprintf(os.Stderr, "memory limit exceeded: %s of data beyond the %s at start\n", FormatBytes(d-base), FormatBytes(base))
			os.Exit(2)
		}
	}
}

// vmData is the process's private writable memory (VmData of
// /proc/self/status) in bytes.
func vmData() (int64, error) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) == 3 && f[0] == "VmData:" && f[2] == "kB" {
			v, err := strconv.ParseInt(f[1], 10, 64)
			return v << 10, err
		}
	}
	return 0, fmt.Errorf("no VmData in /proc/self/status")
}
