package claims

import (
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// aggregates are the aggregates of a declarative selection.
var aggregates = []string{"mean", "median", "min", "max", "sum", "count"}

// acrossReductions are the reductions across the groups of per.
var acrossReductions = []string{"mean", "median", "min", "max", "sum", "count", "at_min", "at_max"}

// runColumns are the filter and per keys that are columns of the runs table.
var runColumns = []string{"grid", "method", "dataset", "split", "seed"}

// selection is a declarative claim or one side of its ratio or
// difference: runs reduced to one number, or two selections combined.
type selection struct {
	metric    string
	aggregate string
	per       []string // keys to group by before reducing across groups
	across    string
	having    string // condition on each group's value
	paired    bool   // combine the sides within each group of per
	minGroups int    // no data with fewer groups than this
	reach     *reachSpec
	filters   map[string]any

	op    string // "" (a leaf), " / " or " - "
	sides []selection
}

// derivedSet are a config's derived values as far as claims can use them.
type derivedSet struct {
	metrics     map[string]string  // SQL-only derived metrics: name → query
	params      map[string]*Derive // SQL-only derived parameters
	transformed map[string]string  // derived in Go: name → transform
}

func newDerivedSet(ds []Derive) derivedSet {
	d := derivedSet{metrics: map[string]string{}, params: map[string]*Derive{}, transformed: map[string]string{}}
	for i := range ds {
		s := &ds[i]
		switch {
		case s.Transform != "":
			d.transformed[s.Name] = s.Transform
		case s.As == "param":
			d.params[s.Name] = s
		default:
			d.metrics[s.Name] = s.Query
		}
	}
	return d
}

// compileDeclarative turns a declarative claim into SQL returning one number,
// and SQL returning the ids of the runs it reads (every selection's runs,
// before having and reach choose among their groups), from which the
// report judges whether the claim's fits converged. experiment is the
// config's name (grids are stored as NAME or experiment/NAME).
func compileDeclarative(c Spec, experiment string, derived []Derive) (query, runs string, err error) {
	base := selection{metric: c.Metric, aggregate: c.Aggregate, per: c.Per, across: c.Across,
		having: c.Having, paired: c.Paired, minGroups: c.MinGroups, filters: map[string]any{}}
	if c.Reach != nil {
		r, err := parseReach(c.Reach)
		if err != nil {
			return "", "", err
		}
		base.reach = r
	}
	for k, v := range c.Where {
		base.filters[k] = v
	}
	root, err := buildSelection(base, c.Ratio, c.Difference)
	if err != nil {
		return "", "", err
	}
	cc := newCompiler(experiment, derived)
	expr, err := cc.scalar(root)
	if err != nil {
		return "", "", err
	}
	return cc.withCTEs("SELECT " + expr), cc.runsSQL(), nil
}

// compileRunsWhere is the SQL returning the ids of the finished runs that
// match filters (the syntax of a claim's where): the runs a raw-SQL claim
// declares it reads (runs_where).
func compileRunsWhere(filters map[string]any, experiment string, derived []Derive) (string, error) {
	if len(filters) == 0 {
		return "", fmt.Errorf("runs_where is empty; give the filters of the runs the query reads, e.g. { grid = [\"a\", \"b\"] }")
	}
	cc := newCompiler(experiment, derived)
	s := selection{filters: filters}
	if _, _, _, err := cc.selectFrom(s); err != nil {
		return "", err
	}
	return cc.runsSQL(), nil
}

func newCompiler(experiment string, derived []Derive) *compiler {
	return &compiler{experiment: experiment, derived: newDerivedSet(derived), ctes: map[string]string{}}
}

// withCTEs prefixes query with the derived values it uses.
func (cc *compiler) withCTEs(query string) string {
	if len(cc.ctes) == 0 {
		return query
	}
	var b strings.Builder
	b.WriteString("WITH ")
	for i, name := range slices.Sorted(maps.Keys(cc.ctes)) {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s(run_id, value) AS (%s)", name, cc.ctes[name])
	}
	b.WriteString(" " + query)
	return b.String()
}

// runsSQL is the union of the selections compiled so far: the ids of the
// runs they read.
func (cc *compiler) runsSQL() string {
	return cc.withCTEs(strings.Join(cc.runs, " UNION "))
}

// buildSelection completes s (settings inherited from above) with its
// ratio or difference, checking each level.
func buildSelection(s selection, ratio, difference []map[string]any) (selection, error) {
	var sides []map[string]any
	switch {
	case len(ratio) > 0 && len(difference) > 0:
		return s, fmt.Errorf("give ratio or difference, not both")
	case len(ratio) > 0:
		sides, s.op = ratio, " / "
	case len(difference) > 0:
		sides, s.op = difference, " - "
	}
	if s.op != "" && len(sides) != 2 {
		return s, fmt.Errorf("ratio and difference take two selections [A, B], got %d", len(sides))
	}
	if s.paired && s.op == "" {
		return s, fmt.Errorf("paired = true compares the two sides of a ratio or difference within each group; give ratio or difference")
	}
	if s.reach != nil && (s.op == "" || s.paired) {
		return s, fmt.Errorf("reach compares the two sides of a ratio or difference at a level both reach; give ratio or difference (not paired)")
	}
	for i, side := range sides {
		child, err := s.child(side)
		if err != nil {
			return s, fmt.Errorf("selection %d: %w", i+1, err)
		}
		if (s.paired || s.reach != nil) && child.op != "" {
			return s, fmt.Errorf("selection %d: a paired or reach side is one selection, not a ratio or difference", i+1)
		}
		if s.reach != nil {
			if len(child.per) == 0 {
				return s, fmt.Errorf("selection %d: reach compares groups (configurations): give per = [keys]", i+1)
			}
			if child.across != "min" && child.across != "max" {
				return s, fmt.Errorf("selection %d: with reach, across = %q must be min (the smallest value among the groups that reach the level, the default) or max", i+1, child.across)
			}
			if child.having != "" {
				return s, fmt.Errorf("selection %d: reach sets which groups count; drop having", i+1)
			}
		}
		s.sides = append(s.sides, child)
	}
	if s.paired {
		if len(s.sides[0].per) == 0 || len(s.sides[0].per) != len(s.sides[1].per) {
			return s, fmt.Errorf("paired = true needs per = [keys] on both sides, as many on each (got %d and %d)",
				len(s.sides[0].per), len(s.sides[1].per))
		}
		return s, s.checkAcross(true)
	}
	if s.op == "" {
		return s, s.checkLeaf()
	}
	return s, nil
}

// child is the selection of one side: s's settings overridden by the side's
// keys, the rest of which are filters.
func (s selection) child(side map[string]any) (selection, error) {
	c := selection{metric: s.metric, aggregate: s.aggregate, per: s.per, across: s.across, having: s.having,
		minGroups: s.minGroups, filters: map[string]any{}}
	if s.paired { // the group comparison and its reduction belong to the pair
		c.across, c.having, c.minGroups = "", "", 0
	}
	for k, v := range s.filters {
		c.filters[k] = v
	}
	var ratio, difference []map[string]any
	for _, k := range slices.Sorted(maps.Keys(side)) {
		v := side[k]
		switch k {
		case "per":
			list, err := filterValues(k, v)
			if err != nil {
				return c, err
			}
			c.per = nil
			for _, x := range list {
				name, ok := x.(string)
				if !ok {
					return c, fmt.Errorf("per: want parameter names, got %v", x)
				}
				c.per = append(c.per, name)
			}
		case "metric", "aggregate", "across", "having":
			str, ok := v.(string)
			if !ok {
				return c, fmt.Errorf("%s must be a string, got %v", k, v)
			}
			switch k {
			case "metric":
				c.metric = str
			case "aggregate":
				c.aggregate = str
			case "across":
				c.across = str
			default:
				c.having = str
			}
		case "reach":
			m, ok := v.(map[string]any)
			if !ok {
				return c, fmt.Errorf("reach: want { metric = \"NAME\", times = X or plus = X }, got %v", v)
			}
			r, err := parseReach(m)
			if err != nil {
				return c, err
			}
			c.reach = r
		case "min_groups":
			n, ok := v.(int64)
			if !ok {
				return c, fmt.Errorf("min_groups must be an integer, got %v", v)
			}
			c.minGroups = int(n)
		case "paired":
			b, ok := v.(bool)
			if !ok {
				return c, fmt.Errorf("paired must be true or false, got %v", v)
			}
			c.paired = b
		case "ratio", "difference":
			list, ok := v.([]map[string]any)
			if !ok {
				if xs, isList := v.([]any); isList {
					for _, x := range xs {
						m, isMap := x.(map[string]any)
						if !isMap {
							return c, fmt.Errorf("%s: want two selections { … }, got %v", k, x)
						}
						list = append(list, m)
					}
				} else {
					return c, fmt.Errorf("%s: want two selections [{ … }, { … }], got %v", k, v)
				}
			}
			if k == "ratio" {
				ratio = list
			} else {
				difference = list
			}
		default:
			c.filters[k] = v
		}
	}
	if s.paired && (c.paired || c.across != "" || c.having != "" || c.minGroups != 0) {
		return c, fmt.Errorf("in a paired comparison across, having and min_groups belong to the pair, not to a side, and a side cannot itself be paired")
	}
	if s.reach != nil && c.across == "" && len(c.per) > 0 {
		c.across = "min" // the fastest configuration that reaches the level
	}
	return buildSelection(c, ratio, difference)
}

// checkLeaf validates the settings of a selection of runs.
func (s *selection) checkLeaf() error {
	if s.aggregate == "" {
		s.aggregate = "mean"
	}
	if !slices.Contains(aggregates, s.aggregate) {
		return fmt.Errorf("aggregate %q is not one of: %s", s.aggregate, strings.Join(aggregates, ", "))
	}
	if s.metric == "" && s.aggregate != "count" {
		return fmt.Errorf("a declarative claim needs metric = \"NAME\" (a metric or derived metric), for the claim or each selection")
	}
	return s.checkAcross(false)
}

// checkAcross validates per, across and having of a leaf or a pair.
func (s *selection) checkAcross(pair bool) error {
	if s.minGroups < 0 {
		return fmt.Errorf("min_groups = %d: want a positive number of groups", s.minGroups)
	}
	if len(s.per) == 0 && !pair {
		switch {
		case s.across != "":
			return fmt.Errorf("across = %q needs per = [parameters]", s.across)
		case s.having != "":
			return fmt.Errorf("having = %q filters the groups of per = [parameters]; give per", s.having)
		case s.minGroups != 0:
			return fmt.Errorf("min_groups = %d counts the groups of per = [parameters]; give per", s.minGroups)
		}
		return nil
	}
	if s.across == "" {
		s.across = "max"
	}
	if !slices.Contains(acrossReductions, s.across) {
		return fmt.Errorf("across = %q is not one of: %s", s.across, strings.Join(acrossReductions, ", "))
	}
	if s.having != "" {
		if _, err := parseExpect(s.having); err != nil {
			return fmt.Errorf("having: %v", err)
		}
	}
	return nil
}

// compiler turns selections into SQL, collecting the derived values
// they use as common table expressions.
type compiler struct {
	experiment string
	derived    derivedSet
	ctes       map[string]string
	runs       []string // one query of run ids per distinct selection
}

// scalar is the SQL expression of a selection's number.
func (cc *compiler) scalar(s selection) (string, error) {
	if s.op == "" {
		return cc.leaf(s)
	}
	if s.paired {
		a, err := cc.groups(s.sides[0])
		if err != nil {
			return "", err
		}
		b, err := cc.groups(s.sides[1])
		if err != nil {
			return "", err
		}
		var keys []string
		for i := range s.sides[0].per {
			keys = append(keys, fmt.Sprintf("a.n%d AS n%d, a.s%d AS s%d", i, i, i, i))
		}
		pairs := "SELECT " + combine("a.v", s.op, "b.v") + " AS v, a.grp AS grp, " + strings.Join(keys, ", ") +
			" FROM (" + a + ") a JOIN (" + b + ") b ON a.grp = b.grp"
		return acrossSQL(pairs, s.across, s.having, len(s.sides[0].per), s.minGroups)
	}
	if s.reach != nil {
		return cc.reachSQL(s)
	}
	a, err := cc.scalar(s.sides[0])
	if err != nil {
		return "", err
	}
	b, err := cc.scalar(s.sides[1])
	if err != nil {
		return "", err
	}
	return "(" + combine(a, s.op, b) + ")", nil
}

// combine divides in floating point (a ratio of two counts is a fraction).
func combine(a, op, b string) string {
	if op == " / " {
		return "CAST(" + a + " AS REAL) / " + b
	}
	return a + op + b
}

// leaf is the scalar subquery of a selection of runs.
func (cc *compiler) leaf(s selection) (string, error) {
	if len(s.per) > 0 {
		g, err := cc.groups(s)
		if err != nil {
			return "", err
		}
		return acrossSQL(g, s.across, s.having, len(s.per), s.minGroups)
	}
	from, conds, val, err := cc.selectFrom(s)
	if err != nil {
		return "", err
	}
	return reduceSQL("SELECT "+val+" AS v FROM "+from+" WHERE "+conds, s.aggregate), nil
}

// selectFrom is the FROM clause, the WHERE conditions and the value column
// of a selection of runs.
func (cc *compiler) selectFrom(s selection) (from, conds, val string, err error) {
	from, val = "runs r", "1"
	if s.metric != "" {
		if t, ok := cc.derived.transformed[s.metric]; ok {
			return "", "", "", fmt.Errorf("metric %q is derived with transform = %q, applied in Go, so a claim cannot use it; derive the value in SQL alone", s.metric, t)
		}
		if q, ok := cc.derived.metrics[s.metric]; ok {
			name := "derived_" + sqlIdent(s.metric)
			cc.ctes[name] = q
			from += " JOIN " + name + " m ON m.run_id = r.id"
		} else {
			from += " JOIN metrics m ON m.run_id = r.id AND m.name = " + sqlQuote(s.metric)
		}
		val = "m.value"
	}
	cs := []string{"r.status = 'done'"}
	for _, k := range slices.Sorted(maps.Keys(s.filters)) {
		c, err := cc.filter(k, s.filters[k])
		if err != nil {
			return "", "", "", err
		}
		cs = append(cs, c)
	}
	conds = strings.Join(cs, " AND ")
	if sel := "SELECT r.id AS id FROM " + from + " WHERE " + conds; !slices.Contains(cc.runs, sel) {
		cc.runs = append(cc.runs, sel)
	}
	return from, conds, val, nil
}

// groups is a query of one row per group of s.per: the aggregate v, the
// group's key grp, and per key i its numeric (n_i) and text (s_i) value.
func (cc *compiler) groups(s selection) (string, error) {
	from, conds, val, err := cc.selectFrom(s)
	if err != nil {
		return "", err
	}
	var keys, cols, outs []string
	for i, name := range s.per {
		txt, num := "", "NULL"
		switch {
		case slices.Contains(runColumns, name):
			txt = "r." + name
			if name == "split" || name == "seed" {
				num = "r." + name
			}
		case cc.derived.params[strings.TrimPrefix(name, "param:")] != nil:
			return "", fmt.Errorf("per: %q is a derived parameter; group by stored parameters or %s", name, strings.Join(runColumns, ", "))
		default:
			a := fmt.Sprintf("g%d", i)
			from += fmt.Sprintf(" LEFT JOIN run_params %s ON %s.run_id = r.id AND %s.name = %s", a, a, a, sqlQuote(strings.TrimPrefix(name, "param:")))
			txt, num = "COALESCE("+a+".value, '')", a+".num"
		}
		keys = append(keys, "CAST("+txt+" AS TEXT)")
		cols = append(cols, fmt.Sprintf("%s AS n%d, %s AS s%d", num, i, txt, i))
		outs = append(outs, fmt.Sprintf("MIN(n%d) AS n%d, MIN(s%d) AS s%d", i, i, i, i))
	}
	grouped := "SELECT " + val + " AS v, " + strings.Join(keys, " || '\x1f' || ") + " AS grp, " + strings.Join(cols, ", ") +
		" FROM " + from + " WHERE " + conds
	out := strings.Join(outs, ", ")
	switch s.aggregate {
	case "median":
		return "SELECT AVG(v) AS v, grp, " + out + " FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY grp ORDER BY v) AS k, COUNT(*) OVER (PARTITION BY grp) AS n FROM (" +
			grouped + ")) WHERE k IN ((n + 1) / 2, (n + 2) / 2) GROUP BY grp", nil
	case "count":
		return "SELECT COUNT(*) AS v, grp, " + out + " FROM (" + grouped + ") GROUP BY grp", nil
	}
	return "SELECT " + sqlAgg[s.aggregate] + "(v) AS v, grp, " + out + " FROM (" + grouped + ") GROUP BY grp", nil
}

// reachSpec compares two sides at a level both reach ("time to reach the
// same gap"): a group counts when its aggregate of metric is at most the
// larger of the two sides' smallest group values, times times plus plus
// (lower is better: a gap, an NLPD).
type reachSpec struct {
	metric, aggregate string
	times, plus       float64
}

var reachKeys = []string{"aggregate", "metric", "plus", "times"}

func parseReach(m map[string]any) (*reachSpec, error) {
	r := &reachSpec{aggregate: "mean", times: 1}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		v := m[k]
		switch k {
		case "metric", "aggregate":
			str, ok := v.(string)
			if !ok || str == "" {
				return nil, fmt.Errorf("reach.%s must be a name, got %v", k, v)
			}
			if k == "metric" {
				r.metric = str
			} else {
				r.aggregate = str
			}
		case "times", "plus":
			var x float64
			switch y := v.(type) {
			case int64:
				x = float64(y)
			case float64:
				x = y
			default:
				return nil, fmt.Errorf("reach.%s must be a number, got %v", k, v)
			}
			if k == "times" {
				r.times = x
			} else {
				r.plus = x
			}
		default:
			return nil, fmt.Errorf("reach: unknown key %q; valid: %s", k, strings.Join(reachKeys, ", "))
		}
	}
	switch {
	case r.metric == "":
		return nil, fmt.Errorf("reach needs metric = \"NAME\": the quality both sides must reach")
	case !slices.Contains(aggregates, r.aggregate) || r.aggregate == "count":
		return nil, fmt.Errorf("reach.aggregate %q is not one of: mean, median, min, max, sum", r.aggregate)
	case !(r.times > 0) || math.IsInf(r.times, 0) || math.IsNaN(r.plus) || math.IsInf(r.plus, 0):
		return nil, fmt.Errorf("reach: times must be positive and plus finite, got times = %v, plus = %v", r.times, r.plus)
	}
	return r, nil
}

