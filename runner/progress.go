package runner

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"sgplab/gp/optim"
	"sgplab/methods"
	"sgplab/results"
)

// Swept returns the flattened parameters (RunSpec.FlatParams names, plus
// "split" and "seed") whose values differ between specs: what tells the
// runs of a sweep apart. Method and dataset are always shown by labels.
func Swept(specs []*RunSpec) []string {
	vals := map[string]map[string]bool{}
	n := map[string]int{}
	add := func(k, v string) {
		if vals[k] == nil {
			vals[k] = map[string]bool{}
		}
		vals[k][v] = true
		n[k]++
	}
	for _, s := range specs {
		add("split", fmt.Sprint(s.Split))
		add("seed", fmt.Sprint(s.Seed))
		for _, p := range s.FlatParams() {
			if !strings.HasPrefix(p[0], "sha256.") {
				add(p[0], p[1])
			}
		}
	}
	var out []string
	for _, k := range sortedKeys(vals) {
		// A key some specs lack (another method's parameter) distinguishes
		// only when it takes several values.
		if len(vals[k]) > 1 {
			out = append(out, k)
		}
	}
	return out
}

// ShortLabel describes a run by its method, dataset and the given swept
// parameters: "m-sweep sgpr gp-sample split=1 num_inducing=20".
func (s *RunSpec) ShortLabel(swept []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s %s", s.Grid, s.Method, s.Dataset)
	flat := map[string]string{"split": fmt.Sprint(s.Split), "seed": fmt.Sprint(s.Seed)}
	for _, p := range s.FlatParams() {
		flat[p[0]] = p[1]
	}
	for _, k := range swept {
		if v, ok := flat[k]; ok {
			fmt.Fprintf(&b, " %s=%s", k, v)
		}
	}
	return b.String()
}

// Cost is a run's expected cost in arbitrary units, for the ETA: its
// SetupCost plus the optimiser's iterations (its budget) plus one times
// StepCost.
func Cost(s *RunSpec, size func(*RunSpec) int) float64 {
	return SetupCost(s, size) + float64(s.Iterations+1)*StepCost(s, size)
}

// SetupCost is what a run computes once before its steps, in StepCost's
// units: the method's Plan.SetupFlops (ΦΦᵀ of a fixed Kuf, say).
func SetupCost(s *RunSpec, size func(*RunSpec) int) float64 {
	plan, _ := costPlan(s, size)
	return plan.SetupFlops
}

// costPlan is the plan a run is costed by (RunSpec.Plan, or methods.Method
// .Plan for a spec made without Expand) and its training-set size N from
// size (1000 when unknown).
func costPlan(s *RunSpec, size func(*RunSpec) int) (methods.Plan, float64) {
	n := 0
	if size != nil {
		n = size(s)
	}
	if n <= 0 {
		n = 1000
	}
	plan := s.Plan
	if plan.M == 0 && !plan.Exact {
		plan = declaredPlan(s, n)
	}
	return plan, float64(n)
}

// StepCost is the cost of one optimiser iteration of a run, in the ETA's
// units: the per-iteration cost the method's declaration implies
// (costPlan): the method's Plan.StepFlops where it declares them, else
// O(N³) for an exact method, O(B M² + M³) for M inducing variables, B =
// min(N, BatchSize) the rows a step touches, and O(N) for a method with
// neither, plus stepOverhead.
func StepCost(s *RunSpec, size func(*RunSpec) int) float64 {
	plan, N := costPlan(s, size)
	per := N
	switch {
	case plan.StepFlops > 0:
		per = plan.StepFlops
	case plan.Exact:
		per = N * N * N / 3 // one Cholesky
	case plan.M > 0:
		m := float64(plan.M)
		b := N // a minibatch step touches BatchSize rows
		if s.BatchSize > 0 {
			b = min(b, float64(s.BatchSize))
		}
		per = b*m*m + m*m*m
	}
	return per + stepOverhead
}

// stepOverhead is what every optimiser step costs beside its flops (the
// autodiff tape, allocations, the optimiser's bookkeeping), in the same
// units: a few tenths of a millisecond. Without it small fits were costed
// far below large ones: replayed on the sweep-example and demo runs, the
// ETA was within 2× of the actual at 43 of 51 and 13 of 20 runs' ends,
// with it at 48 and 18.
const stepOverhead = 2e5

