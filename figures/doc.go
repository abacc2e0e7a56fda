// Package figures turns the results database into a paper's tables and
// figures.
//
// A paper config (TOML) declares [[table]], [[figure]] and [[claim]]
// sections and a [report] section beside the runner's [[grid]] sections.
// LoadReport decodes and validates them (unknown keys and bad values are
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
// Nothing is passed off as something else: a reduced profile (e.g. "quick")
// is named in every table and figure title, an absent cell is shown as "—"
// with a footnote saying what is missing and how to get it, and the paper's
// own numbers appear only in columns labelled as the paper's.
package figures
