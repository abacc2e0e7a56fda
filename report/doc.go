// Package figures turns the results database into a paper's tables and
// figures.
//
// A paper config (TOML) declares [[table]], [[figure]] and [[claim]]
// sections and a [report] section beside the runner's [[grid]] sections.
// Load decodes and validates them (unknown keys and bad values are
// reported with file:line); Render queries a results.Store and writes
//
//   - Markdown, CSV and LaTeX tables: mean ± std over splits/seeds, ranks where
//     the paper ranks, and the paper's reported numbers beside ours with the
//     difference;
//   - PNG and SVG figures drawn with gonum/plot: line plots with error bars,
//     shaded bands, scatter plots, heatmaps with a colour bar and training
//     traces, Pareto figures (cost against quality with the front drawn),
//     optionally as a grid of panels and on log axes;
//   - leaderboards: mean-rank tables (kind = "mean_rank", rank.go) over
//     joined dimensions such as "method+grid", with cells of methods that
//     cannot run on a dataset marked "n/a" and why ([[report.not_applicable]]);
//   - an index.md that shows everything together with the claim verdicts.
//
// A claim ([[claim]], claim.go, claimform.go) is a number computed by one
// SQL query and judged against the paper's statement: reproduced or
// differs, and inconclusive when any run it reads is stored with
// x_converged = 0 (the fit had not converged; NULL, a run without
// training, counts as converged). A declarative claim's runs are those of
// its selections; a raw-SQL claim declares them (runs_where filters or a
// runs_query); one that does not is judged with the note "convergence not
// checked", and a run without x_converged (stored before it) with
// "convergence not recorded". The header of index.md counts the
// reproduction claims by verdict and the unconverged runs, in all and
// behind counted claims; sanity checks and diagnostics are listed apart
// and not counted.
//
// A config without [[table]] and [[figure]] sections (an ad-hoc sweep) gets
// the default report (defaultreport.go, defaultfigures.go), which answers
// "which method, at what cost" per dataset: test NLPD and RMSE against the
// effective number of inducing variables M (metric num_features, which
// every sparse method records; x_num_inducing on older databases; else
// the num_inducing or num_features parameter; the caption says which) with exact GPR as a dashed reference line
// (nlpd-vs-m-DATASET.png, rmse-vs-m-DATASET.png), a Pareto front of test
// NLPD against training CPU seconds (pareto-DATASET.png), the optimiser's
// objective against iteration for one run per method (trace-DATASET.png),
// the same metrics against any other numeric parameter that varies within
// a method, and summary.md/summary.csv with one row per configuration.
// Only parameters that vary within a method become axes, legend entries or
// columns; those that differ only between methods are listed once. Runs
// stored with x_converged = 0 are drawn hollow and counted. Legends sit
// below the plot in columns that fit its width. Every CSV leaves a missing
// value empty (Markdown shows "—"), so numeric columns parse as numbers.
//
// Nothing is passed off as something else: a reduced profile (e.g. "quick")
// is named in every table and figure title, an absent cell is shown as "—"
// with a footnote saying what is missing and how to get it, and the paper's
// own numbers appear only in columns labelled as the paper's. Only a config
// that cites a paper (paper numbers, figure or claim "paper" fields) speaks
// of "the paper" and of "ours".
package report
