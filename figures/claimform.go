package figures

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// A declarative claim names what to measure instead of spelling out SQL:
//
//	[[claim]]
//	text = "Fig. 2: a too small degrades the fit — test RMSE ratio VOF/exact"
//	expect = "> 1.5"
//	metric = "rmse"                          # metric or derived metric
//	aggregate = "mean"                       # mean | median | min | max | sum | count
//	per = ["num_features"]                   # optional: aggregate within each value of these
//	across = "min"                           # parameters, then reduce the groups (default max)
//	where = { grid = ["fig2", "fig2-exact"] }  # filters shared by both sides
//	ratio = [                                # or difference = [A, B]; neither: one selection
//	  { method = "vof-trig", a = 3.0, covariance = "dense" },
//	  { method = "gpr" },
//	]
//
// Filter keys are the run columns grid, method, dataset, split and seed, or
// a parameter name (optionally written param:NAME, dataset parameters as
// dataset.NAME); a value may be a list (any of them), and "" matches runs
// without the parameter. A side may set its own metric and aggregate. Only
// finished runs of the report's profile are seen. The claim compiles to one
// SQL query (written to claims.sql beside index.md); query = "..." remains
// for what this form cannot say.

// claimAggregates are the aggregates of a declarative selection.
var claimAggregates = []string{"mean", "median", "min", "max", "sum", "count"}

// claimSelection is one side of a declarative claim.
type claimSelection struct {
	metric    string
	aggregate string
	per       []string // parameters to group by before reducing across groups
	across    string
	filters   map[string]any
}

// declarative reports whether the claim uses the declarative form.
func (c *ClaimSpec) declarative() bool {
	return c.Metric != "" || c.Aggregate != "" || len(c.Where) > 0 || len(c.Ratio) > 0 || len(c.Difference) > 0 ||
		len(c.Per) > 0 || c.Across != ""
}

// compileClaim turns a declarative claim into SQL returning one number.
// experiment is the config's name (grids are stored as NAME or
// experiment/NAME); derived maps derived-metric names to their queries.
func compileClaim(c ClaimSpec, experiment string, derived map[string]string) (string, error) {
	var sides []map[string]any
	op := ""
	switch {
	case len(c.Ratio) > 0 && len(c.Difference) > 0:
		return "", fmt.Errorf("give ratio or difference, not both")
	case len(c.Ratio) > 0:
		sides, op = c.Ratio, " / "
	case len(c.Difference) > 0:
		sides, op = c.Difference, " - "
	default:
		sides = []map[string]any{{}}
	}
	if op != "" && len(sides) != 2 {
		return "", fmt.Errorf("ratio and difference take two selections [A, B], got %d", len(sides))
	}
	ctes := map[string]string{}
	var parts []string
	for i, side := range sides {
		sel, err := newSelection(c, side)
		if err != nil {
			if op != "" {
				return "", fmt.Errorf("selection %d: %w", i+1, err)
			}
			return "", err
		}
		sql, err := sel.sql(experiment, derived, ctes)
		if err != nil {
			return "", err
		}
		parts = append(parts, sql)
	}
	var b strings.Builder
	if len(ctes) > 0 {
		b.WriteString("WITH ")
		for i, name := range sortedKeys(ctes) {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%s(run_id, value) AS (%s)", name, ctes[name])
		}
		b.WriteString(" ")
	}
	b.WriteString("SELECT " + strings.Join(parts, op))
	return b.String(), nil
}

