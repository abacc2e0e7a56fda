package main

import (
	"math"
	"os"

	"sgplab/results"
)

// unconvergedRuns returns the ids among done whose stored convergence
// diagnostic says the fit had not converged (x_converged = 0; runs
// without training, and runs stored before the diagnostic existed, are
// not counted).
func unconvergedRuns(dbPath string, done []string) (map[string]bool, error) {
	out := map[string]bool{}
	if len(done) == 0 {
		return out, nil
	}
	if _, err := os.Stat(dbPath); err != nil {
		return out, nil
	}
	store, err := results.OpenReadOnly(dbPath)
	if err != nil {
		return nil, err
	}
	defer store.Close()
	vals, err := store.MetricValues(results.ConvergedMetric, done)
	if err != nil {
		return nil, err
	}
	for id, v := range vals {
		if v == 0 && !math.IsNaN(v) {
			out[id] = true
		}
	}
	return out, nil
}
