package datasets

import (
	"testing"
)

// BenchmarkLoadLargest reads, verifies and parses the largest staged file
// (sgemm: 3.2 MB zip, 241,600 rows × 18 columns), bypassing the cache.
func BenchmarkLoadLargest(b *testing.B) {
	dir := stagedDir(b)
	e, err := lookup("sgemm")
	if err != nil {
		b.Fatal(err)
	}
	var rows int
	for b.Loop() {
		tb, err := load(dir, e, nil)
		if err != nil {
			b.Fatal(err)
		}
		rows = len(tb.y)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(rows)*1e5/1e6, "ms/1e5rows")
}