// newSelection merges the claim's shared settings with one side's.
func newSelection(c ClaimSpec, side map[string]any) (claimSelection, error) {
	s := claimSelection{metric: c.Metric, aggregate: c.Aggregate, per: c.Per, across: c.Across, filters: map[string]any{}}
	for k, v := range c.Where {
		s.filters[k] = v
	}
	for k, v := range side {
		switch k {
		case "per":
			list, err := filterValues(k, v)
			if err != nil {
				return s, err
			}
			s.per = nil
			for _, x := range list {
				name, ok := x.(string)
				if !ok {
					return s, fmt.Errorf("per: want parameter names, got %v", x)
				}
				s.per = append(s.per, name)
			}
		case "metric", "aggregate", "across":
			str, ok := v.(string)
			if !ok {
				return s, fmt.Errorf("%s must be a string, got %v", k, v)
			}
			switch k {
			case "metric":
				s.metric = str
			case "aggregate":
				s.aggregate = str
			default:
				s.across = str
			}
		default:
			s.filters[k] = v
		}
	}
	if s.aggregate == "" {
		s.aggregate = "mean"
	}
	if !contains(claimAggregates, s.aggregate) {
		return s, fmt.Errorf("aggregate %q is not one of: %s", s.aggregate, strings.Join(claimAggregates, ", "))
	}
	if len(s.per) > 0 && s.across == "" {
		s.across = "max"
	}
	if s.across != "" && (len(s.per) == 0 || !contains(claimAggregates, s.across) || s.across == "count") {
		return s, fmt.Errorf("across = %q needs per = [parameters] and is one of: mean, median, min, max, sum", s.across)
	}
	if s.metric == "" && s.aggregate != "count" {
		return s, fmt.Errorf("a declarative claim needs metric = \"NAME\" (a metric or derived metric), for the claim or each selection")
	}
	return s, nil
}

// sql is the scalar subquery of one selection; derived metrics it uses are
// added to ctes.
func (s claimSelection) sql(experiment string, derived map[string]string, ctes map[string]string) (string, error) {
	from := "runs r"
	if s.metric != "" {
		if q, ok := derived[s.metric]; ok {
			name := "derived_" + sqlIdent(s.metric)
			ctes[name] = q
			from += " JOIN " + name + " m ON m.run_id = r.id"
		} else {
			from += " JOIN metrics m ON m.run_id = r.id AND m.name = " + sqlQuote(s.metric)
		}
	}
	conds := []string{"r.status = 'done'"}
	for _, k := range sortedKeys(s.filters) {
		c, err := filterSQL(k, s.filters[k], experiment)
		if err != nil {
			return "", err
		}
		conds = append(conds, c)
	}
	inner := "SELECT m.value AS v FROM " + from + " WHERE " + strings.Join(conds, " AND ")
	if s.metric == "" {
		inner = "SELECT 1 AS v FROM " + from + " WHERE " + strings.Join(conds, " AND ")
	}
	if len(s.per) == 0 {
		return reduceSQL(inner, s.aggregate), nil
	}
	// Within each combination of the per parameters (a run lacking one is
	// its own group), then across the groups.
	var keys []string
	for i, name := range s.per {
		a := fmt.Sprintf("g%d", i)
		from += fmt.Sprintf(" LEFT JOIN run_params %s ON %s.run_id = r.id AND %s.name = %s", a, a, a, sqlQuote(strings.TrimPrefix(name, "param:")))
		keys = append(keys, "COALESCE("+a+".value, '')")
	}
	valCol := "m.value"
	if s.metric == "" {
		valCol = "1"
	}
	grouped := "SELECT " + valCol + " AS v, " + strings.Join(keys, " || '\x1f' || ") + " AS grp FROM " + from +
		" WHERE " + strings.Join(conds, " AND ")
	var perGroup string
	switch s.aggregate {
	case "median":
		perGroup = "SELECT AVG(v) AS v FROM (SELECT v, grp, ROW_NUMBER() OVER (PARTITION BY grp ORDER BY v) AS k, COUNT(*) OVER (PARTITION BY grp) AS n FROM (" +
			grouped + ")) WHERE k IN ((n + 1) / 2, (n + 2) / 2) GROUP BY grp"
	case "count":
		perGroup = "SELECT COUNT(*) AS v FROM (" + grouped + ") GROUP BY grp"
	default:
		perGroup = "SELECT " + sqlAgg[s.aggregate] + "(v) AS v FROM (" + grouped + ") GROUP BY grp"
	}
	return reduceSQL(perGroup, s.across), nil
}

var sqlAgg = map[string]string{"mean": "AVG", "min": "MIN", "max": "MAX", "sum": "SUM"}

// reduceSQL reduces the column v of inner to one number.
func reduceSQL(inner, aggregate string) string {
	switch aggregate {
	case "median":
		return "(SELECT AVG(v) FROM (SELECT v, ROW_NUMBER() OVER (ORDER BY v) AS k, COUNT(*) OVER () AS n FROM (" +
			inner + ")) WHERE k IN ((n + 1) / 2, (n + 2) / 2))"
	case "count":
		return "(SELECT COUNT(*) FROM (" + inner + "))"
	}
	return "(SELECT " + sqlAgg[aggregate] + "(v) FROM (" + inner + "))"
}

