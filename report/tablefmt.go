package report

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"math"
	"strconv"
	"strings"
)

func dimLabel(dim string) string {
	if name, ok := strings.CutPrefix(dim, "param:"); ok {
		return name
	}
	if name, ok := strings.CutPrefix(dim, "metric:"); ok {
		return name
	}
	return dim
}

// markdown renders the table, its footnotes and the paper comparison.
func (t *builtTable) markdown(profile string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "### %s\n\n", t.Title)
	if t.Spec.Caption != "" {
		fmt.Fprintf(&b, "%s\n\n", t.Spec.Caption)
	}
	if t.Spec.Kind == "mean_rank" {
		fmt.Fprintf(&b, "Ours (%s profile): rank by the mean %s over splits and seeds within each %s (1 = best, %s is better; ties share the mean rank), then each row's mean rank over the %ss where it was ranked; best in bold", profile, t.metricNames(), dimLabel(t.Spec.Columns), t.rankDirection, dimLabel(t.Spec.Columns))
	} else {
		fmt.Fprintf(&b, "Ours (%s profile), %s of %s over splits and seeds", profile, aggName(t.Spec.Aggregate), t.metricNames())
	}
	if t.Spec.Rank != "" {
		fmt.Fprintf(&b, "; (n) is the rank, %s is better, best in bold", t.Spec.Rank)
	}
	b.WriteString(".\n\n")
	fmt.Fprintf(&b, "| %s \\ %s |", mdEscape(dimLabel(t.Spec.Rows)), mdEscape(dimLabel(t.Spec.Columns)))
	for _, c := range t.Cols {
		fmt.Fprintf(&b, " %s |", mdEscape(t.label(c)))
	}
	b.WriteString("\n|---|")
	for range t.Cols {
		b.WriteString("---:|")
	}
	b.WriteString("\n")
	for _, r := range t.Rows {
		fmt.Fprintf(&b, "| %s |", mdEscape(t.label(r)))
		for _, col := range t.Cols {
			c := t.cell(r, col)
			s := t.cellText(c)
			if c.Best {
				s = "**" + s + "**"
			}
			if c.Rank > 0 {
				s += " (" + fmtRank(c.Rank) + ")"
			}
			if c.Note > 0 {
				s += fmt.Sprintf(" [%d]", c.Note)
			}
			fmt.Fprintf(&b, " %s |", s)
		}
		b.WriteString("\n")
	}
	if t.MeanRank != nil && t.Spec.RankAcross == "columns" {
		b.WriteString("| *mean rank* |")
		for _, c := range t.Cols {
			fmt.Fprintf(&b, " %s |", fmtMeanRank(t.MeanRank, c))
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
	if t.MeanRank != nil && t.Spec.RankAcross == "rows" {
		b.WriteString("Mean rank: ")
		var parts []string
		for _, r := range t.Rows {
			if _, ok := t.MeanRank[r]; ok {
				parts = append(parts, fmt.Sprintf("%s %s", mdEscape(t.label(r)), fmtMeanRank(t.MeanRank, r)))
			}
		}
		b.WriteString(strings.Join(parts, ", ") + ".\n\n")
	}
	for i, f := range t.Footnotes {
		fmt.Fprintf(&b, "[%d] %s  \n", i+1, f)
	}
	if len(t.Footnotes) > 0 {
		b.WriteString("\n")
	}
	if len(t.Paper) > 0 {
		b.WriteString(t.paperMarkdown(profile))
	}
	return b.String()
}

func (t *builtTable) paperMarkdown(profile string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "**Paper vs ours** (%s):\n\n", t.metricNames())
	fmt.Fprintf(&b, "| %s | %s | paper (reported) | ours (%s profile) | ours − paper | relative |\n|---|---|---:|---:|---:|---:|\n",
		mdEscape(dimLabel(t.Spec.Rows)), mdEscape(dimLabel(t.Spec.Columns)), profile)
	for _, p := range t.Paper {
		paper := fmtNum(p.Value, t.digits)
		if p.Std != nil {
			paper += " ± " + fmtNum(*p.Std, t.digits)
		}
		if p.Note != "" {
			paper += " (" + mdEscape(p.Note) + ")"
		}
		ours := t.cellText(p.Ours)
		if p.Ours.Note > 0 {
			ours += fmt.Sprintf(" [%d]", p.Ours.Note)
		}
		rel := "—"
		if !math.IsNaN(p.Rel) {
			rel = fmt.Sprintf("%+.1f%%", 100*p.Rel)
		}
		diff := "—"
		if !math.IsNaN(p.Diff) {
			diff = signed(fmtNum(p.Diff, t.digits), p.Diff)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", mdEscape(t.label(p.Row)), mdEscape(t.label(p.Column)),
			paper, ours, diff, rel)
	}
	b.WriteString("\n")
	return b.String()
}

