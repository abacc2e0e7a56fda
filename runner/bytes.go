package runner

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// byteUnits are the suffixes ParseBytes accepts, longest first so that
// "MiB" is not read as "B".
var byteUnits = []struct {
	suffix string
	size   float64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
	{"kB", 1e3}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
	{"B", 1},
}

// ParseBytes parses a memory size such as "512MiB", "1.5GiB", "800MB" or
// a bare number of bytes. KiB, MiB, GiB and TiB are powers of 1024; kB,
// MB, GB and TB powers of 1000. A bare K, M, G or T is refused as
// ambiguous.
func ParseBytes(s string) (int64, error) {
	t := strings.TrimSpace(s)
	num, size := t, 1.0
	for _, u := range byteUnits {
		if rest, ok := strings.CutSuffix(t, u.suffix); ok {
			num, size = strings.TrimSpace(rest), u.size
			break
		}
	}
	if size == 1 && num != "" {
		if c := num[len(num)-1]; strings.IndexByte("kKmMgGtT", c) >= 0 {
			return 0, fmt.Errorf("memory size %q: %c is ambiguous; write %siB (powers of 1024) or %sB (powers of 1000)", s, c, num, num)
		}
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("memory size %q: want a number of bytes with an optional unit, e.g. 512MiB, 2GiB or 800MB", s)
	}
	b := v * size
	if b < 0 || b >= math.MaxInt64 {
		return 0, fmt.Errorf("memory size %q is out of range", s)
	}
	return int64(b), nil
}

// FormatBytes writes n bytes in the largest binary unit that keeps it ≥ 1,
// to one decimal place, e.g. "512 MiB" or "1.5 GiB".
func FormatBytes(n int64) string {
	v, unit := float64(n), "B"
	for _, u := range []string{"KiB", "MiB", "GiB", "TiB"} {
		if math.Abs(v) < 1024 {
			break
		}
		v, unit = v/1024, u
	}
	return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64) + " " + unit
}
