package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp"
	"sgplab/methods"
	"sgplab/runner"
)

// cliSlow fits in steps of ms milliseconds, reporting each step and
// stopping when its context ends; a fit that completes appends
// "tag seed pid" to the execution log (cliLogEnv), as cli-test-work does.
type cliSlow struct {
	cliMean
	tag, steps, ms int
}

func (c *cliSlow) Fit(ctx context.Context, d gp.Data, o methods.FitOptions, p func(methods.Progress)) (methods.FitResult, error) {
	t0 := time.Now()
	for i := 1; i <= c.steps; i++ {
		select {
		case <-ctx.Done():
			return methods.FitResult{}, ctx.Err()
		case <-time.After(time.Duration(c.ms) * time.Millisecond):
		}
		p(methods.Progress{Iteration: i, Elapsed: time.Since(t0), Objective: float64(c.steps - i)})
	}
	if path := os.Getenv(cliLogEnv); path != "" {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return methods.FitResult{}, err
		}
		fmt.Fprintf(f, "%d %d %d\n", c.tag, o.Seed, os.Getpid())
		f.Close()
	}
	return c.cliMean.Fit(ctx, d, o, func(methods.Progress) {})
}

func (c *cliSlow) Predict(x *mat.Dense) (methods.Prediction, error) { return c.cliMean.Predict(x) }

func init() {
	methods.Register(methods.Method{Name: "cli-test-slow", Summary: "test double that fits in steps, logging every completed execution",
		Tasks: []methods.Task{methods.Regression},
		Params: []methods.ParamDoc{{Name: "tag", Kind: methods.Int, Default: 100},
			{Name: "steps", Kind: methods.Int, Default: 30}, {Name: "ms", Kind: methods.Int, Default: 100}},
		New: func(p methods.Params) (methods.Model, error) {
			return &cliSlow{tag: p.Int("tag"), steps: p.Int("steps"), ms: p.Int("ms")}, nil
		}})
}

// slowGrid is one run of 30 steps of 100 ms.
const slowGrid = `name = "slow"
[[grid]]
name = "g"
methods = ["cli-test-slow"]
datasets = ["gp-sample"]
iterations = 1
[grid.dataset]
n = 30
n_test = 10
`

// runRows is every row of run id in every table, floats exact, read
// without the results package (whose writes are under test).
func runRows(t *testing.T, db, id string) string {
	t.Helper()
	conn, err := sql.Open("sqlite3", "file:"+db+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var b strings.Builder
	for _, q := range []string{
		"SELECT * FROM runs WHERE id = ?",
		"SELECT * FROM metrics WHERE run_id = ? ORDER BY name",
		"SELECT * FROM traces WHERE run_id = ? ORDER BY seq",
		"SELECT * FROM run_params WHERE run_id = ? ORDER BY name",
		"SELECT * FROM artifacts WHERE run_id = ? ORDER BY name",
		"SELECT * FROM claims WHERE run_id = ?",
	} {
		rows, err := conn.Query(q, id)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		fmt.Fprintf(&b, "%s\n", q)
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, "%#v\n", vals)
		}
		if err := rows.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return b.String()
}

// holdsWriteLock reports whether some process holds the database's write
// lock (a stopped worker may have been stopped inside a transaction).
func holdsWriteLock(t *testing.T, db string) bool {
	t.Helper()
	conn, err := sql.Open("sqlite3", "file:"+db+"?_txlock=immediate&_busy_timeout=0")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	tx, err := conn.Begin()
	if err != nil {
		return true
	}
	tx.Rollback()
	return false
}

