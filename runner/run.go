package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"sgplab/gp"
	"sgplab/gp/metrics"
	"sgplab/internal/goroutines"
	"sgplab/methods"
	"sgplab/results"
)

// Dataset is a prepared train/test split as the runner needs it.
type Dataset struct {
	Task  string // "regression" or "classification"
	Train gp.Data
	Test  gp.Data
	// TestY are the test targets in original units (regression) or labels
	// in {-1, +1} (classification), which the runner scores; Test.Y may be
	// standardised or be TestY itself (no method reads the test targets).
	TestY []float64
	// YShift and YScale map the model's standardised predictions back:
	// y = YShift + YScale·y_std. YScale 0 means no scaling.
	YShift, YScale float64
	Provenance     any // JSON-marshalable record of files, checksums, protocol
}

// PrepareFunc loads the dataset of a run.
type PrepareFunc func(ctx context.Context, spec *RunSpec) (*Dataset, error)

// Env identifies where runs were computed; it is stored with every run.
type Env struct {
	Host, GitCommit, GoVersion, BLAS string
}

// DefaultEnv fills Env from the machine: host name, `git rev-parse HEAD`
// (or "unknown"), the Go version and the given BLAS backend name.
func DefaultEnv(blas string) Env {
	host, err := os.Hostname()
	if err != nil {
		host = "unknown"
	}
	commit := "unknown"
	if out, err := exec.Command("git", "rev-parse", "HEAD").Output(); err == nil {
		commit = strings.TrimSpace(string(out))
	}
	return Env{Host: host, GitCommit: commit, GoVersion: runtime.Version(), BLAS: blas}
}

// Runner executes runs and records them in a results store.
type Runner struct {
	Store   *results.Store
	Prepare PrepareFunc
	Env     Env
	// Jobs is the number of runs in flight. The default 1 is right on small
	// machines: the methods already use every core through BLAS and their
	// own chunked goroutines, so parallel runs mostly contend.
	Jobs  int
	Force bool // re-run runs the store already holds as done
	// TimeLimit applies to runs whose spec sets none; 0 is no limit.
	TimeLimit time.Duration
	// MemLimit, in bytes, applies to runs whose spec sets none; 0 is no
	// limit. A run with a memory limit runs in a child process.
	MemLimit int64
	// Isolate runs every run in a child process (see Isolation), made by
	// ChildCommand: the same binary's hidden subcommand whose main calls
	// ServeChild.
	Isolate      bool
	ChildCommand func() *exec.Cmd
	// Grace is how long a cancelled Fit may take to return before the run
	// is recorded anyway and its goroutine abandoned (default 10s).
	Grace time.Duration
	// Out receives progress; Terminal selects the live one-line display
	// instead of plain log lines.
	Out      io.Writer
	Terminal bool
	// Heartbeat is how often this worker refreshes its leases (default
	// 10s, at least MinHeartbeat); StaleAfter is how long after the last
	// heartbeat other workers may take a lease over (default and least
	// StaleWindow of Heartbeat and the store's busy timeout). Workers
	// sharing a database lease each run before running it, so N workers on
	// one grid split it, and a worker that died (kill -9, lost node) loses
	// its runs to the others. A worker that was only stopped (SIGSTOP) and
	// wakes to find a run taken over drops it and writes nothing of it.
	Heartbeat, StaleAfter time.Duration
	// Size returns a run's training-set size for the ETA's expected cost
	// (Cost); nil or ≤ 0 assumes 1000.
	Size func(*RunSpec) int
	// Present reports whether a run's dataset files are there (nil: all
	// are): the ETA costs nothing for the runs of an absent one, which
	// fail at once.
	Present func(*RunSpec) bool

	cache datasetCache
	// oneRun is set in a run's child process (ServeChild): no later run
	// shares its dataset, so guarded drops what the run no longer needs
	// (the training set after the fit, the test inputs after prediction)
	// instead of caching it.
	oneRun bool
}

