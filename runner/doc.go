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
// # Templates, matrices and derived values
//
// Before any of that, Parse expands the grid language (internal/gridlang,
// docs/grids.md): [template.NAME] tables that grids extend, a grid's
// [grid.matrix] of variables (one grid per combination of the variables
// its name uses, include rows for the others) with [[grid.when]] rules
// that set keys or skip combinations, {expressions} over the variables and
// the grid's let table (ε = 0.95/W computed, not pasted), and profile
// entries that name grids by pattern. Everything below sees plain grids,
// so the expansion cannot change a run id; the line index maps every key
// of an expanded grid to the line that wrote it, so later errors point at
// the template, variant or rule to edit.
//
// # Profiles
//
// A config's [profiles.quick] (the only profile besides the implicit full
// one) replaces grid keys in every grid, [profiles.quick.grids.NAME] in
// one grid (or, quoted with *, ? or […], in every grid the pattern
// matches), and skip = true leaves a grid out; its note, which says what
// the profile reduces, is required and heads every report of it. The
// profile is part of a run's identity, except that a grid the profile
// leaves as it is keeps the full profile's runs (same ids): a quick sweep
// and a later full one share them.
//
// # Recipes
//
// Fit settings (iterations, optimizer, learning_rate, batch_size, grad_tol,
// ftol, lbfgs_memory, stop_tol) are grid keys and may be set per method in
// [grid.method.NAME]; ftol and lbfgs_memory enter a run's identity only
// when set, so runs from grids without them keep their ids.
// A grid without iterations runs each method's declared budget
// (methods.Recipe) and, unless it sets stop_tol, ends it at the recipe's
// stopping tolerance; the resolved numbers are in the spec. A method's
// num_inducing and the structure parameter it chooses (methods.ParamDoc
// Chooses) are resolved per method: the key set more specifically wins.
// Expand warns when a swept parameter reaches no parameter of a method and
// when the methods compared on one dataset (all grids of the file, as the
// default report draws them) share no kernel family or likelihood.
//
// # Run ids
//
// Every run is identified by the SHA-256 of its canonical JSON spec (first
// 16 hex digits), so running a grid again skips what the database already
// holds as done (resume), shards (Shard) partition a grid deterministically,
// and merged shard databases never duplicate a run. An optional key left
// out of a grid (stop_tol, artifacts) is absent from the spec, so adding
// such a key to the runner leaves existing ids alone (pinned for every
// config and profile by cmd/sgplab TestDryRunIDsPinned).
// Method parameters enter the spec with their defaults filled in, so a
// changed parameter default changes the ids of the runs that rely on it;
// fit settings a grid leaves to the method do not, so a run whose recipe
// resolves differently under its method's current defaults than under
// those it had before declaring them (methods.Method.Legacy) carries the
// resolved recipe in its spec (RunSpec.recipeMark). A stored result never
// means something else under an unchanged id.
//
// Every done run records its metrics, trace, fitted hyperparameters and
// convergence diagnostic (x_converged, x_rel_change: optim.Rule on the last
// phase of the trace, see convergence) in one transaction; stop_tol makes
// the same rule end the fit early.
//
// # Running
//
// Runner.Run executes runs with a bounded number of workers, the cheapest
// run of each grid and method first (so the progress line's ETA has
// measured every kind of run early), the rest in expansion order. A run that
// fails or panics is recorded as failed with its message and the sweep goes
// on; a panic on a goroutine of a parallel loop (gp/internal/workers, or
// any loop with a goroutines.Group) is raised again on the run's goroutine,
// so it is the run's failure too, with the stack where it began;
// cancelling the context records the runs in flight as interrupted and
// keeps everything finished.
//
// The progress line counts runs done and shows an ETA (progress.go): each
// run's flops come from its plan (Cost, StepCost, SetupCost: O(N³) exact,
// O(B M² + M³) sparse, or the method's declared StepFlops and
// SetupFlops), priced at the machine's flop rate as flop-heavy runs show
// it, plus a time per step and a time per run outside the fit measured on
// the finished runs of the same grid and method; a run that may stop
// before its budget (stop_tol, L-BFGS) is expected to run as many
// iterations per trained number as the finished runs of its class did.
// ReplayETA measures the model on a sweep that ran (cmd/etareplay).
//
// # Leases
//
// Each run is leased in the store first (results.Store.Lease) and recorded
// under its lease (lease.go): processes sharing a database split a grid,
// each refreshes its leases every Heartbeat and takes over the runs of a
// worker whose heartbeat stopped for longer than StaleWindow, and a worker
// that finds (by heartbeat or at its final write) that its lease was taken
// over stops the run and records nothing of it.
//
// With Runner.Isolate, or a memory limit (MemLimit, the grid's mem_limit),
// a run runs in a child process of the same binary whose main is
// ServeChild: the child streams progress and its scored result back, the
// parent records them, and a child that is killed, crashes, exceeds its
// memory limit or outlives its time limit is recorded as failed with the
// signal or fault, its peak RSS and its last progress report. A child runs
// one run and caches nothing: unless the run's artifacts need them, it
// drops the training set once the fit is done and the test inputs once
// prediction is, so that a model that predicts from what it kept (VISH's
// statistics) is scored without them in memory.
package runner
