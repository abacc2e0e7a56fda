package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/mattn/go-sqlite3"

	"sgplab/datasets"
	"sgplab/gp/ad"
	"sgplab/gp/linalg"
	"sgplab/methods"
	"sgplab/report"
	"sgplab/results"
	"sgplab/runner"
)

var errInterrupted = runner.ErrInterrupted

// defaultDB is where a grid file's results go unless --db says otherwise.
func defaultDB(f *runner.File) string {
	if f.DB != "" {
		return f.DB
	}
	return filepath.Join("out", f.Name, "results.db")
}

// expandOptions validates datasets, protocols, splits and test sets
// before anything runs.
func expandOptions(profile, dataDir string) runner.ExpandOptions {
	return runner.ExpandOptions{Profile: profile, ValidateDataset: datasets.Validate,
		CheckRun: func(name string, params map[string]any, protocol, scaling string, splits []int) error {
			return datasets.CheckRun(name, params, protocol, scaling, splits, dataDir)
		},
		Shape: datasets.Shape, MemoryLimit: memoryLimit()}
}

// memoryLimit is what a run's declared memory need is checked against
// before anything runs: $SGPLAB_MEMORY (bytes, e.g. 64e9 for a cluster
// node the grid is destined for), else this machine's memory.
func memoryLimit() float64 {
	if v, err := strconv.ParseFloat(os.Getenv("SGPLAB_MEMORY"), 64); err == nil && v > 0 {
		return v
	}
	return runner.MachineMemory()
}

// loadGrids parses and expands grid files for a profile.
func loadGrids(paths []string, profile, dataDir string, stderr io.Writer) ([]*runner.File, []*runner.RunSpec, error) {
	var files []*runner.File
	var all []*runner.RunSpec
	for _, p := range paths {
		f, err := runner.Load(p)
		if err != nil {
			return nil, nil, err
		}
		runs, warnings, err := f.Expand(expandOptions(profile, dataDir))
		for _, w := range warnings {
			fmt.Fprintln(stderr, "warning:", w)
		}
		if err != nil {
			return nil, nil, err
		}
		files = append(files, f)
		all = append(all, runs...)
	}
	return files, all, nil
}

func prepareFunc(dataDir string) runner.PrepareFunc {
	return func(_ context.Context, s *runner.RunSpec) (*runner.Dataset, error) {
		p, err := datasets.Prepare(datasets.Request{Name: s.Dataset, Params: s.DatasetParams, Split: s.Split,
			Seed: s.Seed, Protocol: s.Protocol, Scaling: s.Scaling, DataDir: dataDir, Task: s.Task, FileSHA256: datasetFiles(s)})
		if err != nil {
			return nil, err
		}
		d := &runner.Dataset{Task: p.Task, Train: p.Train, Test: p.Test, YShift: p.YShift, YScale: p.YScale, Provenance: p.Provenance}
		if p.Task != string(methods.Classification) {
			// The test targets back in original units, in place: the model
			// never sees them, and a second copy of millions of targets
			// would only add to the run's peak memory.
			scale := p.YScale
			if scale == 0 {
				scale = 1
			}
			for i, y := range p.Test.Y {
				p.Test.Y[i] = y*scale + p.YShift
			}
		}
		d.TestY = p.Test.Y
		return d, nil
	}
}

// datasetFiles are the sha256 of the run's dataset file parameters, keyed
// by parameter name, for the loader to check.
func datasetFiles(s *runner.RunSpec) map[string]string {
	out := map[string]string{}
	for k, v := range s.Files {
		if name, ok := strings.CutPrefix(k, "dataset."); ok {
			out[name] = v
		}
	}
	return out
}

