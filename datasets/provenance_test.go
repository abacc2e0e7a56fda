package datasets

import (
	"math"
	"testing"
)

// The provenance stored with a run records the y scaling, so reports can
// show a dataset's output standard deviation (e.g. the IFF paper's Table 1).
func TestProvenanceRecordsYScaling(t *testing.T) {
	p, err := Prepare(Request{Name: "gp-sample", Params: map[string]any{"n": 200, "n_test": 50}, Scaling: ScaleStdTrain})
	if err != nil {
		t.Fatal(err)
	}
	if p.Provenance.YScale != p.YScale || p.Provenance.YShift != p.YShift {
		t.Fatalf("provenance y scaling (%v, %v), prepared (%v, %v)", p.Provenance.YShift, p.Provenance.YScale, p.YShift, p.YScale)
	}
	// Undo the scaling and recompute the training std independently.
	n := float64(p.Train.N())
	var s, ss float64
	for _, y := range p.Train.Y {
		y = y*p.YScale + p.YShift
		s += y
		ss += y * y
	}
	mean := s / n
	for _, std := range []float64{math.Sqrt(ss/n - mean*mean), math.Sqrt((ss - n*mean*mean) / (n - 1))} {
		if math.Abs(std-p.Provenance.YScale) < 1e-9*std {
			return
		}
	}
	t.Errorf("provenance YScale %v is not the training std of y", p.Provenance.YScale)
}
