package report

import (
	"fmt"
	"sort"
	"strings"

	"sgplab/claims"
)

// writeIndexPeakRSS states the largest peak RSS of the report's runs, if
// any run records one.
func writeIndexPeakRSS(b *strings.Builder, p claims.RunsPeakRSS) {
	if p.Recorded == 0 {
		return
	}
	size := fmt.Sprintf("%.0f MiB", p.Bytes/(1<<20))
	if p.Bytes >= 10<<30 {
		size = fmt.Sprintf("%.1f GiB", p.Bytes/(1<<30))
	}
	fmt.Fprintf(b, "**Peak memory.** The largest peak RSS of a run (`%s`) is %s: run %s (%s on %s). %d of the report's %d done runs record it.\n\n",
		claims.PeakRSSMetric, size, p.ID, p.Method, p.Dataset, p.Recorded, p.Done)
}

// writeIndexVerdicts heads the report with the verdicts of its counted
// (reproduction) claims and the number of runs that did not converge, in
// the report and behind the counted claims.
func writeIndexVerdicts(b *strings.Builder, specs []claims.Claim, verdicts []claims.Result, conv claims.RunConvergence) {
	count := map[string]int{}
	total, unchecked, uncheckedCounted := 0, 0, 0
	for i, c := range specs {
		r := verdicts[i]
		if c.Runs == "" && (r.Verdict == claims.Reproduced || r.Verdict == claims.Differs) {
			unchecked++
		}
		if c.Kind != "reproduction" {
			continue
		}
		total++
		count[r.Verdict]++
		if c.Runs == "" && (r.Verdict == claims.Reproduced || r.Verdict == claims.Differs) {
			uncheckedCounted++
		}
	}
	fmt.Fprintf(b, "**Verdicts.** Reproduction claims (counted): %d of %d reproduced, %d differ, %d inconclusive (runs not converged), %d no data",
		count[claims.Reproduced], total, count[claims.Differs], count[claims.Inconclusive], count[claims.NoData])
	if count[claims.QueryError] > 0 {
		fmt.Fprintf(b, ", %d query errors", count[claims.QueryError])
	}
	fmt.Fprintf(b, ". Not converged (x_converged = 0): %d of the report's %d done runs, %d of them read by counted claims.",
		conv.Unconverged, conv.Done, len(unconvergedBehind(specs, verdicts, "reproduction")))
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
func unconvergedBehind(specs []claims.Claim, verdicts []claims.Result, kind string) []string {
	seen := map[string]bool{}
	var ids []string
	for i, c := range specs {
		if c.Kind != kind {
			continue
		}
		for _, id := range verdicts[i].Unconverged {
			if !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
	}
	sort.Strings(ids)
	return ids
}