func cmdRun(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("run", "GRID.toml...", `Expands the grid files and runs every run the database does not already
hold as done (a re-run resumes). Failed runs are recorded with their error and
the sweep goes on. Each run runs in a child process of sgplab (--isolate,
on by default): a run the kernel kills for memory, that crashes in C code,
exceeds --mem-limit or hangs past its time limit is recorded as failed with
the signal, its peak memory and its last progress line. Ctrl-C (SIGINT) or
SIGTERM records the runs in flight as interrupted and keeps every finished
run (run the same command again to resume); a second signal kills at once.
--jobs defaults to the profile's jobs key, else 1: methods already use both
cores through BLAS and chunked goroutines, so parallel runs mostly contend;
raise it for many small runs (a profile of small one-core fits sets
jobs = 2). Results do not depend on it.
Several sgplab run processes (on one machine or sharing a file system) may
sweep the same grid into one database: each claims a run before running it,
refreshes its claims every --heartbeat, and takes over runs whose worker
stopped heartbeating (kill -9, lost node); each returns once every run is
done or failed. A worker continued after a stop (SIGSTOP) that finds its run
taken over abandons it and records nothing of it.

Exit status: 0 every run of the grid (or shard) is done; 1 error (bad grid,
database); 2 bad command line; 3 the sweep ended with runs failed (not done);
130 / 143 interrupted by SIGINT / SIGTERM.`, stdout, stderr)
	db := fs.String("db", "", "results database (default: the file's db key, else out/<name>/results.db)")
	profile := fs.String("profile", envOr("PROFILE", runner.FullProfile), "profile: full or quick (a reduced profile is labelled in every output); default $PROFILE or full")
	jobs := fs.Int("jobs", 1, "runs in flight at once (default: the profile's jobs key, else 1)")
	shard := fs.String("shard", "", "run only shard i/n of the runs (e.g. $SLURM_ARRAY_TASK_ID/8)")
	force := fs.Bool("force", false, "re-run runs the database already holds as done")
	dry := fs.Bool("dry-run", false, "list the runs (id, status, description) without running them")
	timeLimit := fs.Duration("time-limit", 0, "per-run time limit for runs whose grid sets none (0: none)")
	dataDir := fs.String("data-dir", datasets.DataDir(), "dataset directory ($SGPLAB_DATA)")
	quiet := fs.Bool("quiet", false, "no progress output")
	busy := fs.Duration("busy-timeout", results.DefaultBusyTimeout, "how long a write waits for another process's lock on the database before the sweep stops with an error")
	isolate := fs.Bool("isolate", true, "run each run in a child process, so that an OOM kill, a crash in C code or a fit past its time limit fails that run only; --isolate=false runs them in this process")
	memLimit := fs.String("mem-limit", "", "per-run memory limit for runs whose grid sets none, e.g. 4GiB: a run that needs more fails (a run with a limit always runs in a child process)")
	heartbeat := fs.Duration("heartbeat", runner.DefaultHeartbeat, fmt.Sprintf("how often this worker refreshes its claims on runs in flight (at least %s); other workers take a claim over once its last heartbeat is older than 2 × --busy-timeout + 4 × --heartbeat", runner.MinHeartbeat))
	paths, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(paths) == 0 {
		fs.Usage()
		return errUsage
	}
	// Bad flag values are a bad command line (exit 2), found before
	// anything is read or run.
	var shardI, shardN int
	var memBytes int64
	switch {
	case *profile != runner.FullProfile && *profile != runner.QuickProfile:
		return usageErr(fs, "--profile %q (or $PROFILE): want %s or %s", *profile, runner.FullProfile, runner.QuickProfile)
	case *jobs < 1:
		return usageErr(fs, "--jobs %d: want at least 1 run in flight", *jobs)
	case *timeLimit < 0:
		return usageErr(fs, "--time-limit %s is negative; 0 means no limit", *timeLimit)
	case *busy <= 0:
		return usageErr(fs, "--busy-timeout %s: want a positive wait for another process's lock, e.g. %s", *busy, results.DefaultBusyTimeout)
	case *heartbeat < runner.MinHeartbeat:
		return usageErr(fs, "--heartbeat %s is shorter than the minimum %s: every heartbeat is a write to the database", *heartbeat, runner.MinHeartbeat)
	}
	if *shard != "" {
		if shardI, shardN, err = runner.ParseShard(*shard); err != nil {
			return usageErr(fs, "%v", err)
		}
	}
	if *memLimit != "" {
		if memBytes, err = runner.ParseBytes(*memLimit); err != nil {
			return usageErr(fs, "--mem-limit: %v", err)
		}
		if memBytes <= 0 {
			return usageErr(fs, "--mem-limit %s is not positive; leave it out for no limit", *memLimit)
		}
	}
	files, specs, err := loadGrids(paths, *profile, *dataDir, stderr)
	if err != nil {
		return err
	}
	if *shard != "" {
		if specs, err = runner.Shard(specs, shardI, shardN); err != nil {
			return err
		}
	}
	path := *db
	if path == "" {
		path = defaultDB(files[0])
		for _, f := range files[1:] {
			if defaultDB(f) != path {
				return fmt.Errorf("grid files %s and %s use different databases (%s, %s); give --db", files[0].Path, f.Path, path, defaultDB(f))
			}
		}
	}
	if p, _ := files[0].Profile(*profile); p.Note != "" && *profile != runner.FullProfile {
		fmt.Fprintf(stdout, "profile %s: %s\n", *profile, p.Note)
	}
	jobsFrom := ""
	if !flagGiven(fs, "jobs") {
		if n := profileJobs(files, *profile); n > 0 {
			*jobs, jobsFrom = n, " from profile "+*profile
		}
	}
	if *dry {
		return dryRun(stdout, path, specs)
	}
	store, err := results.OpenWith(path, results.Options{BusyTimeout: *busy})
	if err != nil {
		return lockHint(err)
	}
	defer store.Close()

	ctx, release := interruptContext(context.Background(), "recording runs in flight as interrupted", stderr)
	defer release()
	out := io.Writer(stdout)
	if *quiet {
		out = io.Discard
	}
	r := &runner.Runner{Store: store, Prepare: prepareFunc(*dataDir), Env: runner.DefaultEnv(blasName()),
		Jobs: *jobs, Force: *force, TimeLimit: *timeLimit, Out: out, Terminal: isTerminal(stdout),
		Heartbeat: *heartbeat, Size: func(s *runner.RunSpec) int { return datasets.Size(s.Dataset, s.DatasetParams) },
		Present: func(s *runner.RunSpec) bool { return datasets.Present(s.Dataset, *dataDir) },
		Isolate: *isolate, MemLimit: memBytes}
	if r.ChildCommand, err = childCommand(*dataDir); err != nil {
		return err
	}
	where := "in this process"
	if *isolate {
		where = "each in a child process"
	}
	fmt.Fprintf(stdout, "%d runs in %s → %s (profile %s, BLAS %s, %d job(s)%s, %s)\n", len(specs), strings.Join(paths, ", "), path, *profile, r.Env.BLAS, *jobs, jobsFrom, where)
	sum, err := r.Run(ctx, specs)
	release() // before the summary: a signal from now on has the default action
	if err == nil && errors.As(context.Cause(ctx), new(signalCause)) {
		// The signal came as the sweep ended: it was announced on stderr,
		// so the exit status reports it too.
		err = runner.ErrInterrupted
	}
	fmt.Fprintln(stdout, sum)
	if len(sum.Absent) > 0 {
		names := make([]string, 0, len(sum.Absent))
		for n := range sum.Absent {
			names = append(names, n)
		}
		sort.Strings(names)
		fmt.Fprintln(stdout, "absent data (these runs re-run once the files are in place; `sgplab data list` shows every dataset):")
		for _, n := range names {
			fmt.Fprintf(stdout, "  %s: %s\n", n, sum.Absent[n])
		}
	}
	if sum.Failed > 0 {
		fmt.Fprintf(stdout, "failed runs: sgplab query --db %s \"SELECT id, method, dataset, split, error FROM runs WHERE status = 'failed'\"\n", path)
	}
	if errors.Is(err, runner.ErrInterrupted) {
		return interrupted(ctx, err)
	}
	if err != nil {
		return lockHint(err)
	}
	// Exit 0 only when every run of the grid (shard) is done, whoever ran it.
	st, err := store.Statuses(specIDs(specs))
	if err != nil {
		return err
	}
	notDone := 0
	for _, s := range specs {
		if st[s.ID] != results.StatusDone {
			notDone++
		}
	}
	if notDone > 0 {
		return &exitError{code: exitRunsFailed, err: fmt.Errorf("%d of %d runs are not done (failed); exit status %d", notDone, len(specs), exitRunsFailed)}
	}
	return nil
}