// reachSQL is the value of a node with reach: per side the best group value
// (across) among the groups whose reach metric is at most the level.
func (cc *compiler) reachSQL(s selection) (string, error) {
	var sides [2]string
	for i, side := range s.sides {
		main, err := cc.groups(side)
		if err != nil {
			return "", err
		}
		q := side
		q.metric, q.aggregate = s.reach.metric, s.reach.aggregate
		quality, err := cc.groups(q)
		if err != nil {
			return "", err
		}
		sides[i] = "SELECT a.v AS v, b.v AS q FROM (" + main + ") a JOIN (" + quality + ") b ON a.grp = b.grp"
	}
	level := "(SELECT MAX(best) FROM (SELECT MIN(q) AS best FROM (" + sides[0] + ") UNION ALL SELECT MIN(q) FROM (" + sides[1] + ")))"
	if s.reach.times != 1 {
		level = sqlFloat(s.reach.times) + " * " + level
	}
	if s.reach.plus != 0 {
		level += " + " + sqlFloat(s.reach.plus)
	}
	var vals [2]string
	for i, side := range s.sides {
		vals[i] = "(SELECT " + sqlAgg[side.across] + "(v) FROM (" + sides[i] + ") WHERE q <= " + level + ")"
	}
	return "(" + combine(vals[0], s.op, vals[1]) + ")", nil
}