// DefaultHeartbeat is the lease heartbeat interval when Runner sets none.
const DefaultHeartbeat = 10 * time.Second

// Summary counts what a Run call did.
type Summary struct {
	Total, Skipped, Done, Failed, Interrupted int
	// ByOthers counts runs other workers on the same database finished
	// during this sweep; OthersFailed how many of them failed.
	ByOthers, OthersFailed int
	// Abandoned counts runs this worker dropped, recording nothing,
	// because another worker took their leases over (this one had been
	// stopped or cut off for longer than its stale window).
	Abandoned int
	Elapsed   time.Duration
	// Absent maps each dataset whose files are missing to the error of its
	// first failed run (which says where to get them); AbsentRuns counts
	// the failed runs it explains.
	Absent     map[string]string
	AbsentRuns int
}

func (s Summary) String() string {
	out := fmt.Sprintf("%d runs: %d done, %d failed, %d interrupted, %d skipped (already done) in %s",
		s.Total, s.Done, s.Failed, s.Interrupted, s.Skipped, s.Elapsed.Round(time.Millisecond))
	if s.ByOthers > 0 {
		out += fmt.Sprintf("; %d run by other workers (%d of them failed)", s.ByOthers, s.OthersFailed)
	}
	if s.Abandoned > 0 {
		out += fmt.Sprintf("; %d abandoned to other workers that took their claims over", s.Abandoned)
	}
	if s.AbsentRuns > 0 {
		names := make([]string, 0, len(s.Absent))
		for n := range s.Absent {
			names = append(names, n)
		}
		sort.Strings(names)
		out += fmt.Sprintf(" (%d of the failures: data files absent for %s)", s.AbsentRuns, strings.Join(names, ", "))
	}
	return out
}

// MissingData is implemented by the errors a PrepareFunc returns when a
// dataset's files are not in the data directory (datasets.MissingError),
// so that a sweep can tell absent data from a failed fit.
type MissingData interface {
	error
	MissingDataset() string
}

// ErrInterrupted is returned by Run when ctx was cancelled mid-sweep.
var ErrInterrupted = errors.New("sweep interrupted; finished runs are kept, run the same command again to resume")

// Shard returns every n-th run starting at i (0 ≤ i < n), in expansion
// order, so n processes given shards 0..n-1 cover the grid exactly once.
func Shard(specs []*RunSpec, i, n int) ([]*RunSpec, error) {
	if n < 1 || i < 0 || i >= n {
		return nil, fmt.Errorf("invalid shard %d/%d: want 0 ≤ i < n", i, n)
	}
	var out []*RunSpec
	for k, s := range specs {
		if k%n == i {
			out = append(out, s)
		}
	}
	return out, nil
}

// ParseShard parses "i/n".
func ParseShard(s string) (i, n int, err error) {
	if _, err := fmt.Sscanf(s, "%d/%d", &i, &n); err != nil || n < 1 || i < 0 || i >= n || fmt.Sprintf("%d/%d", i, n) != s {
		return 0, 0, fmt.Errorf("invalid --shard %q: want i/n with 0 ≤ i < n, e.g. 0/4", s)
	}
	return i, n, nil
}

// Pending returns the specs the store does not hold as done (all of them
// with force).
func Pending(store *results.Store, specs []*RunSpec, force bool) ([]*RunSpec, error) {
	if force {
		return specs, nil
	}
	ids := make([]string, len(specs))
	for i, s := range specs {
		ids[i] = s.ID
	}
	st, err := store.Statuses(ids)
	if err != nil {
		return nil, err
	}
	var out []*RunSpec
	for _, s := range specs {
		if st[s.ID] != results.StatusDone {
			out = append(out, s)
		}
	}
	return out, nil
}

