package claims

import (
	"fmt"
	"slices"
	"strings"
)

// Spec is one [[claim]] as written: a statement of the paper with an
// automatic verdict from a SQL query over the results. Check validates it;
// Compile turns it into a Claim.
type Spec struct {
	Text  string `toml:"text"`
	Paper string `toml:"paper"`
	// Kind is "reproduction" (default: a statement of the paper that our
	// results could contradict; counted in "N of M reproduced") or "sanity"
	// (true by theory or by construction — a bound below what it bounds, the
	// optimiser preferring what it optimised; reported, not counted) or
	// "diagnostic" (a check of our own setup, not a statement of the paper:
	// convergence, the cause of a discrepancy; reported, not counted).
	Kind string `toml:"kind"`
	// Threshold says where the expectation's number comes from when the
	// paper gives none (shown beside the claim).
	Threshold string `toml:"threshold"`
	// PostHoc marks a claim added after its result was seen.
	PostHoc bool `toml:"post_hoc"`
	// Query is SQL returning one number; {profile} is replaced by the quoted
	// profile name of the report. Or the declarative form below (see the
	// package documentation): Metric, Aggregate and Where select runs and reduce one
	// metric to a number; Per, Across and Having reduce within and across
	// groups of runs; Ratio or Difference compare two such selections,
	// within each group when Paired.
	Query      string           `toml:"query"`
	Metric     string           `toml:"metric"`
	Aggregate  string           `toml:"aggregate"`
	Per        []string         `toml:"per"`
	Across     string           `toml:"across"`
	Having     string           `toml:"having"`
	Paired     bool             `toml:"paired"`
	MinGroups  int              `toml:"min_groups"`
	Reach      map[string]any   `toml:"reach"`
	Where      map[string]any   `toml:"where"`
	Ratio      []map[string]any `toml:"ratio"`
	Difference []map[string]any `toml:"difference"`
	Expect     string           `toml:"expect"` // e.g. "< 0.01", ">= 2", "in [1, 3]", "= 5 ± 0.1"
	// RunsWhere (filters in the syntax of where) or RunsQuery (SQL
	// returning run ids) declares the runs a raw Query reads, so that its
	// verdict can say whether their fits converged; a declarative claim's
	// runs are those of its selections.
	RunsWhere map[string]any `toml:"runs_where"`
	RunsQuery string         `toml:"runs_query"`
}

// Kinds are the kinds of claim: only reproduction claims are counted.
// A sanity check holds by theory or by construction; a diagnostic checks our
// own setup (did the optimiser converge, where does a floor come from).
var Kinds = []string{"reproduction", "sanity", "diagnostic"}

// Claim is a claim ready to judge: its Spec with the SQL compiled from it.
type Claim struct {
	Spec
	// SQL returns the claim's one number: Spec.Query, or the declarative
	// form compiled.
	SQL string
	// Runs is SQL returning the ids of the runs the claim reads, whose
	// convergence decides whether its verdict is inconclusive; "" when a raw
	// query does not declare them.
	Runs string

	expect expectation
}

// FieldError is a problem with one key of a claim or derived value: Key
// is the path below it ("" for the entry itself, ".expect", "[2].name").
type FieldError struct {
	Key, Msg string
}

func (e FieldError) Error() string { return e.Msg }

func fieldErr(key, format string, args ...any) FieldError {
	return FieldError{Key: key, Msg: fmt.Sprintf(format, args...)}
}

// declarative reports whether the claim uses the declarative form.
func (s *Spec) declarative() bool {
	return s.Metric != "" || s.Aggregate != "" || len(s.Where) > 0 || len(s.Ratio) > 0 || len(s.Difference) > 0 ||
		len(s.Per) > 0 || s.Across != "" || s.Having != "" || s.Paired || s.Reach != nil || s.MinGroups != 0
}

// Check validates what can be validated without compiling: the claim has
// text, a query or the declarative form (not both), declared runs only for
// a query, a known kind (default "reproduction") and a readable expect.
func (s *Spec) Check() []FieldError {
	var errs []FieldError
	if s.Text == "" {
		errs = append(errs, fieldErr("", "a claim needs text"))
	}
	query := strings.TrimSpace(s.Query)
	switch {
	case s.declarative() && query != "":
		errs = append(errs, fieldErr(".query", "give query (SQL) or the declarative keys metric/where/per/ratio/difference, not both"))
	case s.declarative() && (s.RunsWhere != nil || s.RunsQuery != ""):
		errs = append(errs, fieldErr(".runs_where", "a declarative claim reads the runs of its selections; runs_where and runs_query declare the runs of a query = \"…\" claim"))
	case s.declarative():
	case query == "":
		errs = append(errs, fieldErr(".query", "a claim needs a query (SQL returning one number) or metric = \"NAME\" with where/ratio/difference"))
	case s.RunsWhere != nil && s.RunsQuery != "":
		errs = append(errs, fieldErr(".runs_query", "give runs_where (filters) or runs_query (SQL returning run ids), not both"))
	}
	if s.Kind == "" {
		s.Kind = "reproduction"
	}
	if !slices.Contains(Kinds, s.Kind) {
		errs = append(errs, fieldErr(".kind", "kind %q is not one of: %s", s.Kind, strings.Join(Kinds, ", ")))
	}
	if _, err := parseExpect(s.Expect); err != nil {
		errs = append(errs, fieldErr(".expect", "%v", err))
	}
	return errs
}

// Compile turns a checked claim into SQL: the declarative form into a
// query of one number and the query of the runs its selections read, a
// raw query's runs_where into the query of the runs it declares.
// experiment is the config's name (grids are stored as NAME or
// experiment/NAME); derived are its [[report.derive]] values, which the
// declarative form and runs_where may use.
func Compile(s Spec, experiment string, derived []Derive) (Claim, []FieldError) {
	c := Claim{Spec: s, SQL: s.Query}
	c.expect, _ = parseExpect(s.Expect)
	var err error
	switch {
	case s.declarative() && (strings.TrimSpace(s.Query) != "" || s.RunsWhere != nil || s.RunsQuery != ""):
		// Check says which key to drop.
	case s.declarative():
		if c.SQL, c.Runs, err = compileDeclarative(s, experiment, derived); err != nil {
			return c, []FieldError{fieldErr("", "%v", err)}
		}
	case strings.TrimSpace(s.Query) == "", s.RunsWhere != nil && s.RunsQuery != "":
		// Check says what is missing or given twice.
	case s.RunsWhere != nil:
		if c.Runs, err = compileRunsWhere(s.RunsWhere, experiment, derived); err != nil {
			return c, []FieldError{fieldErr(".runs_where", "%v", err)}
		}
	default:
		c.Runs = strings.TrimSpace(s.RunsQuery)
	}
	return c, nil
}
