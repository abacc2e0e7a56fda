package main

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	"sgplab/gp/optim"
)

// readResults reads results.jsonl.
func readResults(path string) ([]run, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var in io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		z, err := gzip.NewReader(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		defer z.Close()
		in = z
	}
	var runs []run
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 1<<30)
	for line := 1; sc.Scan(); line++ {
		var r run
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		runs = append(runs, r)
	}
	return runs, sc.Err()
}

// stepSeconds is the wall and CPU seconds per iteration of a step run:
// from the end of iteration 1 to the end of the last (iteration 0 holds
// the start-up and the first evaluation).
func stepSeconds(tr []point) (wall, cpu float64, ok bool) {
	i := slices.IndexFunc(tr, func(p point) bool { return p.It >= 1 })
	if i < 0 || len(tr)-1 <= i {
		return 0, 0, false
	}
	a, b := tr[i], tr[len(tr)-1]
	n := float64(b.It - a.It)
	return (b.Wall - a.Wall) / n, (b.CPU - a.CPU) / n, true
}

// A convergence is where sgplab's rule first holds on a trace.
type convergence struct {
	Index int     // into the trace
	Steps int     // iterations
	Wall  float64 // seconds since training started
	CPU   float64
	F     float64 // the trace's objective there
	// Held is false when the rule never held: the run ended first (its own
	// criterion, a budget, a failure) and Index is its last point.
	Held bool
}

// converged applies optim.Rule (the runner's: stop_tol and the scale
// floor N, with the smallest window of sgplab's recipe) to every prefix of the trace and returns the first that has
// converged: what an optimiser that checks the rule after each iteration
// stops at.
func converged(tr []point, tol float64, n, window int) (convergence, bool) {
	if len(tr) == 0 {
		return convergence{}, false
	}
	rule := optim.Rule{Tol: tol, Floor: float64(n), MinWindow: window}
	f := make([]float64, len(tr))
	for i, p := range tr {
		f[i] = p.F
	}
	at, held := len(tr)-1, false
	for t := 1; t <= len(f); t++ {
		if rule.Check(f[:t]).Converged {
			at, held = t-1, true
			break
		}
	}
	p := tr[at]
	return convergence{Index: at, Steps: p.It, Wall: p.Wall, CPU: p.CPU, F: p.F, Held: held}, true
}

// reach is the first point of a deterministic trace whose objective is at
// least target.
func reach(tr []point, target float64) (point, bool) {
	for _, p := range tr {
		if p.F >= target {
			return p, true
		}
	}
	return point{}, false
}

// trailingMeans is the trace with each objective replaced by the mean of
// the last w objectives up to it (the points before the w-th dropped): on
// a minibatch trace, whose single objectives scatter by hundreds of nats,
// an estimate of where the full-data objective was.
func trailingMeans(tr []point, w int) []point {
	if w < 1 || len(tr) < w {
		return nil
	}
	out := make([]point, 0, len(tr)-w+1)
	var sum float64
	for i, p := range tr {
		sum += p.F
		if i >= w {
			sum -= tr[i-w].F
		}
		if i >= w-1 {
			q := p
			q.F = sum / float64(w)
			out = append(out, q)
		}
	}
	return out
}

// commonReach is each side's first point at or above the lower of the two
// converged objectives: on the SGPR traces as they are (deterministic),
// on the minibatch SVGP traces' trailing means over the rule's window,
// the target then being the lower of the two means where each side's
// rule held.
func commonReach(model string, sg, pr *run, cs, cp convergence) (a, c point, ok bool) {
	ts, tp, target := sg.Trace, pr.Trace, math.Min(cs.F, cp.F)
	if model == "svgp" {
		ts, tp = trailingMeans(sg.Trace[:cs.Index+1], sg.StopWindow), trailingMeans(pr.Trace[:cp.Index+1], pr.StopWindow)
		if len(ts) == 0 || len(tp) == 0 {
			return point{}, point{}, false
		}
		target = math.Min(ts[len(ts)-1].F, tp[len(tp)-1].F)
	}
	a, ok1 := reach(ts, target)
	c, ok2 := reach(tp, target)
	return a, c, ok1 && ok2
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// machine describes where the tables were made.
type machine struct {
	CPU   string
	Cores int
	Date  time.Time
	Go    string
}

func machineInfo() machine {
	m := machine{Cores: runtime.NumCPU(), Date: time.Now(), Go: runtime.Version()}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPU = strings.TrimSpace(v)
				break
			}
		}
	}
	return m
}