// Run executes the specs the store does not already hold as done. A failed
// run is recorded with its error and the sweep continues. Cancelling ctx
// stops the sweep: runs in flight are recorded as interrupted, and Run
// returns ErrInterrupted. An error writing to the store stops the sweep.
//
// Each run is leased in the store before it starts (Store.Lease): a run
// another live worker holds is left to it, and once this worker has
// nothing left to lease it waits, polling every heartbeat, until the runs
// held by others are finished, taking over any whose worker died. Run
// therefore returns only when every spec is done or failed (or ctx ends).
func (r *Runner) Run(ctx context.Context, specs []*RunSpec) (Summary, error) {
	start := time.Now()
	sum := Summary{Total: len(specs)}
	if r.Store == nil || r.Prepare == nil {
		return sum, errors.New("runner: Store and Prepare are required")
	}
	if r.ChildCommand == nil {
		for _, s := range specs {
			if r.Isolate || r.MemLimit > 0 || s.MemLimit > 0 {
				return sum, fmt.Errorf("runner: run %s needs a child process (isolation or a memory limit) but the Runner has no ChildCommand", s.ID)
			}
		}
	}
	beat := r.Heartbeat
	if beat == 0 {
		beat = DefaultHeartbeat
	}
	if beat < MinHeartbeat {
		return sum, fmt.Errorf("runner: heartbeat %s is shorter than the minimum %s", beat, MinHeartbeat)
	}
	stale := StaleWindow(beat, r.Store.BusyTimeout())
	if r.StaleAfter != 0 && r.StaleAfter < stale {
		return sum, fmt.Errorf("runner: stale window %s is shorter than 2 × busy timeout + 4 × heartbeat = %s: a live worker waiting for the database could look dead", r.StaleAfter, stale)
	}
	stale = max(stale, r.StaleAfter)
	todo, err := Pending(r.Store, specs, r.Force)
	if err != nil {
		return sum, err
	}
	sum.Skipped = len(specs) - len(todo)
	jobs := max(r.Jobs, 1)
	out := r.Out
	if out == nil {
		out = io.Discard
	}
	worker := results.NewWorker(r.Env.Host, stale)
	// Finish times are stored with their nanoseconds; a run this sweep
	// must not repeat is one finished at or after since.
	since := start.UTC()
	todo = probeFirst(todo, r.Size, jobs)
	pr := newProgress(out, r.Terminal, todo, sum.Skipped, r.Size)
	pr.markAbsent(todo, r.Present)
	defer pr.close()

	var mu sync.Mutex
	var storeErr error
	stopCtx, stop := context.WithCancel(ctx)
	defer stop()
	leases := &leaseSet{}
	go r.heartbeats(stopCtx, worker, beat, leases)

	for round := 0; len(todo) > 0; round++ {
		if round > 0 {
			pr.waiting(todo)
			select {
			case <-stopCtx.Done():
			case <-time.After(beat):
			}
		}
		if stopCtx.Err() != nil {
			break
		}
		feed := make(chan *RunSpec)
		var held []*RunSpec
		var wg sync.WaitGroup
		for w := 0; w < jobs; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for spec := range feed {
					status, absent, err := r.one(ctx, spec, pr, worker, since, leases)
					mu.Lock()
					switch {
					case err != nil:
						if storeErr == nil {
							storeErr = err
						}
						stop()
					case status == statusHeld:
						held = append(held, spec)
					case status == statusByOtherDone:
						sum.ByOthers++
					case status == statusByOtherFailed:
						sum.ByOthers++
						sum.OthersFailed++
					case status == statusAbandoned:
						sum.Abandoned++
					case status == results.StatusDone:
						sum.Done++
					case status == results.StatusFailed:
						sum.Failed++
						if absent != nil {
							if sum.Absent == nil {
								sum.Absent = map[string]string{}
							}
							if _, ok := sum.Absent[absent.MissingDataset()]; !ok {
								sum.Absent[absent.MissingDataset()] = absent.Error()
							}
							sum.AbsentRuns++
						}
					case status == results.StatusInterrupted:
						sum.Interrupted++
					}
					mu.Unlock()
				}
			}()
		}
	feeding:
		for _, s := range todo {
			// select picks at random among ready cases: check first so that no
			// run starts after a store error or an interrupt.
			if stopCtx.Err() != nil {
				break
			}
			select {
			case <-stopCtx.Done():
				break feeding
			case feed <- s:
			}
		}
		close(feed)
		wg.Wait()
		// Keep expansion order for the next round.
		order := make(map[string]int, len(todo))
		for i, s := range todo {
			order[s.ID] = i
		}
		sort.Slice(held, func(i, j int) bool { return order[held[i].ID] < order[held[j].ID] })
		todo = held
	}
	sum.Elapsed = time.Since(start)
	if storeErr != nil {
		return sum, storeErr
	}
	if ctx.Err() != nil {
		return sum, ErrInterrupted
	}
	return sum, nil
}

