package runner

import (
	"bufio"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"regexp"
	"strings"
	"sync"
	"syscall"

	"sgplab/methods"
	"sgplab/results"
)

// Isolation runs a run in a child process of the same binary (the hidden
// `sgplab run-one`, whose main is ServeChild), so that what no recover can
// catch — the kernel's OOM killer, a SIGSEGV in cgo, a runaway allocation
// past the run's memory limit, a fit that ignores its time limit — costs
// that run only. The child computes and scores the run and streams its
// progress and result back over a pipe; the parent alone writes the
// database, under its lease, exactly as for a run in-process. So the
// child needs no database access, no lease and no heartbeat, a child
// stopped or killed mid-run can hold no database lock, its memory limit
// bounds the fit and not SQLite, and the trace points streamed before a
// crash are kept with the failed run.

// childRequest is what the parent writes to the child's stdin.
type childRequest struct {
	Spec     RunSpec
	MemLimit int64 // bytes; 0 is none
}

// childMsg is one message of the child's stream: a progress report, or,
// last, the run's result.
type childMsg struct {
	Progress *methods.Progress
	Result   *childResult
}

// childResult is a finished run as the child scored it.
type childResult struct {
	Err string // the run's error; "" when it is done
	// MissingDataset and MissingMsg describe a failure that is a dataset's
	// absent files (MissingData).
	MissingDataset, MissingMsg string
	Metrics                    []results.Metric
	Artifacts                  []results.Artifact
	Hyper                      []results.Hyperparameter
	Provenance                 string
	Recipe                     *methods.Recipe
	Stopped                    string // why the optimiser stopped (methods.FitResult.Status)
}

func init() {
	// Parameter values are typed per the method's declaration (int,
	// float64, string, bool, []float64, …); these carry nested ones.
	gob.Register(map[string]any{})
	gob.Register([]any{})
}

// childFD is the child's file descriptor of the result stream (the first
// of exec.Cmd.ExtraFiles).
const childFD = 3

// ChildResults returns the child's end of the result stream.
func ChildResults() *os.File { return os.NewFile(childFD, "run results") }

// ServeChild is the whole life of a run's child process: it reads the run
// from in (the parent's pipe), applies its memory limit, runs it, and
// writes its progress and scored result to out. When in closes before the
// run is over the parent has died, and ServeChild exits the process at
// once: a child never outlives the worker that would record it.
func ServeChild(in io.Reader, out io.Writer, prepare PrepareFunc) error {
	br := bufio.NewReader(in)
	var req childRequest
	if err := gob.NewDecoder(br).Decode(&req); err != nil {
		return fmt.Errorf("reading the run from the parent: %w", err)
	}
	spec := req.Spec
	if err := spec.seal(); err != nil || spec.ID != req.Spec.ID {
		return fmt.Errorf("run %s did not survive the trip to the child process (id %s, %v)", req.Spec.ID, spec.ID, err)
	}
	go func() {
		io.Copy(io.Discard, br)
		os.Exit(1)
	}()
	// The child shares its worker's process group, so that job control
	// (Ctrl-Z) and a batch scheduler's suspend stop both; stop signals
	// are the worker's to act on: it kills the child itself.
	signal.Ignore(os.Interrupt, syscall.SIGTERM)
	if req.MemLimit > 0 {
		if err := setMemLimit(req.MemLimit); err != nil {
			return err
		}
	}
	var mu sync.Mutex
	enc := gob.NewEncoder(out)
	send := func(m childMsg) error {
		mu.Lock()
		defer mu.Unlock()
		return enc.Encode(m)
	}
	r := &Runner{Prepare: prepare, oneRun: true}
	// The child keeps the trace it streams, so that it judges convergence
	// on exactly the points the parent stores.
	var trace []results.TracePoint
	oc := r.guarded(context.Background(), &spec, func(p methods.Progress) {
		trace = append(trace, results.TracePoint{Iteration: p.Iteration, Elapsed: p.Elapsed.Seconds(), Objective: p.Objective, Phase: p.Phase})
		send(childMsg{Progress: &p})
	})
	var res childResult
	if oc.data != nil {
		res.Provenance = provenanceJSON(oc.data.Provenance, spec.Files)
	}
	res.Recipe, res.Stopped = oc.recipe, oc.fit.Status
	if oc.err != nil {
		res.Err = oc.err.Error()
		var md MissingData
		if errors.As(oc.err, &md) {
			res.MissingDataset, res.MissingMsg = md.MissingDataset(), md.Error()
		}
	} else if ms, err := runMetrics(&spec, oc); err != nil {
		res.Err = "scoring predictions: " + err.Error()
	} else {
		res.Metrics, res.Artifacts = append(ms, convergenceMetrics(&spec, oc, trace)...), oc.arts
		res.Hyper = hyperRows(oc.fit.Hyper)
	}
	return send(childMsg{Result: &res})
}

// missingInChild is a child's failure for a dataset's absent files,
// rebuilt in the parent: its message is the run's error, and it wraps the
// loader's MissingData as the error in-process does.
type missingInChild struct{ err, dataset, msg string }

func (m missingInChild) Error() string { return m.err }
func (m missingInChild) Unwrap() error { return missingData{m.dataset, m.msg} }

type missingData struct{ dataset, msg string }

func (m missingData) Error() string          { return m.msg }
func (m missingData) MissingDataset() string { return m.dataset }

// stderrHead is how much of a child's stderr is kept: the start of a Go
// crash report names the fault (fatal error, signal, panic).
const stderrHead = 16 << 10

