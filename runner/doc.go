// Package runner turns declarative TOML experiment grids into runs and
// executes them, recording every run in a results database.
//
// A grid file (experiments/*.toml, paper_configs/*.toml) names methods,
// datasets, splits, seeds, method and dataset parameters and optimiser
// settings; every list expands as a Cartesian product, [[grid.exclude]]
// drops combinations and [[grid.include]] adds irregular ones. Load checks
// the file's structure and Expand checks method, dataset and parameter
// names against the registries, reporting file:line, the key and the valid
// choices (with "did you mean") before anything runs. Expand then checks
// every run the grid keeps against what its method declares
// (methods.Method.Plan): parameter ranges and combinations, the input
// dimensions it handles, its feature counts and memory need for the
// dataset's shape (ExpandOptions.Shape, MemoryLimit), inducing points
// against the training set; a run checks the same on the data it gets
// before fitting. The declared number of inducing variables (RunSpec.Plan)
// is what the progress line's ETA costs a run by.
//
// Every run is identified by the SHA-256 of its canonical JSON spec (first
// 16 hex digits), so running a grid again skips what the database already
// holds as done (resume), shards (Shard) partition a grid deterministically,
// and merged shard databases never duplicate a run.
//
// Runner.Run executes runs with a bounded number of workers. A run that
// fails or panics is recorded as failed with its message and the sweep goes
// on; cancelling the context records the runs in flight as interrupted and
// keeps everything finished.
package runner
