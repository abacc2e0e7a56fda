package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp"
	"sgplab/methods"
)

// The test binary doubles as the sgplab binary for the signal tests: with
// cliArgsEnv set it runs Main on those arguments (separated by \x1f) and
// exits, so a real process can be sent real signals.
const (
	cliArgsEnv  = "SGPLAB_CLI_TEST_ARGS"
	cliBlockEnv = "SGPLAB_CLI_TEST_BLOCK" // "ctx": Fit waits for cancellation; "hang": Fit ignores it
)

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == runOneCommand { // a run's child process (isolation)
		os.Exit(Main(os.Args[1:], os.Stdout, os.Stderr))
	}
	if args := os.Getenv(cliArgsEnv); args != "" {
		os.Exit(Main(strings.Split(args, "\x1f"), os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// cliBlock behaves like cliMean unless cliBlockEnv says to block, so the
// same run spec (same id) blocks in the child process and finishes when
// the parent resumes the sweep.
type cliBlock struct{ cliMean }

func (c *cliBlock) Fit(ctx context.Context, d gp.Data, o methods.FitOptions, p func(methods.Progress)) (methods.FitResult, error) {
	switch os.Getenv(cliBlockEnv) {
	case "ctx":
		<-ctx.Done()
		return methods.FitResult{}, ctx.Err()
	case "hang":
		select {}
	}
	return c.cliMean.Fit(ctx, d, o, p)
}

func (c *cliBlock) Predict(x *mat.Dense) (methods.Prediction, error) { return c.cliMean.Predict(x) }

func init() {
	methods.Register(methods.Method{Name: "cli-test-block", Summary: "test double that blocks in the signal tests",
		Tasks: []methods.Task{methods.Regression},
		New:   func(methods.Params) (methods.Model, error) { return &cliBlock{}, nil }})
}

const signalGrid = `name = "sig"
[[grid]]
name = "g"
methods = ["cli-test-mean", "cli-test-block"]
datasets = ["gp-sample"]
splits = [0, 1]
iterations = 1
[grid.dataset]
n = 40
n_test = 10
`

// child is a running `sgplab run` in a subprocess.
type child struct {
	cmd    *exec.Cmd
	stdout *bufio.Reader
	stderr *bufio.Reader
	errBuf bytes.Buffer // stderr read so far
}

func startChild(t *testing.T, block string, args ...string) *child {
	t.Helper()
	return startChildEnv(t, []string{cliBlockEnv + "=" + block}, args...)
}

// startChildEnv is startChild with extra environment variables.
func startChildEnv(t *testing.T, env []string, args ...string) *child {
	t.Helper()
	return startChildAttr(t, nil, env, args...)
}

// startChildAttr is startChildEnv with process attributes.
func startChildAttr(t *testing.T, attr *syscall.SysProcAttr, env []string, args ...string) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), cliArgsEnv+"="+strings.Join(args, "\x1f")), env...)
	cmd.SysProcAttr = attr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	errp, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	return &child{cmd: cmd, stdout: bufio.NewReader(out), stderr: bufio.NewReader(errp)}
}

// waitLine reads r until a line containing want, returning everything read.
func waitLine(t *testing.T, r *bufio.Reader, want string) string {
	t.Helper()
	var seen strings.Builder
	for {
		line, err := r.ReadString('\n')
		seen.WriteString(line)
		if strings.Contains(line, want) {
			return seen.String()
		}
		if err != nil {
			t.Fatalf("child ended (%v) before printing %q; it printed:\n%s", err, want, seen.String())
		}
	}
}

// finish drains the child's output and waits for it to exit.
func (c *child) finish(t *testing.T) (*os.ProcessState, string, string) {
	t.Helper()
	rest, _ := io.ReadAll(c.stdout)
	errRest, _ := io.ReadAll(c.stderr)
	err := c.cmd.Wait()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return c.cmd.ProcessState, string(rest), string(errRest)
}

