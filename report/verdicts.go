package report

import (
	"fmt"
	"sort"
	"strings"

	"sgplab/internal/anyconv"
	"sgplab/results"
)

// runConvergence counts the report's finished runs by their x_converged.
type runConvergence struct {
	Done        int // finished runs of the config's grids
	Unconverged int // stored with x_converged = 0
	Unrecorded  int // without x_converged (stored before it existed)
}

// reportConvergence counts the finished runs of spec's grids in the
// report's profile (all of q's runs when subset: q holds exactly the
// report's runs).
func reportConvergence(q querier, spec Spec, profile string, subset bool) (runConvergence, error) {
	sql := "SELECT COUNT(*), COALESCE(SUM(CASE WHEN c.value = 0 THEN 1 ELSE 0 END), 0), " +
		"COALESCE(SUM(CASE WHEN c.run_id IS NULL THEN 1 ELSE 0 END), 0) FROM runs r " +
		"LEFT JOIN metrics c ON c.run_id = r.id AND c.name = " + sqlQuote(results.ConvergedMetric) +
		" WHERE r.status = 'done'"
	if len(spec.Grids) > 0 {
		var gs []string
		for _, g := range spec.Grids {
			gs = append(gs, sqlQuote(g), sqlQuote(spec.Name+"/"+g))
		}
		sql += " AND r.grid IN (" + strings.Join(gs, ", ") + ")"
	}
	_, rows, err := q.Query(scopedQuery(sql, profile, subset))
	if err != nil {
		return runConvergence{}, fmt.Errorf("report: convergence of the report's runs: %w", err)
	}
	if len(rows) != 1 || len(rows[0]) != 3 {
		return runConvergence{}, fmt.Errorf("report: convergence of the report's runs: unexpected result %v", rows)
	}
	return runConvergence{Done: int(anyconv.Int64(rows[0][0])), Unconverged: int(anyconv.Int64(rows[0][1])), Unrecorded: int(anyconv.Int64(rows[0][2]))}, nil
}

// writeIndexVerdicts heads the report with the verdicts of its counted
// (reproduction) claims and the number of runs that did not converge, in
// the report and behind the counted claims.
func writeIndexVerdicts(b *strings.Builder, specs []ClaimSpec, claims []ClaimResult, conv runConvergence) {
	count := map[string]int{}
	total, unchecked, uncheckedCounted := 0, 0, 0
	for i, c := range specs {
		r := claims[i]
		if c.runs == "" && (r.Verdict == Reproduced || r.Verdict == Differs) {
			unchecked++
		}
		if c.Kind != "reproduction" {
			continue
		}
		total++
		count[r.Verdict]++
		if c.runs == "" && (r.Verdict == Reproduced || r.Verdict == Differs) {
			uncheckedCounted++
		}
	}
	fmt.Fprintf(b, "**Verdicts.** Reproduction claims (counted): %d of %d reproduced, %d differ, %d inconclusive (runs not converged), %d no data",
		count[Reproduced], total, count[Differs], count[Inconclusive], count[NoData])
	if count[QueryError] > 0 {
		fmt.Fprintf(b, ", %d query errors", count[QueryError])
	}
	fmt.Fprintf(b, ". Not converged (x_converged = 0): %d of the report's %d done runs, %d of them read by counted claims.",
		conv.Unconverged, conv.Done, len(unconvergedBehind(specs, claims, "reproduction")))
	switch {
	case conv.Done > 0 && conv.Unrecorded == conv.Done:
		b.WriteString(" Convergence is not recorded in this database (no run has x_converged: they were stored before it), so no verdict accounts for it.")
	case conv.Unrecorded > 0:
		fmt.Fprintf(b, " %d run(s) have no x_converged (stored before it); the claims that read them say so.", conv.Unrecorded)
	}
	if unchecked > 0 {
		fmt.Fprintf(b, " %d judged claim(s) (%d counted) are raw SQL that declare no runs (runs_where or runs_query), so their convergence is not checked.",
			unchecked, uncheckedCounted)
	}
	b.WriteString("\n\n")
}

// unconvergedBehind lists the distinct runs stored with x_converged = 0
// that claims of kind read, sorted.
func unconvergedBehind(specs []ClaimSpec, claims []ClaimResult, kind string) []string {
	seen := map[string]bool{}
	var ids []string
	for i, c := range specs {
		if c.Kind != kind {
			continue
		}
		for _, id := range claims[i].Unconverged {
			if !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
	}
	sort.Strings(ids)
	return ids
}
