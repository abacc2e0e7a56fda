package main

import (
	"context"
	"math"
	"testing"

	"sgplab/datasets"
	"sgplab/runner"
)

// The runner's dataset holds the test targets once, in original units:
// each is the standardised target mapped back as y·YScale + YShift, and
// Test.Y is the same slice (a second copy of 1.98M test targets added
// 16 MB to the airline-shaped run's peak memory).
func TestPrepareTestTargetsOnce(t *testing.T) {
	spec := &runner.RunSpec{Dataset: "airline-synthetic", DatasetParams: map[string]any{"n": int64(300)}, Scaling: "box:1"}
	d, err := prepareFunc(t.TempDir())(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	p, err := datasets.Prepare(datasets.Request{Name: spec.Dataset, Params: spec.DatasetParams, Scaling: spec.Scaling, DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if p.YScale == 1 && p.YShift == 0 {
		t.Fatal("the targets are not standardised: the test checks nothing")
	}
	if len(d.TestY) != len(p.Test.Y) || len(d.TestY) == 0 {
		t.Fatalf("%d test targets, want %d", len(d.TestY), len(p.Test.Y))
	}
	for i, y := range p.Test.Y {
		if want := y*p.YScale + p.YShift; math.Float64bits(d.TestY[i]) != math.Float64bits(want) {
			t.Fatalf("test target %d = %.17g, want %.17g", i, d.TestY[i], want)
		}
	}
	if &d.Test.Y[0] != &d.TestY[0] {
		t.Error("the test targets are held twice (standardised and in original units)")
	}
}
