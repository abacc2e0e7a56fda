package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"sgplab/gp/optim"
	"sgplab/methods"
)

// defaultShapes are issue 33's: SGPR and SVGP at N ∈ {10⁴, 5·10⁴},
// M ∈ {200, 500}, smaller first.
const defaultShapes = "sgpr/10000/200,svgp/10000/200,sgpr/10000/500,svgp/10000/500," +
	"sgpr/50000/200,svgp/50000/200,sgpr/50000/500,svgp/50000/500"

// benchOptions are the flags of the benchmark run.
type benchOptions struct {
	out, shapes, what             string
	rounds, convergeRounds        int
	steps, svgpSteps, batch, seed int
	sgprRecipes, svgpRecipes      string
	maxSeconds                    float64
	python, script, pythonPath    string
	peerThreads                   int
	untuned                       bool
	dgemmSeconds                  float64
	self                          string
	stdout                        io.Writer
	appendResults                 bool
	lbfgsMemory                   int // sgplab's lbfgs_memory in SGPR convergence runs; 0: the default recipe's
}

// peerStepRecipe is the peer recipe whose step is timed: GPyTorch's
// documented one (Adam for SGPR, whose L-BFGS iteration may evaluate
// several times; NGD + Adam for SVGP, the recipe sgplab's default matches).
var peerStepRecipe = map[string]string{"sgpr": "adam", "svgp": "ngd"}