// renderTables is the Markdown the benchmark prints: the environment, the
// seconds per step and the time to a converged model, every shape, from
// the runs of results.jsonl.
func renderTables(runs []run, mc machine) string {
	var b strings.Builder
	var shapes []shape
	seen := map[shape]bool{}
	var loads, rates []float64
	var peerHdr, sgHdr *record
	var first, last time.Time
	for i, r := range runs {
		if !seen[r.Shape] {
			seen[r.Shape] = true
			shapes = append(shapes, r.Shape)
		}
		if r.Err != "" {
			continue
		}
		loads = append(loads, r.Load, r.LoadEnd)
		rates = append(rates, r.Dgemm)
		if r.Side == "gpytorch" && peerHdr == nil {
			peerHdr = &runs[i].Header
		}
		if r.Side == "sgplab" && sgHdr == nil {
			sgHdr = &runs[i].Header
		}
		if first.IsZero() || r.Start.Before(first) {
			first = r.Start
		}
		if r.Start.After(last) {
			last = r.Start
		}
	}
	fmt.Fprintf(&b, "Machine: %s, %d cores (shared); %s to %s; %s.\n", mc.CPU, mc.Cores,
		first.UTC().Format("2006-01-02 15:04"), last.UTC().Format("15:04 UTC"), mc.Go)
	if len(loads) > 0 {
		fmt.Fprintf(&b, "Load average (1 min) during the runs: median %.1f, %.1f–%.1f. Two-core dgemm rate of the rounds: median %.1f GFLOP/s, %.1f–%.1f.\n",
			median(loads), slices.Min(loads), slices.Max(loads), median(rates), slices.Min(rates), slices.Max(rates))
	}
	if sgHdr != nil {
		fmt.Fprintf(&b, "sgplab: BLAS %v, OPENBLAS_NUM_THREADS=%s OPENBLAS_CORETYPE=%s, %d cores.\n", sgHdr.BLAS, sgHdr.Env["OPENBLAS_NUM_THREADS"], orNone(sgHdr.Env["OPENBLAS_CORETYPE"]), sgHdr.Threads)
	}
	if peerHdr != nil {
		fmt.Fprintf(&b, "GPyTorch %s, linear_operator %s, torch %s (Python %s), float64, %d torch threads, torch's A·Aᵀ at M = 500 %.1f GFLOP/s; env OMP_WAIT_POLICY=%s GLIBC_TUNABLES=%s OPENBLAS_NUM_THREADS=%s OMP_NUM_THREADS=%s OPENBLAS_CORETYPE=%s.\n",
			peerHdr.GPyTorch, peerHdr.LinearOperator, peerHdr.Torch, peerHdr.Python, peerHdr.Threads, toFloat(peerHdr.BLAS),
			orNone(peerHdr.Env["OMP_WAIT_POLICY"]), orNone(peerHdr.Env["GLIBC_TUNABLES"]), orNone(peerHdr.Env["OPENBLAS_NUM_THREADS"]), orNone(peerHdr.Env["OMP_NUM_THREADS"]), orNone(peerHdr.Env["OPENBLAS_CORETYPE"]))
	}
	b.WriteString("\n")
	stepTable(&b, runs, shapes)
	convergeTable(&b, runs, shapes)
	var failed []string
	for _, r := range runs {
		if r.Err != "" {
			failed = append(failed, fmt.Sprintf("- %s %s %s %s round %d: %s", r.Shape, r.Side, r.Recipe, r.Mode, r.Round, r.Err))
		}
	}
	if len(failed) > 0 {
		b.WriteString("\nFailed runs:\n\n" + strings.Join(failed, "\n") + "\n")
	}
	return b.String()
}

func toFloat(v any) float64 {
	if f, ok := v.(float64); ok {
		return f
	}
	return math.NaN()
}

func orNone(s string) string {
	if s == "" {
		return "(unset)"
	}
	return s
}