// TestSuspendedWorkerIsFenced is the held-out trial of scontrol suspend:
// worker A starts a run and is stopped (SIGSTOP to A and its run's child
// process, as Slurm stops every process of a job); worker B takes the
// stale claim over and finishes the run; A is continued (SIGCONT), and
// then either left to go on or sent SIGTERM. Either way A abandons the run
// and writes nothing: B's run is intact to the byte (status, metrics,
// trace), the fit completed once (B's), no claim is left, and A exits 0
// (every run of the grid is done) or 143 (SIGTERM). It runs in-process
// (--isolate=false) and isolated.
func TestSuspendedWorkerIsFenced(t *testing.T) {
	for _, c := range []struct {
		name, isolate string
		term          bool
		code          int
	}{
		{"continued", "--isolate=false", false, 0},
		{"continued then SIGTERM", "--isolate=false", true, 143},
		{"isolated, continued", "--isolate", false, 0},
		{"isolated, continued then SIGTERM", "--isolate", true, 143},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			grid, db, log := filepath.Join(dir, "g.toml"), filepath.Join(dir, "r.db"), filepath.Join(dir, "exec.log")
			if err := os.WriteFile(grid, []byte(slowGrid), 0o644); err != nil {
				t.Fatal(err)
			}
			flags := []string{"run", c.isolate, "--heartbeat", "1s", "--busy-timeout", "250ms", "--db", db, grid}
			stale := runner.StaleWindow(time.Second, 250*time.Millisecond)
			// A leads a process group, like a batch job: signals to -pid reach
			// A and its run's child process.
			a := startChildAttr(t, &syscall.SysProcAttr{Setpgid: true}, []string{cliLogEnv + "=" + log}, flags...)
			group := -a.cmd.Process.Pid
			start := waitLine(t, a.stdout, " start ")
			f := strings.Fields(start[strings.LastIndex(strings.TrimSpace(start), "\n")+1:])
			id := f[2]
			time.Sleep(500 * time.Millisecond) // a few steps into the fit
			for {
				if err := syscall.Kill(group, syscall.SIGSTOP); err != nil {
					t.Fatal(err)
				}
				time.Sleep(50 * time.Millisecond)
				if !holdsWriteLock(t, db) {
					break
				}
				syscall.Kill(group, syscall.SIGCONT) // stopped inside a write: try again
				time.Sleep(100 * time.Millisecond)
			}
			stopped := time.Now()

			b := startWorker(t, []string{cliLogEnv + "=" + log}, flags...)
			if err := b.cmd.Wait(); err != nil {
				t.Fatalf("B: %v\nstdout:\n%s\nstderr:\n%s", err, b.out.String(), b.err.String())
			}
			if waited := time.Since(stopped); waited < stale {
				t.Errorf("B finished %s after A was stopped, within A's stale window %s: it took a live claim over", waited, stale)
			}
			if !strings.Contains(b.out.String(), "1 runs: 1 done") {
				t.Errorf("B did not run the run:\n%s", b.out.String())
			}
			bRows := runRows(t, db, id)
			if !strings.Contains(bRows, `"done"`) || !strings.Contains(bRows, `"rmse"`) || strings.Count(bRows, "\n") < 30 {
				t.Fatalf("B's run is not done with its metrics and trace:\n%s", bRows)
			}

			if c.term {
				// Sent while A is stopped, SIGTERM is pending and delivered the
				// moment A continues, before its heartbeat can run: A then
				// tries to record the run as interrupted.
				if err := syscall.Kill(group, syscall.SIGTERM); err != nil {
					t.Fatal(err)
				}
			}
			if err := syscall.Kill(group, syscall.SIGCONT); err != nil {
				t.Fatal(err)
			}
			st, out, errOut := a.finish(t)
			out = start + out
			if st.ExitCode() != c.code {
				t.Errorf("A exited %v, want %d\nstdout:\n%s\nstderr:\n%s", st, c.code, out, errOut)
			}
			if !strings.Contains(out, "lease lost "+id) || !strings.Contains(out, "1 abandoned") {
				t.Errorf("A does not say it abandoned run %s:\n%s", id, out)
			}
			if got := runRows(t, db, id); got != bRows {
				t.Errorf("A changed B's finished run:\nB left\n%s\nnow\n%s", bRows, got)
			}
			if runs, pids := executions(t, log); len(runs) != 1 || len(pids) != 1 || runs["100 0"] != 1 {
				t.Errorf("fit completions %v by pids %v; want one (B's)", runs, pids)
			}
		})
	}
}