// Outcomes of one() besides the stored statuses.
const (
	statusHeld          = "held"            // another live worker holds the lease
	statusByOtherDone   = "by-other-done"   // another worker finished it during this sweep
	statusByOtherFailed = "by-other-failed" // … and it failed
	statusAbandoned     = "abandoned"       // another worker took the lease over: nothing recorded
)

// outcome is what the guarded part of a run produced.
type outcome struct {
	fit       methods.FitResult
	pred      methods.Prediction
	data      *Dataset
	nTrain    int // training rows (data.Train may be dropped after the fit)
	trainSecs float64
	predSecs  float64
	loadAvg   float64 // 1-minute load average at the end of Fit; NaN if unknown
	cpuSecs   float64 // process CPU seconds over Fit and Predict; NaN if unknown
	trainCPU  float64 // process CPU seconds spent during Fit; NaN if unknown
	arts      []results.Artifact
	err       error
	// An isolated run comes back scored (metrics) with its provenance as
	// JSON, without the data and predictions.
	scored     bool
	metrics    []results.Metric
	hyper      []results.Hyperparameter
	provenance string
	// recipe is the fit recipe the run resolved on its training set (nil
	// when it did not get that far).
	recipe *methods.Recipe
}

// one executes and records a single run. The returned error is only for
// failures to record it; the run's own failure is its status, and absent
// is set when that failure is a dataset's missing files. The run is
// recorded under its lease: when a heartbeat (lease.go) or the final
// write finds the lease taken over, the run is stopped and nothing of it
// is written.
func (r *Runner) one(ctx context.Context, spec *RunSpec, pr *progress, w results.Worker, since time.Time, leases *leaseSet) (status string, absent MissingData, err error) {
	rec := results.Run{
		ID: spec.ID, Grid: spec.Grid, Spec: string(spec.Canonical()), Method: spec.Method,
		Dataset: spec.Dataset, Split: spec.Split, Seed: spec.Seed, Profile: spec.Profile,
		Started: time.Now().UTC(), Host: r.Env.Host, GitCommit: r.Env.GitCommit,
		GoVersion: r.Env.GoVersion, BLAS: r.Env.BLAS,
	}
	for _, p := range spec.FlatParams() {
		rec.Params = append(rec.Params, results.Param{Name: p[0], Value: p[1]})
	}
	// A crash leaves the run as running with a lease whose heartbeat stops;
	// it then reads as interrupted and any worker may take it over.
	got, lease, err := r.Store.Lease(rec, w, since, r.Force)
	if err != nil {
		return "", nil, err
	}
	switch got {
	case results.HeldByOther:
		return statusHeld, nil, nil
	case results.Finished:
		st, _, err := r.Store.RunStatus(spec.ID)
		if err != nil {
			return "", nil, err
		}
		pr.byOther(spec, st)
		if st == results.StatusFailed {
			return statusByOtherFailed, nil, nil
		}
		return statusByOtherDone, nil, nil
	}
	pr.start(spec)

	leaseCtx, loseLease := context.WithCancelCause(ctx)
	defer loseLease(nil)
	leases.add(lease, loseLease)
	defer leases.remove(lease)

	limit := spec.TimeLimit
	if limit == 0 {
		limit = r.TimeLimit
	}
	runCtx, cancel := context.WithCancel(leaseCtx)
	if limit > 0 {
		runCtx, cancel = context.WithTimeout(leaseCtx, limit)
	}
	defer cancel()

	var traceMu sync.Mutex
	var trace []results.TracePoint
	onProgress := func(p methods.Progress) {
		traceMu.Lock()
		trace = append(trace, results.TracePoint{Iteration: p.Iteration, Elapsed: p.Elapsed.Seconds(), Objective: p.Objective, Phase: p.Phase})
		traceMu.Unlock()
		pr.iteration(spec, p)
	}
	memLimit := spec.MemLimit
	if memLimit == 0 {
		memLimit = r.MemLimit
	}
	done := make(chan outcome, 1)
	go func() {
		if r.Isolate || memLimit > 0 {
			done <- r.isolated(runCtx, spec, memLimit, onProgress)
			return
		}
		done <- r.guarded(runCtx, spec, onProgress)
	}()

	var oc outcome
	select {
	case oc = <-done:
	case <-runCtx.Done():
		grace := r.Grace
		if grace == 0 {
			grace = 10 * time.Second
		}
		select {
		case oc = <-done:
		case <-time.After(grace):
			oc.err = fmt.Errorf("method did not return within %s of cancellation; its goroutine was abandoned", grace)
		}
	}
	rec.Finished = time.Now().UTC()
	if oc.data != nil {
		rec.Provenance = provenanceJSON(oc.data.Provenance, spec.Files)
	} else if oc.provenance != "" {
		rec.Provenance = oc.provenance
	}
	traceMu.Lock()
	tr := append([]results.TracePoint(nil), trace...)
	traceMu.Unlock()

	var ms []results.Metric
	switch {
	case errors.Is(context.Cause(leaseCtx), errLeaseLost):
		pr.abandoned(spec)
		return statusAbandoned, nil, nil
	case ctx.Err() != nil:
		rec.Status = results.StatusInterrupted
		rec.Error = "interrupted (sweep cancelled)"
	case limit > 0 && errors.Is(runCtx.Err(), context.DeadlineExceeded):
		rec.Status = results.StatusFailed
		rec.Error = fmt.Sprintf("time limit %s exceeded", limit)
		if ce := (*childError)(nil); errors.As(oc.err, &ce) {
			rec.Error += ": " + ce.Error()
		}
	case oc.err != nil:
		rec.Status = results.StatusFailed
		rec.Error = oc.err.Error()
		var md MissingData
		if errors.As(oc.err, &md) {
			absent = md
		}
	case oc.scored:
		ms, rec.Status, rec.Hyper = oc.metrics, results.StatusDone, oc.hyper
	default:
		var err error
		ms, err = guardedMetrics(spec, oc)
		if err != nil {
			rec.Status = results.StatusFailed
			rec.Error = "scoring predictions: " + err.Error()
			ms = nil
		} else {
			rec.Status = results.StatusDone
			ms = append(ms, convergenceMetrics(spec, oc, tr)...)
			rec.Hyper = hyperRows(oc.fit.Hyper)
		}
	}
	var arts []results.Artifact
	if rec.Status == results.StatusDone {
		arts = oc.arts
	}
	if oc.recipe != nil { // what the fit ran, where the grid left settings to the method
		rec.Params = rec.Params[:0]
		for _, p := range spec.FlatParamsRan(*oc.recipe) {
			rec.Params = append(rec.Params, results.Param{Name: p[0], Value: p[1]})
		}
	}
	if rec.Status == results.StatusDone && oc.fit.Status != "" {
		// Why the optimiser stopped, beside x_converged: a gradient below
		// grad_tol, a stalled objective, the budget, the stop rule, or a
		// line search that could not go on.
		rec.Params = append(rec.Params, results.Param{Name: StoppedParam, Value: oc.fit.Status})
	}
	if err := r.Store.SaveLeased(lease, rec, ms, tr, arts); errors.Is(err, results.ErrLeaseLost) {
		pr.abandoned(spec)
		return statusAbandoned, nil, nil
	} else if err != nil {
		return "", nil, err
	}
	if absent != nil {
		pr.absentData(spec)
	}
	pr.finish(spec, rec, ms)
	return rec.Status, absent, nil
}

