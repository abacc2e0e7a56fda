//go:build unix

package runner

import (
	"fmt"
	"os"
	"runtime"
	"syscall"
)

// signalNames are the signals a run's child may die of.
var signalNames = map[syscall.Signal]string{
	syscall.SIGKILL: "SIGKILL", syscall.SIGSEGV: "SIGSEGV", syscall.SIGBUS: "SIGBUS",
	syscall.SIGABRT: "SIGABRT", syscall.SIGILL: "SIGILL", syscall.SIGFPE: "SIGFPE",
	syscall.SIGTERM: "SIGTERM", syscall.SIGINT: "SIGINT", syscall.SIGQUIT: "SIGQUIT",
	syscall.SIGHUP: "SIGHUP", syscall.SIGPIPE: "SIGPIPE", syscall.SIGXCPU: "SIGXCPU",
	syscall.SIGTRAP: "SIGTRAP", syscall.SIGSYS: "SIGSYS",
}

// exitSignal returns the name of the signal that killed the process, and
// whether one did.
func exitSignal(st *os.ProcessState) (string, bool) {
	if st == nil {
		return "", false
	}
	ws, ok := st.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() {
		return "", false
	}
	if name, ok := signalNames[ws.Signal()]; ok {
		return name, true
	}
	return fmt.Sprintf("signal %d (%v)", int(ws.Signal()), ws.Signal()), true
}

// peakRSS is the process's largest resident set in bytes (wait4's
// ru_maxrss), 0 if unknown.
func peakRSS(st *os.ProcessState) int64 {
	if st == nil {
		return 0
	}
	ru, ok := st.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0
	}
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		return int64(ru.Maxrss) // bytes there, KiB elsewhere
	}
	return int64(ru.Maxrss) << 10
}
