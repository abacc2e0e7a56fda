// Command etareplay measures the progress line's ETA on a sweep that
// already ran: it replays the runs of a grid file's profile, as stored in
// its results database, through the runner's cost model in the order the
// runner makes them, and prints after each run the ETA shown beside the
// time the runs left actually took, and how often the two were within 2×.
//
//	go run ./cmd/etareplay [-profile quick] [-db out/NAME/results.db] CONFIG.toml
//
// A run's time is its finished − started in the database; runs made with
// several jobs overlapped, so replay sweeps made with --jobs 1.
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
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: etareplay [-profile quick] [-db PATH] [-every K] CONFIG.toml")
		os.Exit(2)
	}
	if err := replay(flag.Arg(0), *profile, *db, *every); err != nil {
		fmt.Fprintln(os.Stderr, "etareplay:", err)
		os.Exit(1)
	}
}

func replay(config, profile, dbPath string, every int) error {
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
	fits, err := store.MetricValues("train_seconds", ids)
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
	points := runner.ReplayETA(specs, size, timings)
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
	fmt.Printf("%s, profile %s: %d of %d runs replayed, %s in all\n", config, profile, len(points), len(specs), total.Round(time.Second))
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
