package figures

import (
	"os"
	"testing"
)

func TestZZView(t *testing.T) {
	dir := os.Getenv("VIEW_DIR")
	if dir == "" {
		t.Skip()
	}
	st, exp := sweepStore(t, sweepOpts{gpr: true, sizeMetric: true, converged: true, lengthscales: []string{"0.5", "2"}})
	spec, _ := ParseReport("sweep.toml", "name = \"sweep\"\n[[grid]]\nname = \"sweep\"\n[report.labels]\nsgpr = \"SGPR (collapsed, Titsias 2009) with a deliberately very long label to test shortening\"\n")
	if _, err := Render(spec, st, dir, Options{Formats: []string{"png"}, Expected: exp}); err != nil {
		t.Fatal(err)
	}
}
