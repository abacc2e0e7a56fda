package report

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"sgplab/claims"
	"sgplab/internal/anyconv"
)

// querier is the part of results.Store (or of a subset of it) that a
// report reads.
type querier interface {
	Query(sql string, args ...any) ([]string, [][]any, error)
}

// run is one row of the runs table with its metrics and parameters.
type run struct {
	ID, Grid, Method, Dataset, Profile, Status, Error, Finished string
	Split                                                       int64
	Seed                                                        int64
	Params                                                      map[string]string
	Metrics                                                     map[string]float64 // NaN for NULL
}

// loadRuns reads every run of the given grids. A run's grid column holds
// either the [[grid]] name or "<paper>/<grid>"; both are accepted.
func loadRuns(q querier, paper string, grids []string) ([]*run, error) {
	var names []any
	for _, g := range grids {
		names = append(names, g)
		if paper != "" {
			names = append(names, paper+"/"+g)
		}
	}
	if len(names) == 0 {
		return nil, nil
	}
	in := "(" + strings.TrimSuffix(strings.Repeat("?,", len(names)), ",") + ")"
	_, rows, err := q.Query(`SELECT id, grid, method, dataset, split, seed, profile, status, error, COALESCE(finished, '')
		FROM runs WHERE grid IN `+in+` ORDER BY grid, method, dataset, split, seed, id`, names...)
	if err != nil {
		return nil, fmt.Errorf("report: reading runs: %w", err)
	}
	byID := make(map[string]*run, len(rows))
	runs := make([]*run, 0, len(rows))
	for _, r := range rows {
		if len(r) != 10 {
			return nil, fmt.Errorf("report: reading runs: got %d columns, want 10", len(r))
		}
		x := &run{
			ID: anyconv.String(r[0]), Grid: anyconv.String(r[1]), Method: anyconv.String(r[2]), Dataset: anyconv.String(r[3]),
			Split: anyconv.Int64(r[4]), Seed: anyconv.Int64(r[5]), Profile: anyconv.String(r[6]), Status: anyconv.String(r[7]),
			Error: anyconv.String(r[8]), Finished: anyconv.String(r[9]),
			Params: map[string]string{}, Metrics: map[string]float64{},
		}
		byID[x.ID] = x
		runs = append(runs, x)
	}
	_, rows, err = q.Query(`SELECT m.run_id, m.name, m.value FROM metrics m JOIN runs r ON r.id = m.run_id
		WHERE r.grid IN `+in, names...)
	if err != nil {
		return nil, fmt.Errorf("report: reading metrics: %w", err)
	}
	for _, r := range rows {
		if x := byID[anyconv.String(r[0])]; x != nil {
			v, ok := anyconv.FloatOrText(r[2])
			if !ok {
				v = math.NaN()
			}
			x.Metrics[anyconv.String(r[1])] = v
		}
	}
	_, rows, err = q.Query(`SELECT p.run_id, p.name, p.value FROM run_params p JOIN runs r ON r.id = p.run_id
		WHERE r.grid IN `+in, names...)
	if err != nil {
		return nil, fmt.Errorf("report: reading parameters: %w", err)
	}
	for _, r := range rows {
		if x := byID[anyconv.String(r[0])]; x != nil {
			x.Params[anyconv.String(r[1])] = anyconv.String(r[2])
		}
	}
	return runs, nil
}

// tracePoint is one row of a run's optimiser trace.
type tracePoint struct {
	Iteration      int64
	Elapsed, Value float64
}

// loadTraces reads the traces of the given runs, in reported order.
func loadTraces(q querier, runs []*run) (map[string][]tracePoint, error) {
	out := make(map[string][]tracePoint, len(runs))
	const chunk = 400 // stay well below SQLite's host-parameter limit
	for i := 0; i < len(runs); i += chunk {
		part := runs[i:min(i+chunk, len(runs))]
		ids := make([]any, len(part))
		for j, r := range part {
			ids[j] = r.ID
		}
		in := "(" + strings.TrimSuffix(strings.Repeat("?,", len(ids)), ",") + ")"
		_, rows, err := q.Query(`SELECT run_id, iteration, elapsed_seconds, objective FROM traces
			WHERE run_id IN `+in+` ORDER BY run_id, seq`, ids...)
		if err != nil {
			return nil, fmt.Errorf("report: reading traces: %w", err)
		}
		for _, r := range rows {
			el, ok := anyconv.FloatOrText(r[2])
			if !ok {
				el = math.NaN()
			}
			v, ok := anyconv.FloatOrText(r[3])
			if !ok {
				v = math.NaN()
			}
			id := anyconv.String(r[0])
			out[id] = append(out[id], tracePoint{Iteration: anyconv.Int64(r[1]), Elapsed: el, Value: v})
		}
	}
	return out, nil
}