// declaredPlan is the method's plan for a spec that carries none, on n
// training rows of unknown dimension (the zero Plan when the method or its
// parameters are unknown).
func declaredPlan(s *RunSpec, n int) methods.Plan {
	m, err := methods.Lookup(s.Method)
	if err != nil {
		return methods.Plan{}
	}
	p, err := m.Validate(s.Params)
	if err != nil {
		return methods.Plan{Exact: m.Exact}
	}
	plan, err := m.Plan(p, methods.Shape{N: n, Batch: s.BatchSize})
	if err != nil {
		return methods.Plan{Exact: m.Exact}
	}
	return plan
}

// progress shows runs done/total, an ETA and the current iteration.
type progress struct {
	mu        sync.Mutex
	w         io.Writer
	tty       bool
	total     int
	skipped   int
	finished  int
	swept     []string
	step      map[string]float64 // StepCost of each run to do
	setup     map[string]float64 // and its SetupCost
	budget    map[string]int     // its iteration budget
	stops     map[string]bool    // whether it may end before its budget: stop_tol, or L-BFGS's own criteria
	dataset   map[string]string  // its dataset
	absent    map[string]bool    // datasets whose files a run found absent: their runs fail at once
	trained   map[string]int     // the numbers it trains (methods.Plan.Params; 0 unknown)
	pending   map[string]bool    // the runs not finished yet
	class     map[string]string  // run id → its costClass
	classes   map[string]*classCost
	all       classCost         // every finished run of this worker
	current   map[string]string // run id → status text
	lastDraw  time.Time
	drawn     bool
	runStarts map[string]time.Time
	waitMsg   string
}

// classCost is what the finished runs of a costClass measured: the flops
// and steps they ran and the time their fits took, from which the time a
// step costs beside its flops (the autodiff tape, the optimiser, an MC
// objective's sampling) follows; and, for runs that stop_tol may end
// early, which fraction of their budget they ran.
type classCost struct {
	flops    float64       // setup + (iterations run + 1) × step flops of the finished runs
	steps    float64       // Σ (iterations run + 1)
	timeDone time.Duration // the time their fits took (train_seconds)
	outside  time.Duration // and the rest of their time: a child process, loading data, predicting
	runs     int           // how many
	fracSum  float64       // Σ iterations run / budget of the finished runs that may stop early
	fracN    int
	// Σ iterations run and Σ numbers trained of those of them that declare
	// the latter: iterations per trained number.
	its, trained float64
}

// costClass groups runs whose time per unit of Cost is alike: one grid of
// one experiment, one method.
func costClass(s *RunSpec) string { return s.Experiment + "\x00" + s.Grid + "\x00" + s.Method }

func newProgress(w io.Writer, tty bool, todo []*RunSpec, skipped int, size func(*RunSpec) int) *progress {
	p := &progress{w: w, tty: tty, total: len(todo), skipped: skipped, swept: Swept(todo),
		step: map[string]float64{}, setup: map[string]float64{}, budget: map[string]int{}, stops: map[string]bool{}, trained: map[string]int{}, pending: map[string]bool{},
		dataset: map[string]string{}, absent: map[string]bool{},
		current: map[string]string{}, runStarts: map[string]time.Time{},
		class: map[string]string{}, classes: map[string]*classCost{}}
	for _, s := range todo {
		p.setup[s.ID] = SetupCost(s, size)
		p.step[s.ID], p.budget[s.ID], p.trained[s.ID], p.dataset[s.ID] = StepCost(s, size), s.Iterations, s.Plan.Params, s.Dataset
		p.stops[s.ID] = s.StopTol > 0 || s.Recipe(0, "").Optimizer == optim.LBFGS
		p.pending[s.ID] = true
		k := costClass(s)
		p.class[s.ID] = k
		if p.classes[k] == nil {
			p.classes[k] = &classCost{}
		}
	}
	if skipped > 0 {
		fmt.Fprintf(w, "%d runs already done in the database (resume); %d to run\n", skipped, len(todo))
	}
	return p
}