func specIDs(specs []*runner.RunSpec) []string {
	ids := make([]string, len(specs))
	for i, s := range specs {
		ids[i] = s.ID
	}
	return ids
}

// lockHint adds what to do to a "database is locked" error: the sweep
// waited --busy-timeout for another writer (another sgplab run on the same
// file, or an open sqlite3 shell in a write transaction) and stopped.
func lockHint(err error) error {
	var se sqlite3.Error
	if errors.As(err, &se) && (se.Code == sqlite3.ErrBusy || se.Code == sqlite3.ErrLocked) {
		return fmt.Errorf("%w\nfinished runs are kept; stop the other writer or raise --busy-timeout, then run the same command again", err)
	}
	return err
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && runner.IsTerminal(f)
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// openChecked opens a database read-only and runs SQLite's quick_check,
// so that commands reading the whole database (status, export, report)
// report a damaged page instead of silently giving partial results.
func openChecked(path string) (*results.Store, error) {
	store, err := results.OpenReadOnly(path)
	if err != nil {
		return nil, err
	}
	if err := store.QuickCheck(); err != nil {
		store.Close()
		return nil, err
	}
	return store, nil
}

// storedStatuses returns the stored status of each spec's run, read-only;
// a database that does not exist yet holds none, so --dry-run and status
// work before the first sweep without creating the file.
func storedStatuses(dbPath string, specs []*runner.RunSpec) (map[string]string, error) {
	if _, err := os.Stat(dbPath); err != nil {
		return map[string]string{}, nil
	}
	store, err := openChecked(dbPath)
	if err != nil {
		return nil, err
	}
	defer store.Close()
	ids := make([]string, len(specs))
	for i, s := range specs {
		ids[i] = s.ID
	}
	return store.Statuses(ids)
}

func dryRun(w io.Writer, dbPath string, specs []*runner.RunSpec) error {
	status, err := storedStatuses(dbPath, specs)
	if err != nil {
		return err
	}
	for _, s := range specs {
		st := status[s.ID]
		if st == "" {
			st = "pending"
		}
		fmt.Fprintf(w, "%s  %-11s %s %s\n", s.ID, st, s.Label(), paramsText(s))
	}
	fmt.Fprintf(w, "%d runs\n", len(specs))
	return nil
}

func paramsText(s *runner.RunSpec) string {
	var parts []string
	for _, p := range s.FlatParams() {
		if strings.HasPrefix(p[0], "fit.") && (p[1] == "0" || p[1] == "") && p[0] != "fit.iterations" {
			continue
		}
		parts = append(parts, p[0]+"="+p[1])
	}
	return strings.Join(parts, " ")
}

func cmdStatus(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("status", "[GRID.toml...]", `With grid files: done / failed / interrupted / running / pending runs per grid
and profile (pending = not in the database), and how many done runs had not
converged (the objective still moving at the last iteration: x_converged = 0).
Without: what the database holds per grid, profile and status.`, stdout, stderr)
	db := fs.String("db", "", "results database (default: the first file's database)")
	profile := fs.String("profile", os.Getenv("PROFILE"), "profile the grids are expanded with: full or quick (default $PROFILE, else every profile the files define)")
	requireDone := fs.Bool("require-done", false, "with grid files: exit 3 unless every run is done (for scripts, e.g. after merging shards)")
	paths, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(paths) == 0 {
		if *db == "" {
			fs.Usage()
			return errUsage
		}
		store, err := openChecked(*db)
		if err != nil {
			return err
		}
		defer store.Close()
		cols, rows, err := store.Query(`SELECT r.grid, r.profile, r.status, COUNT(*) AS runs, COUNT(CASE WHEN c.value = 0 THEN 1 END) AS unconverged
			FROM runs r LEFT JOIN metrics c ON c.run_id = r.id AND c.name = '` + results.ConvergedMetric + `'
			GROUP BY r.grid, r.profile, r.status ORDER BY r.grid, r.profile, r.status`)
		if err != nil {
			return err
		}
		return results.WriteRows(stdout, "table", cols, rows)
	}
	// Without --profile, show every profile the first file defines: `make
	// demo` runs the quick profile, whose run ids differ from full's.
	profiles := []string{*profile}
	if *profile == "" {
		f, err := runner.Load(paths[0])
		if err != nil {
			return err
		}
		profiles = f.ProfileNames()
	}
	var files []*runner.File
	var specs []*runner.RunSpec
	seen := map[string]bool{}
	for _, p := range profiles {
		fl, sp, err := loadGrids(paths, p, datasets.DataDir(), stderr)
		if err != nil {
			return err
		}
		files = fl
		for _, s := range sp { // a grid the profile leaves unchanged shares full's runs
			if !seen[s.ID] {
				seen[s.ID] = true
				specs = append(specs, s)
			}
		}
	}
	path := *db
	if path == "" {
		path = defaultDB(files[0])
	}
	status, err := storedStatuses(path, specs)
	if err != nil {
		return err
	}
	type key struct{ exp, grid, profile string }
	counts := map[key]map[string]int{}
	var order []key
	for _, s := range specs {
		k := key{s.Experiment, s.Grid, s.Profile}
		if k.profile == "" {
			k.profile = runner.FullProfile
		}
		if counts[k] == nil {
			counts[k] = map[string]int{}
			order = append(order, k)
		}
		st := status[s.ID]
		if st == "" {
			st = "pending"
		}
		counts[k][st]++
	}
	var done []string
	for _, s := range specs {
		if status[s.ID] == results.StatusDone {
			done = append(done, s.ID)
		}
	}
	unconverged, err := unconvergedRuns(path, done)
	if err != nil {
		return err
	}
	unconvergedBy := map[key]int{}
	for _, s := range specs {
		if unconverged[s.ID] {
			k := key{s.Experiment, s.Grid, s.Profile}
			if k.profile == "" {
				k.profile = runner.FullProfile
			}
			unconvergedBy[k]++
		}
	}
	// Stale runs: stored under these grids but no longer expanded to by
	// the files (left by an older version of a config; reports ignore
	// them and `results prune` deletes them).
	stale, err := staleRuns(path, files, specs)
	if err != nil {
		return err
	}
	cols := []string{"experiment", "grid", "profile", "total", "done", "failed", "interrupted", "running", "pending", "stale", "unconverged"}
	var rows [][]any
	anyStale, anyUnconverged := false, false
	for _, k := range order {
		c := counts[k]
		total := 0
		for _, n := range c {
			total += n
		}
		st := stale[[3]string{k.exp, k.grid, k.profile}]
		anyStale = anyStale || st > 0
		rows = append(rows, []any{k.exp, k.grid, k.profile, int64(total), int64(c["done"]), int64(c["failed"]), int64(c["interrupted"]), int64(c["running"]), int64(c["pending"]), int64(st), int64(unconvergedBy[k])})
		anyUnconverged = anyUnconverged || unconvergedBy[k] > 0
	}
	fmt.Fprintf(stdout, "database %s\n", path)
	if err := results.WriteRows(stdout, "table", cols, rows); err != nil {
		return err
	}
	if anyStale {
		fmt.Fprintf(stdout, "stale runs are not part of the current config; reports ignore them, `sgplab results prune %s` deletes them\n", strings.Join(paths, " "))
	}
	if anyUnconverged {
		fmt.Fprintf(stdout, "unconverged: done runs whose objective was still moving at the last iteration (docs/results.md#convergence); list them with sgplab query --db %s \"SELECT * FROM run_convergence WHERE converged = 0\"\n", path)
	}
	if *requireDone {
		notDone := 0
		for _, s := range specs {
			if status[s.ID] != results.StatusDone {
				notDone++
			}
		}
		if notDone > 0 {
			return &exitError{code: exitRunsFailed, err: fmt.Errorf("%d of %d runs are not done", notDone, len(specs))}
		}
	}
	return nil
}

// staleRuns counts, per (experiment, grid, profile), the runs stored under
// the files' grids whose ids the files no longer expand to.
func staleRuns(dbPath string, files []*runner.File, specs []*runner.RunSpec) (map[[3]string]int, error) {
	out := map[[3]string]int{}
	if _, err := os.Stat(dbPath); err != nil {
		return out, nil
	}
	store, err := results.OpenReadOnly(dbPath)
	if err != nil {
		return nil, err
	}
	defer store.Close()
	current := make(map[string]bool, len(specs))
	for _, s := range specs {
		current[s.ID] = true
	}
	for _, f := range files {
		grids := make([]string, len(f.Grids))
		for i, g := range f.Grids {
			grids[i] = g.Name
		}
		refs, err := store.GridRuns(f.Name, grids)
		if err != nil {
			return nil, err
		}
		for _, r := range refs {
			if current[r.ID] {
				continue
			}
			p := r.Profile
			if p == "" {
				p = runner.FullProfile
			}
			out[[3]string{f.Name, strings.TrimPrefix(r.Grid, f.Name+"/"), p}]++
		}
	}
	return out, nil
}

func cmdQuery(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("query", `"SQL"`, `Runs SQL against a results database and prints the last statement's rows.
Tables: runs, metrics, traces, run_params, hyperparameters, artifacts, claims;
views: run_metrics(run_id, method, dataset, split, seed, metric, value),
run_params_v(run_id, method, dataset, split, seed, param, value, num),
run_hyperparameters(run_id, grid, method, dataset, split, seed, name, idx, value)
and run_convergence(run_id, grid, method, dataset, split, seed, status,
iterations, converged, rel_change); see docs/results.md.
Read-only: SELECT, WITH and informational PRAGMAs (table_info, user_version, …)
run; SQLite itself refuses writes, schema changes, ATTACH, VACUUM, transactions
and PRAGMAs that set values before they run (exit 1).`, stdout, stderr)
	db := fs.String("db", "", "results database (required)")
	format := fs.String("format", "table", "output format: table, csv or json")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	switch {
	case *db == "" && len(pos) == 0:
		fs.Usage()
		return errUsage
	case *db == "":
		return usageErr(fs, "--db is required: the results database to query")
	case len(pos) != 1:
		return usageErr(fs, "want exactly one SQL statement (quote it), got %d arguments", len(pos))
	case strings.TrimSpace(pos[0]) == "":
		return usageErr(fs, "the SQL is empty: give a statement, e.g. \"SELECT status, count(*) FROM runs GROUP BY status\"")
	}
	store, err := results.OpenReadOnly(*db)
	if err != nil {
		return err
	}
	defer store.Close()
	cols, rows, err := store.Query(pos[0])
	if errors.Is(err, results.ErrNoStatement) {
		return usageErr(fs, "%v", err)
	}
	if err != nil {
		return err
	}
	return results.WriteRows(stdout, *format, cols, rows)
}

func cmdReport(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("report", "CONFIG.toml", `Renders the config's [[table]]s (Markdown, CSV, LaTeX) and [[figure]]s (PNG, SVG)
from the results database into out/<name>/, with index.md showing a paper's
numbers beside ours where the config gives them. A config without tables and
figures (an ad-hoc sweep) gets the default report: per dataset, test NLPD and
RMSE against the number of inducing variables (exact GPR as a reference line),
a Pareto front of NLPD against training CPU time, the optimiser traces, and
summary.md/summary.csv. The report uses exactly the runs the current config
expands to for the profile: runs of the same grids left by an older version
of the config are ignored and counted in index.md (sgplab results prune
deletes them). Without a database yet, it says what is missing.`, stdout, stderr)
	db := fs.String("db", "", "results database (default: the config's database)")
	profile := fs.String("profile", os.Getenv("PROFILE"), "runs to report: full or quick (default: full if any full run finished, else quick)")
	outDir := fs.String("out", "", "output directory (default out/<name>)")
	formats := fs.String("formats", "png,svg", "figure formats: any of png, svg, pdf")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		if len(pos) == 0 {
			fs.Usage()
			return errUsage
		}
		return usageErr(fs, "want exactly one config file, got %d: %s", len(pos), strings.Join(pos, " "))
	}
	f, err := runner.Load(pos[0])
	if err != nil {
		return err
	}
	spec, err := report.Load(pos[0])
	if err != nil {
		return err
	}
	profiles := f.ProfileNames()
	if *profile != "" {
		if _, err := f.Profile(*profile); err != nil {
			return err
		}
		profiles = []string{*profile}
	}
	expected, err := expectedRuns(f, profiles, stderr)
	if err != nil {
		return err
	}
	path := *db
	if path == "" {
		path = defaultDB(f)
	} else {
		expected.DBFlag = "--db " + path
	}
	var store *results.Store
	if _, err := os.Stat(path); err != nil {
		fmt.Fprintf(stderr, "no results database at %s yet: the report lists what is missing; `sgplab run %s` runs it\n", path, pos[0])
		store, err = results.OpenEmpty(path)
		if err != nil {
			return err
		}
	} else if store, err = openChecked(path); err != nil {
		return err
	}
	defer store.Close()
	dir := *outDir
	if dir == "" {
		dir = filepath.Join("out", f.Name)
	}
	start := time.Now()
	sum, err := report.Render(spec, store, dir, report.Options{Profile: *profile, Formats: strings.Split(*formats, ","), Expected: expected})
	if err != nil {
		return err
	}
	for _, w := range sum.Warnings {
		fmt.Fprintln(stderr, "warning:", w)
	}
	fmt.Fprintf(stdout, "report (%s profile) written to %s: %d files, %d missing table cells, in %s\n", sum.Profile, sum.Dir, len(sum.Files), sum.Missing, time.Since(start).Round(time.Millisecond))
	if c := sum.Runs; c != nil {
		fmt.Fprintf(stdout, "runs of the current config: %d of %d done, %d failed, %d unfinished, %d not run; %d stale run(s) ignored\n",
			c.Done, c.Expected, c.Failed, c.Unfinished, c.Missing, c.Stale)
		if c.Stale > 0 {
			fmt.Fprintf(stdout, "delete the stale runs with: sgplab results prune --profile %s%s %s\n", c.Profile, dbSuffix(*db), pos[0])
		}
	}
	fmt.Fprintf(stdout, "see %s\n", filepath.Join(sum.Dir, "index.md"))
	return nil
}

