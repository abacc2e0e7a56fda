package datasets

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// Reference outputs of the Mersenne Twister and of numpy's legacy
// RandomState, independent of this implementation: the first outputs and
// the 10 000th output of MT19937 seeded with 5489 (the C++ standard's
// std::mt19937 check value), numpy.random.seed(0); numpy.random.rand(), and
// numpy.random.seed(s); numpy.random.permutation(10) for s = 0 and 42.
func TestMT19937AndNumpyShuffle(t *testing.T) {
	m := newMT19937(5489)
	for i, want := range []uint32{3499211612, 581869302, 3890346734, 3586334585, 545404204} {
		if got := m.uint32(); got != want {
			t.Fatalf("mt19937(5489) output %d = %d, want %d", i, got, want)
		}
	}
	for i := 5; i < 9999; i++ {
		m.uint32()
	}
	if got := m.uint32(); got != 4123659995 {
		t.Errorf("mt19937(5489) 10000th output = %d, want 4123659995", got)
	}
	if got := newMT19937(0).float64(); math.Abs(got-0.5488135039273248) > 1e-16 {
		t.Errorf("numpy.random.seed(0); rand() = %.17g, want 0.5488135039273248", got)
	}
	for _, c := range []struct {
		seed uint32
		want []int
	}{
		{0, []int{2, 8, 4, 9, 1, 6, 7, 3, 0, 5}},
		{42, []int{8, 1, 5, 0, 7, 2, 9, 4, 3, 6}},
	} {
		p := seq(0, 10)
		numpyShuffle(p, newMT19937(c.seed))
		if !slices.Equal(p, c.want) {
			t.Errorf("numpy.random.seed(%d); permutation(10) = %v, want %v", c.seed, p, c.want)
		}
	}
}

// Protocol bb-90-10 is a permutation of every row with int(0.9 N) training
// rows, differs between splits, repeats for the same split, and refuses a
// subsample.
func TestProtocolBB9010(t *testing.T) {
	dir := os.Getenv("SGPLAB_DATA")
	if dir == "" {
		t.Skip("SGPLAB_DATA not set: the UCI yacht copy is needed (export SGPLAB_DATA=/work/shared/datasets)")
	}
	if _, err := os.Stat(filepath.Join(dir, "yacht")); err != nil {
		t.Skipf("yacht not staged in %s: %v", dir, err)
	}
	get := func(split int) *Prepared {
		p, err := Prepare(Request{Name: "yacht", Split: split, Protocol: ProtoBB9010, Scaling: ScaleStdFull, DataDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	a, b, a2 := get(0), get(1), get(0)
	if a.Train.N() != 277 || a.Test.N() != 31 {
		t.Errorf("yacht split 0: %d train / %d test, want int(0.9 · 308) = 277 / 31", a.Train.N(), a.Test.N())
	}
	if !slices.Equal(a.Train.Y, a2.Train.Y) {
		t.Error("the same split gave different training rows")
	}
	if slices.Equal(a.Train.Y, b.Train.Y) {
		t.Error("splits 0 and 1 gave the same training rows")
	}
	// Full-data standardisation: train and test together have mean 0 and
	// standard deviation sd/(sd + 1e-6) in every column and in y.
	all := append(append([]float64(nil), a.Train.Y...), a.Test.Y...)
	var mean, sq float64
	for _, v := range all {
		mean += v
	}
	mean /= float64(len(all))
	for _, v := range all {
		sq += (v - mean) * (v - mean)
	}
	if sd := math.Sqrt(sq / float64(len(all))); math.Abs(mean) > 1e-12 || math.Abs(sd-1) > 1e-5 {
		t.Errorf("standardised y over all rows: mean %g, sd %g, want 0 and 1", mean, sd)
	}
	if _, err := Prepare(Request{Name: "yacht", Params: map[string]any{"n": 100}, Protocol: ProtoBB9010, DataDir: dir}); err == nil {
		t.Error("bb-90-10 with a subsample n: no error")
	}
}