// acrossSQL reduces the groups of query g (columns v, grp, n_i, s_i for
// nkeys keys) to one number, NULL with fewer than minGroups groups.
func acrossSQL(g, across, having string, nkeys, minGroups int) (string, error) {
	v, err := acrossValue(g, across, having, nkeys)
	if err != nil || minGroups <= 0 {
		return v, err
	}
	return "(CASE WHEN (SELECT COUNT(*) FROM (" + g + ")) >= " + strconv.Itoa(minGroups) + " THEN " + v + " END)", nil
}

// acrossValue is acrossSQL without the count of groups.
func acrossValue(g, across, having string, nkeys int) (string, error) {
	cond := "1"
	if having != "" {
		e, err := parseExpect(having)
		if err != nil {
			return "", fmt.Errorf("having: %v", err)
		}
		cond = e.sql("v")
	}
	switch across {
	case "count": // NULL (no data) when there is no group at all
		return "(SELECT SUM(CASE WHEN " + cond + " THEN 1 ELSE 0 END) FROM (" + g + "))", nil
	case "at_min", "at_max":
		dir := " ASC"
		if across == "at_max" {
			dir = " DESC"
		}
		var order []string
		for i := 0; i < nkeys; i++ {
			order = append(order, fmt.Sprintf("n%d IS NULL, n%d%s, s%d%s", i, i, dir, i, dir))
		}
		return "(SELECT v FROM (" + g + ") WHERE " + cond + " ORDER BY " + strings.Join(order, ", ") + " LIMIT 1)", nil
	}
	return reduceSQL("SELECT v FROM ("+g+") WHERE "+cond, across), nil
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

// rangeRE recognises a filter value written as a comparison (the syntax of
// expect), as opposed to a parameter value to match.
var rangeRE = regexp.MustCompile(`^\s*(<|>|≤|≥|=|in\s*\[)`)

// rangeOf parses a comparison filter value; ok is false for a plain value.
func rangeOf(key string, x any) (e expectation, ok bool, err error) {
	s, isStr := x.(string)
	if !isStr || !rangeRE.MatchString(s) {
		return e, false, nil
	}
	e, err = parseExpect(s)
	if err != nil {
		return e, true, fmt.Errorf("filter %s: cannot read range %q; write e.g. \"<= 0.96\", \"> 2\", \"in [1, 3]\" or \"= 0.95 ± 0.01\"", key, s)
	}
	return e, true, nil
}

// sql is the condition that col satisfies e.
func (e expectation) sql(col string) string {
	if e.op == "in" {
		return col + " BETWEEN " + sqlFloat(e.lo) + " AND " + sqlFloat(e.hi)
	}
	return col + " " + e.op + " " + sqlFloat(e.lo)
}

func sqlFloat(x float64) string {
	switch {
	case math.IsInf(x, 1):
		return "9e999"
	case math.IsInf(x, -1):
		return "-9e999"
	}
	return strconv.FormatFloat(x, 'g', -1, 64)
}

// filter is the condition on run r of one filter key.
func (cc *compiler) filter(key string, v any) (string, error) {
	vals, err := filterValues(key, v)
	if err != nil {
		return "", err
	}
	switch key {
	case "grid", "method", "dataset":
		var qs []string
		for _, x := range vals {
			s, ok := x.(string)
			if _, isRange, _ := rangeOf(key, x); !ok || isRange {
				return "", fmt.Errorf("filter %s: want names, got %v", key, x)
			}
			qs = append(qs, sqlQuote(s))
			if key == "grid" { // stored as NAME or experiment/NAME
				qs = append(qs, sqlQuote(cc.experiment+"/"+s))
			}
		}
		return "r." + key + " IN (" + strings.Join(qs, ", ") + ")", nil
	case "split", "seed":
		var alts []string
		for _, x := range vals {
			e, isRange, err := rangeOf(key, x)
			switch n, isInt := x.(int64); {
			case err != nil:
				return "", err
			case isRange:
				alts = append(alts, e.sql("r."+key))
			case isInt:
				alts = append(alts, "r."+key+" = "+strconv.FormatInt(n, 10))
			default:
				return "", fmt.Errorf("filter %s: want integers or a range such as \"in [0, 2]\", got %v", key, x)
			}
		}
		return "(" + strings.Join(alts, " OR ") + ")", nil
	case "status", "profile":
		return "", fmt.Errorf("filter %s: claims see only the finished runs of the report's profile", key)
	}
	if name, ok := strings.CutPrefix(key, "metric:"); ok {
		return cc.metricFilter(key, name, vals)
	}
	name := strings.TrimPrefix(key, "param:")
	if name == "" {
		return "", fmt.Errorf("filter %q: empty parameter name", key)
	}
	if t, ok := cc.derived.transformed[name]; ok {
		return "", fmt.Errorf("filter %s: derived with transform = %q in Go, so a claim cannot filter on it", key, t)
	}
	if d := cc.derived.params[name]; d != nil {
		cte := "dparam_" + sqlIdent(d.Name)
		cc.ctes[cte] = d.Query
		digits := d.Digits
		if digits == 0 {
			digits = 3
		}
		return valueFilter(key, vals, cte+" f WHERE f.run_id = r.id", "f.value", "f.value",
			func(x float64) float64 { return digitsTol(x, digits) })
	}
	return valueFilter(key, vals, "run_params p WHERE p.run_id = r.id AND p.name = "+sqlQuote(name), "p.num", "p.value", relTol)
}

// valueFilter keeps the runs with a row in src (FROM … WHERE …, rows of run
// r) whose value is in one of the ranges or matches one of the values
// (numbers within tol, in column num; text in column text); "" keeps the
// runs without a row.
func valueFilter(key string, vals []any, src, num, text string, tol func(float64) float64) (string, error) {
	var alts []string
	absent := false
	for _, x := range vals {
		e, isRange, err := rangeOf(key, x)
		if err != nil {
			return "", err
		}
		if isRange {
			alts = append(alts, e.sql(num))
			continue
		}
		switch y := x.(type) {
		case string:
			if y == "" {
				absent = true
				continue
			}
			alts = append(alts, text+" = "+sqlQuote(y))
		case bool:
			alts = append(alts, text+" = "+sqlQuote(strconv.FormatBool(y)))
		case int64:
			alts = append(alts, numMatch(num, float64(y), tol(float64(y))))
		case float64:
			alts = append(alts, numMatch(num, y, tol(y)))
		default:
			return "", fmt.Errorf("filter %s: %v (%T) is not a string, boolean, number or range", key, x, x)
		}
	}
	var conds []string
	if len(alts) > 0 {
		conds = append(conds, "EXISTS (SELECT 1 FROM "+src+" AND ("+strings.Join(alts, " OR ")+"))")
	}
	if absent {
		conds = append(conds, "NOT EXISTS (SELECT 1 FROM "+src+")")
	}
	return "(" + strings.Join(conds, " OR ") + ")", nil
}

// metricFilter keeps the runs whose metric NAME (stored or derived) is in
// one of the ranges or equals one of the numbers given.
func (cc *compiler) metricFilter(key, name string, vals []any) (string, error) {
	if name == "" {
		return "", fmt.Errorf("filter %q: empty metric name", key)
	}
	if t, ok := cc.derived.transformed[name]; ok {
		return "", fmt.Errorf("filter %s: derived with transform = %q in Go, so a claim cannot filter on it", key, t)
	}
	var alts []string
	for _, x := range vals {
		e, isRange, err := rangeOf(key, x)
		if err != nil {
			return "", err
		}
		switch y := x.(type) {
		case string:
			if !isRange {
				return "", fmt.Errorf("filter %s: want a range such as \"< 0.001\" or a number, got %q", key, y)
			}
			alts = append(alts, e.sql("f.value"))
		case int64:
			alts = append(alts, numMatch("f.value", float64(y), relTol(float64(y))))
		case float64:
			alts = append(alts, numMatch("f.value", y, relTol(y)))
		default:
			return "", fmt.Errorf("filter %s: want a range such as \"< 0.001\" or a number, got %v", key, x)
		}
	}
	src := "metrics f WHERE f.run_id = r.id AND f.name = " + sqlQuote(name)
	if q, ok := cc.derived.metrics[name]; ok {
		cte := "derived_" + sqlIdent(name)
		cc.ctes[cte] = q
		src = cte + " f WHERE f.run_id = r.id"
	}
	return "EXISTS (SELECT 1 FROM " + src + " AND (" + strings.Join(alts, " OR ") + "))", nil
}

// relTol is the tolerance of a number written in a filter, so that 0.95
// matches the stored 0.95 whatever its last bit.
func relTol(x float64) float64 { return 1e-9 * math.Max(1, math.Abs(x)) }

// digitsTol is half a unit in the last of digits significant digits of x:
// the values that display as x.
func digitsTol(x float64, digits int) float64 {
	if x == 0 {
		return 0
	}
	return 0.5 * math.Pow(10, math.Floor(math.Log10(math.Abs(x)))-float64(digits-1))
}

func numMatch(col string, x, tol float64) string {
	return fmt.Sprintf("ABS(%s - %s) <= %s", col, sqlFloat(x), sqlFloat(tol))
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
