package figures

import (
	"strings"
	"testing"
)

func TestLogTicks(t *testing.T) {
	cases := []struct {
		min, max float64
		labels   string
	}{
		{10, 80, "10 20 30 50"}, {10, 500, "10 20 50 100 200 500"},
		{0.12, 0.42, "0.2 0.3 0.4"},
		{1, 1e4, "1 10 100 1000 10000"},
		{1e-12, 1e12, "1e-12 1e-08 0.0001 1 10000 1e+08 1e+12"},
	}
	for _, c := range cases {
		var ls []string
		for _, tk := range (LogTicks{}).Ticks(c.min, c.max) {
			if tk.Value < c.min || tk.Value > c.max {
				t.Errorf("[%v, %v]: tick %v outside", c.min, c.max, tk.Value)
			}
			if tk.Label != "" {
				ls = append(ls, tk.Label)
			}
		}
		if got := strings.Join(ls, " "); got != c.labels {
			t.Errorf("[%v, %v]: labels %q, want %q", c.min, c.max, got, c.labels)
		}
	}
}