func signed(s string, v float64) string {
	if v >= 0 && !strings.HasPrefix(s, "+") {
		return "+" + s
	}
	return s
}

func fmtMeanRank(m map[string]float64, k string) string {
	r, ok := m[k]
	if !ok {
		return "—"
	}
	return strconv.FormatFloat(r, 'f', 2, 64)
}

func (t *builtTable) metricNames() string {
	var ls []string
	for _, m := range t.Spec.Metrics {
		ls = append(ls, t.label(m))
	}
	return strings.Join(ls, ", ")
}

func aggName(a string) string {
	if a == "mean_std" {
		return "mean ± sample std"
	}
	return a
}

func mdEscape(s string) string { return strings.ReplaceAll(s, "|", "\\|") }

// csv renders one line per cell with every statistic and the paper's number.
func (t *builtTable) csv(profile string) ([]byte, error) {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	paper := map[[2]string]paperRow{}
	for _, p := range t.Paper {
		paper[[2]string{p.Row, p.Column}] = p
	}
	f := func(v float64) string {
		if math.IsNaN(v) {
			return ""
		}
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	if err := w.Write([]string{dimLabel(t.Spec.Rows), dimLabel(t.Spec.Columns), "profile", "n", "value", "mean", "std",
		"median", "min", "max", "rank", "paper_value", "paper_std", "ours_minus_paper", "note"}); err != nil {
		return nil, err
	}
	for _, r := range t.Rows {
		for _, col := range t.Cols {
			c := t.cell(r, col)
			rank := ""
			if c.Rank > 0 {
				rank = fmtRank(c.Rank)
			}
			pv, pstd, diff := "", "", ""
			if p, ok := paper[[2]string{r, col}]; ok {
				pv, diff = f(p.Value), f(p.Diff)
				if p.Std != nil {
					pstd = f(*p.Std)
				}
			}
			note := ""
			if c.Note > 0 {
				note = t.Footnotes[c.Note-1]
			}
			n := strconv.Itoa(c.Stats.N)
			if err := w.Write([]string{r, col, profile, n, f(c.Value), f(c.Stats.Mean), f(c.Stats.Std), f(c.Stats.Median),
				f(c.Stats.Min), f(c.Stats.Max), rank, pv, pstd, diff, note}); err != nil {
				return nil, err
			}
		}
	}
	w.Flush()
	return buf.Bytes(), w.Error()
}

// latex renders a booktabs table of ours and, when given, a second one with
// the paper's numbers beside ours.
func (t *builtTable) latex(profile string) string {
	var b strings.Builder
	num := func(c *cell) string {
		if math.IsNaN(c.Value) {
			s := "---"
			if c.Note > 0 {
				s += fmt.Sprintf("\\textsuperscript{%d}", c.Note)
			}
			return s
		}
		s := fmtNum(c.Value, t.digits)
		if t.Spec.Aggregate == "mean_std" {
			s = fmtNum(c.Stats.Mean, t.digits) + " $\\pm$ " + fmtNum(c.Stats.Std, t.digits)
		}
		if c.Best {
			s = "\\textbf{" + s + "}"
		}
		if c.Rank > 0 {
			s += " (" + fmtRank(c.Rank) + ")"
		}
		if c.Note > 0 {
			s += fmt.Sprintf("\\textsuperscript{%d}", c.Note)
		}
		return s
	}
	fmt.Fprintf(&b, "%% %s — generated by sgplab from the results database (%s profile).\n", t.Title, profile)
	b.WriteString("\\begin{table}[t]\n\\centering\n")
	fmt.Fprintf(&b, "\\caption{%s}\n\\label{tab:%s}\n", texEscape(t.Title), texEscape(t.Spec.Name))
	fmt.Fprintf(&b, "\\begin{tabular}{l%s}\n\\toprule\n", strings.Repeat("r", len(t.Cols)))
	b.WriteString(texEscape(dimLabel(t.Spec.Rows)))
	for _, c := range t.Cols {
		b.WriteString(" & " + texEscape(t.label(c)))
	}
	b.WriteString(" \\\\\n\\midrule\n")
	for _, r := range t.Rows {
		b.WriteString(texEscape(t.label(r)))
		for _, col := range t.Cols {
			b.WriteString(" & " + num(t.cell(r, col)))
		}
		b.WriteString(" \\\\\n")
	}
	if t.MeanRank != nil && t.Spec.RankAcross == "columns" {
		b.WriteString("\\midrule\nmean rank")
		for _, c := range t.Cols {
			b.WriteString(" & " + strings.ReplaceAll(fmtMeanRank(t.MeanRank, c), "—", "---"))
		}
		b.WriteString(" \\\\\n")
	}
	b.WriteString("\\bottomrule\n\\end{tabular}\n")
	if len(t.Footnotes) > 0 {
		b.WriteString("\\par\\smallskip\\footnotesize\n")
		for i, f := range t.Footnotes {
			fmt.Fprintf(&b, "\\textsuperscript{%d}%s\\\\\n", i+1, texEscape(f))
		}
	}
	b.WriteString("\\end{table}\n")
	if len(t.Paper) > 0 {
		b.WriteString("\n\\begin{table}[t]\n\\centering\n")
		fmt.Fprintf(&b, "\\caption{%s: the paper's reported numbers beside ours (%s profile)}\n", texEscape(t.Title), profile)
		b.WriteString("\\begin{tabular}{llrrr}\n\\toprule\n")
		fmt.Fprintf(&b, "%s & %s & paper (reported) & ours & ours $-$ paper \\\\\n\\midrule\n",
			texEscape(dimLabel(t.Spec.Rows)), texEscape(dimLabel(t.Spec.Columns)))
		for _, p := range t.Paper {
			paper := fmtNum(p.Value, t.digits)
			if p.Std != nil {
				paper += " $\\pm$ " + fmtNum(*p.Std, t.digits)
			}
			diff := "---"
			if !math.IsNaN(p.Diff) {
				diff = signed(fmtNum(p.Diff, t.digits), p.Diff)
			}
			fmt.Fprintf(&b, "%s & %s & %s & %s & %s \\\\\n", texEscape(t.label(p.Row)), texEscape(t.label(p.Column)),
				paper, num(p.Ours), diff)
		}
		b.WriteString("\\bottomrule\n\\end{tabular}\n\\end{table}\n")
	}
	return b.String()
}

var texReplacer = strings.NewReplacer(
	`\`, `\textbackslash{}`, `&`, `\&`, `%`, `\%`, `$`, `\$`, `#`, `\#`, `_`, `\_`,
	`{`, `\{`, `}`, `\}`, `~`, `\textasciitilde{}`, `^`, `\textasciicircum{}`,
	"±", `$\pm$`, "—", `---`, "−", `$-$`, "∈", `$\in$`,
)

func texEscape(s string) string { return texReplacer.Replace(s) }
