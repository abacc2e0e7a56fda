//go:build race

package main

// raceDetector: the race detector's shadow memory does not fit under a
// run's memory limit, so memory-limit tests cannot run under -race.
const raceDetector = true
