package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp"
	"sgplab/methods"
	"sgplab/results"
	"sgplab/runner"
)

// cliLogEnv names a file that cli-test-work appends "tag seed pid" to each
// time it finishes a fit: a record of every execution that does not come
// from the database under test.
const cliLogEnv = "SGPLAB_CLI_TEST_LOG"

// cliWork fits for a few milliseconds (so that workers overlap), then logs
// the execution. With cliBlockEnv = "hang" it never returns.
type cliWork struct {
	cliMean
	tag int
}

func (c *cliWork) Fit(ctx context.Context, d gp.Data, o methods.FitOptions, p func(methods.Progress)) (methods.FitResult, error) {
	if os.Getenv(cliBlockEnv) == "hang" {
		select {}
	}
	select {
	case <-ctx.Done():
		return methods.FitResult{}, ctx.Err()
	case <-time.After(20 * time.Millisecond):
	}
	if path := os.Getenv(cliLogEnv); path != "" {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return methods.FitResult{}, err
		}
		fmt.Fprintf(f, "%d %d %d\n", c.tag, o.Seed, os.Getpid()) // one short O_APPEND write: atomic
		f.Close()
	}
	return c.cliMean.Fit(ctx, d, o, p)
}

// Predict shifts the mean by the tag, so that every run has its own metrics.
func (c *cliWork) Predict(x *mat.Dense) (methods.Prediction, error) {
	p, err := c.cliMean.Predict(x)
	for i := range p.Mean {
		p.Mean[i] += 0.01 * float64(c.tag)
	}
	return p, err
}

func init() {
	methods.Register(methods.Method{Name: "cli-test-work", Summary: "test double that logs every execution",
		Tasks:  []methods.Task{methods.Regression},
		Params: []methods.ParamDoc{{Name: "tag", Kind: methods.Int, Default: 0}},
		New: func(p methods.Params) (methods.Model, error) {
			return &cliWork{tag: p.Int("tag")}, nil
		}})
}

// workGrid has 12 tags × 2 seeds = 24 runs.
const workGrid = `name = "work"
[[grid]]
name = "g"
methods = ["cli-test-work"]
datasets = ["gp-sample"]
seeds = [0, 1]
iterations = 1
[grid.params]
tag = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]
[grid.dataset]
n = 30
n_test = 10
`

// worker is an `sgplab run` subprocess whose output is collected.
type worker struct {
	cmd      *exec.Cmd
	out, err strings.Builder
}

func startWorker(t *testing.T, env []string, args ...string) *worker {
	t.Helper()
	w := &worker{cmd: exec.Command(os.Args[0], "-test.run=^$")}
	w.cmd.Env = append(append(os.Environ(), cliArgsEnv+"="+strings.Join(args, "\x1f")), env...)
	w.cmd.Stdout, w.cmd.Stderr = &w.out, &w.err
	if err := w.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if w.cmd.ProcessState == nil {
			w.cmd.Process.Kill()
			w.cmd.Wait()
		}
	})
	return w
}

// executions reads the log: how often each "tag seed" ran, and by which pids.
func executions(t *testing.T, path string) (map[string]int, map[string]int) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	runs, pids := map[string]int{}, map[string]int{}
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Fields(l)
		if len(f) != 3 {
			t.Fatalf("bad log line %q", l)
		}
		runs[f[0]+" "+f[1]]++
		pids[f[2]]++
	}
	return runs, pids
}

func checkOnce(t *testing.T, runs map[string]int) {
	t.Helper()
	if len(runs) != 24 {
		t.Errorf("%d distinct runs executed, want 24", len(runs))
	}
	var twice []string
	for k, n := range runs {
		if n != 1 {
			twice = append(twice, fmt.Sprintf("%s ×%d", k, n))
		}
	}
	sort.Strings(twice)
	if len(twice) > 0 {
		t.Errorf("runs executed more than once: %v", twice)
	}
}

// TestFourWorkersShareAGrid starts 4 `sgplab run` processes on one grid and
// one database at once: every run is executed exactly once, the work is
// split between the processes, and each exits 0 only once all are done.
func TestFourWorkersShareAGrid(t *testing.T) {
	dir := t.TempDir()
	grid, db, log := filepath.Join(dir, "g.toml"), filepath.Join(dir, "r.db"), filepath.Join(dir, "exec.log")
	if err := os.WriteFile(grid, []byte(workGrid), 0o644); err != nil {
		t.Fatal(err)
	}
	var ws []*worker
	for range 4 {
		ws = append(ws, startWorker(t, []string{cliLogEnv + "=" + log}, "run", "--heartbeat", "1s", "--db", db, grid))
	}
	var wg sync.WaitGroup
	errs := make([]error, len(ws))
	for i, w := range ws {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = w.cmd.Wait() }()
	}
	wg.Wait()
	for i, w := range ws {
		if errs[i] != nil {
			t.Errorf("worker %d: %v\nstdout:\n%s\nstderr:\n%s", i, errs[i], w.out.String(), w.err.String())
		}
	}
	runs, pids := executions(t, log)
	checkOnce(t, runs)
	if len(pids) < 2 {
		t.Errorf("all runs were executed by %d process(es); 4 workers should split the grid", len(pids))
	}
	st, err := results.OpenReadOnly(db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	_, rows, err := st.Query("SELECT status, COUNT(*) FROM runs GROUP BY status")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0][0] != "done" || rows[0][1].(int64) != 24 {
		t.Errorf("runs by status %v, want 24 done", rows)
	}
	if leases, err := st.Leases(nil); err != nil || len(leases) != 0 {
		t.Errorf("leases left after the sweep: %v (%v)", leases, err)
	}
	t.Logf("4 workers: runs per process %v", pids)
}