func dbSuffix(db string) string {
	if db == "" {
		return ""
	}
	return " --db " + db
}

// expectedRuns expands f under each profile into the run ids a report on
// it uses. Expansion warnings are written once.
func expectedRuns(f *runner.File, profiles []string, stderr io.Writer) (*report.Expected, error) {
	e := &report.Expected{IDs: map[string][]string{}, Datasets: map[string]map[string][]string{}}
	for _, g := range f.Grids {
		e.Grids = append(e.Grids, g.Name)
	}
	seen := map[string]bool{}
	// The full profile's datasets are wanted even when only a reduced
	// profile is reported: its footnotes name what only full runs.
	if !slices.Contains(profiles, runner.FullProfile) {
		profiles = append(slices.Clone(profiles), runner.FullProfile)
		defer delete(e.IDs, runner.FullProfile)
	}
	for _, p := range profiles {
		specs, warnings, err := f.Expand(expandOptions(p, datasets.DataDir()))
		for _, w := range warnings {
			if !seen[w] {
				seen[w] = true
				fmt.Fprintln(stderr, "warning:", w)
			}
		}
		if err != nil {
			return nil, err
		}
		ids := make([]string, len(specs))
		byGrid := map[string][]string{}
		for i, s := range specs {
			ids[i] = s.ID
			if !slices.Contains(byGrid[s.Grid], s.Dataset) {
				byGrid[s.Grid] = append(byGrid[s.Grid], s.Dataset)
			}
		}
		e.IDs[p] = ids
		e.Datasets[p] = byGrid
	}
	return e, nil
}

