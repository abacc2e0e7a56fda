// Package claims is the claim language of a paper config: a [[claim]]
// states what the paper says as a number computed by SQL over the results
// database and the expectation it must meet; the report judges it.
//
// The steps are explicit. Spec is a [[claim]] as decoded from TOML;
// Spec.Check validates it without compiling (text, query or declarative
// form, kind, expect). Compile turns it into a Claim: the declarative form
// (compile.go) into one SQL query of one number and a query of the runs it
// reads, a raw query's runs_where into the query of the runs it declares.
// Claim.Eval runs the query in the report's profile and returns a Result:
//
//   - Reproduced or Differs as the number meets the expectation or not;
//   - Inconclusive when any run the claim reads is stored with
//     x_converged = 0 (the fit had not converged; NULL, a run without
//     training, counts as converged), with the verdict the number alone
//     gives in Result.Computed;
//   - NoData when nothing has run yet, QueryError when the SQL fails.
//
// A claim whose runs are unknown (a raw query without runs_where or
// runs_query) is judged with the note "convergence not checked", and one
// that reads runs stored before x_converged existed with "convergence not
// recorded". Convergence counts the unconverged runs of a whole report, and
// PeakRSS finds the largest peak memory of its runs.
//
// Derived values ([[report.derive]], Derive) are per-run metrics or
// parameters computed by SQL at report time: the report attaches their
// Values to its runs, and declarative claims filter on them or measure
// them (those computed with a transform in Go excepted). CheckDerived
// validates them.
//
// Every query sees only the finished runs of the report's profile: the
// runs table and the run_metrics and run_params_v views are shadowed by
// common table expressions restricted to it, unless the database already
// holds exactly the report's runs (subset). {profile} in a query is the
// quoted profile name. The kinds of claim (Kinds) are "reproduction"
// (counted in "N of M reproduced"), "sanity" (true by theory or by
// construction) and "diagnostic" (a check of our own setup); only the
// first is counted.
//
// # Declarative claims
//
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
// Filter keys are the run columns grid, method, dataset, split and seed, a
// parameter name (optionally written param:NAME, dataset parameters as
// dataset.NAME; a [[report.derive]] parameter computed in SQL, such as a
// product of parameters, is filtered by its unrounded value), or
// metric:NAME (a stored or derived metric of the run). A value may be a
// list (any of them), "" matches runs without the parameter, and a string in
// the syntax of expect is a range on the numeric value:
//
//	where = { eps_w = "<= 0.96", bandwidth = ">= 1.5", "metric:x_abs_gap" = "< 1e-3" }
//	where = { eps_w = "= 0.95 ± 0.01", split = "in [0, 2]" }
//
// A number matches a stored parameter to 1e-9 relative and a derived one to
// the derivation's digits. A range compares the parameter's numeric value;
// a list-valued parameter (eps = [0.007]) has none, so derive a number from
// it (SQL in [[report.derive]]) and filter on that. A side may set its own metric, aggregate, per,
// across and filters, and may itself be a ratio or difference of two
// selections (ratio = [{ difference = [A, B] }, { difference = [A, C] }]).
//
// per = [keys] groups runs by parameters or run columns (a run lacking a
// parameter is its own group); the aggregate is taken within each group and
// across reduces the groups: mean, median, min, max or sum of the group
// values, count (the number of groups), or at_min / at_max (the value of the
// group at the smallest / largest per key, e.g. the mean gap at the fewest
// features). having = "< 1e-3" keeps only the groups whose value satisfies
// it ("how many panels reach a gap of 1e-3": per = ["grid"], aggregate =
// "min", across = "count", having = "< 0.001"). With paired = true the two
// sides of a ratio or difference are compared within each group — groups
// matched by the values of their per keys, which may differ in name between
// the sides — and across reduces these comparisons ("median over M of VFF's
// gap ÷ IFF's at the same number of frequencies"). min_groups = N gives no
// data until there are at least N groups (pairs, when paired), counted
// before having: "VISH beats A-VFF on all 5 datasets" is not judged on 3.
//
// reach compares the two sides at a level of quality both attain, as in
// "SGPR ÷ IFF training time to reach the same gap":
//
//	metric = "train_seconds"
//	aggregate = "median"                            # per configuration
//	per = ["freqs_per_dim", "num_inducing"]
//	reach = { metric = "x_gap_per_n", times = 1.5 }  # or plus = 0.02
//	ratio = [{ method = "sgpr" }, { method = "iff" }]
//
// Each side's groups (configurations) get their aggregate of metric and their
// reach.aggregate (default mean) of reach.metric, lower being better; the
// level is the larger of the two sides' smallest such values, × times (or
// + plus); each side's number is the smallest (across = "min", the default,
// or "max") metric among its groups at or below the level. Groups of single
// runs (per = [..., "split", "seed"]) compare runs rather than
// configurations.
//
// Only finished runs of the report's profile are seen. The claim compiles to
// one SQL query (written to claims.sql beside index.md) and to the query of
// the runs its selections read; query = "..." remains for what this form
// cannot say, with runs_where or runs_query declaring its runs.
package claims
