package runner

import (
	"io"
	"time"
)

// RunTiming is what a finished run measured, for ReplayETA.
type RunTiming struct {
	Took       time.Duration // the whole run
	Fit        time.Duration // its fit (the train_seconds metric)
	Iterations int           // iterations run; < 0 unknown
	Done       bool          // whether it finished as done
}

// ETAPoint is the ETA the progress line shows once Done runs have
// finished, and the time the runs left then took.
type ETAPoint struct {
	Done        int
	ETA, Actual time.Duration
}

// ReplayETA replays a sweep that already ran through the progress line's
// cost model: one run at a time, in the order Run makes them, each taking
// the time timings says it took (runs without a timing are left out). It
// returns, after each run's end, the ETA shown and the time the runs left
// actually took, so the cost model can be measured against sweeps of any
// size without running them again (cmd/etareplay).
//
// present, as Runner.Present, reports whether a run's dataset files are
// there (nil: all are): the runs of an absent dataset cost nothing, as in a
// live sweep.
func ReplayETA(todo []*RunSpec, size func(*RunSpec) int, timings map[string]RunTiming, present func(*RunSpec) bool) []ETAPoint {
	var runs []*RunSpec
	for _, s := range probeFirst(todo, size, 1) {
		if _, ok := timings[s.ID]; ok {
			runs = append(runs, s)
		}
	}
	p := newProgress(io.Discard, false, runs, 0, size)
	p.markAbsent(runs, present)
	left := time.Duration(0)
	for _, s := range runs {
		left += timings[s.ID].Took
	}
	points := make([]ETAPoint, 0, len(runs))
	for i, s := range runs {
		t := timings[s.ID]
		p.finished++
		p.settle(s, t.Done, t.Took, t.Fit, t.Iterations)
		left -= t.Took
		points = append(points, ETAPoint{Done: i + 1, ETA: time.Duration(min(p.eta(), float64(maxETA))), Actual: left})
	}
	return points
}