// cmdPrune deletes the runs of a config's grids that the current config no
// longer expands to.
func cmdPrune(path, db, profile string, dry bool, stdout, stderr io.Writer) error {
	f, err := runner.Load(path)
	if err != nil {
		return err
	}
	profiles := f.ProfileNames()
	if profile != "" {
		if _, err := f.Profile(profile); err != nil {
			return err
		}
		profiles = []string{profile}
	}
	expected, err := expectedRuns(f, profiles, stderr)
	if err != nil {
		return err
	}
	keep := map[string]bool{}
	for _, ids := range expected.IDs {
		for _, id := range ids {
			keep[id] = true
		}
	}
	if db == "" {
		db = defaultDB(f)
	}
	if _, err := os.Stat(db); err != nil {
		return fmt.Errorf("no results database at %s: nothing to prune", db)
	}
	var store *results.Store
	if dry {
		store, err = results.OpenReadOnly(db)
	} else {
		store, err = results.Open(db)
	}
	if err != nil {
		return lockHint(err)
	}
	defer store.Close()
	stored, err := store.GridRuns(f.Name, expected.Grids)
	if err != nil {
		return err
	}
	var stale []string
	for _, r := range stored {
		p := r.Profile
		if p == "" {
			p = runner.FullProfile
		}
		if keep[r.ID] || (profile != "" && p != profile) {
			continue
		}
		stale = append(stale, r.ID)
		fmt.Fprintf(stdout, "%s  %-11s grid %s, profile %s\n", r.ID, r.Status, r.Grid, p)
	}
	scope := "any profile"
	if profile != "" {
		scope = "profile " + profile
	}
	if dry {
		fmt.Fprintf(stdout, "would delete %d stale run(s) of %s (%s) from %s, with their metrics, traces, parameters and artifacts; %d run(s) of its grids are current\n",
			len(stale), path, scope, db, len(stored)-len(stale))
		return nil
	}
	n, err := store.DeleteRuns(stale)
	if err != nil {
		return lockHint(err)
	}
	fmt.Fprintf(stdout, "deleted %d stale run(s) of %s (%s) from %s, with their metrics, traces, parameters and artifacts; %d run(s) of its grids are current\n",
		n, path, scope, db, len(stored)-len(stale))
	return nil
}