func stepTable(b *strings.Builder, runs []run, shapes []shape) {
	type pair struct{ sg, peer *run }
	has := false
	for _, r := range runs {
		has = has || r.Mode == "step"
	}
	if !has {
		return
	}
	b.WriteString("Seconds per objective-and-gradient step (medians over the interleaved rounds; sgplab's step as its default recipe takes it, Adam for SGPR; GPyTorch's documented recipe: Adam for SGPR, NGD + Adam for SVGP):\n\n")
	b.WriteString("| model | N | M | rounds | sgplab ms/step (CPU ms) | GPyTorch ms/step (CPU ms) | sgplab ÷ GPyTorch, wall | CPU | dgemm GFLOP/s | load |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|\n")
	for _, s := range shapes {
		byRound := map[int]*pair{}
		var rounds []int
		for i := range runs {
			r := &runs[i]
			if r.Shape != s || r.Mode != "step" || r.Err != "" {
				continue
			}
			p := byRound[r.Round]
			if p == nil {
				p = &pair{}
				byRound[r.Round] = p
				rounds = append(rounds, r.Round)
			}
			if r.Side == "sgplab" {
				p.sg = r
			} else {
				p.peer = r
			}
		}
		var sw, sc, pw, pc, rw, rc, rates, loads []float64
		for _, k := range rounds {
			p := byRound[k]
			if p.sg == nil || p.peer == nil {
				continue
			}
			w1, c1, ok1 := stepSeconds(p.sg.Trace)
			w2, c2, ok2 := stepSeconds(p.peer.Trace)
			if !ok1 || !ok2 {
				continue
			}
			sw, sc, pw, pc = append(sw, w1), append(sc, c1), append(pw, w2), append(pc, c2)
			rw, rc = append(rw, w1/w2), append(rc, c1/c2)
			rates = append(rates, p.sg.Dgemm)
			loads = append(loads, p.sg.Load, p.peer.Load)
		}
		if len(rw) == 0 {
			continue
		}
		fmt.Fprintf(b, "| %s | %d | %d | %d | %s (%s) | %s (%s) | %s | %s | %.0f | %.1f |\n", strings.ToUpper(s.Model), s.N, s.M, len(rw),
			ms(median(sw)), ms(median(sc)), ms(median(pw)), ms(median(pc)), spread(rw), spread(rc), median(rates), median(loads))
	}
	b.WriteString("\n")
}

// spread is the median of v, with its range when there are several.
func spread(v []float64) string {
	if len(v) == 1 {
		return fmt.Sprintf("%.2f", v[0])
	}
	return fmt.Sprintf("%.2f (%.2f–%.2f)", median(v), slices.Min(v), slices.Max(v))
}

