// Package report turns the results database into a paper's tables,
// figures and claim verdicts.
//
// A paper config (TOML) declares [[table]], [[figure]] and [[claim]]
// sections and a [report] section beside the runner's [[grid]] sections.
// Load (or Parse) first expands the grid language in them (templates,
// matrices, let values: package internal/gridlang), decoding the sections
// as the file written out would give them, then checks them in two steps:
// validation of every section (validate.go; unknown keys and bad values are reported
// with file:line, located by internal/tomlline), then the compilation of
// the claims to SQL (package claims). Render queries a results.Store and
// writes into one directory:
//
//   - Markdown, CSV and LaTeX tables: mean ± std over splits/seeds, ranks where
//     the paper ranks, and the paper's reported numbers beside ours with the
//     difference;
//   - figures as PNG, SVG or PDF, one file per [[figure]];
//   - leaderboards: mean-rank tables (kind = "mean_rank", rank.go) over
//     joined dimensions such as "method+grid", with cells of methods that
//     cannot run on a dataset marked "n/a" and why ([[report.not_applicable]]);
//   - claims.sql, every claim's query, and an index.md that shows everything
//     together, headed by the claim verdicts.
//
// # Figure kinds
//
// Each kind of figure is one entry of figureKinds (kinds.go): check
// validates a [[figure]] of the kind and fills in its defaults, build draws
// it from the runs of its grids. The kinds are line, scatter and band
// (a metric against a parameter or another metric, with error bars or a
// shaded band), heatmap (a metric over two categories, with a colour
// bar), pareto (cost against quality with the front drawn), trace (the
// optimiser's objective against iteration or time), matrix, curve, field
// and terms (one run's stored array per panel: a kernel matrix, a
// predictive curve over its training points, a 2-D field with its
// contour, the terms of a predictive variance), dots (categorical rows, one
// marker per series) and illustration (a paper's conceptual figure
// computed from first principles by package illustrations, not from
// runs). Any of them may be a grid of panels, on log axes.
//
// Report decides what to draw: which runs form a point, a series, a panel
// or a band, what the caption says, what could not be drawn and why.
// Package figures draws it (layout, legends, palette, ticks, encoding) and
// knows nothing of runs.
//
// # Claims
//
// A claim ([[claim]], package claims) is a number computed by one SQL query
// and judged against the paper's statement: reproduced or differs, and
// inconclusive when any run it reads did not converge. Render evaluates
// them first; the header of index.md counts the reproduction claims by
// verdict and the unconverged runs, in all and behind counted claims;
// sanity checks and diagnostics are listed apart and not counted. Every
// report's header also states the largest peak RSS of its done runs
// (x_peak_rss_bytes, claims.PeakRSS) and the run it came from. Derived
// values ([[report.derive]]) are computed by SQL at report time and
// attached to the runs, usable on axes, in tables and in claims.
//
// # The default report
//
// A config without [[table]] and [[figure]] sections (an ad-hoc sweep) gets
// the default report (defaultreport.go, defaultfigures.go), which answers
// "which method, at what cost" per dataset: test NLPD and RMSE against the
// effective number of inducing variables M (metric num_features, which
// every sparse method records; x_num_inducing on older databases; else the
// num_inducing or num_features parameter; the caption says which) with
// exact GPR as a dashed reference line (nlpd-vs-m-DATASET.png,
// rmse-vs-m-DATASET.png), a Pareto front of test NLPD against training CPU
// seconds (pareto-DATASET.png), the optimiser's objective against
// iteration for one run per method (trace-DATASET.png), the same metrics
// against any other numeric parameter that varies within a method, and
// summary.md/summary.csv with one row per configuration. Only parameters
// that vary within a method become axes, legend entries or columns; those
// that differ only between methods are listed once. Runs stored with
// x_converged = 0 are drawn hollow and counted. Legends sit below the plot
// in columns that fit its width. Every CSV leaves a missing value empty
// (Markdown shows "—"), so numeric columns parse as numbers.
//
// # Which runs
//
// With Options.Expected (what the current config expands to, from the
// runner), a report uses exactly those runs: runs of the same grids left by
// an older version of the config are ignored and counted in index.md.
// Without it, every run of the config's grids in the chosen profile.
//
// Nothing is passed off as something else: a reduced profile (e.g. "quick")
// is named in every table and figure title, an absent cell is shown as "—"
// with a footnote saying what is missing and how to get it, and the paper's
// own numbers appear only in columns labelled as the paper's. Only a config
// that cites a paper (paper numbers, figure or claim "paper" fields) speaks
// of "the paper" and of "ours".
//
// TestGoldenReports pins every file the fixture reports write
// (testdata/golden; -update rewrites them).
package report
