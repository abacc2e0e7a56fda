package results_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"sgplab/results"
)

func Example() {
	dir, err := os.MkdirTemp("", "sgplab-results")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	store, err := results.Open(filepath.Join(dir, "results.db"))
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()

	start := time.Date(2024, 1, 1, 12, 0, 0, 0, time.UTC)
	for split, rmse := range []float64{0.25, 0.75} {
		run := results.Run{
			ID: fmt.Sprintf("sgpr-kin40k-%d", split), Grid: "example", Method: "sgpr", Dataset: "kin40k",
			Split: split, Seed: 1, Status: results.StatusDone, Started: start, Finished: start.Add(time.Minute),
			Params: []results.Param{{Name: "num_inducing", Value: "100"}},
		}
		metrics := []results.Metric{{Name: "rmse", Value: rmse}, {Name: "train_seconds", Value: 60}}
		trace := []results.TracePoint{{Iteration: 0, Elapsed: 0.1, Objective: 10}, {Iteration: 1, Elapsed: 0.2, Objective: 5}}
		if err := store.SaveRun(run, metrics, trace); err != nil {
			log.Fatal(err)
		}
	}

	cols, rows, err := store.Query(`
		SELECT m.method, m.dataset, p.num AS num_inducing, count(*) AS splits, avg(m.value) AS mean_rmse
		FROM run_metrics m JOIN run_params_v p ON p.run_id = m.run_id AND p.param = 'num_inducing'
		WHERE m.metric = 'rmse'
		GROUP BY m.method, m.dataset, p.num`)
	if err != nil {
		log.Fatal(err)
	}
	if err := results.WriteRows(os.Stdout, results.FormatTable, cols, rows); err != nil {
		log.Fatal(err)
	}
	// Output:
	// method  dataset  num_inducing  splits  mean_rmse
	// ------  -------  ------------  ------  ---------
	// sgpr    kin40k            100       2        0.5
}
