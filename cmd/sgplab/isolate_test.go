package main

import (
	"context"
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
	"sgplab/results"
)

// cliCrash reports three iterations and then dies as mode says, the ways
// no recover can catch: "kill" sends itself SIGKILL (as the OOM killer
// does), "segv" SIGSEGV (as a fault in C code raises), "alloc" allocates
// without end, "hang" never returns; "none" fits normally, and "hold" does
// after touching holdBytes of memory.
type cliCrash struct {
	cliMean
	mode string
}

// allocCap bounds the "alloc" mode, so that a memory limit that does not
// work fails the test instead of exhausting the machine.
const allocCap = 2 << 30

// holdBytes is what the "hold" mode keeps resident during its fit.
const holdBytes = 256 << 20

// held keeps the "hold" mode's memory reachable until its fit returns.
var held []byte

func (c *cliCrash) Fit(ctx context.Context, d gp.Data, o methods.FitOptions, p func(methods.Progress)) (methods.FitResult, error) {
	for i := 1; i <= 3; i++ {
		p(methods.Progress{Iteration: i, Objective: float64(10 * i)})
	}
	switch c.mode {
	case "kill":
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {}
	case "segv":
		syscall.Kill(os.Getpid(), syscall.SIGSEGV)
		select {}
	case "alloc":
		var keep [][]byte
		for n := 0; n < allocCap; n += 16 << 20 {
			b := make([]byte, 16<<20)
			for i := 0; i < len(b); i += 4096 {
				b[i] = 1
			}
			keep = append(keep, b)
		}
		return methods.FitResult{}, fmt.Errorf("allocated %d chunks (%d bytes) without reaching the memory limit", len(keep), allocCap)
	case "hang":
		select {}
	case "hold":
		held = make([]byte, holdBytes)
		for i := 0; i < len(held); i += 4096 {
			held[i] = 1
		}
		defer func() { held = nil }()
	}
	return c.cliMean.Fit(ctx, d, o, func(methods.Progress) {})
}

func (c *cliCrash) Predict(x *mat.Dense) (methods.Prediction, error) { return c.cliMean.Predict(x) }

func init() {
	methods.Register(methods.Method{Name: "cli-test-crash", Summary: "test double that dies in ways a recover cannot catch",
		Tasks:  []methods.Task{methods.Regression},
		Params: []methods.ParamDoc{{Name: "mode", Kind: methods.String, Default: "none", Choices: []string{"none", "kill", "segv", "alloc", "hang", "hold"}}},
		New:    func(p methods.Params) (methods.Model, error) { return &cliCrash{mode: p.String("mode")}, nil }})
}

// crashGrid has one run per way of dying, one normal run, and two runs of
// another method; only the alloc grid sets a memory limit. The time limit
// is generous: on a loaded machine the hang child must still start and
// report its 3 progress lines before the runner kills it.
const crashGrid = `name = "crash"
[[grid]]
name = "die"
methods = ["cli-test-crash"]
datasets = ["gp-sample"]
iterations = 1
time_limit = "10s"
[grid.params]
mode = ["none", "kill", "segv", "hang"]
[grid.dataset]
n = 30
n_test = 10

[[grid]]
name = "alloc"
methods = ["cli-test-crash"]
datasets = ["gp-sample"]
iterations = 1
MEMLIMIT
[grid.params]
mode = ["alloc"]
[grid.dataset]
n = 30
n_test = 10

[[grid]]
name = "rest"
methods = ["cli-test-mean"]
datasets = ["gp-sample"]
splits = [0, 1]
iterations = 1
[grid.dataset]
n = 30
n_test = 10
`

