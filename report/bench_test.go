package report

import (
	"fmt"
	"path/filepath"
	"testing"

	"sgplab/internal/reporttest"
	"sgplab/results"
)

// BenchmarkRenderLarge renders the fixture report against a database with
// 2 000 extra runs in the table's grid (the size of a full paper sweep).
func BenchmarkRenderLarge(b *testing.B) {
	spec, err := Parse("demo.toml", reporttest.Config)
	if err != nil {
		b.Fatal(err)
	}
	st := reporttest.Store(b)
	for i := 0; i < 2000; i++ {
		r := results.Run{ID: fmt.Sprintf("big-%d", i), Grid: "uci", Method: []string{"sgpr", "svgp", "vff"}[i%3],
			Dataset: fmt.Sprintf("ds%02d", i%40), Split: i / 120, Status: results.StatusDone, Profile: "full",
			Params: []results.Param{{Name: "num_inducing", Value: "100"}, {Name: "kernel", Value: "se"}}}
		if err := st.SaveRun(r, []results.Metric{{Name: "rmse", Value: float64(i % 7)}, {Name: "nlpd", Value: 1}}, nil); err != nil {
			b.Fatal(err)
		}
	}
	out := b.TempDir()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Render(spec, st, filepath.Join(out, fmt.Sprint(i)), Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
