package linalg

import (
	"os"
	"testing"
)

func TestCoreTypeFor(t *testing.T) {
	avx512 := "flags : fpu sse3 avx avx2 fma avx512f avx512dq avx512bw avx512vl\n"
	avx2 := "processor : 0\nflags\t: fpu sse3 avx avx2 fma\n"
	for _, c := range []struct {
		core, cpuinfo, want string
	}{
		{"Prescott", avx512, "SkylakeX"},                          // the fallback on an AVX-512 CPU
		{"Prescott", avx2, "Haswell"},                             // on an AVX2 + FMA CPU
		{"Prescott", "flags : fpu sse3 avx avx2\n", ""},           // no FMA: nothing better
		{"Prescott", "flags : fpu avx512f avx2 fma\n", "Haswell"}, // AVX-512 without BW/DQ/VL
		{"SkylakeX", avx512, ""},                                  // OpenBLAS knew the CPU
		{"Haswell", avx512, ""},                                   // its choice stands
		{"Prescott", "", ""},                                      // no flags line
		{"Prescott", "flags : sse3\nflags : avx2 fma avx512f avx512dq avx512bw avx512vl\n", ""}, // the first line only
	} {
		if got := coreTypeFor(c.core, cpuFlags(c.cpuinfo)); got != c.want {
			t.Errorf("core %s, cpuinfo %q: %q, want %q", c.core, c.cpuinfo, got, c.want)
		}
	}
}

// TestRunsOnPreferredKernels: this test binary runs on the kernels
// sgplab's commands choose for this CPU (the init of blas_openblas.go
// re-executes it), so the suite checks the numbers researchers get.
func TestRunsOnPreferredKernels(t *testing.T) {
	core := BLASCore()
	if core == "" {
		t.Skip("not built with OpenBLAS")
	}
	if ct := os.Getenv("OPENBLAS_CORETYPE"); ct != "" {
		// Set by the caller or by the re-execution: the commands would
		// run on the same kernels.
		t.Logf("OpenBLAS kernels: %s (OPENBLAS_CORETYPE=%s)", core, ct)
		return
	}
	flags, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		t.Skipf("no CPU flags: %v", err)
	}
	if better := coreTypeFor(core, cpuFlags(string(flags))); better != "" {
		t.Errorf("the tests run on OpenBLAS's %s kernels; sgplab's commands run on %s here", core, better)
	}
	t.Logf("OpenBLAS kernels: %s", core)
}