// isolated runs spec in a child process (ChildCommand) and turns what it
// streams back into an outcome: progress reports as they come, then its
// scored result. A child that ends without a result (killed, crashed, over
// its memory limit) or that ctx stops (it is killed at once) gives a
// *childError naming the signal or exit status, the peak RSS and the last
// progress report.
func (r *Runner) isolated(ctx context.Context, spec *RunSpec, memLimit int64, onProgress func(methods.Progress)) (oc outcome) {
	oc.loadAvg, oc.cpuSecs, oc.trainCPU = nan(), nan(), nan()
	if r.ChildCommand == nil {
		oc.err = errors.New("runner: the run needs a child process (isolation or a memory limit) but the Runner has no ChildCommand")
		return oc
	}
	cmd := r.ChildCommand()
	msgR, msgW, err := os.Pipe()
	if err != nil {
		oc.err = fmt.Errorf("starting the run's child process: %w", err)
		return oc
	}
	defer msgR.Close()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		msgW.Close()
		oc.err = fmt.Errorf("starting the run's child process: %w", err)
		return oc
	}
	stderr := &headWriter{max: stderrHead}
	cmd.Stdout, cmd.Stderr = nil, stderr
	cmd.ExtraFiles = []*os.File{msgW}
	err = cmd.Start()
	msgW.Close() // the child has its copy: the stream ends when the child does
	if err != nil {
		oc.err = fmt.Errorf("starting the run's child process: %w", err)
		return oc
	}
	// stdin stays open after the request: the child exits if it closes.
	go gob.NewEncoder(stdin).Encode(childRequest{Spec: *spec, MemLimit: memLimit})

	var res *childResult
	var last string
	streamed := make(chan struct{})
	go func() {
		defer close(streamed)
		dec := gob.NewDecoder(msgR)
		for {
			var m childMsg
			if dec.Decode(&m) != nil {
				return
			}
			if p := m.Progress; p != nil {
				last = progressText(*p)
				onProgress(*p)
			}
			if m.Result != nil {
				res = m.Result
			}
		}
	}()
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	stopped := false
	select {
	case <-exited:
	case <-ctx.Done():
		cmd.Process.Kill() // its trace so far is streamed; the rest would be discarded
		stopped = true
		<-exited
	}
	<-streamed
	if res != nil {
		oc.provenance, oc.scored = res.Provenance, true
		oc.metrics, oc.arts, oc.hyper, oc.recipe = res.Metrics, res.Artifacts, res.Hyper, res.Recipe
		oc.fit.Status = res.Stopped
		switch {
		case res.MissingDataset != "":
			oc.err = missingInChild{res.Err, res.MissingDataset, res.MissingMsg}
		case res.Err != "":
			oc.err = errors.New(res.Err)
		}
		return oc
	}
	oc.err = &childError{state: cmd.ProcessState, stopped: stopped, memLimit: memLimit, last: last, stderr: stderr.String()}
	return oc
}

// progressText is a progress report as the progress line shows it.
func progressText(p methods.Progress) string {
	phase := ""
	if p.Phase != "" {
		phase = p.Phase + " "
	}
	return fmt.Sprintf("%sit %d obj %.6g", phase, p.Iteration, p.Objective)
}

// childError is a run's child process that ended without a result.
type childError struct {
	state    *os.ProcessState
	stopped  bool  // killed by the runner: time limit, interrupt, lease lost
	memLimit int64 // the run's memory limit, 0 if none
	last     string
	stderr   string
}

// crashLine matches the lines of a Go crash report that name the fault.
var crashLine = regexp.MustCompile(`^(fatal error: .*|panic: .*|runtime: out of memory.*|runtime/cgo: .*|memory limit exceeded: .*|SIG[A-Z]+: .*|\[signal .*\])$`)

// outOfMemory matches what a child that reached its memory limit says.
var outOfMemory = regexp.MustCompile(`out of memory|memory limit exceeded|cannot allocate memory|pthread_create failed`)

func (e *childError) Error() string {
	var b strings.Builder
	sig, signaled := exitSignal(e.state)
	switch {
	case e.stopped:
		b.WriteString("child process killed (SIGKILL) by the runner")
	case signaled:
		fmt.Fprintf(&b, "child process killed by %s", sig)
		if sig == "SIGKILL" {
			b.WriteString(" (as the kernel's OOM killer does when memory runs out)")
		}
	case e.state != nil:
		fmt.Fprintf(&b, "child process exited with status %d", e.state.ExitCode())
	default:
		b.WriteString("child process ended")
	}
	lines := strings.Split(strings.TrimSpace(e.stderr), "\n")
	var fault []string
	for _, l := range lines[:min(len(lines), 40)] {
		if l = strings.TrimSpace(l); crashLine.MatchString(l) && len(fault) < 3 {
			fault = append(fault, l)
		}
	}
	if len(fault) > 0 {
		b.WriteString(": " + strings.Join(fault, "; "))
	}
	if e.memLimit > 0 && outOfMemory.MatchString(e.stderr) {
		fmt.Fprintf(&b, " (memory limit %s)", FormatBytes(e.memLimit))
	}
	if rss := peakRSS(e.state); rss > 0 {
		fmt.Fprintf(&b, "; peak RSS %s", FormatBytes(rss))
	}
	if e.last != "" {
		b.WriteString("; last progress: " + e.last)
	} else {
		b.WriteString("; no progress reported")
	}
	if !e.stopped && e.stderr != "" {
		b.WriteString("\nstderr:\n" + strings.Join(lines[:min(len(lines), 20)], "\n"))
	}
	return b.String()
}

// headWriter keeps the first max bytes written to it.
type headWriter struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (w *headWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if room := w.max - len(w.buf); room > 0 {
		w.buf = append(w.buf, p[:min(len(p), room)]...)
	}
	return len(p), nil
}

func (w *headWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return string(w.buf)
}
