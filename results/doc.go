// Package results is the SQLite store of sgplab experiment runs: one row per
// run with its spec and provenance, its final metrics, its optimiser trace and
// its flattened parameters.
//
// The database uses WAL mode, so `sgplab status` and `sgplab query` can read
// while a sweep writes; every finished run is written in one transaction
// (SaveRun), and re-saving a run id replaces all of its rows. A writer that
// finds the database locked by another process waits for the busy timeout
// (DefaultBusyTimeout) and then fails with an error naming the file. A store
// opened with OpenReadOnly runs any SQL (Query) but cannot change a file:
// besides mode=ro and query_only, an SQLite authorizer on every connection
// refuses writes, schema changes, ATTACH, VACUUM, transactions and PRAGMAs
// that set values before they run.
//
// Shards written by `sgplab run --shard i/n` are combined with Merge, which
// is idempotent by run id and never replaces a run by a copy with a lesser
// status (done > failed > interrupted = running); two done copies with
// different results are a conflict unless a Prefer rule settles them.
//
// # Schema
//
// The schema is SQL in schema.go, versioned by PRAGMA user_version
// (SchemaVersion) and a schema_version table; Open applies the missing
// migration steps in order. Tables:
//
//	runs(id, grid, spec, method, dataset, split, seed, profile, status, error,
//	     started, finished, host, git_commit, go_version, blas, provenance)
//	metrics(run_id, name, value)
//	traces(run_id, seq, iteration, elapsed_seconds, objective, phase)
//	run_params(run_id, name, value, num)
//	artifacts(run_id, name, rows, cols, columns, data)
//	claims(run_id, worker, host, pid, claimed, heartbeat, stale_ms, token)
//	lease_tokens(id, last)
//	hyperparameters(run_id, name, idx, value)
//
// # Leases
//
// A worker leases a run before running it. A claims row is a lease: which
// worker (host, pid) is running a run and when it last said so (heartbeat,
// Unix ns). Store.Lease takes runs in a write transaction so that workers
// sharing a database never run one twice, and Statuses reads a running run
// whose lease is stale or absent as interrupted. Each lease carries a
// fencing token from the lease_tokens counter, never reused: Store.Lease
// returns it in a Lease, and SaveLeased and Heartbeat act only while the
// run's claims row still holds the lease's worker and token, checked inside
// their own write transaction, so a worker whose lease was taken over (it
// was suspended past its stale window) writes nothing and learns so
// (ErrLeaseLost). SaveRun and SaveRunArtifacts write without a lease, for
// tools and tests.
//
// The table keeps its name, claims, from before the Go code called them
// leases: renaming it would be a schema migration that every existing
// database (and every shard a cluster sweep left) must go through, for no
// change in what it holds, and hand-written SQL against it would break. In
// this package's Go code "claim" is not used for it; a paper's claims
// (the [[claim]] sections a report judges) are package claims.
//
// A hyperparameters row is one entry of a fitted hyperparameter in natural
// units (idx 0 for a scalar, one row per entry of a vector such as ARD
// lengthscales). Older databases (versions 2 to 4) are read without
// migration; version 2 has no leases (claims table), versions before 5 no
// hyperparameters.
//
// and views for hand-written SQL:
//
//	run_metrics(run_id, method, dataset, split, seed, metric, value)
//	run_params_v(run_id, method, dataset, split, seed, param, value, num)
//	run_hyperparameters(run_id, grid, method, dataset, split, seed, name, idx, value)
//	run_convergence(run_id, grid, method, dataset, split, seed, status, iterations, converged, rel_change)
//
// ExportWhat writes runs (wide), metrics, hyperparameters, traces or an
// artifact of selected runs as CSV, JSON or a table, ExportNPY an
// artifact as NPY files (WriteNPY). docs/results.md shows reading the
// database from Python.
//
// The views do not filter on status (a failed run may have saved some
// metrics); join runs for status, grid or profile. For example, mean test
// RMSE per method and dataset of the finished runs of one grid:
//
//	SELECT m.method, m.dataset, avg(m.value), count(*)
//	FROM run_metrics m JOIN runs r ON r.id = m.run_id
//	WHERE m.metric = 'rmse' AND r.status = 'done' AND r.grid = 'vish-table1'
//	GROUP BY m.method, m.dataset;
//
// Times are UTC RFC 3339 text with nanoseconds, fixed width so they sort.
// SQLite has no NaN: a NaN metric or objective is stored as NULL and reads
// back as NaN. A seed is stored as the int64 with the same bits.
//
// # Metric names
//
// Metric names are stable; MetricNames returns them with their descriptions.
// Names outside this list must start with "x_" (ExtensionPrefix).
//
//   - accuracy: fraction of test points classified correctly (classification)
//   - auc: area under the ROC curve of the predictive class probability
//   - coverage95: fraction of test targets inside the central 95% predictive
//     interval of y (mean ± 1.96 sd, noise included)
//   - elbo: final evidence lower bound of a variational method (nats, whole
//     training set)
//   - error_rate: fraction of test points misclassified; 1 - accuracy
//   - iterations: optimiser iterations actually run
//   - iters_per_second: iterations / train_seconds
//   - jitter: largest diagonal jitter added during training
//   - kl: KL term of the ELBO at the end of training (nats)
//   - log_marginal_likelihood: exact log marginal likelihood (exact GP baselines)
//   - mae: mean absolute error of the predictive mean, original units of y
//   - mse: mean squared error of the predictive mean, original units of y
//   - nlpd: mean negative log predictive density of the test targets; -test_loglik
//   - num_features: number of inducing features actually used
//   - predict_seconds: wall-clock seconds spent predicting the test set
//   - rmse: root mean squared error of the predictive mean, original units of y
//   - test_loglik: mean log predictive density of the test targets (nats per point)
//   - train_seconds: wall-clock seconds spent in Fit
package results