// prefix is "[done/total]" and, once a run finished, the ETA: the time
// each run still to do is expected to take (expectedTime), where a run
// that may end before its budget (stop_tol, or L-BFGS, which stops once
// converged) is expected to run as many iterations per number it trains
// as the finished such runs of its class did (else all finished ones:
// L-BFGS needs a few per number), or, when it declares no count, the
// fraction of its budget they ran. Runs of a dataset whose files are
// absent fail at once and cost nothing.
func (p *progress) prefix() string {
	s := fmt.Sprintf("[%d/%d]", p.finished, p.total)
	if p.all.runs > 0 && p.finished < p.total {
		s += " ETA " + formatETA(p.eta())
	}
	return s
}

// eta is the expected time of the runs left, in nanoseconds (a float: a
// huge cost must not overflow a Duration).
func (p *progress) eta() float64 {
	left, rate := 0.0, p.flopRate()
	for id := range p.pending {
		if !p.absent[p.dataset[id]] {
			left += p.expectedTime(id, rate)
		}
	}
	for id, t0 := range p.runStarts { // in flight: subtract what they already ran
		left -= min(float64(time.Since(t0)), p.expectedTime(id, rate))
	}
	return max(left, 0)
}

// expectedTime is how long run id is expected to take, in nanoseconds, at
// the machine's flop rate (flopRate, found once per ETA): a
// fit costs a time per step of its own (the autodiff tape, allocations,
// the optimiser, sampling) plus its flops at the machine's rate, and the
// run its class's mean time outside the fit (starting the child, loading
// data, predicting); a class with no finished run is costed at the
// sweep's. One time per unit of flops, as before, charged small runs'
// overheads to flops: costed from a first VFF fit with M = 9 (1.4 ms a
// step, nearly all of it overhead), one with M = 2809 read hours; and
// runs without training that spent seconds outside their fit set a rate
// that read 38 h at run 17 of the VOF quick profile's 82.
func (p *progress) expectedTime(id string, rate float64) float64 {
	c := p.classes[p.class[id]]
	if c == nil || c.runs == 0 {
		c = &p.all
	}
	steps := p.expectedIterations(id) + 1
	flops := p.setup[id] + p.flops(id)*steps
	return float64(c.outside)/float64(c.runs) + c.perStep(rate)*steps + flops/rate*1e9
}

// minFlopRate is the flop rate (per second) the ETA assumes until a
// finished run shows a higher one: well below what BLAS sustains on one
// core, so an unmeasured large fit is not costed as free.
const minFlopRate = 1e9

// flopRate is the machine's flop rate as the finished runs show it: the
// highest flops per second of fit time of a class whose steps run at least
// 10⁷ flops (where the per-step overhead of about a millisecond is small),
// at least minFlopRate.
func (p *progress) flopRate() float64 {
	rate := minFlopRate
	for _, c := range p.classes {
		if c.steps > 0 && c.flops/c.steps >= 1e7 && c.timeDone > 0 {
			rate = max(rate, c.flops/c.timeDone.Seconds())
		}
	}
	return rate
}

// perStep is the class's fit time per step beyond its flops at rate, in
// nanoseconds.
func (c *classCost) perStep(rate float64) float64 {
	if c.steps == 0 {
		return 0
	}
	return max(float64(c.timeDone)-c.flops/rate*1e9, 0) / c.steps
}

// flops is a step's flops of run id: its StepCost without the overhead the
// ordering of runs adds.
func (p *progress) flops(id string) float64 { return max(p.step[id]-stepOverhead, 0) }

// expectedIterations is how many iterations run id is expected to run
// (see prefix).
func (p *progress) expectedIterations(id string) float64 {
	budget := float64(p.budget[id])
	it := budget
	if p.stops[id] {
		c := p.classes[p.class[id]]
		if c == nil {
			c = &classCost{}
		}
		trained := float64(p.trained[id])
		switch {
		case trained > 0 && c.trained > 0:
			it = min(budget, c.its/c.trained*trained)
		case trained > 0 && p.all.trained > 0:
			it = min(budget, p.all.its/p.all.trained*trained)
		case c.fracN > 0:
			it *= c.fracSum / float64(c.fracN)
		case p.all.fracN > 0:
			it *= p.all.fracSum / float64(p.all.fracN)
		}
	}
	return it
}

