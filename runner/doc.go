// Package runner turns declarative TOML experiment grids into runs and
// executes them, recording every run in a results database.
//
// A grid file (experiments/*.toml, paper_configs/*.toml) names methods,
// datasets, splits, seeds, method and dataset parameters and optimiser
// settings; every list expands as a Cartesian product, [[grid.exclude]]
// drops combinations and [[grid.include]] adds irregular ones. Load checks
// the file's structure and Expand checks method, dataset and parameter
// names against the registries, reporting file:line, the key and the valid
// choices before anything runs.
//
// Every run is identified by the SHA-256 of its canonical JSON spec (first
// 16 hex digits), so running a grid again skips what the database already
// holds as done (resume), shards (Shard) partition a grid deterministically,
// and merged shard databases never duplicate a run.
//
// Runner.Run executes runs with a bounded number of workers. A run that
// fails or panics is recorded as failed with its message and the sweep goes
// on; a panic on a goroutine of a parallel loop (gp/internal/workers, or
// any loop with a goroutines.Group) is raised again on the run's goroutine,
// so it is the run's failure too, with the stack where it began; cancelling the context records the runs in flight as interrupted and
// keeps everything finished.
package runner