// dimValue is the value of a grouping dimension for a run ("" if the run has
// no such parameter). The metric dimension is resolved by the caller.
func dimValue(r *run, dim string) string {
	if parts := strings.Split(dim, "+"); len(parts) > 1 {
		vs := make([]string, len(parts))
		for i, part := range parts {
			vs[i] = dimValue(r, part)
		}
		return strings.Join(vs, joinSep)
	}
	switch dim {
	case "grid":
		// Stored as "<paper>/<grid>" or "<grid>": the [[grid]] name.
		return r.Grid[strings.LastIndex(r.Grid, "/")+1:]
	case "method":
		return r.Method
	case "dataset":
		return r.Dataset
	case "split":
		return strconv.FormatInt(r.Split, 10)
	case "seed":
		return strconv.FormatInt(r.Seed, 10)
	case "profile":
		return profileName(r.Profile)
	}
	if name, ok := strings.CutPrefix(dim, "param:"); ok {
		return r.Params[name]
	}
	return ""
}

// numValue is a numeric axis value of a run: a metric or a numeric parameter.
func numValue(r *run, dim string) (float64, bool) {
	if name, ok := strings.CutPrefix(dim, "metric:"); ok {
		v, ok := r.Metrics[name]
		return v, ok && !math.IsNaN(v)
	}
	s := dimValue(r, dim)
	v, err := strconv.ParseFloat(s, 64)
	return v, err == nil && !math.IsNaN(v)
}

func profileName(p string) string {
	if p == "" {
		return "full"
	}
	return p
}

// matches reports whether the run passes the filter (metric filters are
// applied by the caller).
func (fs filterSet) matches(r *run) bool {
	for dim, vals := range fs {
		if dim == "metric" {
			continue
		}
		v := dimValue(r, dim)
		ok := false
		for _, want := range vals {
			if sameValue(v, want) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// sameValue compares numerically when both sides are numbers ("20" = "20.0").
func sameValue(a, b string) bool {
	if a == b {
		return true
	}
	x, err1 := strconv.ParseFloat(a, 64)
	y, err2 := strconv.ParseFloat(b, 64)
	return err1 == nil && err2 == nil && x == y
}

// orderValues sorts distinct values: the explicit order first, then the rest
// numerically when all are numbers, else lexically.
func orderValues(vals []string, explicit []string) []string {
	seen := make(map[string]bool)
	var out []string
	for _, v := range explicit {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	var rest []string
	for _, v := range vals {
		if !seen[v] {
			seen[v] = true
			rest = append(rest, v)
		}
	}
	numeric := true
	nums := make(map[string]float64, len(rest))
	for _, v := range rest {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			numeric = false
			break
		}
		nums[v] = f
	}
	sort.SliceStable(rest, func(i, j int) bool {
		if numeric {
			return nums[rest[i]] < nums[rest[j]]
		}
		return rest[i] < rest[j]
	})
	return append(out, rest...)
}

// stats summarises a sample.
type stats struct {
	N                           int
	Mean, Std, Median, Min, Max float64
}

func summarise(xs []float64) stats {
	s := stats{N: len(xs), Mean: math.NaN(), Std: math.NaN(), Median: math.NaN(), Min: math.NaN(), Max: math.NaN()}
	if len(xs) == 0 {
		return s
	}
	sorted := append([]float64(nil), xs...)
	sort.Float64s(sorted)
	sum := 0.0
	for _, x := range sorted {
		sum += x
	}
	s.Mean = sum / float64(len(xs))
	ss := 0.0
	for _, x := range sorted {
		ss += (x - s.Mean) * (x - s.Mean)
	}
	s.Std = 0
	if len(xs) > 1 {
		s.Std = math.Sqrt(ss / float64(len(xs)-1)) // sample std over splits, as papers report
	}
	s.Min, s.Max = sorted[0], sorted[len(sorted)-1]
	if n := len(sorted); n%2 == 1 {
		s.Median = sorted[n/2]
	} else {
		s.Median = (sorted[n/2-1] + sorted[n/2]) / 2
	}
	return s
}

// pick returns the statistic named by an aggregate.
func (s stats) pick(agg string) float64 {
	switch agg {
	case "median":
		return s.Median
	case "min":
		return s.Min
	case "max":
		return s.Max
	}
	return s.Mean
}

// applyDerived runs every derivation and attaches the values to the runs
// they are for; subset as for claims.Claim.Eval.
func applyDerived(specs []claims.Derive, q querier, profile string, subset bool, runs []*run) error {
	byID := make(map[string]*run, len(runs))
	for _, r := range runs {
		byID[r.ID] = r
	}
	for _, d := range specs {
		vals, err := d.Values(q, profile, subset)
		if err != nil {
			return err
		}
		for _, v := range vals {
			r := byID[v.Run]
			switch {
			case r == nil: // a run of another grid or profile
			case d.As == "param":
				r.Params[d.Name] = v.Param
			default:
				r.Metrics[d.Name] = v.Metric
			}
		}
	}
	return nil
}