// absentData notes that a run found its dataset's files absent: the
// dataset's other runs will fail as fast.
func (p *progress) absentData(spec *RunSpec) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.absent[spec.Dataset] = true
}

// settle takes a finished run out of what is left and, when it is done
// (iterations run; < 0 unknown: its budget), into its class's and the
// sweep's measurements.
func (p *progress) settle(spec *RunSpec, done bool, took, fit time.Duration, iterations int) {
	delete(p.pending, spec.ID)
	if !done {
		return
	}
	if iterations < 0 {
		iterations = p.budget[spec.ID]
	}
	steps := float64(iterations + 1)
	flops := p.setup[spec.ID] + p.flops(spec.ID)*steps
	fit = min(max(fit, 0), took)
	for _, c := range []*classCost{p.classes[p.class[spec.ID]], &p.all} {
		if c == nil {
			continue
		}
		c.flops += flops
		c.steps += steps
		c.timeDone += fit
		c.outside += took - fit
		c.runs++
		if p.stops[spec.ID] && p.budget[spec.ID] > 0 {
			c.fracSum += min(float64(iterations)/float64(p.budget[spec.ID]), 1)
			c.fracN++
			if n := p.trained[spec.ID]; n > 0 {
				c.its += float64(iterations)
				c.trained += float64(n)
			}
		}
	}
}

// markAbsent marks the datasets of todo whose files present says are missing
// (nil: all are there): their runs fail at once and cost nothing.
func (p *progress) markAbsent(todo []*RunSpec, present func(*RunSpec) bool) {
	if present == nil {
		return
	}
	for _, s := range todo {
		if !present(s) {
			p.absent[s.Dataset] = true
		}
	}
}

func (p *progress) label(spec *RunSpec) string { return spec.ShortLabel(p.swept) }

func (p *progress) start(spec *RunSpec) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.runStarts[spec.ID] = time.Now()
	p.current[spec.ID] = p.label(spec)
	if p.tty {
		p.draw(true)
		return
	}
	fmt.Fprintf(p.w, "%s start %s %s\n", p.prefix(), spec.ID, p.label(spec))
}

func (p *progress) iteration(spec *RunSpec, it methods.Progress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	phase := ""
	if it.Phase != "" {
		phase = it.Phase + " "
	}
	p.current[spec.ID] = fmt.Sprintf("%s %sit %d obj %.6g", p.label(spec), phase, it.Iteration, it.Objective)
	if p.tty {
		p.draw(false)
		return
	}
	// Plain logs: at most one iteration line every 10 s across all runs in
	// flight (start and finish lines are always written).
	if time.Since(p.lastDraw) > 10*time.Second {
		p.lastDraw = time.Now()
		fmt.Fprintf(p.w, "%s %s %s\n", p.prefix(), spec.ID, p.current[spec.ID])
	}
}

func (p *progress) finish(spec *RunSpec, rec results.Run, ms []results.Metric) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.finished++
	delete(p.current, spec.ID)
	took := time.Since(p.runStarts[spec.ID])
	delete(p.runStarts, spec.ID)
	iterations, fit := -1, took // a run that reports no fit time counts all of it as fit
	for _, m := range ms {
		switch m.Name {
		case "iterations":
			iterations = int(m.Value)
		case "train_seconds":
			fit = time.Duration(m.Value * float64(time.Second))
		}
	}
	p.settle(spec, rec.Status == results.StatusDone, took, fit, iterations)
	var b strings.Builder
	for _, m := range ms {
		switch m.Name {
		case "elbo", "rmse", "nlpd", "accuracy":
			fmt.Fprintf(&b, " %s=%.5g", m.Name, m.Value)
		}
	}
	msg := rec.Error
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	if msg != "" {
		msg = ": " + msg
	}
	if p.tty {
		fmt.Fprint(p.w, "\r\033[K")
	}
	fmt.Fprintf(p.w, "%s %s %s %s%s%s (%s)\n", p.prefix(), rec.Status, spec.ID, p.label(spec), b.String(), msg, took.Round(time.Millisecond))
	if p.tty {
		p.draw(true)
	}
}

