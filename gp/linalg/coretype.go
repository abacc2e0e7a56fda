package linalg

import (
	"os"
	"strings"
	"syscall"
)

// PreferredCoreType is the OPENBLAS_CORETYPE that gives this CPU the kernels
// it can run, when OpenBLAS chose worse ones at load time: OpenBLAS 0.3.21
// (Debian 12) does not know newer Intel models (Sapphire and Emerald
// Rapids) and falls back to its SSE3 "Prescott" kernels, which run dgemm
// and dsyrk 4–5× slower than its AVX-512 "SkylakeX" kernels on the same
// CPU. It is "" when OpenBLAS is not in use, when OPENBLAS_CORETYPE is set
// (the user's choice stands), or when OpenBLAS's choice is not the
// fallback. The kernels change results in their last bits, as any other
// BLAS would; the runs record them (BLASCore).
func PreferredCoreType() string {
	if os.Getenv("OPENBLAS_CORETYPE") != "" {
		return ""
	}
	core := BLASCore()
	if core == "" {
		return ""
	}
	flags, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	return coreTypeFor(core, cpuFlags(string(flags)))
}

// coreTypeFor is the kernel set to ask OpenBLAS for when it chose core on
// a CPU with the given feature flags (/proc/cpuinfo's names), or "".
func coreTypeFor(core string, flags map[string]bool) string {
	if core != "Prescott" {
		return ""
	}
	switch {
	case flags["avx512f"] && flags["avx512dq"] && flags["avx512bw"] && flags["avx512vl"]:
		return "SkylakeX"
	case flags["avx2"] && flags["fma"]:
		return "Haswell"
	}
	return ""
}

// cpuFlags reads the first "flags" line of /proc/cpuinfo.
func cpuFlags(cpuinfo string) map[string]bool {
	flags := map[string]bool{}
	for line := range strings.Lines(cpuinfo) {
		name, value, ok := strings.Cut(line, ":")
		if !ok || strings.TrimSpace(name) != "flags" {
			continue
		}
		for _, f := range strings.Fields(value) {
			flags[f] = true
		}
		break
	}
	return flags
}

// ReexecWithPreferredCoreType replaces the process by itself with
// OPENBLAS_CORETYPE set to PreferredCoreType, when there is one: OpenBLAS
// picks its kernels when the library loads, before main, so only a new
// process can change them. A command's main calls it first; the new
// process (and every child it starts) inherits the variable, so it never
// re-executes twice. It returns only when there is nothing to do or the
// exec failed (then the process goes on with OpenBLAS's choice).
func ReexecWithPreferredCoreType() error {
	ct := PreferredCoreType()
	if ct == "" {
		return nil
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	return syscall.Exec(exe, os.Args, append(os.Environ(), "OPENBLAS_CORETYPE="+ct))
}