// TestIsolatedCrashes: with each run in a child process, a child killed
// by SIGKILL, one that segfaults, one that allocates past its memory limit
// and one that hangs past its time limit are each recorded failed with the
// signal or fault, the peak RSS and the last progress line (and the trace
// up to it); every other run is done and the sweep exits 3. The memory
// limit comes from the grid (with --isolate) or from --mem-limit, which
// alone puts every run in a child.
func TestIsolatedCrashes(t *testing.T) {
	for _, c := range []struct {
		name, memKey string
		flags        []string
	}{
		{"isolate, grid mem_limit", `mem_limit = "100MiB"`, []string{"--isolate"}},
		{"--mem-limit", "", []string{"--mem-limit", "100MiB"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			grid, db := filepath.Join(dir, "g.toml"), filepath.Join(dir, "r.db")
			if err := os.WriteFile(grid, []byte(strings.Replace(crashGrid, "MEMLIMIT", c.memKey, 1)), 0o644); err != nil {
				t.Fatal(err)
			}
			code, out, errOut := sgplab(append(append([]string{"run"}, c.flags...), "--db", db, grid)...)
			if code != exitRunsFailed || !strings.Contains(out, "7 runs: 3 done, 4 failed") {
				t.Fatalf("exit %d, want %d with 3 done and 4 failed\nstdout:\n%s\nstderr:\n%s", code, exitRunsFailed, out, errOut)
			}
			st, err := results.OpenReadOnly(db)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			_, rows, err := st.Query(`SELECT p.value, r.status, r.error, (SELECT COUNT(*) FROM traces t WHERE t.run_id = r.id)
				FROM runs r JOIN run_params p ON p.run_id = r.id AND p.name = 'mode'`)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string][]string{
				"kill":  {"child process killed by SIGKILL", "OOM killer"},
				"segv":  {"child process exited with status 2: SIGSEGV: segmentation violation"},
				"alloc": {"child process exited with status 2", "(memory limit 100 MiB)"},
				"hang":  {"time limit 10s exceeded: child process killed (SIGKILL) by the runner"},
			}
			for _, row := range rows {
				mode, status, msg, traces := row[0].(string), row[1].(string), row[2].(string), row[3].(int64)
				if mode == "none" {
					if status != results.StatusDone {
						t.Errorf("the normal run beside the crashing ones is %s: %s", status, msg)
					}
					continue
				}
				if status != results.StatusFailed {
					t.Errorf("%s: status %s, want failed", mode, status)
				}
				if mode == "alloc" && raceDetector {
					delete(want, mode)
					continue
				}
				for _, w := range append(want[mode], "peak RSS", "last progress: it 3 obj 30") {
					if !strings.Contains(msg, w) {
						t.Errorf("%s: error does not say %q:\n%s", mode, w, msg)
					}
				}
				if mode == "alloc" {
					var rss float64
					if i := strings.Index(msg, "peak RSS "); i < 0 {
						t.Errorf("alloc: no peak RSS in %q", msg)
					} else if fmt.Sscanf(msg[i:], "peak RSS %g MiB", &rss); rss <= 0 || rss > 300 {
						t.Errorf("alloc: peak RSS %g MiB, want below 300 MiB with a 100 MiB limit: %s", rss, msg)
					}
				}
				if traces != 3 {
					t.Errorf("%s: %d trace points stored, want the 3 reported before it died", mode, traces)
				}
				delete(want, mode)
			}
			if len(want) > 0 {
				t.Errorf("runs not stored: %v", want)
			}
		})
	}
}