func cmdMethods(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("methods", "[NAME...]", `Lists the registered methods: their tasks, every default (kernel and initial
hyperparameters, likelihood, inducing variables and their initialisation,
q(u), the fit recipe: optimiser, learning rate, iterations) and every
parameter with its default, range and meaning. --markdown writes the same as
the page docs/methods.md (make docs).`, stdout, stderr)
	markdown := fs.Bool("markdown", false, "write Markdown (docs/methods.md) instead of text")
	names, err := parse(fs, args)
	if err != nil {
		return err
	}
	var ms []methods.Method
	if len(names) == 0 {
		ms = methods.All()
	}
	for _, n := range names {
		m, err := methods.Lookup(n)
		if err != nil {
			return err
		}
		ms = append(ms, m)
	}
	if *markdown {
		return writeMethodsMarkdown(stdout, ms)
	}
	for i, m := range ms {
		if i > 0 {
			fmt.Fprintln(stdout)
		}
		fmt.Fprintf(stdout, "%s — %s\n", m.Name, m.Summary)
		if m.Paper != "" {
			fmt.Fprintf(stdout, "  paper: %s\n", m.Paper)
		}
		fmt.Fprintf(stdout, "  tasks: %s\n", strings.Join(taskNames(m), ", "))
		if m.MaxDim > 0 {
			fmt.Fprintf(stdout, "  inputs: at most %d dimension(s)\n", m.MaxDim)
		}
		for _, d := range m.Defaults() {
			fmt.Fprintf(stdout, "  %s: %s\n", d.Topic, d.Text)
		}
		fmt.Fprintln(stdout, "  parameters:")
		for _, p := range m.Params {
			fmt.Fprintf(stdout, "    %-22s %-16s default %-10s %s%s\n", p.Name, p.Kind, methods.FormatDefault(p), p.Doc, paramRange(p))
		}
	}
	if len(ms) == 0 {
		fmt.Fprintln(stdout, "no methods registered")
	}
	return nil
}

