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
// "dataset.NAME", and the fit settings.
func (s *RunSpec) FlatParams() [][2]string {
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
		[2]string{"fit.optimizer", s.Optimizer},
		[2]string{"fit.learning_rate", formatValue(s.LearningRate)},
		[2]string{"fit.batch_size", strconv.Itoa(s.BatchSize)},
		[2]string{"fit.grad_tol", formatValue(s.GradTol)},
	)
	if s.StopTol != 0 {
		out = append(out, [2]string{"fit.stop_tol", formatValue(s.StopTol)})
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