// TestIsolatedRunsMatch: a run in a child process stores what it stores
// in-process: the same metrics (timings aside), trace and provenance.
func TestIsolatedRunsMatch(t *testing.T) {
	dir := t.TempDir()
	grid := filepath.Join(dir, "g.toml")
	// A real method too: its convergence verdict and fitted
	// hyperparameters come back from the child like its metrics.
	const real = `
[[grid]]
name = "real"
methods = ["sgpr"]
datasets = ["gp-sample"]
splits = [0]
iterations = 30
[grid.params]
num_inducing = [5]
[grid.dataset]
n = 40
n_test = 10

[[grid]]
name = "real-batch"
methods = ["svgp"]
datasets = ["gp-sample"]
splits = [0]
iterations = 3
batch_size = 100                 # above N: a full batch, which only the child knows
[grid.params]
num_inducing = [5]
[grid.dataset]
n = 40
n_test = 10
`
	if err := os.WriteFile(grid, []byte(strings.Replace(signalGrid, `["cli-test-mean", "cli-test-block"]`, `["cli-test-mean", "cli-test-fail"]`, 1)+"[grid.params]\nfail = [0, 1]\n[grid.method.cli-test-mean]\nm = [1]\n"+real), 0o644); err != nil {
		t.Fatal(err)
	}
	dump := func(db string) string {
		st, err := results.OpenReadOnly(db)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		var b strings.Builder
		for _, q := range []string{
			"SELECT id, status, error, provenance FROM runs ORDER BY id",
			"SELECT run_id, name, value FROM metrics WHERE name NOT LIKE '%seconds%' AND name NOT IN ('x_load_avg_1m', 'iters_per_second', 'x_peak_rss_bytes') ORDER BY run_id, name",
			"SELECT run_id, seq, iteration, objective, phase FROM traces ORDER BY run_id, seq",
			"SELECT run_id, name, idx, value FROM hyperparameters ORDER BY run_id, name, idx",
			"SELECT run_id, converged, rel_change FROM run_convergence WHERE converged IS NOT NULL ORDER BY run_id",
			// The recipe each fit ran (its optimiser depends on N).
			"SELECT run_id, name, value FROM run_params WHERE name LIKE 'fit.%' ORDER BY run_id, name",
		} {
			_, rows, err := st.Query(q)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, "%v\n", rows)
		}
		return b.String()
	}
	var dbs []string
	for _, iso := range []string{"--isolate=false", "--isolate"} {
		db := filepath.Join(dir, strings.TrimLeft(iso, "-")+".db")
		if code, out, errOut := sgplab("run", iso, "--db", db, grid); code != exitRunsFailed {
			t.Fatalf("%s: exit %d\n%s%s", iso, code, out, errOut)
		}
		dbs = append(dbs, db)
	}
	a, b := dump(dbs[0]), dump(dbs[1])
	if a != b {
		t.Errorf("in-process:\n%s\nisolated:\n%s", a, b)
	}
	for _, want := range []string{"lengthscales", "noise_variance", "fit.optimizer lbfgs", "fit.stopped iteration limit"} {
		if !strings.Contains(b, want) {
			t.Errorf("isolated run stored no hyperparameter %s:\n%s", want, b)
		}
	}
}