func taskNames(m methods.Method) []string {
	tasks := make([]string, len(m.Tasks))
	for j, t := range m.Tasks {
		tasks[j] = string(t)
	}
	return tasks
}

// paramRange is " (range)" or " {choices}" of a parameter, or "".
func paramRange(p methods.ParamDoc) string {
	switch {
	case p.Range != nil:
		return " (" + p.Range.String() + ")"
	case len(p.Choices) > 0:
		return " {" + strings.Join(p.Choices, ", ") + "}"
	}
	return ""
}

func cmdData(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("data", "list | fetch NAME... | example-csv [DIR]", `list: every dataset, whether it is present in the data directory and where it comes from.
fetch: download a dataset from its canonical source, verifying checksums.
example-csv: write DIR/example.csv (default out/example-csv), a generated CSV
that experiments/csv.toml sweeps (dataset "csv": your own file in a grid).`, stdout, stderr)
	dataDir := fs.String("data-dir", datasets.DataDir(), "dataset directory ($SGPLAB_DATA)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		fs.Usage()
		return errUsage
	}
	switch pos[0] {
	case "list":
		return datasets.WriteList(stdout, *dataDir)
	case "fetch":
		if len(pos) < 2 {
			return usageErr(fs, "fetch needs dataset names (sgplab data list shows them)")
		}
		ctx, release := interruptContext(context.Background(), "stopping the download", stderr)
		defer release()
		for _, n := range pos[1:] {
			if err := datasets.Fetch(ctx, n, *dataDir, ""); err != nil {
				return err
			}
			fmt.Fprintf(stdout, "fetched %s into %s\n", n, *dataDir)
		}
		return nil
	case "example-csv":
		dir := filepath.Join("out", "example-csv")
		if len(pos) > 2 {
			return usageErr(fs, "example-csv takes at most one directory")
		}
		if len(pos) == 2 {
			dir = pos[1]
		}
		path, err := datasets.WriteExampleCSV(dir)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "wrote %s (600 rows: x1, x2, is_test, y); experiments/csv.toml runs on it\n", path)
		return nil
	}
	return usageErr(fs, "unknown subcommand %q; want list, fetch or example-csv", pos[0])
}