// guarded prepares, fits and predicts, turning a panic into an error. A
// panic on a goroutine of one of the method's parallel loops reaches here
// too: the loops raise it again on the goroutine that started them.
func (r *Runner) guarded(ctx context.Context, spec *RunSpec, onProgress func(methods.Progress)) (oc outcome) {
	defer func() {
		if v := recover(); v != nil {
			oc.err = panicError(v)
		}
	}()
	data, err := r.cache.get(ctx, spec, r.Prepare)
	if err != nil {
		oc.err = fmt.Errorf("preparing dataset %s: %w", spec.Dataset, err)
		return oc
	}
	oc.data, oc.nTrain = data, data.Train.N()
	task := spec.Task
	if task == "" {
		task = data.Task
	}
	m, err := methods.Lookup(spec.Method)
	if err != nil {
		oc.err = err
		return oc
	}
	if !m.Supports(methods.Task(task)) {
		oc.err = fmt.Errorf("method %s does not support the %s task of dataset %s", spec.Method, task, spec.Dataset)
		return oc
	}
	if err := checkFiles(spec); err != nil {
		oc.err = err
		return oc
	}
	if err := checkPlan(m, spec, data.Train); err != nil {
		oc.err = err
		return oc
	}
	model, err := methods.Build(spec.Method, spec.Params)
	if err != nil {
		oc.err = err
		return oc
	}
	opt := methods.FitOptions{
		Iterations: spec.Iterations, Optimizer: spec.Optimizer, LearningRate: spec.LearningRate,
		BatchSize: spec.BatchSize, GradTol: spec.GradTol, FTol: spec.FTol, LBFGSMemory: spec.LBFGSMemory, Seed: spec.Seed, Task: methods.Task(task),
	}
	if spec.StopTol > 0 {
		opt.Stop = stopRule(spec, data.Train.N())
	}
	rc := spec.Recipe(data.Train.N(), methods.Task(task))
	oc.recipe = &rc
	t0, cpu0 := time.Now(), processCPUSeconds()
	oc.cpuSecs = math.NaN()
	oc.fit, err = model.Fit(ctx, data.Train, opt, onProgress)
	oc.trainSecs = time.Since(t0).Seconds()
	oc.trainCPU = processCPUSeconds() - cpu0
	oc.loadAvg = loadAverage()
	if err != nil {
		oc.err = err
		return oc
	}
	if ctx.Err() != nil {
		oc.err = ctx.Err()
		return oc
	}
	addExactLML(spec, &oc.fit, model, data.Train)
	release := r.oneRun && len(spec.Artifacts) == 0
	if release {
		// The run's own copy of the dataset from here on, without the
		// training set: a model that predicts from what it kept (VISH's
		// statistics) then leaves those rows, most of a large run's
		// memory, to the collector below.
		r.cache.clear()
		d := *data
		d.Train = gp.Data{}
		data, oc.data = nil, &d
	}
	// What the fit used and dropped (a precompute's buffers, the
	// optimiser's tape) is collected before prediction allocates its
	// results, which then reuse those pages instead of adding to the
	// run's peak memory. Marking a heap of float arrays takes milliseconds.
	runtime.GC()
	t1 := time.Now()
	oc.pred, err = model.Predict(oc.data.Test.X)
	oc.predSecs = time.Since(t1).Seconds()
	oc.cpuSecs = processCPUSeconds() - cpu0
	if err != nil {
		oc.err = fmt.Errorf("predicting: %w", err)
		return oc
	}
	if release {
		oc.data.Test.X = nil // scoring reads the targets only
	}
	runtime.GC() // the same for prediction's buffers before scoring
	if len(spec.Artifacts) > 0 {
		if oc.arts, err = buildArtifacts(spec, oc, model); err != nil {
			oc.err = err
		}
	}
	return oc
}

