package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"

	"sgplab/gp/linalg"
	"sgplab/gp/optim"
	"sgplab/methods"
)

// A record is one JSON line a side writes (both sides write the same
// kinds; see bench/gpytorch_peer.py).
type record struct {
	Kind string `json:"kind"`
	// iter
	It    int     `json:"it,omitempty"`
	Wall  float64 `json:"wall,omitempty"`
	CPU   float64 `json:"cpu,omitempty"`
	F     float64 `json:"f,omitempty"`
	Evals int     `json:"evals,omitempty"`
	// Phase is "warm" for the iterations of sgplab's warm start (L-BFGS
	// on a subset, whose objective is the subset's), else empty.
	Phase string `json:"phase,omitempty"`
	// final
	Status string             `json:"status,omitempty"`
	Iters  int                `json:"iters,omitempty"`
	FFull  float64            `json:"f_full,omitempty"`
	Hyper  map[string]any     `json:"hyper,omitempty"`
	Recipe string             `json:"recipe,omitempty"`
	Extra  map[string]float64 `json:"extra,omitempty"`
	// header
	Side    string            `json:"side,omitempty"`
	Threads int               `json:"threads,omitempty"`
	BLAS    any               `json:"blas,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	Version map[string]string `json:"version,omitempty"`
	// the peer's header keys not named above
	GPyTorch       string `json:"gpytorch,omitempty"`
	LinearOperator string `json:"linear_operator,omitempty"`
	Torch          string `json:"torch,omitempty"`
	Python         string `json:"python,omitempty"`
}

// sideOptions are the flags of `peerbench side`.
type sideOptions struct {
	data, model, mode     string
	m, batch, steps, seed int
	maxSeconds            float64
	cpuProfile            string
	// optimizer, learningRate and params change the recipe (what
	// -optimizer, -learning-rate and -set do in a grid); none: the default.
	optimizer    string
	learningRate float64
	params       map[string]any
	lbfgsMemory  int // a grid's lbfgs_memory; 0: the default
}

// sideMain runs sgplab's side of one measurement: the method's default
// recipe (mode converge) or steps iterations of one objective and gradient
// each (mode step: Adam for SGPR, whose default L-BFGS iteration may
// evaluate several times; the default natural-gradient recipe for SVGP),
// writing JSON lines to stdout.
func sideMain(args []string) error {
	var o sideOptions
	fs := flag.NewFlagSet("side", flag.ContinueOnError)
	fs.StringVar(&o.data, "data", "", "data directory (peerbench gen)")
	fs.StringVar(&o.model, "model", "sgpr", "sgpr or svgp")
	fs.StringVar(&o.mode, "mode", "converge", "converge or step")
	fs.IntVar(&o.m, "m", 200, "number of inducing inputs")
	fs.IntVar(&o.batch, "batch", 1000, "SVGP minibatch size")
	fs.IntVar(&o.steps, "steps", 20, "iterations of mode step")
	fs.IntVar(&o.seed, "seed", 1, "fit seed (minibatches)")
	fs.Float64Var(&o.maxSeconds, "max-seconds", 0, "time budget of mode converge (0: none)")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of the fit (training only) to this file")
	fs.StringVar(&o.optimizer, "optimizer", "", "replace the default optimizer (a grid's optimizer)")
	fs.Float64Var(&o.learningRate, "learning-rate", 0, "Adam's step size (a grid's learning_rate); 0: the recipe's")
	fs.IntVar(&o.lbfgsMemory, "lbfgs-memory", 0, "L-BFGS's memory (a grid's lbfgs_memory); 0: the default")
	var sets []string
	fs.Func("set", "a method parameter NAME=VALUE (JSON value), e.g. -set natgrad_step=0.5; repeatable", func(s string) error {
		sets = append(sets, s)
		return nil
	})
	if err := fs.Parse(args); err != nil {
		return err
	}
	o.params = map[string]any{}
	for _, s := range sets {
		k, v, ok := strings.Cut(s, "=")
		var val any
		if !ok || json.Unmarshal([]byte(v), &val) != nil {
			return fmt.Errorf("-set %q: want NAME=VALUE with a JSON value", s)
		}
		o.params[k] = val
	}
	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	return runSide(o, w)
}

func runSide(o sideOptions, out io.Writer) error {
	enc := json.NewEncoder(out)
	md, data, err := readData(o.data)
	if err != nil {
		return err
	}
	zName, ok := md.Z[strconv.Itoa(o.m)]
	if !ok {
		return fmt.Errorf("%s has no Z for M = %d", o.data, o.m)
	}
	raw := map[string]any{
		"kernel": "se", "ard": true, "variance": md.Variance, "lengthscales": []any{md.Lengthscale},
		"noise_variance": md.Noise, "num_inducing": o.m,
		"inducing_init": "file", "z_file": filepath.Join(o.data, zName),
	}
	if o.mode == "step" {
		// A step is one of the recipe's minibatch steps; a warm start
		// would add its L-BFGS iterations to the first.
		raw["warm_start_iterations"] = 0
	}
	for k, v := range o.params {
		raw[k] = v
	}
	m, err := methods.Lookup(o.model)
	if err != nil {
		return err
	}
	p, err := m.Validate(raw)
	if err != nil {
		return err
	}
	model, err := methods.Build(o.model, raw)
	if err != nil {
		return err
	}
	opt := methods.FitOptions{Task: methods.Regression, Seed: uint64(o.seed)}
	if o.model == "svgp" {
		opt.BatchSize = o.batch
	}
	fc := methods.FitCase{Task: methods.Regression, Minibatch: opt.BatchSize > 0 && opt.BatchSize < md.N}
	def := m.DefaultFit(p, fc)
	switch o.mode {
	case "converge":
		opt.Iterations = def.Iterations
		opt.Stop = optim.Rule{Tol: def.StopTol, Floor: float64(md.N)}
	case "step":
		opt.Iterations = o.steps
		if def.NatGrad == 0 {
			opt.Optimizer = optim.Adam
		}
	default:
		return fmt.Errorf("mode %q: want converge or step", o.mode)
	}
	if o.optimizer != "" {
		opt.Optimizer = o.optimizer
	}
	opt.LearningRate = o.learningRate
	opt.LBFGSMemory = o.lbfgsMemory
	recipe := m.Recipe(p, opt, md.N)
	if err := enc.Encode(record{Kind: "header", Side: "sgplab", Threads: runtimeProcs(), BLAS: linalg.BLASBackend(),
		Env: map[string]string{"OPENBLAS_NUM_THREADS": os.Getenv("OPENBLAS_NUM_THREADS"), "OPENBLAS_CORETYPE": os.Getenv("OPENBLAS_CORETYPE"), "GOMAXPROCS": os.Getenv("GOMAXPROCS")}}); err != nil {
		return err
	}
	ctx := context.Background()
	if o.mode == "converge" && o.maxSeconds > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(o.maxSeconds*float64(time.Second)))
		defer cancel()
	}
	if o.cpuProfile != "" {
		f, err := os.Create(o.cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	cpu0 := cpuSeconds()
	var encErr error
	t0 := time.Now()
	res, err := model.Fit(ctx, data, opt, func(pr methods.Progress) {
		rec := record{Kind: "iter", It: pr.Iteration, Wall: pr.Elapsed.Seconds(), CPU: cpuSeconds() - cpu0, F: pr.Objective}
		if pr.Phase == "warm" {
			rec.Phase = pr.Phase
		}
		if e := enc.Encode(rec); e != nil && encErr == nil {
			encErr = e
		}
	})
	wall, cpu := time.Since(t0).Seconds(), cpuSeconds()-cpu0
	status := res.Status
	if errors.Is(err, context.DeadlineExceeded) {
		status, err = "time budget", nil
	}
	if err != nil {
		return err
	}
	if encErr != nil {
		return encErr
	}
	hyper := map[string]any{}
	for _, h := range res.Hyper {
		hyper[h.Name] = h.Value
	}
	return enc.Encode(record{Kind: "final", Status: status, Iters: res.Iterations, FFull: res.Objective,
		Wall: wall, CPU: cpu, Hyper: hyper, Recipe: recipe.String()})
}

// cpuSeconds is the CPU time of this process (user + system, every thread).
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}
