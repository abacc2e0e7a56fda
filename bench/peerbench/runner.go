package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// A shape is one configuration of the benchmark: the model, N and M (SVGP
// with minibatches of Batch rows).
type shape struct {
	Model string `json:"model"`
	N     int    `json:"n"`
	M     int    `json:"m"`
	Batch int    `json:"batch,omitempty"`
}

func (s shape) String() string { return fmt.Sprintf("%s/%d/%d", s.Model, s.N, s.M) }

// parseShapes reads "sgpr/10000/200,svgp/50000/500,…".
func parseShapes(spec string, batch int) ([]shape, error) {
	var out []shape
	for _, f := range strings.Split(spec, ",") {
		parts := strings.Split(strings.TrimSpace(f), "/")
		if len(parts) != 3 || (parts[0] != "sgpr" && parts[0] != "svgp") {
			return nil, fmt.Errorf("shape %q: want sgpr/N/M or svgp/N/M", f)
		}
		n, err1 := strconv.Atoi(parts[1])
		m, err2 := strconv.Atoi(parts[2])
		if err1 != nil || err2 != nil || n < 1 || m < 1 || m > n {
			return nil, fmt.Errorf("shape %q: N and M must be integers with 1 ≤ M ≤ N", f)
		}
		s := shape{Model: parts[0], N: n, M: m}
		if s.Model == "svgp" {
			s.Batch = batch
		}
		out = append(out, s)
	}
	return out, nil
}

// A point is one iteration of a trace.
type point struct {
	It    int     `json:"it"`
	Wall  float64 `json:"wall"`
	CPU   float64 `json:"cpu"`
	F     float64 `json:"f"`
	Evals int     `json:"evals,omitempty"`
}

// A run is one child process's measurement, as results.jsonl stores it.
type run struct {
	Shape  shape     `json:"shape"`
	Side   string    `json:"side"`   // sgplab or gpytorch
	Recipe string    `json:"recipe"` // default (sgplab) or the peer's recipe
	Mode   string    `json:"mode"`   // step or converge
	Round  int       `json:"round"`
	Start  time.Time `json:"start"`
	// Dgemm is the round's two-core dgemm rate (GFLOP/s), Load the 1-min
	// load average when the run started and ended.
	Dgemm   float64 `json:"dgemm"`
	Load    float64 `json:"load"`
	LoadEnd float64 `json:"load_end"`
	Header  record  `json:"header"`
	Trace   []point `json:"trace"`
	Final   record  `json:"final"`
	Err     string  `json:"err,omitempty"`
	MaxSecs float64 `json:"max_seconds,omitempty"`
	StopTol float64 `json:"stop_tol"`
	// StopWindow is the rule's smallest window (sgplab's recipe's; 0:
	// optim.DefaultMinWindow), applied to both sides.
	StopWindow int      `json:"stop_window,omitempty"`
	Command    []string `json:"command"`
	PeerTuned  bool     `json:"peer_tuned,omitempty"`
	// Warm is the number of warm-start iterations before the trace:
	// sgplab's L-BFGS on a subset, whose objective (the subset's) is left
	// out of Trace; the trace's times and iterations count from the
	// start of the fit, warm start included.
	Warm int `json:"warm,omitempty"`
}

// childResult runs cmd, reads its JSON lines into r and records its error
// (the last lines of its stderr) in r.Err. A child that runs past limit is
// killed.
func childResult(cmd *exec.Cmd, r *run, limit time.Duration) {
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		r.Err = err.Error()
		return
	}
	r.Command = cmd.Args
	r.Load = loadAverage()
	r.Start = time.Now()
	if err := cmd.Start(); err != nil {
		r.Err = err.Error()
		return
	}
	timer := time.AfterFunc(limit, func() { _ = cmd.Process.Kill() })
	defer timer.Stop()
	perr := parseRecords(out, r)
	err = cmd.Wait()
	r.LoadEnd = loadAverage()
	switch {
	case err != nil:
		r.Err = fmt.Sprintf("%v: %s", err, tail(stderr.String(), 2000))
	case perr != nil:
		r.Err = perr.Error()
	case r.Final.Kind != "final":
		r.Err = "no final record: " + tail(stderr.String(), 2000)
	}
}

func parseRecords(rd io.Reader, r *run) error {
	sc := bufio.NewScanner(rd)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	var first error
	for sc.Scan() {
		var rec record
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			if first == nil {
				first = fmt.Errorf("bad line %q: %w", tail(sc.Text(), 200), err)
			}
			continue
		}
		switch rec.Kind {
		case "header":
			r.Header = rec
		case "iter":
			if rec.Phase == "warm" {
				r.Warm = rec.It
				continue
			}
			r.Trace = append(r.Trace, point{It: rec.It, Wall: rec.Wall, CPU: rec.CPU, F: rec.F, Evals: rec.Evals})
		case "final":
			r.Final = rec
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return first
}

func tail(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// loadAverage is the 1-minute load average (NaN where /proc is absent).
func loadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return -1
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return -1
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return -1
	}
	return v
}

// peerEnv is the environment of the GPyTorch child: the caller's, with
// sgplab's one-thread OpenBLAS setting replaced by the peer's thread count
// and, tuned, the two settings without which torch spends its time in page
// faults and OpenMP spin-waiting on a shared VM (issue 33).
// OPENBLAS_CORETYPE, which peerbench sets for itself at start-up
// (linalg.ReexecWithPreferredCoreType), passes through: torch calls the
// same system OpenBLAS, so both sides run the same BLAS kernels.
func peerEnv(base []string, threads int, tuned bool, pythonPath string) []string {
	drop := map[string]bool{"OPENBLAS_NUM_THREADS": true, "OMP_NUM_THREADS": true, "OMP_WAIT_POLICY": true, "GLIBC_TUNABLES": true}
	if pythonPath != "" {
		drop["PYTHONPATH"] = true
	}
	var env []string
	for _, kv := range base {
		if k, _, _ := strings.Cut(kv, "="); !drop[k] {
			env = append(env, kv)
		}
	}
	t := strconv.Itoa(threads)
	env = append(env, "OPENBLAS_NUM_THREADS="+t, "OMP_NUM_THREADS="+t)
	if tuned {
		env = append(env, "OMP_WAIT_POLICY=passive", "GLIBC_TUNABLES="+peerMallocTunables)
	}
	if pythonPath != "" {
		env = append(env, "PYTHONPATH="+pythonPath)
	}
	return env
}

// peerMallocTunables keep glibc from returning torch's large buffers to
// the kernel after every step (mmap_max=0: no mmap'd chunks; a trim
// threshold of 1 TB: no trimming).
const peerMallocTunables = "glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=1000000000000"

// checkPeer reports why the peer cannot run, or nil.
func checkPeer(ctx context.Context, python string, env []string) error {
	cmd := exec.CommandContext(ctx, python, "-c", "import torch, scipy, linear_operator, gpytorch")
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s cannot import torch, scipy, linear_operator and gpytorch: %v: %s", python, err, tail(string(out), 400))
	}
	return nil
}