// guardedMetrics is runMetrics with a panic turned into an error: scoring
// is part of the run, and its failure must not end the sweep.
func guardedMetrics(spec *RunSpec, oc outcome) (ms []results.Metric, err error) {
	defer func() {
		if v := recover(); v != nil {
			ms, err = nil, panicError(v)
		}
	}()
	return runMetrics(spec, oc)
}

// runMetrics scores a finished run; names follow results.MetricNames, and
// method extras that are not stable names are stored as x_NAME.
func runMetrics(spec *RunSpec, oc outcome) ([]results.Metric, error) {
	vals := map[string]float64{}
	y := oc.data.TestY
	if y == nil {
		y = oc.data.Test.Y
	}
	task := spec.Task
	if task == "" {
		task = oc.data.Task
	}
	var scored map[string]float64
	var err error
	if task == string(methods.Classification) {
		scored, err = metrics.Classification(y, oc.pred.ProbPositive)
	} else {
		score := metrics.Regression
		if oc.pred.PositiveVarOnly {
			score = metrics.RegressionPositiveVar
		}
		scored, err = score(y, oc.pred.Mean, oc.pred.VarY, metrics.Scale{Shift: oc.data.YShift, Scale: oc.data.YScale})
	}
	if err != nil {
		return nil, err
	}
	for k, v := range scored {
		vals[k] = v
	}
	if task == string(methods.Classification) {
		vals["error_rate"] = 1 - vals["accuracy"]
	}
	vals["elbo"] = oc.fit.Objective
	vals["train_seconds"] = oc.trainSecs
	vals["predict_seconds"] = oc.predSecs
	vals["iterations"] = float64(oc.fit.Iterations)
	if oc.trainSecs > 0 {
		vals["iters_per_second"] = float64(oc.fit.Iterations) / oc.trainSecs
	}
	for k, v := range oc.fit.Extra {
		name := k
		if results.CheckMetricName(name) != nil {
			name = results.ExtensionPrefix + sanitize(k)
		}
		vals[name] = v
	}
	names := sortedKeys(vals)
	ms := make([]results.Metric, 0, len(names)+2)
	for _, n := range names {
		if len(spec.Metrics) > 0 && !contains(spec.Metrics, n) {
			continue
		}
		ms = append(ms, results.Metric{Name: n, Value: vals[n]})
	}
	// The machine's load while the run was timed, kept whatever the grid's
	// metrics list: a timing is only comparable with its load beside it.
	if !math.IsNaN(oc.loadAvg) {
		ms = append(ms, results.Metric{Name: LoadAvgMetric, Value: oc.loadAvg})
	}
	if !math.IsNaN(oc.cpuSecs) {
		ms = append(ms, results.Metric{Name: CPUSecondsMetric, Value: oc.cpuSecs})
	}
	if !math.IsNaN(oc.trainCPU) {
		ms = append(ms, results.Metric{Name: TrainCPUMetric, Value: oc.trainCPU})
	}
	// Read after scoring, the run's last allocation.
	if rss := processPeakRSS(); rss > 0 {
		ms = append(ms, results.Metric{Name: PeakRSSMetric, Value: rss})
	}
	return ms, nil
}