// TestKilledWorkerIsReclaimed kills (SIGKILL) a worker in the middle of a
// run while a second worker sweeps the same grid: `status` shows the dead
// worker's run as interrupted once its heartbeat is stale, and the second
// worker takes the run over, so every run is executed exactly once.
func TestKilledWorkerIsReclaimed(t *testing.T) {
	dir := t.TempDir()
	grid, db, log := filepath.Join(dir, "g.toml"), filepath.Join(dir, "r.db"), filepath.Join(dir, "exec.log")
	if err := os.WriteFile(grid, []byte(workGrid), 0o644); err != nil {
		t.Fatal(err)
	}
	// The doomed worker hangs in its first run and is killed there.
	doomed := startChild(t, "hang", "run", "--heartbeat", "1s", "--busy-timeout", "500ms", "--db", db, grid)
	line := waitLine(t, doomed.stdout, "start ")
	f := strings.Fields(line[strings.LastIndex(strings.TrimSpace(line), "\n")+1:])
	if len(f) < 3 {
		t.Fatalf("cannot read the run id from %q", line)
	}
	id := f[2]
	if err := doomed.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	doomed.cmd.Wait()

	// Stale after 2 × 500 ms + 4 × 1 s: status then reports interrupted.
	time.Sleep(runner.StaleWindow(time.Second, 500*time.Millisecond) + 200*time.Millisecond)
	var out, errOut strings.Builder
	if code := Main([]string{"status", "--db", db, grid}, &out, &errOut); code != 0 {
		t.Fatalf("status exit %d: %s", code, errOut.String())
	}
	// Columns: experiment grid profile total done failed interrupted running pending stale unconverged.
	var row []string
	for _, l := range strings.Split(out.String(), "\n") {
		if f := strings.Fields(l); len(f) >= 10 && f[0] == "work" {
			row = f
		}
	}
	if row == nil || row[6] != "1" || row[7] != "0" {
		t.Errorf("status after kill -9 does not show 1 interrupted and 0 running run:\n%s", out.String())
	}
	st, err := results.OpenReadOnly(db)
	if err != nil {
		t.Fatal(err)
	}
	s, err := st.Statuses([]string{id})
	st.Close()
	if err != nil || s[id] != results.StatusInterrupted {
		t.Errorf("run %s of the killed worker has status %q (%v), want interrupted", id, s[id], err)
	}

	survivor := startWorker(t, []string{cliLogEnv + "=" + log}, "run", "--heartbeat", "1s", "--db", db, grid)
	if err := survivor.cmd.Wait(); err != nil {
		t.Fatalf("survivor: %v\nstdout:\n%s\nstderr:\n%s", err, survivor.out.String(), survivor.err.String())
	}
	runs, _ := executions(t, log)
	checkOnce(t, runs)
	if !strings.Contains(survivor.out.String(), id) {
		t.Errorf("the survivor did not run %s, the killed worker's run:\n%s", id, survivor.out.String())
	}
}

// TestRunningWorkerIsNotReclaimed: a live worker's claim is respected,
// also by a run that lasts longer than the stale window (9 s against 2 ×
// 500 ms + 4 × 1 s); a second worker waits for it rather than running it
// too, then exits 0. (A busy timeout of 100 ms failed the second worker's
// open on a machine at load 20: the two open the database at once.)
func TestRunningWorkerIsNotReclaimed(t *testing.T) {
	dir := t.TempDir()
	grid, db, log := filepath.Join(dir, "g.toml"), filepath.Join(dir, "r.db"), filepath.Join(dir, "exec.log")
	slow := strings.NewReplacer(`name = "slow"`, "", `name = "g"`, `name = "slow"`, "iterations = 1", "iterations = 1\n[grid.params]\nsteps = 90").Replace(slowGrid)
	if err := os.WriteFile(grid, []byte(strings.Replace(workGrid, "seeds = [0, 1]", "seeds = [0]", 1)+slow), 0o644); err != nil {
		t.Fatal(err)
	}
	flags := []string{"--heartbeat", "1s", "--busy-timeout", "500ms", "--db", db, grid}
	a := startWorker(t, []string{cliLogEnv + "=" + log}, append([]string{"run", "--jobs", "2"}, flags...)...)
	b := startWorker(t, []string{cliLogEnv + "=" + log}, append([]string{"run"}, flags...)...)
	for _, w := range []*worker{a, b} {
		if err := w.cmd.Wait(); err != nil {
			t.Fatalf("worker: %v\n%s\n%s", err, w.out.String(), w.err.String())
		}
	}
	runs, _ := executions(t, log)
	if len(runs) != 13 {
		t.Errorf("%d runs executed, want 13", len(runs))
	}
	for k, n := range runs {
		if n != 1 {
			t.Errorf("run %s executed %d times", k, n)
		}
	}
}
