package runner

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"sgplab/gp/optim"
	"sgplab/methods"
)

// RunSpec is one run of a grid: everything that determines its result.
// Its ID is the first 16 hex digits of the SHA-256 of the canonical JSON
// (Canonical), so the same spec always has the same id and a re-run can
// skip runs the results database already holds.
type RunSpec struct {
	ID         string
	Experiment string // the grid file's name
	Grid       string
	Profile    string // "full" or "quick"; part of the identity
	Method     string
	Params     map[string]any // validated method parameters, defaults filled in
	Dataset    string
	// DatasetParams are the dataset's parameters without protocol and scaling.
	DatasetParams map[string]any
	Protocol      string
	Scaling       string
	Split         int
	Seed          uint64
	Task          string // "" means the dataset's task
	Iterations    int
	Optimizer     string
	LearningRate  float64
	BatchSize     int
	GradTol       float64
	// FTol is SciPy L-BFGS-B's relative-reduction test (optim.Settings.FTol);
	// 0 (the default) is off.
	FTol float64
	// LBFGSMemory is the number of curvature pairs L-BFGS keeps
	// (optim.Settings.LBFGSMemory); 0 (the default) is
	// optim.DefaultLBFGSMemory.
	LBFGSMemory int
	// StopTol ends the fit once the convergence rule (optim.Rule) holds
	// at this tolerance; 0 (the default) runs to the iteration budget.
	StopTol float64
	Metrics []string // metrics to keep; empty keeps all
	// Artifacts are the arrays to store with the run (see StoreArtifacts).
	Artifacts []string
	// Files maps each parameter that names a file ("dataset.file",
	// "dataset.test_file", "z_file") to the sha256 of its content when the
	// grid was expanded: editing a file makes new runs.
	Files map[string]string

	// Not part of the identity:
	TimeLimit time.Duration // 0 is no limit
	MemLimit  int64         // bytes; 0 is no limit; the run then runs in a child process
	Source    string        // file:line of the grid or include that produced it
	// Plan is what the run will need, from its method's declaration and
	// its dataset's shape as known when the grid expanded (M for the ETA).
	Plan methods.Plan

	canonical []byte
}

// Canonical returns the canonical JSON of the spec (sorted keys, no
// whitespace) from which the ID is computed.
func (s *RunSpec) Canonical() []byte { return s.canonical }

// seal computes the canonical JSON and the ID.
func (s *RunSpec) seal() error {
	m := map[string]any{
		"experiment": s.Experiment,
		"grid":       s.Grid,
		"profile":    s.Profile,
		"method":     s.Method,
		"params":     s.Params,
		"dataset":    s.Dataset,
		"split":      s.Split,
		"seed":       s.Seed,
		"fit": map[string]any{
			"iterations":    s.Iterations,
			"optimizer":     s.Optimizer,
			"learning_rate": s.LearningRate,
			"batch_size":    s.BatchSize,
			"grad_tol":      s.GradTol,
		},
	}
	if len(s.DatasetParams) > 0 {
		m["dataset_params"] = s.DatasetParams
	}
	if s.Protocol != "" {
		m["protocol"] = s.Protocol
	}
	if s.Scaling != "" {
		m["scaling"] = s.Scaling
	}
	if s.Task != "" {
		m["task"] = s.Task
	}
	if s.StopTol != 0 { // absent when off, so older run ids are unchanged
		m["fit"].(map[string]any)["stop_tol"] = s.StopTol
	}
	if s.FTol != 0 { // likewise
		m["fit"].(map[string]any)["ftol"] = s.FTol
	}
	if s.LBFGSMemory != 0 { // likewise
		m["fit"].(map[string]any)["lbfgs_memory"] = s.LBFGSMemory
	}
	if mark := s.recipeMark(); mark != nil { // absent unless a changed default applies
		m["fit"].(map[string]any)["recipe"] = mark
	}
	if len(s.Metrics) > 0 {
		m["metrics"] = s.Metrics
	}
	if len(s.Artifacts) > 0 { // absent when empty, so older run ids are unchanged
		m["artifacts"] = s.Artifacts
	}
	if len(s.Files) > 0 {
		m["files"] = s.Files
	}
	b, err := json.Marshal(m) // encoding/json sorts map keys
	if err != nil {
		return fmt.Errorf("run spec is not JSON-encodable: %w", err)
	}
	s.canonical = b
	sum := sha256.Sum256(b)
	s.ID = hex.EncodeToString(sum[:8])
	return nil
}

// recipeMark is what keeps a run that relies on a changed default from
// sharing the id of a run made before the change: nil when the method's
// recipe (methods.Method.Recipe) resolves for this spec exactly as its
// defaults before it declared them (methods.Method.Legacy) did, else the
// resolved recipe of every case the spec leaves open: each task when it
// names none, and with batch_size both minibatches and a full batch (a
// batch at least N is the whole set). The grid's own settings are in the
// spec already; the mark adds what the defaults filled in.
func (s *RunSpec) recipeMark() []string {
	m, err := methods.Lookup(s.Method)
	if err != nil || m.Legacy == nil {
		return nil
	}
	p, err := m.Validate(s.Params)
	if err != nil {
		return nil
	}
	tasks := []methods.Task{methods.Task(s.Task)}
	if s.Task == "" {
		tasks = m.Tasks
	}
	batches := []int{0}
	if s.BatchSize > 0 {
		batches = append(batches, s.BatchSize)
	}
	var mark []string
	changed := false
	for _, t := range tasks {
		for _, b := range batches {
			opt := methods.FitOptions{Iterations: s.Iterations, Optimizer: s.Optimizer, LearningRate: s.LearningRate,
				BatchSize: b, GradTol: s.GradTol, FTol: s.FTol, LBFGSMemory: s.LBFGSMemory, Task: t, Stop: optim.Rule{Tol: s.StopTol}}
			cur := m.Recipe(p, opt, 0)
			changed = changed || cur != m.LegacyRecipe(p, opt, 0)
			batch := "full batch"
			if b > 0 {
				batch = "minibatch"
			}
			m := fmt.Sprintf("%s, %s: optimizer=%s learning_rate=%s natgrad_step=%s",
				t, batch, cur.Optimizer, formatValue(cur.LearningRate), formatValue(cur.NatGrad))
			if cur.StopWindow > 0 { // absent unless set, so older marks are unchanged
				m += " stop_window=" + strconv.Itoa(cur.StopWindow)
			}
			if cur.WarmStart > 0 && !s.hasParam("warm_start_iterations") { // likewise
				m += fmt.Sprintf(" warm_start=%d/%d", cur.WarmStart, cur.WarmStartPoints)
			}
			mark = append(mark, m)
		}
	}
	if !changed {
		return nil
	}
	return mark
}