// provenanceJSON is the dataset's provenance with the sha256 of every
// file parameter of the run added as "InputFiles".
func provenanceJSON(prov any, files map[string]string) string {
	if prov == nil {
		return ""
	}
	b, err := json.Marshal(prov)
	if err != nil || len(files) == 0 {
		if err != nil {
			return ""
		}
		return string(b)
	}
	var m map[string]any
	if json.Unmarshal(b, &m) != nil {
		return string(b)
	}
	m["InputFiles"] = files
	if b, err = json.Marshal(m); err != nil {
		return ""
	}
	return string(b)
}

func sanitize(s string) string {
	b := []byte(strings.ToLower(s))
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			b[i] = '_'
		}
	}
	return string(b)
}

// panicError is the error of a run that panicked with v: the panic's
// message and the trimmed stack of the goroutine where it began, then, for
// a panic raised again by a parallel loop, that of the goroutine that
// started the loop (which step of the fit it was).
func panicError(v any) error {
	p := goroutines.Recovered(v)
	if _, again := v.(*goroutines.Panic); again {
		return fmt.Errorf("panic: %v\n%s\nraised again by %s", p, p.Stack, goroutines.Stack())
	}
	return fmt.Errorf("panic: %v\n%s", p, p.Stack)
}

// datasetCache keeps the last few prepared datasets: runs are expanded
// dataset-outermost, so consecutive runs usually share one.
type datasetCache struct {
	mu      sync.Mutex
	keys    []string
	entries map[string]*Dataset
}