func benchMain(args []string, stdout io.Writer) error {
	var o benchOptions
	fs := flag.NewFlagSet("peerbench", flag.ContinueOnError)
	fs.StringVar(&o.out, "out", "out/peerbench", "directory for the data files, results.jsonl and table.md")
	fs.StringVar(&o.shapes, "shapes", defaultShapes, "comma-separated model/N/M")
	fs.StringVar(&o.what, "what", "step,converge", "step (seconds per step), converge (time to a converged model), or both")
	fs.IntVar(&o.rounds, "rounds", 3, "interleaved rounds of the step measurement")
	fs.IntVar(&o.convergeRounds, "converge-rounds", 1, "interleaved rounds of the convergence measurement")
	fs.IntVar(&o.steps, "steps", 10, "timed SGPR steps per step measurement")
	fs.IntVar(&o.svgpSteps, "svgp-steps", 100, "timed SVGP steps per step measurement")
	fs.IntVar(&o.batch, "batch", 1000, "SVGP minibatch size")
	fs.IntVar(&o.seed, "seed", 1, "fit seed of both sides (minibatch order)")
	fs.StringVar(&o.sgprRecipes, "sgpr-recipes", "adam,lbfgs", "GPyTorch SGPR recipes to converge: adam (documented), lbfgs (torch.optim.LBFGS)")
	fs.StringVar(&o.svgpRecipes, "svgp-recipes", "ngd,adam", "GPyTorch SVGP recipes to converge: ngd (NGD + Adam, documented), adam")
	fs.Float64Var(&o.maxSeconds, "max-seconds", 1800, "wall-time budget of one convergence run (either side)")
	fs.StringVar(&o.python, "python", envOr("PEER_PYTHON", "python3"), "Python with Debian's torch and scipy (env PEER_PYTHON)")
	fs.StringVar(&o.script, "peer-script", "bench/gpytorch_peer.py", "the GPyTorch side")
	fs.StringVar(&o.pythonPath, "pythonpath", os.Getenv("PEER_PYTHONPATH"), "PYTHONPATH of gpytorch v1.10 and linear_operator v0.4.0 sources (env PEER_PYTHONPATH; empty: the caller's PYTHONPATH)")
	fs.IntVar(&o.peerThreads, "peer-threads", 2, "torch (and its OpenBLAS) threads")
	fs.BoolVar(&o.untuned, "peer-untuned", false, "run the peer without OMP_WAIT_POLICY=passive and the malloc tunables (for comparison only)")
	fs.Float64Var(&o.dgemmSeconds, "dgemm-seconds", 1, "duration of each round's dgemm measurement")
	fs.BoolVar(&o.appendResults, "append", false, "append to results.jsonl instead of starting it afresh")
	fs.IntVar(&o.lbfgsMemory, "sgplab-lbfgs-memory", 0, "sgplab's L-BFGS memory in SGPR convergence runs (a grid's lbfgs_memory; 0: the default recipe's)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	o.stdout = stdout
	self, err := os.Executable()
	if err != nil {
		return err
	}
	o.self = self
	return bench(context.Background(), o)
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// errSkipped is returned when the peer's dependencies are absent: the
// benchmark prints why and what to install, and exits 0.
var errSkipped = errors.New("skipped")

func bench(ctx context.Context, o benchOptions) error {
	shapes, err := parseShapes(o.shapes, o.batch)
	if err != nil {
		return err
	}
	what := map[string]bool{}
	for _, w := range strings.Split(o.what, ",") {
		if w != "step" && w != "converge" {
			return fmt.Errorf("-what %q: want step, converge or both", o.what)
		}
		what[w] = true
	}
	recipes := map[string][]string{"sgpr": splitList(o.sgprRecipes), "svgp": splitList(o.svgpRecipes)}
	for model, rs := range recipes {
		for _, r := range rs {
			if !validPeerRecipe(model, r) {
				return fmt.Errorf("no GPyTorch %s recipe %q: sgpr takes adam or lbfgs, svgp ngd or adam", model, r)
			}
		}
	}
	env := peerEnv(os.Environ(), o.peerThreads, !o.untuned, o.pythonPath)
	if _, err := os.Stat(o.script); err != nil {
		return fmt.Errorf("the peer script: %w (run from the repository root or set -peer-script)", err)
	}
	if err := checkPeer(ctx, o.python, env); err != nil {
		fmt.Fprintf(o.stdout, "peerbench: skipped: %v\n\n%s", err, getPeerHelp)
		return errSkipped
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	flags := os.O_CREATE | os.O_WRONLY | os.O_TRUNC
	if o.appendResults {
		flags = os.O_CREATE | os.O_WRONLY | os.O_APPEND
	}
	resultsPath := filepath.Join(o.out, "results.jsonl")
	rf, err := os.OpenFile(resultsPath, flags, 0o644)
	if err != nil {
		return err
	}
	defer rf.Close()
	enc := json.NewEncoder(rf)
	save := func(r run) error {
		if r.Err != "" {
			fmt.Fprintf(os.Stderr, "peerbench: %s %s %s %s round %d: %s\n", r.Shape, r.Side, r.Recipe, r.Mode, r.Round, r.Err)
		} else {
			fmt.Fprintf(os.Stderr, "peerbench: %s %s %s %s round %d: %d iterations, %.1f s (%s)\n",
				r.Shape, r.Side, r.Recipe, r.Mode, r.Round, r.Final.Iters, r.Final.Wall, r.Final.Status)
		}
		return enc.Encode(r)
	}
	for _, s := range shapes {
		dir := filepath.Join(o.out, fmt.Sprintf("data-n%d", s.N))
		if err := ensureData(dir, s.N, s.M); err != nil {
			return err
		}
		type job struct{ mode, recipe string }
		var modes []job
		if what["step"] {
			for range o.rounds {
				modes = append(modes, job{"step", peerStepRecipe[s.Model]})
			}
		}
		if what["converge"] {
			for range o.convergeRounds {
				modes = append(modes, job{"converge", ""})
			}
		}
		rounds := map[string]int{}
		for _, j := range modes {
			round := rounds[j.mode]
			rounds[j.mode]++
			rate := dgemmRate(time.Duration(o.dgemmSeconds * float64(time.Second)))
			peers := []string{j.recipe}
			if j.mode == "converge" {
				peers = recipes[s.Model]
			}
			var batch []func() run
			batch = append(batch, func() run { return o.sgplabRun(ctx, s, dir, j.mode, round, rate) })
			for _, pr := range peers {
				batch = append(batch, func() run { return o.peerRun(ctx, s, dir, j.mode, pr, round, rate, env) })
			}
			if round%2 == 1 { // alternate which side runs first
				batch = append(batch[1:], batch[0])
			}
			for _, f := range batch {
				if err := save(f()); err != nil {
					return err
				}
			}
		}
	}
	if err := rf.Close(); err != nil {
		return err
	}
	runs, err := readResults(resultsPath)
	if err != nil {
		return err
	}
	tbl := renderTables(runs, machineInfo())
	fmt.Fprint(o.stdout, tbl)
	return os.WriteFile(filepath.Join(o.out, "table.md"), []byte(tbl), 0o644)
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func validPeerRecipe(model, r string) bool {
	switch model {
	case "sgpr":
		return r == "adam" || r == "lbfgs"
	case "svgp":
		return r == "ngd" || r == "adam"
	}
	return false
}

// ensureData writes the reference data of n rows with Z for m into dir
// unless it is there already.
func ensureData(dir string, n, m int) error {
	md, _, err := readData(dir)
	if err == nil && md.N == n {
		if _, ok := md.Z[strconv.Itoa(m)]; ok {
			return nil
		}
	}
	ms := []int{m}
	if err == nil && md.N == n {
		for k := range md.Z {
			if v, err := strconv.Atoi(k); err == nil && v != m {
				ms = append(ms, v)
			}
		}
	}
	_, err = writeData(dir, n, ms)
	return err
}

func (o benchOptions) stepsFor(s shape) int {
	if s.Model == "svgp" {
		return o.svgpSteps
	}
	return o.steps
}

// limit is how long a child may run before it is killed: its own budget
// and a margin for start-up and the final full-data objective.
func (o benchOptions) limit(mode string) time.Duration {
	if mode == "step" || o.maxSeconds <= 0 {
		return 6 * time.Hour
	}
	return time.Duration((o.maxSeconds + 600) * float64(time.Second))
}

func (o benchOptions) sgplabRun(ctx context.Context, s shape, dir, mode string, round int, rate float64) run {
	r := run{Shape: s, Side: "sgplab", Recipe: "default", Mode: mode, Round: round, Dgemm: rate, StopTol: methods.DefaultStopTol, StopWindow: stopWindow(s)}
	args := []string{"side", "-data", dir, "-model", s.Model, "-m", strconv.Itoa(s.M), "-mode", mode,
		"-steps", strconv.Itoa(o.stepsFor(s)), "-seed", strconv.Itoa(o.seed)}
	if s.Model == "svgp" {
		args = append(args, "-batch", strconv.Itoa(s.Batch))
	}
	if mode == "converge" {
		r.MaxSecs = o.maxSeconds
		args = append(args, "-max-seconds", fmt.Sprint(o.maxSeconds))
		if s.Model == "sgpr" && o.lbfgsMemory > 0 {
			r.Recipe = fmt.Sprintf("lbfgs_memory %d", o.lbfgsMemory)
			args = append(args, "-lbfgs-memory", strconv.Itoa(o.lbfgsMemory))
		}
	}
	cmd := exec.CommandContext(ctx, o.self, args...)
	cmd.Env = append(os.Environ(), "OPENBLAS_NUM_THREADS=1")
	childResult(cmd, &r, o.limit(mode))
	return r
}

func (o benchOptions) peerRun(ctx context.Context, s shape, dir, mode, recipe string, round int, rate float64, env []string) run {
	r := run{Shape: s, Side: "gpytorch", Recipe: recipe, Mode: mode, Round: round, Dgemm: rate, StopTol: methods.DefaultStopTol,
		StopWindow: stopWindow(s), PeerTuned: !o.untuned}
	args := []string{o.script, "--data", dir, "--model", s.Model, "--recipe", recipe, "--m", strconv.Itoa(s.M),
		"--mode", mode, "--steps", strconv.Itoa(o.stepsFor(s)), "--seed", strconv.Itoa(o.seed),
		"--threads", strconv.Itoa(o.peerThreads), "--stop-tol", fmt.Sprint(methods.DefaultStopTol),
		"--stop-window", strconv.Itoa(max(r.StopWindow, optim.DefaultMinWindow))}
	if s.Model == "svgp" {
		args = append(args, "--batch", strconv.Itoa(s.Batch))
	}
	if mode == "converge" {
		r.MaxSecs = o.maxSeconds
		args = append(args, "--max-seconds", fmt.Sprint(o.maxSeconds), "--max-iter", strconv.Itoa(peerBudget(s)))
	}
	cmd := exec.CommandContext(ctx, o.python, args...)
	cmd.Env = env
	childResult(cmd, &r, o.limit(mode))
	return r
}

// defaultRecipe is sgplab's default recipe for the shape (SVGP with
// minibatches).
func defaultRecipe(s shape) methods.Recipe {
	m, err := methods.Lookup(s.Model)
	if err != nil {
		panic(err) // parseShapes admits sgpr and svgp only
	}
	p, err := m.Validate(nil)
	if err != nil {
		panic(err)
	}
	return m.DefaultFit(p, methods.FitCase{Task: methods.Regression, Minibatch: s.Batch > 0 && s.Batch < s.N})
}

// peerBudget is the peer's iteration budget: sgplab's default budget of
// the same model (methods' collapsed and ELBO budgets).
func peerBudget(s shape) int { return defaultRecipe(s).Iterations }

// stopWindow is the stopping rule's smallest window in sgplab's default
// recipe for the shape (0: the rule's default), which judges both sides.
func stopWindow(s shape) int { return defaultRecipe(s).StopWindow }

const getPeerHelp = `The peer benchmark needs GPyTorch 1.10 on Debian's torch:

  apt-get install -y python3-torch python3-scipy
  mkdir -p /work/peer && cd /work/peer
  git clone --bare https://github.com/cornellius-gp/gpytorch gpytorch.git
  git clone --bare https://github.com/cornellius-gp/linear_operator linear_operator.git
  mkdir gpytorch-1.10 linear_operator-0.4.0
  git --git-dir=gpytorch.git archive v1.10 | tar -x -C gpytorch-1.10
  git --git-dir=linear_operator.git archive v0.4.0 | tar -x -C linear_operator-0.4.0

then, from the repository root,

  PEER_PYTHON=/usr/bin/python3 PEER_PYTHONPATH=/work/peer/gpytorch-1.10:/work/peer/linear_operator-0.4.0 nice make peerbench

(docs/performance.md, "Against GPyTorch").
`
