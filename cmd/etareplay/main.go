// Command etareplay measures the progress line's ETA on a sweep that
// already ran: it replays the runs of a grid file's profile, as stored in
// its results database, through the runner's cost model in the order the
// runner makes them, and prints after each run the ETA shown beside the
// time the runs left actually took, and how often the two were within 2×.
//
//	go run ./cmd/etareplay [-profile quick] [-db out/NAME/results.db] CONFIG.toml
//
// A run's time is its finished − started in the database; runs made with
// several jobs overlapped, so replay sweeps made with --jobs 1. On a shared
// machine whose load changed during the sweep, wall times measure the load
// as much as the cost model; -clock cpu replays the runs' CPU seconds
// instead (x_cpu_seconds, and x_train_cpu_seconds for the fit), the sweep as
// it would have gone at a constant load: the ETA and the actual are then
// CPU seconds.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"sgplab/datasets"
	"sgplab/results"
	"sgplab/runner"
)

func main() {
	profile := flag.String("profile", "quick", "the profile the sweep ran")
	db := flag.String("db", "", "results database (default: the config's, out/NAME/results.db)")
	every := flag.Int("every", 0, "print every k-th point (default: about 20 lines)")
	dataDir := flag.String("data-dir", envOr("SGPLAB_DATA", "./data"), "dataset directory ($SGPLAB_DATA): runs of absent datasets cost nothing, as in sgplab run")
	clock := flag.String("clock", "wall", "wall: runs take finished − started; cpu: their CPU seconds (load-free)")
	flag.Parse()
	if *clock != "wall" && *clock != "cpu" {
		fmt.Fprintf(os.Stderr, "etareplay: -clock %q: want wall or cpu\n", *clock)
		os.Exit(2)
	}
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: etareplay [-profile quick] [-db PATH] [-every K] CONFIG.toml")
		os.Exit(2)
	}
	if err := replay(flag.Arg(0), *profile, *db, *dataDir, *every, *clock == "cpu"); err != nil {
		fmt.Fprintln(os.Stderr, "etareplay:", err)
		os.Exit(1)
	}
}

func replay(config, profile, dbPath, dataDir string, every int, cpuClock bool) error {
	f, err := runner.Load(config)
	if err != nil {
		return err
	}
	specs, _, err := f.Expand(runner.ExpandOptions{Profile: profile, Shape: datasets.Shape})
	if err != nil {
		return err
	}
	if dbPath == "" {
		dbPath = filepath.Join("out", f.Name, "results.db")
	}
	store, err := results.OpenReadOnly(dbPath)
	if err != nil {
		return err
	}
	defer store.Close()
	ids := make([]string, len(specs))
	for i, s := range specs {
		ids[i] = s.ID
	}
	fitMetric := "train_seconds"
	if cpuClock {
		fitMetric = runner.TrainCPUMetric
	}
	fits, err := store.MetricValues(fitMetric, ids)
	if err != nil {
		return err
	}
	cpus, err := store.MetricValues(runner.CPUSecondsMetric, ids)
	if err != nil {
		return err
	}
	its, err := store.MetricValues("iterations", ids)
	if err != nil {
		return err
	}
	timings := map[string]runner.RunTiming{}
	for _, id := range ids {
		r, ok, err := store.Run(id)
		if err != nil {
			return err
		}
		if !ok || r.Started.IsZero() || r.Finished.IsZero() {
			continue
		}
		t := runner.RunTiming{Took: r.Finished.Sub(r.Started), Iterations: -1, Done: r.Status == results.StatusDone}
		if cpuClock {
			v, ok := cpus[id]
			if !ok {
				continue // a failed run, or an OS without CPU times
			}
			t.Took = time.Duration(v * float64(time.Second))
		}
		t.Fit = t.Took
		if v, ok := fits[id]; ok {
			t.Fit = time.Duration(v * float64(time.Second))
		}
		if v, ok := its[id]; ok {
			t.Iterations = int(v)
		}
		timings[id] = t
	}
	size := func(s *runner.RunSpec) int { return datasets.Size(s.Dataset, s.DatasetParams) }
	// As sgplab run: a dataset whose files are absent costs nothing (its
	// runs fail at once).
	present := func(s *runner.RunSpec) bool { return datasets.Present(s.Dataset, dataDir) }
	points := runner.ReplayETA(specs, size, timings, present)
	if len(points) == 0 {
		return fmt.Errorf("%s holds none of the %d runs of %s (profile %s)", dbPath, len(specs), config, profile)
	}
	if every <= 0 {
		every = max(len(points)/20, 1)
	}
	total := time.Duration(0)
	for _, t := range timings {
		total += t.Took
	}
	unit := "wall"
	if cpuClock {
		unit = "CPU"
	}
	fmt.Printf("%s, profile %s: %d of %d runs replayed, %s %s in all\n", config, profile, len(points), len(specs), total.Round(time.Second), unit)
	fmt.Printf("%6s %12s %12s %7s\n", "done", "ETA", "actual", "ratio")
	within, counted := 0, 0
	for i, pt := range points {
		if pt.Actual <= 0 {
			continue
		}
		r := float64(pt.ETA) / float64(pt.Actual)
		counted++
		if r >= 0.5 && r <= 2 {
			within++
		}
		if i%every == 0 {
			fmt.Printf("%6d %12s %12s %7.2f\n", pt.Done, pt.ETA.Round(time.Second), pt.Actual.Round(time.Second), r)
		}
	}
	fmt.Printf("within 2× of the actual after %d of %d runs' ends\n", within, counted)
	return nil
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}