func cmdResults(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("results", "export [CONFIG.toml...] [--db F] [--what W] [--format csv|json|table|npy] | merge A.db B.db... -o OUT.db [--prefer newer|older|dst] [--allow-foreign] | prune CONFIG.toml [--profile P] [--db F] [--dry-run]", `export: writes what --what names for the selected runs, every row starting with
run_id, grid, method, dataset, split, seed, profile, status, error:
  runs (default)   one row per run, a column per parameter (p.NAME) and metric
                   (m.NAME; m.x_converged is 1, 0, or empty without training)
  metrics          one row per run × metric (--long is the same)
  hyperparameters  one row per run × fitted hyperparameter entry: name, idx, value
  traces           one row per run × trace point: seq, iteration, elapsed_seconds,
                   objective, phase
  ARTIFACT         an array the grid stored (artifacts = [...]: predictions, z, q,
                   train, field, …): one row per array row, row, then its columns;
                   --format npy -o DIR writes DIR/RUN_ID.ARTIFACT.npy per run and
                   DIR/index.ARTIFACT.csv
With CONFIG.toml, only the runs the config's grids expand to now (under
--profile, else every profile it defines), from its database unless --db;
--grid (GRID or EXPERIMENT/GRID), --method, --status, --profile filter further.
merge: combine shard databases into one, keyed by run id (merging again adds nothing).
Of two copies of a run the higher status wins (done > failed > interrupted,
running), so a done run is never replaced; of equal statuses the later one,
but two done copies with different metrics (times aside) are a conflict that
merges nothing unless --prefer settles it. Databases holding different
experiments under one grid name are refused unless --allow-foreign.
prune: delete the runs of the config's grids that the current config no longer
expands to (left by an older version of it; reports already ignore them), with
their metrics, traces, parameters and artifacts, in one transaction. Without
--profile, a run is kept when any profile of the config expands to it.`, stdout, stderr)
	db := fs.String("db", "", "database to export or prune (default: the config's database)")
	format := fs.String("format", "csv", "export format: csv, json, table, or npy (an artifact, with -o DIR)")
	what := fs.String("what", results.ExportRuns, "export: runs, metrics, hyperparameters, traces, or an artifact name (predictions, z, q, …)")
	out := fs.String("o", "", "merge: the database to create or extend; export --format npy: the directory to write")
	profile := fs.String("profile", "", "export: only runs of this profile (with CONFIG.toml: the profile to expand it under); prune: only runs of this profile, kept when this profile expands to them")
	grid := fs.String("grid", "", "export: only runs of this grid: GRID, or EXPERIMENT/GRID for one experiment's")
	method := fs.String("method", "", "export: only runs of this method")
	status := fs.String("status", "", "export: only runs with this status: done, failed, interrupted or running")
	long := fs.Bool("long", false, "export: one row per run × metric (--what metrics)")
	dry := fs.Bool("dry-run", false, "prune: list what would be deleted, delete nothing")
	prefer := fs.String("prefer", "", "merge: settle done copies with different metrics: newer (the later-finished copy), older, or dst (the copy -o already holds); default: report them and merge nothing")
	foreign := fs.Bool("allow-foreign", false, "merge: merge databases that hold different experiments under one grid name")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		fs.Usage()
		return errUsage
	}
	switch pos[0] {
	case "export":
		if *db == "" && len(pos) == 1 {
			return usageErr(fs, "export needs --db, the database to export, or a config file (CONFIG.toml) whose runs to export")
		}
		if *long {
			if *what != results.ExportRuns && *what != results.ExportMetrics {
				return usageErr(fs, "--long is --what metrics; it cannot be combined with --what %s", *what)
			}
			*what = results.ExportMetrics
		}
		return cmdExport(exportArgs{db: *db, format: *format, what: *what, out: *out, profile: *profile, configs: pos[1:],
			filter: results.ExportFilter{Grid: *grid, Method: *method, Status: *status, Profile: *profile}}, stdout, stderr)
	case "merge":
		if len(pos) < 2 {
			return usageErr(fs, "merge needs the databases to merge")
		}
		if *out == "" {
			return usageErr(fs, "merge needs -o OUT.db, the database to merge into")
		}
		for _, p := range pos[1:] {
			if _, err := os.Stat(p); err != nil {
				return fmt.Errorf("cannot merge %s: %w", p, err)
			}
		}
		rule, err := results.ParsePrefer(*prefer)
		if err != nil {
			return usageErr(fs, "--prefer %q: want newer, older or dst", *prefer)
		}
		rep, err := results.MergeWith(*out, results.MergeOptions{Prefer: rule, AllowForeign: *foreign}, pos[1:]...)
		var conflict *results.ConflictError
		var alien *results.ForeignError
		switch {
		case errors.As(err, &conflict):
			return fmt.Errorf("%w\nsettle them with --prefer newer, older or dst (keep the copy that finished later, earlier, or the one %s holds)", err, *out)
		case errors.As(err, &alien):
			return fmt.Errorf("%w\nmerge them anyway with --allow-foreign, or into separate databases", err)
		case err != nil:
			return err
		}
		fmt.Fprintf(stdout, "merged %d new and %d updated runs into %s", rep.Added, rep.Replaced, *out)
		if rep.Lesser > 0 {
			fmt.Fprintf(stdout, "; kept %d run(s) over a copy with a lesser status (done > failed > interrupted, running)", rep.Lesser)
		}
		if rep.Resolved > 0 {
			fmt.Fprintf(stdout, "; settled %d done run(s) with different metrics by --prefer %s", rep.Resolved, rule)
		}
		fmt.Fprintln(stdout)
		return nil
	case "prune":
		if len(pos) != 2 {
			return usageErr(fs, "prune needs exactly one config file, got %d", len(pos)-1)
		}
		return cmdPrune(pos[1], *db, *profile, *dry, stdout, stderr)
	}
	return usageErr(fs, "unknown subcommand %q; want export, merge or prune", pos[0])
}

// flagGiven reports whether the command line set the named flag.
func flagGiven(fs *flag.FlagSet, name string) bool {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}

// profileJobs is the runs in flight the files' profile asks for when the
// command line gives none: the smallest over the files (a file without
// the key asks for 1), so that a file of large runs swept together with
// one of small runs is not run two at a time; 0 when none sets it.
func profileJobs(files []*runner.File, profile string) int {
	jobs, set := 0, false
	for _, f := range files {
		p, _ := f.Profile(profile)
		n := max(p.Jobs, 1)
		set = set || p.Jobs > 0
		if jobs == 0 || n < jobs {
			jobs = n
		}
	}
	if !set {
		return 0
	}
	return jobs
}

// blasName is the BLAS a run records: the backend and, for OpenBLAS, the
// kernel set it uses on this CPU (the kernels change results' last bits).
func blasName() string {
	if core := linalg.BLASCore(); core != "" {
		return ad.BLASBackend() + " (" + core + ")"
	}
	return ad.BLASBackend()
}