// byOther records a run another worker finished during this sweep.
func (p *progress) byOther(spec *RunSpec, status string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.finished++
	p.settle(spec, false, 0, 0, -1)
	if p.tty {
		fmt.Fprint(p.w, "\r\033[K")
	}
	fmt.Fprintf(p.w, "%s %s by another worker %s %s\n", p.prefix(), status, spec.ID, p.label(spec))
}

// waiting says, once per change, that runs are held by other workers.
func (p *progress) waiting(held []*RunSpec) {
	p.mu.Lock()
	defer p.mu.Unlock()
	ids := make([]string, len(held))
	for i, s := range held {
		ids[i] = s.ID
	}
	slices.Sort(ids)
	msg := fmt.Sprintf("waiting for %d run(s) held by other workers on this database: %s", len(held), strings.Join(ids[:min(len(ids), 4)], " "))
	if len(ids) > 4 {
		msg += " …"
	}
	if msg == p.waitMsg {
		return
	}
	p.waitMsg = msg
	if p.tty {
		fmt.Fprint(p.w, "\r\033[K")
	}
	fmt.Fprintf(p.w, "%s %s\n", p.prefix(), msg)
}

// draw redraws the live status line at most ten times a second.
func (p *progress) draw(force bool) {
	if !force && time.Since(p.lastDraw) < 100*time.Millisecond {
		return
	}
	p.lastDraw = time.Now()
	ids := sortedKeys(p.current)
	var parts []string
	for _, id := range ids {
		parts = append(parts, p.current[id])
	}
	line := p.prefix() + " " + strings.Join(parts, " | ")
	if r := []rune(line); len(r) > 160 {
		line = string(r[:157]) + "..."
	}
	fmt.Fprint(p.w, "\r\033[K"+line)
	p.drawn = true
}

func (p *progress) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tty && p.drawn {
		fmt.Fprint(p.w, "\r\033[K")
	}
}

// maxETA bounds the ETA shown: beyond it the cost model is extrapolating
// far outside what it has measured.
const maxETA = 1000 * time.Hour

// formatETA formats a remaining time given in nanoseconds.
func formatETA(ns float64) string {
	if math.IsNaN(ns) || ns >= float64(maxETA) {
		return "> " + maxETA.String()
	}
	return max(time.Duration(ns), 0).Round(time.Second).String()
}

// probeFirst orders the runs so that the cheapest run of each cost class
// (by Cost) goes first, the classes in the order they first appear, and the
// others follow in their expansion order, or, with several runs in flight
// (jobs > 1), the most costly first. The ETA then measures every kind of
// run within the first minutes instead of costing the classes not yet seen
// at the rate of those that were: the VOF quick profile's Hermite fits,
// which run 2000–15 000 L-BFGS iterations, come after 40 runs of another
// kind. Longest first keeps the sweep from ending on one long run while the
// other cores idle (VOF quick: two 12-minute fits last in expansion order).
// Results do not depend on the order runs are made in.
func probeFirst(todo []*RunSpec, size func(*RunSpec) int, jobs int) []*RunSpec {
	cheapest := map[string]int{} // class → index in todo
	var classes []string
	for i, s := range todo {
		k := costClass(s)
		j, seen := cheapest[k]
		if !seen {
			classes = append(classes, k)
		}
		if !seen || Cost(s, size) < Cost(todo[j], size) {
			cheapest[k] = i
		}
	}
	out := make([]*RunSpec, 0, len(todo))
	first := make(map[int]bool, len(classes))
	for _, k := range classes {
		first[cheapest[k]] = true
		out = append(out, todo[cheapest[k]])
	}
	probes := len(out)
	for i, s := range todo {
		if !first[i] {
			out = append(out, s)
		}
	}
	if jobs > 1 {
		rest := out[probes:]
		cost := make(map[*RunSpec]float64, len(rest))
		for _, s := range rest {
			cost[s] = Cost(s, size)
		}
		slices.SortStableFunc(rest, func(a, b *RunSpec) int { return cmp.Compare(cost[b], cost[a]) })
	}
	return out
}
