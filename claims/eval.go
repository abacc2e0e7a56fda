package claims

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"sgplab/internal/anyconv"
	"sgplab/results"
)

// Claim verdicts.
const (
	Reproduced = "reproduced" // the number satisfies the expectation
	Differs    = "differs"    // the number violates it
	// Inconclusive: the number comes from runs of which some did not
	// converge (x_converged = 0), so neither verdict can be trusted.
	Inconclusive = "inconclusive"
	NoData       = "no data" // the query returned no number (nothing has run yet)
	QueryError   = "error"   // the query failed
)

// Result is the verdict on one claim.
type Result struct {
	Text    string
	Paper   string
	Expect  string
	Value   float64 // NaN unless Verdict is Reproduced, Differs or Inconclusive
	Verdict string
	Detail  string // why there is no number, the query error, or a note on convergence
	// Computed is, for an Inconclusive claim, the verdict its number alone
	// gives (Reproduced or Differs).
	Computed string

	// Convergence of the runs the claim reads, when Checked: Runs done runs,
	// of which the ones in Unconverged are stored with x_converged = 0 and
	// Unrecorded have no x_converged at all (stored before it existed).
	// Checked is false for a raw query that declares no runs.
	Checked     bool
	Runs        int
	Unconverged []string
	Unrecorded  int
}

// expectation is a parsed `expect`: value op bound, or value within [lo, hi].
type expectation struct {
	op     string // <, <=, >, >=, =, in
	lo, hi float64
}

var (
	expectCmpRE   = regexp.MustCompile(`^(<=|>=|==|=|<|>|≤|≥)\s*([-+0-9.eE]+|[-+]?inf)$`)
	expectRangeRE = regexp.MustCompile(`^in\s*\[\s*([-+0-9.eE]+)\s*,\s*([-+0-9.eE]+)\s*\]$`)
	expectTolRE   = regexp.MustCompile(`^(?:==|=)\s*([-+0-9.eE]+)\s*(?:±|\+-|\+/-)\s*([0-9.eE+]+)$`)
)

func parseExpect(s string) (expectation, error) {
	s = strings.TrimSpace(s)
	num := func(x string) (float64, error) { return strconv.ParseFloat(x, 64) }
	if m := expectTolRE.FindStringSubmatch(s); m != nil {
		v, err1 := num(m[1])
		tol, err2 := num(m[2])
		if err1 == nil && err2 == nil && tol >= 0 {
			return expectation{op: "in", lo: v - tol, hi: v + tol}, nil
		}
	}
	if m := expectRangeRE.FindStringSubmatch(s); m != nil {
		lo, err1 := num(m[1])
		hi, err2 := num(m[2])
		if err1 == nil && err2 == nil && lo <= hi {
			return expectation{op: "in", lo: lo, hi: hi}, nil
		}
	}
	if m := expectCmpRE.FindStringSubmatch(s); m != nil {
		v, err := num(m[2])
		if err == nil {
			op := map[string]string{"≤": "<=", "≥": ">=", "==": "="}[m[1]]
			if op == "" {
				op = m[1]
			}
			return expectation{op: op, lo: v, hi: v}, nil
		}
	}
	return expectation{}, fmt.Errorf("cannot read expect %q; write e.g. \"< 0.01\", \">= 2\", \"in [1, 3]\" or \"= 5 ± 0.1\"", s)
}

func (e expectation) holds(v float64) bool {
	if math.IsNaN(v) {
		return false
	}
	switch e.op {
	case "<":
		return v < e.lo
	case "<=":
		return v <= e.lo
	case ">":
		return v > e.lo
	case ">=":
		return v >= e.lo
	case "=":
		return v == e.lo
	case "in":
		return v >= e.lo && v <= e.hi
	}
	return false
}

// Querier is the part of results.Store that claims need.
type Querier interface {
	Query(sql string, args ...any) ([]string, [][]any, error)
}