func ms(s float64) string {
	v := 1000 * s
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

func convergeTable(b *strings.Builder, runs []run, shapes []shape) {
	has := false
	for _, r := range runs {
		has = has || r.Mode == "converge"
	}
	if !has {
		return
	}
	b.WriteString("Time to a converged model: training until sgplab's convergence rule (stop_tol 1e-5, scale floor N; gp/optim/converge.go) first holds on each side's objective trace, from the same data, kernel, initial hyperparameters and inducing inputs; sgplab's default recipe against GPyTorch's recipes (wall seconds, CPU seconds in brackets, iterations). Final objectives in nats: SGPR's bound where the rule held, SVGP's full-data ELBO at the end. \"common\": the ratio of each side's times until its trace first reaches the lower of the two converged objectives: SGPR's bounds as traced (deterministic); for SVGP, whose single minibatch objectives scatter by hundreds of nats, the traces' trailing means over the rule's window, the target being the lower of the two means where each side's rule held.\n\n")
	b.WriteString("| model | N | M | round | GPyTorch recipe | sgplab s (CPU s), steps | GPyTorch s (CPU s), steps | sgplab ÷ GPyTorch, wall (CPU) | common | final objective sgplab / GPyTorch | dgemm | load |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, s := range shapes {
		for i := range runs {
			sg := &runs[i]
			if sg.Shape != s || sg.Mode != "converge" || sg.Side != "sgplab" {
				continue
			}
			for j := range runs {
				pr := &runs[j]
				if pr.Shape != s || pr.Mode != "converge" || pr.Side != "gpytorch" || pr.Round != sg.Round {
					continue
				}
				convergeRow(b, s, sg, pr)
			}
		}
	}
	b.WriteString("\n† the rule did not hold before the run ended (status in brackets): a lower bound on its time; the ratio is a bound accordingly.\n")
}

func convergeRow(b *strings.Builder, s shape, sg, pr *run) {
	if sg.Err != "" || pr.Err != "" {
		fmt.Fprintf(b, "| %s | %d | %d | %d | %s | %s | %s | failed | | | | |\n", strings.ToUpper(s.Model), s.N, s.M, sg.Round, recipeName(s.Model, pr.Recipe),
			errOr(sg), errOr(pr))
		return
	}
	cs, _ := converged(sg.Trace, sg.StopTol, s.N, sg.StopWindow)
	cp, _ := converged(pr.Trace, pr.StopTol, s.N, pr.StopWindow)
	ratio := fmt.Sprintf("%.2f (%.2f)", cs.Wall/cp.Wall, cs.CPU/cp.CPU)
	switch {
	case cs.Held && !cp.Held:
		ratio = fmt.Sprintf("< %s (%s)", roundedBound(cs.Wall/cp.Wall, true), roundedBound(cs.CPU/cp.CPU, true))
	case !cs.Held && cp.Held:
		ratio = fmt.Sprintf("> %s (%s)", roundedBound(cs.Wall/cp.Wall, false), roundedBound(cs.CPU/cp.CPU, false))
	case !cs.Held && !cp.Held:
		ratio = "? " + ratio
	}
	fs, fp := cs.F, cp.F
	if s.Model == "svgp" {
		fs, fp = sg.Final.FFull, pr.Final.FFull
	}
	common := "—"
	if cs.Held && cp.Held {
		if a, c, ok := commonReach(s.Model, sg, pr, cs, cp); ok && c.Wall > 0 {
			common = fmt.Sprintf("%.2f", a.Wall/c.Wall)
		}
	}
	fmt.Fprintf(b, "| %s | %d | %d | %d | %s | %s | %s | %s | %s | %s / %s | %.0f | %.1f–%.1f |\n", strings.ToUpper(s.Model), s.N, s.M, sg.Round,
		recipeName(s.Model, pr.Recipe), convCell(cs, sg), convCell(cp, pr), ratio, common, objective(fs), objective(fp),
		sg.Dgemm, math.Min(sg.Load, pr.Load), math.Max(sg.LoadEnd, pr.LoadEnd))
}

func errOr(r *run) string {
	if r.Err != "" {
		return "failed: " + tail(r.Err, 120)
	}
	return "ok"
}

func convCell(c convergence, r *run) string {
	s := fmt.Sprintf("%.1f (%.1f), %d", c.Wall, c.CPU, c.Steps)
	if r.Warm > 0 {
		s += fmt.Sprintf(" (%d of them L-BFGS warm start)", r.Warm)
	}
	if !c.Held {
		s += fmt.Sprintf(" † (%s)", r.Final.Status)
	}
	if r.Side == "sgplab" && r.Recipe != "" && r.Recipe != "default" {
		s += ", " + r.Recipe
	}
	return s
}

func objective(f float64) string { return fmt.Sprintf("%.1f", f) }

func recipeName(model, r string) string {
	switch model + "/" + r {
	case "sgpr/adam":
		return "Adam 0.01 (documented)"
	case "sgpr/lbfgs":
		return "torch L-BFGS, strong Wolfe"
	case "svgp/ngd":
		return "NGD 0.1 + Adam 0.01 (documented)"
	case "svgp/adam":
		return "Adam 0.01 (documented)"
	}
	return r
}

// roundedBound prints a bound on a ratio to two decimals rounded away from
// what it bounds (up for an upper bound), so that the printed bound still
// holds: an upper bound of 0.1515 is "0.16", not "0.15".
func roundedBound(x float64, upper bool) string {
	const eps = 1e-9 // 0.15·100 is 15.000000000000002 in floating point
	if upper {
		return fmt.Sprintf("%.2f", math.Ceil(x*100-eps)/100)
	}
	return fmt.Sprintf("%.2f", math.Floor(x*100+eps)/100)
}