// TestIsolatedPeakRSS: every run stores the peak RSS of its child process
// (x_peak_rss_bytes), its own and not the sweep's: a run that holds 256 MiB
// records at least that, the runs beside it (before and after it) much
// less.
func TestIsolatedPeakRSS(t *testing.T) {
	dir := t.TempDir()
	grid, db := filepath.Join(dir, "g.toml"), filepath.Join(dir, "r.db")
	const src = `name = "rss"
[[grid]]
name = "rss"
methods = ["cli-test-crash"]
datasets = ["gp-sample"]
splits = [0, 1, 2]
iterations = 1
[grid.params]
mode = ["none", "hold"]
[grid.dataset]
n = 30
n_test = 10
`
	if err := os.WriteFile(grid, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := sgplab("run", "--db", db, grid); code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	st, err := results.OpenReadOnly(db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	_, rows, err := st.Query(`SELECT p.value, m.value FROM runs r JOIN run_params p ON p.run_id = r.id AND p.name = 'mode'
		LEFT JOIN metrics m ON m.run_id = r.id AND m.name = 'x_peak_rss_bytes' ORDER BY r.started`)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 6 {
		t.Fatalf("%d runs stored, want 6", len(rows))
	}
	for _, row := range rows {
		mode := row[0].(string)
		rss, ok := row[1].(float64)
		switch {
		case !ok:
			t.Errorf("%s: no x_peak_rss_bytes stored", mode)
		case mode == "hold" && rss < holdBytes:
			t.Errorf("hold: peak RSS %.0f MiB, want at least the %d MiB it held", rss/(1<<20), holdBytes>>20)
		case mode == "none" && (rss < 1<<20 || rss > holdBytes/2):
			t.Errorf("none: peak RSS %.0f MiB, want that of a small child process (a few MiB), not the run beside it", rss/(1<<20))
		}
	}
}

// TestRunOneNeedsARun: the hidden subcommand run by hand fails with a
// clear error instead of hanging or running anything.
func TestRunOneNeedsARun(t *testing.T) {
	ch := startChildEnv(t, nil, runOneCommand) // stdin is /dev/null
	st, _, errOut := ch.finish(t)
	if st.ExitCode() != 1 || !strings.Contains(errOut, "reading the run from the parent") {
		t.Errorf("run-one with no run: %v, stderr %q", st, errOut)
	}
}

// childrenOf returns the pids whose parent is pid (from /proc).
func childrenOf(t *testing.T, pid int) []int {
	t.Helper()
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var out []int
	for _, f := range stats {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so cut at the last ')'.
		s := string(b)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		var p, pp int
		fmt.Sscan(filepath.Base(filepath.Dir(f)), &p)
		if len(fields) > 1 && fields[0] != "Z" {
			fmt.Sscan(fields[1], &pp)
			if pp == pid {
				out = append(out, p)
			}
		}
	}
	return out
}

// alive reports whether pid is a process that has not exited (a zombie
// has).
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(f) > 0 && f[0] != "Z"
}

// TestIsolatedChildEndsWithWorker: a run's child process never outlives
// its worker. SIGINT stops the worker cleanly: the child is killed and the
// run recorded interrupted (exit 130); SIGKILL of the worker closes the
// child's stdin, and the child exits by itself.
func TestIsolatedChildEndsWithWorker(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs /proc")
	}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			grid, db := filepath.Join(dir, "g.toml"), filepath.Join(dir, "r.db")
			src := strings.Replace(strings.Replace(crashGrid, "MEMLIMIT", "", 1), `mode = ["none", "kill", "segv", "hang"]`, `mode = ["hang"]`, 1)
			if err := os.WriteFile(grid, []byte(strings.Replace(src, `time_limit = "10s"`, "", 1)), 0o644); err != nil {
				t.Fatal(err)
			}
			w := startChild(t, "", "run", "--isolate", "--db", db, grid)
			waitLine(t, w.stdout, "mode=hang")
			var kids []int
			for deadline := time.Now().Add(5 * time.Second); len(kids) == 0 && time.Now().Before(deadline); {
				time.Sleep(20 * time.Millisecond)
				kids = childrenOf(t, w.cmd.Process.Pid)
			}
			if len(kids) != 1 {
				t.Fatalf("worker has children %v, want one run-one process", kids)
			}
			if err := w.cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			st, out, errOut := w.finish(t)
			for deadline := time.Now().Add(5 * time.Second); alive(kids[0]) && time.Now().Before(deadline); {
				time.Sleep(20 * time.Millisecond)
			}
			if alive(kids[0]) {
				syscall.Kill(kids[0], syscall.SIGKILL)
				t.Errorf("the run's child %d outlived its worker (%v) by 5 s", kids[0], sig)
			}
			if sig == syscall.SIGINT {
				if st.ExitCode() != 130 || !strings.Contains(out, "1 interrupted") {
					t.Errorf("exit %v, want 130 with the run interrupted\n%s%s", st, out, errOut)
				}
			}
		})
	}
}

// TestIsolatedAbsentData: a run whose dataset files are absent fails in
// its child as in-process, and the summary still names the dataset.
func TestIsolatedAbsentData(t *testing.T) {
	dir := t.TempDir()
	grid := filepath.Join(dir, "g.toml")
	if err := os.WriteFile(grid, []byte("name = \"absent\"\n[[grid]]\nname = \"g\"\nmethods = [\"cli-test-mean\"]\ndatasets = [\"yacht\"]\niterations = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var summaries []string
	for _, iso := range []string{"--isolate=false", "--isolate"} {
		code, out, errOut := sgplab("run", iso, "--data-dir", dir, "--db", filepath.Join(dir, iso+".db"), grid)
		if code != exitRunsFailed || !strings.Contains(out, "data files absent for yacht") {
			t.Fatalf("%s: exit %d\n%s%s", iso, code, out, errOut)
		}
		i := strings.Index(out, "absent data")
		summaries = append(summaries, out[i:i+strings.Index(out[i:], "failed runs:")])
	}
	if summaries[0] != summaries[1] {
		t.Errorf("in-process:\n%s\nisolated:\n%s", summaries[0], summaries[1])
	}
}
