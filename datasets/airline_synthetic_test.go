package datasets

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// The airline-shaped synthetic set: 8 columns, floor(2n/3) training rows,
// column ranges of the airline features, unit total variance of y
// (0.17 signal + 0.83 noise), unit-box inputs after the default scaling,
// reproducible per (split, seed), labelled synthetic in its provenance.
func TestAirlineSynthetic(t *testing.T) {
	const n = 30000
	get := func(split int, scaling string) *Prepared {
		p, err := Prepare(Request{Name: "airline-synthetic", Params: map[string]any{"n": n}, Split: split, Scaling: scaling})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	raw := get(0, ScaleNone)
	if raw.Train.N() != 20000 || raw.Test.N() != 10000 || raw.Train.D() != 8 {
		t.Fatalf("%d train, %d test, %d columns; want 20000, 10000, 8", raw.Train.N(), raw.Test.N(), raw.Train.D())
	}
	ranges := [8][2]float64{{1, 4}, {1, 31}, {1, 7}, {0, 40}, {15, 660}, {20, 6000}, {0, 1439}, {300, 1439}}
	for d, r := range ranges {
		col := raw.Train.X.ColView(d)
		for i := 0; i < col.Len(); i++ {
			if v := col.AtVec(i); v < r[0] || v > r[1] || v != math.Round(v) {
				t.Fatalf("column %d row %d = %v, want an integer in [%v, %v]", d, i, v, r[0], r[1])
			}
		}
	}
	var mean, sq float64
	for _, v := range raw.Train.Y {
		mean += v
	}
	mean /= float64(raw.Train.N())
	for _, v := range raw.Train.Y {
		sq += (v - mean) * (v - mean)
	}
	if v := sq / float64(raw.Train.N()); math.Abs(v-1) > 0.05 {
		t.Errorf("var(y) = %.4f, want 0.17 + 0.83 = 1 ± 0.05", v)
	}
	if !strings.Contains(strings.Join(raw.Provenance.Notes, " "), "SYNTHETIC") {
		t.Errorf("provenance notes do not say synthetic: %v", raw.Provenance.Notes)
	}
	box := get(0, "")
	for d := 0; d < 8; d++ {
		col := box.Train.X.ColView(d)
		lo, hi := math.Inf(1), math.Inf(-1)
		for i := 0; i < col.Len(); i++ {
			lo, hi = math.Min(lo, col.AtVec(i)), math.Max(hi, col.AtVec(i))
		}
		if math.Abs(lo) > 1e-12 || math.Abs(hi-1) > 1e-12 {
			t.Errorf("default scaling: column %d spans [%g, %g], want [0, 1]", d, lo, hi)
		}
	}
	if !slices.Equal(get(0, ScaleNone).Train.Y, raw.Train.Y) {
		t.Error("split 0 drawn twice differs")
	}
	if slices.Equal(get(1, ScaleNone).Train.Y, raw.Train.Y) {
		t.Error("splits 0 and 1 are the same draw")
	}
	if _, err := Prepare(Request{Name: "airline-synthetic", Params: map[string]any{"n": 2}}); err == nil {
		t.Error("n = 2: no error")
	}
	if _, err := Prepare(Request{Name: "airline-synthetic", Params: map[string]any{"dim": 3}}); err == nil || !strings.Contains(err.Error(), "valid: n") {
		t.Errorf("unknown param: error %v, want one listing the valid parameter n", err)
	}
}

// TestAirlineSyntheticPinned pins the bits of a small draw, unscaled and
// box-scaled: drawing the rows straight into the training and test
// matrices and scaling them in place must not change a value.
func TestAirlineSyntheticPinned(t *testing.T) {
	for _, c := range []struct{ scaling, sha string }{
		{ScaleNone, "bfb4d2d73cbecac76c60d4762b1ad6c21e63f7f9250edc3206f6c8ea215da1d3"},
		{"", "3e5006b9d7edfd9e24f21ebcdaf5c0ec88c36e2d9b2571ebb1c4fc59d7f2f939"},
	} {
		p, err := Prepare(Request{Name: "airline-synthetic", Params: map[string]any{"n": 3001}, Split: 1, Scaling: c.scaling})
		if err != nil {
			t.Fatal(err)
		}
		h := sha256.New()
		for _, d := range [][]float64{p.Train.X.RawMatrix().Data, p.Train.Y, p.Test.X.RawMatrix().Data, p.Test.Y} {
			for _, v := range d {
				binary.Write(h, binary.LittleEndian, math.Float64bits(v))
			}
		}
		if got := hex.EncodeToString(h.Sum(nil)); got != c.sha {
			t.Errorf("scaling %q: sha256 of the bits %s, pinned %s", c.scaling, got, c.sha)
		}
	}
}

// TestAirlineSyntheticMemory: preparing the set allocates little more than
// the set itself (at 5.9M rows 427 MB; drawn into one matrix, split by
// copying and scaled into new matrices it took three times that).
func TestAirlineSyntheticMemory(t *testing.T) {
	const n = 60000
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	p, err := Prepare(Request{Name: "airline-synthetic", Params: map[string]any{"n": n}})
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	size := float64(8 * (p.Train.N() + p.Test.N()) * (p.Train.D() + 1))
	if got := float64(after.TotalAlloc - before.TotalAlloc); got > 1.2*size {
		t.Errorf("preparing %d rows allocated %.0f MB for a set of %.0f MB; want at most 1.2×", n, got/1e6, size/1e6)
	}
}