// Eval runs the claim's query and judges the number it returns. With
// subset, q holds exactly the runs the report uses (the expected runs of the
// profile, some of which may be full-profile runs the profile shares), and
// the query sees all of them; otherwise it sees the profile's runs only.
func (c Claim) Eval(q Querier, profile string, subset bool) Result {
	r := Result{Text: c.Text, Paper: c.Paper, Expect: c.Expect, Value: math.NaN()}
	sql := scopedQuery(c.SQL, profile, subset)
	_, rows, err := q.Query(sql)
	if err != nil {
		r.Verdict, r.Detail = QueryError, err.Error()
		return r
	}
	if len(rows) == 0 || len(rows[0]) == 0 {
		r.Verdict, r.Detail = NoData, "the query returned no rows"
		return r
	}
	if len(rows) > 1 || len(rows[0]) > 1 {
		r.Verdict = QueryError
		r.Detail = fmt.Sprintf("the query must return one number, got %d row(s) × %d column(s)", len(rows), len(rows[0]))
		return r
	}
	v, ok := anyconv.FloatOrText(rows[0][0])
	if !ok {
		if rows[0][0] == nil {
			r.Verdict, r.Detail = NoData, "the query returned NULL (no matching results)"
		} else {
			r.Verdict, r.Detail = QueryError, fmt.Sprintf("the query returned %v (%T), not a number", rows[0][0], rows[0][0])
		}
		return r
	}
	r.Value = v
	if math.IsNaN(v) {
		r.Verdict, r.Detail = NoData, "the query returned NaN"
		return r
	}
	if c.expect.holds(v) {
		r.Verdict = Reproduced
	} else {
		r.Verdict = Differs
	}
	judgeConvergence(c, q, profile, subset, &r)
	return r
}

// judgeConvergence reads the convergence of the runs behind a judged
// claim: any run stored with x_converged = 0 makes it Inconclusive. A
// missing x_converged (a database from before it) is noted, as is a raw
// query that declares no runs; neither changes the verdict. NULL (a run
// without training) counts as converged.
func judgeConvergence(c Claim, q Querier, profile string, subset bool, r *Result) {
	if c.Runs == "" {
		r.Detail = "convergence not checked (the query declares no runs: runs_where or runs_query)"
		return
	}
	_, rows, err := q.Query(scopedQuery(ConvergenceQuery(c.Runs), profile, subset))
	if err != nil {
		r.Verdict, r.Detail = QueryError, "the claim's runs (runs_where / runs_query): "+err.Error()
		return
	}
	r.Checked, r.Runs = true, len(rows)
	for _, row := range rows {
		if len(row) != 3 {
			r.Verdict, r.Detail = QueryError, "the claim's runs: want one column of run ids"
			return
		}
		v, ok := anyconv.FloatOrText(row[1])
		switch {
		case anyconv.Int64(row[2]) == 0:
			r.Unrecorded++
		case ok && v == 0:
			r.Unconverged = append(r.Unconverged, anyconv.String(row[0]))
		}
	}
	switch {
	case len(r.Unconverged) > 0:
		r.Computed, r.Verdict = r.Verdict, Inconclusive
		r.Detail = fmt.Sprintf("%d of its %d runs did not converge (the number alone: %s)", len(r.Unconverged), r.Runs, r.Computed)
	case r.Unrecorded > 0:
		r.Detail = fmt.Sprintf("convergence not recorded for %d of its %d runs", r.Unrecorded, r.Runs)
	}
}

// ConvergenceQuery lists the finished runs among those runs (SQL returning
// run ids) selects, with their x_converged and whether it is stored.
func ConvergenceQuery(runs string) string {
	return "WITH claim_runs(id) AS (" + runs + ") " +
		"SELECT r.id, c.value, c.run_id IS NOT NULL FROM runs r " +
		"LEFT JOIN metrics c ON c.run_id = r.id AND c.name = " + sqlQuote(results.ConvergedMetric) + " " +
		"WHERE r.status = 'done' AND r.id IN (SELECT id FROM claim_runs) ORDER BY r.id"
}

// scopedQuery substitutes {profile} in query and, unless subset (the
// database holds only the report's runs already), limits it to the runs of
// profile.
func scopedQuery(query, profile string, subset bool) string {
	query = strings.ReplaceAll(query, "{profile}", sqlQuote(profile))
	if subset {
		return query
	}
	return profileScoped(query, profile)
}

// profileScoped shadows the runs table and the views with common table
// expressions restricted to the report's profile, so a claim never mixes
// quick and full runs.
func profileScoped(query, profile string) string {
	cond := "profile = " + sqlQuote(profile)
	if profile == "full" {
		cond = "profile IN ('full', '')"
	}
	ctes := "runs AS (SELECT * FROM main.runs WHERE " + cond + "), " +
		"run_metrics AS (SELECT v.* FROM main.run_metrics v JOIN main.runs r ON r.id = v.run_id WHERE r." + cond + "), " +
		"run_params_v AS (SELECT v.* FROM main.run_params_v v JOIN main.runs r ON r.id = v.run_id WHERE r." + cond + ")"
	q := strings.TrimSpace(query)
	if len(q) >= 5 && strings.EqualFold(q[:5], "with ") {
		rest := strings.TrimSpace(q[5:])
		if len(rest) >= 10 && strings.EqualFold(rest[:10], "recursive ") {
			return "WITH RECURSIVE " + ctes + ", " + rest[10:]
		}
		return "WITH " + ctes + ", " + rest
	}
	return "WITH " + ctes + " " + q
}

func sqlQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// RunConvergence counts a report's finished runs by their x_converged.
type RunConvergence struct {
	Done        int // finished runs of the config's grids
	Unconverged int // stored with x_converged = 0
	Unrecorded  int // without x_converged (stored before it existed)
}

// Convergence counts the finished runs of the grids (of config
// experiment; all runs when there are none) in the report's profile (all
// of q's runs when subset: q holds exactly the report's runs).
func Convergence(q Querier, experiment string, grids []string, profile string, subset bool) (RunConvergence, error) {
	sql := "SELECT COUNT(*), COALESCE(SUM(CASE WHEN c.value = 0 THEN 1 ELSE 0 END), 0), " +
		"COALESCE(SUM(CASE WHEN c.run_id IS NULL THEN 1 ELSE 0 END), 0) FROM runs r " +
		"LEFT JOIN metrics c ON c.run_id = r.id AND c.name = " + sqlQuote(results.ConvergedMetric) +
		" WHERE " + doneRuns(experiment, grids)
	_, rows, err := q.Query(scopedQuery(sql, profile, subset))
	if err != nil {
		return RunConvergence{}, fmt.Errorf("claims: convergence of the report's runs: %w", err)
	}
	if len(rows) != 1 || len(rows[0]) != 3 {
		return RunConvergence{}, fmt.Errorf("claims: convergence of the report's runs: unexpected result %v", rows)
	}
	return RunConvergence{Done: int(anyconv.Int64(rows[0][0])), Unconverged: int(anyconv.Int64(rows[0][1])), Unrecorded: int(anyconv.Int64(rows[0][2]))}, nil
}

// doneRuns is the SQL condition on runs r for the done runs of the grids
// (of config experiment; all runs when there are none).
func doneRuns(experiment string, grids []string) string {
	cond := "r.status = 'done'"
	if len(grids) > 0 {
		var gs []string
		for _, g := range grids {
			gs = append(gs, sqlQuote(g), sqlQuote(experiment+"/"+g))
		}
		cond += " AND r.grid IN (" + strings.Join(gs, ", ") + ")"
	}
	return cond
}

// PeakRSSMetric is the peak resident memory of the process that ran a run
// (runner.PeakRSSMetric).
const PeakRSSMetric = "x_peak_rss_bytes"

// RunsPeakRSS is the largest peak RSS of a report's done runs and the run
// it came from.
type RunsPeakRSS struct {
	Bytes          float64
	ID, Method     string
	Dataset        string
	Recorded, Done int // done runs with the metric, and all done runs
}

// PeakRSS finds the largest peak RSS among the done runs of the grids, as
// Convergence counts them.
func PeakRSS(q Querier, experiment string, grids []string, profile string, subset bool) (RunsPeakRSS, error) {
	from := " FROM runs r LEFT JOIN metrics m ON m.run_id = r.id AND m.name = " + sqlQuote(PeakRSSMetric) +
		" WHERE " + doneRuns(experiment, grids)
	var p RunsPeakRSS
	_, rows, err := q.Query(scopedQuery("SELECT COUNT(m.value), COUNT(*)"+from, profile, subset))
	if err != nil || len(rows) != 1 || len(rows[0]) != 2 {
		return p, fmt.Errorf("claims: peak RSS of the report's runs: %v %v", rows, err)
	}
	p.Recorded, p.Done = int(anyconv.Int64(rows[0][0])), int(anyconv.Int64(rows[0][1]))
	if p.Recorded == 0 {
		return p, nil
	}
	_, rows, err = q.Query(scopedQuery("SELECT m.value, r.id, r.method, r.dataset"+from+
		" AND m.value IS NOT NULL ORDER BY m.value DESC, r.id LIMIT 1", profile, subset))
	if err != nil || len(rows) != 1 || len(rows[0]) != 4 {
		return p, fmt.Errorf("claims: peak RSS of the report's runs: %v %v", rows, err)
	}
	p.Bytes, _ = anyconv.Float(rows[0][0])
	p.ID, p.Method, p.Dataset = anyconv.String(rows[0][1]), anyconv.String(rows[0][2]), anyconv.String(rows[0][3])
	return p, nil
}