// filterSQL is the condition on run r of one filter key.
func filterSQL(key string, v any, experiment string) (string, error) {
	vals, err := filterValues(key, v)
	if err != nil {
		return "", err
	}
	switch key {
	case "grid", "method", "dataset":
		var qs []string
		for _, x := range vals {
			s, ok := x.(string)
			if !ok {
				return "", fmt.Errorf("filter %s: want names, got %v", key, x)
			}
			qs = append(qs, sqlQuote(s))
			if key == "grid" { // stored as NAME or experiment/NAME
				qs = append(qs, sqlQuote(experiment+"/"+s))
			}
		}
		return "r." + key + " IN (" + strings.Join(qs, ", ") + ")", nil
	case "split", "seed":
		var qs []string
		for _, x := range vals {
			n, ok := x.(int64)
			if !ok {
				return "", fmt.Errorf("filter %s: want integers, got %v", key, x)
			}
			qs = append(qs, strconv.FormatInt(n, 10))
		}
		return "r." + key + " IN (" + strings.Join(qs, ", ") + ")", nil
	case "status", "profile":
		return "", fmt.Errorf("filter %s: claims see only the finished runs of the report's profile", key)
	}
	name := strings.TrimPrefix(key, "param:")
	if name == "" {
		return "", fmt.Errorf("filter %q: empty parameter name", key)
	}
	var alts []string
	absent := false
	for _, x := range vals {
		switch y := x.(type) {
		case string:
			if y == "" {
				absent = true
				continue
			}
			alts = append(alts, "p.value = "+sqlQuote(y))
		case bool:
			alts = append(alts, "p.value = "+sqlQuote(strconv.FormatBool(y)))
		case int64:
			alts = append(alts, numMatch(float64(y)))
		case float64:
			alts = append(alts, numMatch(y))
		default:
			return "", fmt.Errorf("filter %s: %v (%T) is not a string, boolean or number", key, x, x)
		}
	}
	var conds []string
	if len(alts) > 0 {
		conds = append(conds, "EXISTS (SELECT 1 FROM run_params p WHERE p.run_id = r.id AND p.name = "+
			sqlQuote(name)+" AND ("+strings.Join(alts, " OR ")+"))")
	}
	if absent {
		conds = append(conds, "NOT EXISTS (SELECT 1 FROM run_params p WHERE p.run_id = r.id AND p.name = "+sqlQuote(name)+")")
	}
	return "(" + strings.Join(conds, " OR ") + ")", nil
}

// numMatch compares a numeric parameter with a relative tolerance, so a
// value written 0.95 matches the stored 0.95 whatever its last bit.
func numMatch(x float64) string {
	tol := 1e-9 * math.Max(1, math.Abs(x))
	return fmt.Sprintf("ABS(p.num - %s) <= %s", strconv.FormatFloat(x, 'g', -1, 64), strconv.FormatFloat(tol, 'g', -1, 64))
}

func filterValues(key string, v any) ([]any, error) {
	switch x := v.(type) {
	case []any:
		if len(x) == 0 {
			return nil, fmt.Errorf("filter %s: empty list", key)
		}
		return x, nil
	case []string:
		out := make([]any, len(x))
		for i, s := range x {
			out[i] = s
		}
		return out, nil
	case string, bool, int64, float64:
		return []any{x}, nil
	case int:
		return []any{int64(x)}, nil
	}
	return nil, fmt.Errorf("filter %s: %v (%T) is not a string, boolean, number or list", key, v, v)
}

// sqlIdent keeps letters, digits and underscores of a name.
func sqlIdent(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r == '_' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// derivedMetricQueries are the derived metrics a declarative claim may use:
// those computed in SQL alone (a Go transform cannot be inlined).
func derivedMetricQueries(ds []DeriveSpec) map[string]string {
	out := map[string]string{}
	for _, d := range ds {
		if (d.As == "" || d.As == "metric") && d.Transform == "" {
			out[d.Name] = d.Query
		}
	}
	return out
}

// claimKinds are the kinds of claim: only reproduction claims are counted.
// A sanity check holds by theory or by construction; a diagnostic checks our
// own setup (did the optimiser converge, where does a floor come from).
var claimKinds = []string{"reproduction", "sanity", "diagnostic"}