const datasetCacheSize = 2

// clear forgets every cached dataset.
func (c *datasetCache) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.keys, c.entries = nil, nil
}

func (c *datasetCache) get(ctx context.Context, spec *RunSpec, prepare PrepareFunc) (*Dataset, error) {
	b, _ := json.Marshal([]any{spec.Dataset, spec.DatasetParams, spec.Protocol, spec.Scaling, spec.Split, spec.Seed, spec.Task, spec.Files})
	key := string(b)
	c.mu.Lock()
	defer c.mu.Unlock()
	if d, ok := c.entries[key]; ok {
		return d, nil
	}
	d, err := prepare(ctx, spec)
	if err != nil {
		return nil, err
	}
	if d == nil {
		return nil, errors.New("dataset loader returned nothing")
	}
	if err := d.Train.Validate(); err != nil {
		return nil, fmt.Errorf("training data: %w", err)
	}
	if err := d.Test.Validate(); err != nil {
		return nil, fmt.Errorf("test data: %w", err)
	}
	if c.entries == nil {
		c.entries = map[string]*Dataset{}
	}
	c.entries[key] = d
	c.keys = append(c.keys, key)
	if len(c.keys) > datasetCacheSize {
		delete(c.entries, c.keys[0])
		c.keys = c.keys[1:]
	}
	return d, nil
}

// IsTerminal reports whether f is a character device (an interactive terminal).
func IsTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// LoadAvgMetric is the 1-minute load average read when Fit returned
// (/proc/loadavg; absent where that file is), stored with every run.
const LoadAvgMetric = "x_load_avg_1m"

// CPUSecondsMetric is the CPU time (user + system, every thread) the sgplab
// process used from the start of Fit to the end of Predict, stored with every
// run where the OS reports it. With --jobs 1 it is the run's own CPU cost,
// which estimates its wall time on an idle machine under load (between
// x_cpu_seconds / cores and x_cpu_seconds); with --jobs > 1 it also counts
// the runs in flight beside it, unless each run has its own child process
// (Runner.Isolate).
const CPUSecondsMetric = "x_cpu_seconds"

// TrainCPUMetric is the part of CPUSecondsMetric spent during Fit (the
// training cost a Pareto plot of accuracy against cost wants), with the
// same caveat for several runs in flight.
const TrainCPUMetric = "x_train_cpu_seconds"

// PeakRSSMetric is the peak resident set size, in bytes, of the process
// that ran the run (getrusage's ru_maxrss once the run is scored), stored
// with every run where the OS reports it. In the run's own child process
// (Runner.Isolate, the default) it covers the dataset's preparation, the
// fit and the prediction of this run alone; with --isolate=false it is the
// peak of the whole sweep process so far, an upper bound.
const PeakRSSMetric = "x_peak_rss_bytes"

func nan() float64 { return math.NaN() }

func loadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return math.NaN()
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return math.NaN()
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return math.NaN()
	}
	return v
}