// TestStopSignalAndResume sends SIGINT or SIGTERM while the second run of a
// sweep is in flight, then resumes the sweep: the finished run is kept and
// not redone, the interrupted one runs again, and nothing is duplicated.
func TestStopSignalAndResume(t *testing.T) {
	for _, c := range []struct {
		sig  syscall.Signal
		code int
	}{{syscall.SIGINT, 130}, {syscall.SIGTERM, 143}} {
		t.Run(c.sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			grid := filepath.Join(dir, "g.toml")
			db := filepath.Join(dir, "r.db")
			if err := os.WriteFile(grid, []byte(signalGrid), 0o644); err != nil {
				t.Fatal(err)
			}
			ch := startChild(t, "ctx", "run", "--db", db, grid)
			waitLine(t, ch.stdout, "cli-test-block") // the blocking run is in flight
			if err := ch.cmd.Process.Signal(c.sig); err != nil {
				t.Fatal(err)
			}
			st, out, errOut := ch.finish(t)
			if st.ExitCode() != c.code {
				t.Fatalf("exit status %v, want %d; stdout:\n%s\nstderr:\n%s", st, c.code, out, errOut)
			}
			for _, want := range []string{"recording runs in flight as interrupted", "run the same command again to resume"} {
				if !strings.Contains(errOut, want) {
					t.Errorf("stderr does not say %q:\n%s", want, errOut)
				}
			}
			if !strings.Contains(out, "1 done, 0 failed, 1 interrupted") {
				t.Errorf("summary:\n%s", out)
			}
			counts := func() string {
				t.Helper()
				var b, e bytes.Buffer
				if code := Main([]string{"query", "--db", db, "--format", "csv",
					"SELECT method, split, status, (SELECT COUNT(*) FROM traces t WHERE t.run_id = r.id) AS traces FROM runs r ORDER BY split, method"}, &b, &e); code != 0 {
					t.Fatalf("query: %s", e.String())
				}
				return b.String()
			}
			if got, want := counts(), "method,split,status,traces\ncli-test-block,0,interrupted,0\ncli-test-mean,0,done,1\n"; got != want {
				t.Errorf("after the signal the database holds\n%s\nwant\n%s", got, want)
			}

			// Resume in this process, where cli-test-block does not block.
			var o, e bytes.Buffer
			if code := Main([]string{"run", "--db", db, grid}, &o, &e); code != 0 {
				t.Fatalf("resume: exit %d\n%s%s", code, o.String(), e.String())
			}
			if !strings.Contains(o.String(), "4 runs: 3 done, 0 failed, 0 interrupted, 1 skipped") {
				t.Errorf("resume summary:\n%s", o.String())
			}
			want := "method,split,status,traces\ncli-test-block,0,done,1\ncli-test-mean,0,done,1\ncli-test-block,1,done,1\ncli-test-mean,1,done,1\n"
			if got := counts(); got != want {
				t.Errorf("after resuming the database holds\n%s\nwant\n%s", got, want)
			}
		})
	}
}

// TestSecondSignalKills checks that a second Ctrl-C kills the process at
// once even when the run in flight ignores cancellation (the runner would
// otherwise wait out its grace period and exit with status 130).
func TestSecondSignalKills(t *testing.T) {
	dir := t.TempDir()
	grid := filepath.Join(dir, "g.toml")
	if err := os.WriteFile(grid, []byte(signalGrid), 0o644); err != nil {
		t.Fatal(err)
	}
	// In-process: a child process would be killed at the first signal.
	ch := startChild(t, "hang", "run", "--isolate=false", "--db", filepath.Join(dir, "r.db"), grid)
	waitLine(t, ch.stdout, "cli-test-block")
	if err := ch.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	waitLine(t, ch.stderr, "send it again to kill")
	if err := ch.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	st, out, errOut := ch.finish(t)
	ws, ok := st.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() || ws.Signal() != syscall.SIGINT {
		t.Errorf("process ended with %v, want killed by SIGINT; stdout:\n%s\nstderr:\n%s", st, out, errOut)
	}
}

// TestNormalExitIsQuiet checks that a sweep that ends normally prints no
// interrupt message (the signal handler must not fire on cleanup).
func TestNormalExitIsQuiet(t *testing.T) {
	dir := t.TempDir()
	grid := filepath.Join(dir, "g.toml")
	if err := os.WriteFile(grid, []byte(signalGrid), 0o644); err != nil {
		t.Fatal(err)
	}
	ch := startChild(t, "", "run", "--quiet", "--db", filepath.Join(dir, "r.db"), grid)
	st, out, errOut := ch.finish(t)
	if st.ExitCode() != 0 || errOut != "" || !strings.Contains(out, "4 runs: 4 done") {
		t.Errorf("exit %d\nstdout:\n%s\nstderr (want empty):\n%s", st.ExitCode(), out, errOut)
	}
}