// Label is a short human description of the run for logs.
func (s *RunSpec) Label() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s/%s %s split=%d seed=%d", s.Experiment, s.Grid, s.Method, s.Split, s.Seed)
	for _, k := range sortedKeys(s.DatasetParams) {
		fmt.Fprintf(&b, " %s=%s", k, formatValue(s.DatasetParams[k]))
	}
	fmt.Fprintf(&b, " on %s", s.Dataset)
	return b.String()
}

// FlatParams flattens the spec into name/value pairs for the results
// database: method parameters under their names, dataset parameters as
// "dataset.NAME", and the fit settings as the method resolves them
// (Recipe, with the training set's size unknown; a run stores the recipe
// its fit ran, FlatParamsRan).
func (s *RunSpec) FlatParams() [][2]string { return s.FlatParamsRan(s.Recipe(0, "")) }

// FlatParamsRan is FlatParams with the fit recipe r: fit.optimizer,
// fit.learning_rate (Adam's; 0 with L-BFGS) and fit.natgrad_step (when
// natural gradients move q(u)) are what ran, not what the grid left
// empty.
func (s *RunSpec) FlatParamsRan(r methods.Recipe) [][2]string {
	var out [][2]string
	for _, k := range sortedKeys(s.Params) {
		out = append(out, [2]string{k, formatValue(s.Params[k])})
	}
	for _, k := range sortedKeys(s.DatasetParams) {
		out = append(out, [2]string{"dataset." + k, formatValue(s.DatasetParams[k])})
	}
	if s.Protocol != "" {
		out = append(out, [2]string{"dataset.protocol", s.Protocol})
	}
	if s.Scaling != "" {
		out = append(out, [2]string{"dataset.scaling", s.Scaling})
	}
	out = append(out,
		[2]string{"fit.iterations", strconv.Itoa(s.Iterations)},
		[2]string{"fit.optimizer", r.Optimizer},
		[2]string{"fit.learning_rate", formatValue(r.LearningRate)},
		[2]string{"fit.batch_size", strconv.Itoa(s.BatchSize)},
		[2]string{"fit.grad_tol", formatValue(s.GradTol)},
	)
	if r.NatGrad > 0 && !s.hasParam("natgrad_step") {
		out = append(out, [2]string{"fit.natgrad_step", formatValue(r.NatGrad)})
	}
	if r.WarmStart > 0 && !s.hasParam("warm_start_iterations") { // the default's warm start
		out = append(out,
			[2]string{"fit.warm_start_iterations", strconv.Itoa(r.WarmStart)},
			[2]string{"fit.warm_start_points", strconv.Itoa(r.WarmStartPoints)})
	}
	if s.StopTol != 0 {
		out = append(out, [2]string{"fit.stop_tol", formatValue(s.StopTol)})
	}
	if s.FTol != 0 {
		out = append(out, [2]string{"fit.ftol", formatValue(s.FTol)})
	}
	if s.LBFGSMemory != 0 {
		out = append(out, [2]string{"fit.lbfgs_memory", strconv.Itoa(s.LBFGSMemory)})
	}
	if s.Task != "" {
		out = append(out, [2]string{"task", s.Task})
	}
	for _, k := range sortedKeys(s.Files) {
		out = append(out, [2]string{"sha256." + k, s.Files[k]})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	return out
}

func (s *RunSpec) hasParam(name string) bool { _, ok := s.Params[name]; return ok }

// Recipe is the fit recipe of the run (methods.Method.Recipe) on n
// training rows (0: unknown, then a batch_size means minibatches) for
// task ("": the spec's, else its method's first); the grid's settings as
// they are when the method or its parameters are unknown.
func (s *RunSpec) Recipe(n int, task methods.Task) methods.Recipe {
	if task == "" {
		task = methods.Task(s.Task)
	}
	opt := methods.FitOptions{Iterations: s.Iterations, Optimizer: s.Optimizer, LearningRate: s.LearningRate,
		BatchSize: s.BatchSize, GradTol: s.GradTol, FTol: s.FTol, LBFGSMemory: s.LBFGSMemory, Stop: optim.Rule{Tol: s.StopTol}}
	given := methods.Recipe{Optimizer: s.Optimizer, LearningRate: s.LearningRate, Iterations: s.Iterations, StopTol: s.StopTol}
	m, err := methods.Lookup(s.Method)
	if err != nil {
		return given
	}
	p, err := m.Validate(s.Params)
	if err != nil {
		return given
	}
	opt.Task = fitTask(m, string(task))
	return m.Recipe(p, opt, n)
}

func formatValue(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case int:
		return strconv.Itoa(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case bool:
		return strconv.FormatBool(x)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
