package results

import (
	"fmt"
	"path/filepath"
	"testing"
)

// BenchmarkSaveRun writes one finished run (20 metrics, 1000 trace rows, 4
// parameters) per iteration to a file database, as a sweep does.
func BenchmarkSaveRun(b *testing.B) {
	s, err := Open(filepath.Join(b.TempDir(), "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	r, m, tr := sampleRun(""), sampleMetrics(20), sampleTrace(1000)
	i := 0
	for b.Loop() {
		r.ID = fmt.Sprintf("run-%d", i)
		i++
		if err := s.SaveRun(r, m, tr); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkResaveRun replaces the same run every iteration.
func BenchmarkResaveRun(b *testing.B) {
	s, err := Open(filepath.Join(b.TempDir(), "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	r, m, tr := sampleRun("same"), sampleMetrics(20), sampleTrace(1000)
	for b.Loop() {
		if err := s.SaveRun(r, m, tr); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStatuses looks up a 1000-run grid for resume.
func BenchmarkStatuses(b *testing.B) {
	s, err := Open(filepath.Join(b.TempDir(), "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ids := make([]string, 1000)
	for i := range ids {
		ids[i] = fmt.Sprintf("run-%d", i)
		if i%2 == 0 {
			if err := s.SaveRun(sampleRun(ids[i]), nil, nil); err != nil {
				b.Fatal(err)
			}
		}
	}
	for b.Loop() {
		if _, err := s.Statuses(ids); err != nil {
			b.Fatal(err)
		}
	}
}
