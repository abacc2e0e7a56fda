package report

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"sgplab/claims"
	"sgplab/internal/anyconv"
	"sgplab/results"
)

// Options tune Render.
type Options struct {
	// Profile selects the runs to report: "quick" or "full" (runs stored
	// with an empty profile count as full). Empty picks "full" when any full
	// run finished and "quick" otherwise.
	Profile string
	// Formats of the figures: any of png, svg, pdf; default png and svg.
	Formats []string
	// Expected, when set, is what the current version of the config expands
	// to. The report then uses exactly those runs: runs of the same grid
	// names left in the database by an older version of the config (a value
	// edited, a grid reduced) are ignored by tables, figures, derived values
	// and claims alike, and index.md counts them. Nil uses every run of the
	// config's grids.
	Expected *Expected
}

// Expected lists the runs a config expands to. The cmd layer fills it from
// the runner's grid expansion; figures does not import the runner.
type Expected struct {
	// Grids are the names of every [[grid]] of the config.
	Grids []string
	// IDs maps a profile ("full", "quick") to the ids of the runs the config
	// expands to under it.
	IDs map[string][]string
	// DBFlag is appended to the commands index.md suggests, e.g.
	// "--db shards/all.db" when the database is not the config's default.
	DBFlag string
	// Datasets maps a profile to the datasets of each grid's runs under it,
	// so that a table cell a reduced profile does not run (a dataset it
	// leaves out, a grid it skips) says so instead of pointing at a command
	// that would not run it. Nil: not known.
	Datasets map[string]map[string][]string
}

// Coverage says how much of the current config a report's database holds.
type Coverage struct {
	Profile  string
	Expected int // runs the config expands to for Profile
	Done     int
	Failed   int
	// Unfinished runs are stored as running or interrupted.
	Unfinished int
	// Missing runs are not in the database yet.
	Missing int
	// Stale runs belong to the config's grids and to Profile but the
	// current config no longer expands to them; the report ignores them.
	Stale int
}

// Summary says what Render wrote and what it found.
type Summary struct {
	Dir      string
	Profile  string   // the profile reported
	Files    []string // every file written, in order
	Claims   []claims.Result
	Missing  int      // table cells without data
	Warnings []string // figure series or points that could not be drawn, etc.
	// Runs is set when Options.Expected was: the runs the report used.
	Runs *Coverage
}

// Render draws every table, figure and claim of spec from the results in
// store into outDir (created if needed; conventionally out/<spec.Name>).
func Render(spec Spec, store *results.Store, outDir string, opts Options) (Summary, error) {
	if store == nil {
		return Summary{}, errors.New("report: Render needs a results store")
	}
	if opts.Expected == nil {
		return render(spec, store, store.Path(), outDir, opts, nil)
	}
	cov, ids, err := coverage(spec, store, opts)
	if err != nil {
		return Summary{}, err
	}
	opts.Profile = cov.Profile
	// Render from a copy holding only the expected runs, so that every
	// query, the SQL of claims and derived values included, sees only them.
	// An empty database needs no copy.
	q := store
	_, rows, err := store.Query("SELECT EXISTS (SELECT 1 FROM runs)")
	if err != nil {
		return Summary{}, fmt.Errorf("report: %w", err)
	}
	if len(rows) == 1 && anyconv.Int64(rows[0][0]) != 0 {
		sub, err := store.Subset(ids)
		if err != nil {
			return Summary{}, fmt.Errorf("report: %w", err)
		}
		defer sub.Close()
		q = sub
	}
	sum, err := render(spec, q, store.Path(), outDir, opts, cov)
	sum.Runs = cov
	return sum, err
}

// coverage counts the expected runs of the report's profile by status and
// the stale runs of the config's grids, and returns the ids to report on.
func coverage(spec Spec, store *results.Store, opts Options) (*Coverage, []string, error) {
	exp := opts.Expected
	profile := opts.Profile
	switch profile {
	case "", "quick", "full":
	default:
		return nil, nil, fmt.Errorf("report: unknown profile %q; valid: quick, full", profile)
	}
	var all []string
	for _, p := range sortedKeys(exp.IDs) {
		all = append(all, exp.IDs[p]...)
	}
	status, err := store.Statuses(all)
	if err != nil {
		return nil, nil, fmt.Errorf("report: %w", err)
	}
	if profile == "" {
		// As pickProfile, over the current config's runs only: full when
		// any full run finished, else quick when any quick one did.
		profile = "full"
		if !anyDone(exp.IDs["full"], status) && anyDone(exp.IDs["quick"], status) {
			profile = "quick"
		}
	}
	ids := exp.IDs[profile]
	cov := &Coverage{Profile: profile, Expected: len(ids)}
	want := make(map[string]bool, len(ids))
	for _, id := range ids {
		want[id] = true
		switch status[id] {
		case "":
			cov.Missing++
		case results.StatusDone:
			cov.Done++
		case results.StatusFailed:
			cov.Failed++
		default:
			cov.Unfinished++
		}
	}
	stored, err := store.GridRuns(spec.Name, exp.Grids)
	if err != nil {
		return nil, nil, fmt.Errorf("report: %w", err)
	}
	for _, r := range stored {
		if profileName(r.Profile) == profile && !want[r.ID] {
			cov.Stale++
		}
	}
	return cov, ids, nil
}

func anyDone(ids []string, status map[string]string) bool {
	for _, id := range ids {
		if status[id] == results.StatusDone {
			return true
		}
	}
	return false
}

func render(spec Spec, q querier, dbName, outDir string, opts Options, cov *Coverage) (Summary, error) {
	formats := opts.Formats
	if len(formats) == 0 {
		formats = []string{"png", "svg"}
	}
	for _, f := range formats {
		if f != "png" && f != "svg" && f != "pdf" {
			return Summary{}, fmt.Errorf("report: unknown figure format %q; valid: png, svg, pdf", f)
		}
	}
	switch opts.Profile {
	case "", "quick", "full":
	default:
		return Summary{}, fmt.Errorf("report: unknown profile %q; valid: quick, full", opts.Profile)
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return Summary{}, fmt.Errorf("report: %w", err)
	}
	// Load every grid used once.
	var grids []string
	for _, t := range spec.Tables {
		grids = append(grids, t.GridSet...)
	}
	for _, f := range spec.Figures {
		grids = append(grids, f.GridSet...)
	}
	grids = orderValues(grids, nil)
	all, err := loadRuns(q, spec.Name, grids)
	if err != nil {
		return Summary{}, err
	}
	byGrid := map[string][]*run{}
	for _, r := range all {
		g := strings.TrimPrefix(r.Grid, spec.Name+"/")
		byGrid[g] = append(byGrid[g], r)
	}
	runsOf := func(gs []string) []*run {
		var out []*run
		for _, g := range gs {
			out = append(out, byGrid[g]...)
		}
		return out
	}
	rc := &renderCtx{spec: &spec, profile: opts.Profile, labels: spec.Report.Labels, db: displayPath(dbName), cov: cov}
	if opts.Expected != nil {
		rc.dbFlag = opts.Expected.DBFlag
		rc.datasets = opts.Expected.Datasets
	}
	if rc.profile == "" {
		rc.profile = pickProfile(all)
	}
	if err := applyDerived(spec.Report.Derive, q, rc.profile, rc.cov != nil, all); err != nil {
		return Summary{}, err
	}
	sum := Summary{Dir: outDir, Profile: rc.profile}
	write := func(name string, data []byte) error {
		p := filepath.Join(outDir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return fmt.Errorf("report: %w", err)
		}
		sum.Files = append(sum.Files, p)
		return nil
	}

	// Claims first: their verdicts head the report.
	verdicts := make([]claims.Result, len(spec.Claims))
	for i, c := range spec.Claims {
		verdicts[i] = c.Eval(q, rc.profile, rc.cov != nil)
	}
	var index strings.Builder
	rc.writeIndexHead(&index)
	rss, err := claims.PeakRSS(q, spec.Name, spec.Grids, rc.profile, rc.cov != nil)
	if err != nil {
		return sum, err
	}
	writeIndexPeakRSS(&index, rss)
	if len(spec.Claims) > 0 {
		conv, err := claims.Convergence(q, spec.Name, spec.Grids, rc.profile, rc.cov != nil)
		if err != nil {
			return sum, err
		}
		writeIndexVerdicts(&index, spec.Claims, verdicts, conv)
	}
	writeIndexDerived(&index, spec.Report.Derive)
	if len(spec.Tables) > 0 {
		index.WriteString("## Tables\n\n")
	}
	for _, ts := range spec.Tables {
		rc.grids = ts.GridSet
		t := buildTable(ts, runsOf(ts.GridSet), rc)
		for _, c := range t.Cells {
			if c.Stats.N == 0 && !c.NA {
				sum.Missing++
			}
		}
		md := t.markdown(rc.profile)
		csvData, err := t.csv(rc.profile)
		if err != nil {
			return sum, fmt.Errorf("report: table %s: %w", ts.Name, err)
		}
		for _, f := range []struct {
			ext  string
			data []byte
		}{{"md", []byte(md)}, {"csv", csvData}, {"tex", []byte(t.latex(rc.profile))}} {
			if err := write(ts.Name+"."+f.ext, f.data); err != nil {
				return sum, err
			}
		}
		index.WriteString(md)
		fmt.Fprintf(&index, "Files: [%[1]s.md](%[1]s.md), [%[1]s.csv](%[1]s.csv), [%[1]s.tex](%[1]s.tex)\n\n", ts.Name)
	}
	if len(spec.Figures) > 0 {
		index.WriteString("## Figures\n\n")
	}
	for _, fs := range spec.Figures {
		rc.grids = fs.GridSet
		fig, err := figureKinds[fs.Kind].build(fs, runsOf(fs.GridSet), q, rc)
		if err != nil {
			return sum, fmt.Errorf("report: figure %s: %w", fs.Name, err)
		}
		for _, format := range formats {
			data, err := fig.Encode(format)
			if err != nil {
				return sum, fmt.Errorf("report: figure %s: %w", fs.Name, err)
			}
			if err := write(fs.Name+"."+format, data); err != nil {
				return sum, err
			}
		}
		for _, w := range fig.warnings {
			sum.Warnings = append(sum.Warnings, fs.Name+": "+w)
		}
		rc.writeIndexFigure(&index, fs, fig, formats)
	}
	if len(spec.Tables) == 0 && len(spec.Figures) == 0 && opts.Expected != nil {
		warnings, err := rc.writeDefault(q, spec.Name, opts.Expected.Grids, formats, write, &index)
		if err != nil {
			return sum, err
		}
		sum.Warnings = append(sum.Warnings, warnings...)
	}
	if len(spec.Claims) > 0 {
		var sqlFile strings.Builder
		for i, c := range spec.Claims {
			fmt.Fprintf(&sqlFile, "-- claim %d (%s): %s\n%s;\n\n", i+1, c.Kind, oneLine(c.Text), strings.TrimSpace(c.SQL))
			if r := verdicts[i]; len(r.Unconverged) > 0 {
				fmt.Fprintf(&sqlFile, "-- claim %d is inconclusive: %d of the %d runs it reads did not converge (x_converged = 0). Its runs:\n%s;\n\n",
					i+1, len(r.Unconverged), r.Runs, claims.ConvergenceQuery(c.Runs))
			}
		}
		sum.Claims = append(sum.Claims, verdicts...)
		writeClaims(&index, spec.Claims, verdicts, rc.profile)
		if err := write("claims.sql", []byte(sqlFile.String())); err != nil {
			return sum, err
		}
	}
	if len(sum.Warnings) > 0 {
		index.WriteString("## Warnings\n\n")
		for _, w := range sum.Warnings {
			fmt.Fprintf(&index, "- %s\n", w)
		}
		index.WriteString("\n")
	}
	if err := write("index.md", []byte(index.String())); err != nil {
		return sum, err
	}
	return sum, nil
}

// citesPaper reports whether the config compares with a paper: any table
// cell, figure or claim carries the paper's number or words. Only then do
// the report's texts speak of "the paper" and of "ours".
func (s *Spec) citesPaper() bool {
	for _, t := range s.Tables {
		if len(t.Paper) > 0 {
			return true
		}
	}
	for _, f := range s.Figures {
		if f.Paper != "" {
			return true
		}
	}
	for _, c := range s.Claims {
		if c.Paper != "" {
			return true
		}
	}
	return false
}

// pickProfile prefers full runs when any finished.
func pickProfile(runs []*run) string {
	quick := false
	for _, r := range runs {
		if r.Status != results.StatusDone {
			continue
		}
		if profileName(r.Profile) == "full" {
			return "full"
		}
		quick = true
	}
	if quick {
		return "quick"
	}
	return "full"
}

// renderCtx carries what every table and figure needs.
type renderCtx struct {
	spec    *Spec
	profile string
	labels  map[string]string
	db      string
	grids   []string  // grids of the table or figure being built
	cov     *Coverage // nil when the report uses every run of its grids
	dbFlag  string    // e.g. "--db x.db", for the commands index.md suggests
	// datasets: profile → grid → datasets the profile runs (Expected.Datasets).
	datasets map[string]map[string][]string
}

// profileRuns reports whether the profile runs dataset in any of the
// current grids; known is false when the report was not told.
func (rc *renderCtx) profileRuns(profile, dataset string) (runs, known bool) {
	byGrid, ok := rc.datasets[profile]
	if !ok {
		return false, false
	}
	for _, g := range rc.grids {
		if slices.Contains(byGrid[g], dataset) {
			return true, true
		}
	}
	return false, true
}

// gridOutsideProfile says, for an empty cell of a table with a grid row or
// column, that the reduced profile leaves that grid (or that grid's dataset)
// out while the full profile runs it; "" when it does not, or when the cell
// has no grid of its own. A profile can skip a grid or narrow its datasets,
// and pointing such a cell at the reduced profile's command would promise
// runs it never makes.
func (rc *renderCtx) gridOutsideProfile(rowDim, rv, colDim, cv, dataset string) string {
	grid := ""
	switch {
	case rowDim == "grid":
		grid = rv
	case colDim == "grid":
		grid = cv
	default:
		return ""
	}
	byGrid, known := rc.datasets[rc.profile]
	full := rc.datasets["full"][grid]
	if !known || len(full) == 0 {
		return ""
	}
	ran := byGrid[grid]
	switch {
	case dataset == "" && len(ran) == 0:
		return fmt.Sprintf("grid %s is not in the %s profile (its note says why); the full profile runs it: `sgplab run %s`", grid, rc.profile, rc.spec.File)
	case dataset != "" && !slices.Contains(ran, dataset) && slices.Contains(full, dataset):
		return fmt.Sprintf("grid %s on dataset %s is not in the %s profile (its note says why); the full profile runs it: `sgplab run %s`", grid, dataset, rc.profile, rc.spec.File)
	}
	return ""
}

// usable: a done run of the reported profile. When the report is limited
// to the config's current run ids (cov), those ids decide: a grid that the
// profile leaves unchanged shares the full profile's runs.
func (rc *renderCtx) usable(r *run) bool {
	return r.Status == results.StatusDone && (profileName(r.Profile) == rc.profile || rc.cov != nil)
}

// runCommand is the command that runs the reported profile's missing runs.
func (rc *renderCtx) runCommand() string {
	if rc.profile == "full" {
		return fmt.Sprintf("`sgplab run %s`", rc.spec.File)
	}
	return fmt.Sprintf("`sgplab run --profile %s %s`", rc.profile, rc.spec.File)
}

// title labels reduced profiles in every table and figure title.
func (rc *renderCtx) title(s string) string {
	if rc.profile != "full" {
		return s + " (" + rc.profile + " profile)"
	}
	return s
}

func (rc *renderCtx) label(v string) string {
	if l, ok := rc.labels[v]; ok {
		return l
	}
	return v
}

// explainMissing says why a table cell has no value and how to get one.
func (rc *renderCtx) explainMissing(runs []*run, rowDim, rv, colDim, cv string, metrics []string) string {
	var match []*run
	for _, r := range runs {
		if (rowDim == "metric" || sameValue(dimValue(r, rowDim), rv)) && (colDim == "metric" || sameValue(dimValue(r, colDim), cv)) {
			match = append(match, r)
		}
	}
	where := []string{}
	for _, d := range []struct{ dim, v string }{{rowDim, rv}, {colDim, cv}} {
		where = append(where, dimLabel(d.dim)+" "+d.v)
	}
	what := strings.Join(where, ", ")
	dataset := ""
	switch {
	case rowDim == "dataset":
		dataset = rv
	case colDim == "dataset":
		dataset = cv
	case len(match) > 0:
		dataset = match[0].Dataset
	}
	runcmd := rc.runCommand()
	if len(match) == 0 && dataset != "" && rc.profile != "full" {
		inProfile, known := rc.profileRuns(rc.profile, dataset)
		if inFull, _ := rc.profileRuns("full", dataset); known && !inProfile && inFull {
			return fmt.Sprintf("dataset %s is not in the %s profile (its note says why); the full profile runs it: `sgplab run %s`", dataset, rc.profile, rc.spec.File)
		}
	}
	if len(match) == 0 && rc.profile != "full" {
		if why := rc.gridOutsideProfile(rowDim, rv, colDim, cv, dataset); why != "" {
			return why
		}
	}
	if len(match) == 0 {
		return fmt.Sprintf("no runs for %s in grid %s of %s; %s runs them", what, strings.Join(rc.grids, ", "), rc.db, runcmd)
	}
	var done, failed, unfinished, otherProfile []*run
	for _, r := range match {
		switch {
		case profileName(r.Profile) != rc.profile:
			otherProfile = append(otherProfile, r)
		case r.Status == results.StatusDone:
			done = append(done, r)
		case r.Status == results.StatusFailed:
			failed = append(failed, r)
		default:
			unfinished = append(unfinished, r)
		}
	}
	var parts []string
	if len(done) > 0 {
		parts = append(parts, fmt.Sprintf("%d finished run(s) for %s recorded no %s", len(done), what, strings.Join(metrics, "/")))
	}
	if len(failed) > 0 {
		msg := failed[0].Error
		if len(msg) > 200 {
			msg = msg[:200] + "…"
		}
		s := fmt.Sprintf("%d run(s) for %s failed: %q", len(failed), what, msg)
		if dataset != "" && looksLikeMissingData(msg) {
			s += "; get the data with " + rc.fetchHint(dataset)
		}
		parts = append(parts, s)
	}
	if len(unfinished) > 0 {
		parts = append(parts, fmt.Sprintf("%d run(s) for %s did not finish (%s); %s resumes them", len(unfinished), what, unfinished[0].Status, runcmd))
	}
	if len(parts) == 0 && len(otherProfile) > 0 {
		parts = append(parts, fmt.Sprintf("only %s-profile runs exist for %s; this report shows the %s profile",
			profileName(otherProfile[0].Profile), what, rc.profile))
	}
	return strings.Join(parts, "; ")
}

func (rc *renderCtx) fetchHint(dataset string) string {
	if h, ok := rc.spec.Report.Fetch[dataset]; ok {
		return h
	}
	return fmt.Sprintf("`sgplab data fetch %s`", dataset)
}

func looksLikeMissingData(msg string) bool {
	m := strings.ToLower(msg)
	for _, s := range []string{"no such file", "not found", "missing", "sgplab_data", "data fetch", "does not exist"} {
		if strings.Contains(m, s) {
			return true
		}
	}
	return false
}

func (rc *renderCtx) writeIndexHead(b *strings.Builder) {
	s := rc.spec
	title := firstNonEmpty(s.Report.Title, s.Title, s.Name, "Report")
	fmt.Fprintf(b, "# %s\n\n", rc.title(title))
	if rc.profile != "full" {
		if s.citesPaper() {
			fmt.Fprintf(b, "> **Reduced (%s) profile.** These numbers come from a reduced run of the experiments and are not comparable one-to-one with the paper.", rc.profile)
		} else {
			fmt.Fprintf(b, "> **Reduced (%s) profile.** These numbers come from a reduced run of the grids; the full profile's may differ.", rc.profile)
		}
		if note := s.ProfileNotes[rc.profile]; note != "" {
			fmt.Fprintf(b, " %s", note)
		}
		b.WriteString("\n\n")
	}
	if s.Description != "" {
		fmt.Fprintf(b, "%s\n\n", s.Description)
	}
	if s.Report.Intro != "" {
		fmt.Fprintf(b, "%s\n\n", s.Report.Intro)
	}
	fmt.Fprintf(b, "Generated by `sgplab report %s` from `%s`.", s.File, rc.db)
	if s.citesPaper() {
		b.WriteString(" Numbers labelled *paper* are transcribed from the paper; every other number is ours.")
	}
	b.WriteString("\n\n")
	rc.writeIndexRuns(b)
}

// writeIndexRuns says which runs the report used, what is missing and how
// to get it, and how many stale runs were ignored.
func (rc *renderCtx) writeIndexRuns(b *strings.Builder) {
	c := rc.cov
	if c == nil {
		return
	}
	flags := "--profile " + c.Profile
	if rc.dbFlag != "" {
		flags += " " + rc.dbFlag
	}
	fmt.Fprintf(b, "**Runs.** This report uses exactly the %d run(s) that the current `%s` expands to for the %s profile: %d done, %d failed, %d unfinished (interrupted or running), %d not run yet.",
		c.Expected, rc.spec.File, c.Profile, c.Done, c.Failed, c.Unfinished, c.Missing)
	if c.Missing+c.Unfinished > 0 {
		fmt.Fprintf(b, " `sgplab run %s %s` runs the missing and unfinished ones.", flags, rc.spec.File)
	}
	if c.Failed > 0 {
		fmt.Fprintf(b, " The tables say why runs failed; rerunning the same command retries them.")
	}
	if c.Stale > 0 {
		fmt.Fprintf(b, " %d stale run(s) of the same grids and profile, which the current config no longer expands to (left by an older version of it), were ignored; `sgplab results prune %s %s` deletes them (add `--dry-run` to list them first).",
			c.Stale, flags, rc.spec.File)
	}
	b.WriteString("\n\n")
}

func (rc *renderCtx) writeIndexFigure(b *strings.Builder, fs FigureSpec, fig *figure, formats []string) {
	rc.writeIndexFigureAt(b, "###", fs, fig, formats)
}

// writeIndexFigureAt is writeIndexFigure under a heading of the given level.
func (rc *renderCtx) writeIndexFigureAt(b *strings.Builder, heading string, fs FigureSpec, fig *figure, formats []string) {
	fmt.Fprintf(b, "%s %s\n\n", heading, fig.Title)
	img := ""
	for _, f := range formats {
		if f == "png" || (img == "" && f == "svg") {
			img = fs.Name + "." + f
		}
	}
	if img != "" {
		fmt.Fprintf(b, "![%s](%s)\n\n", mdOneLine(fig.Title), img)
	}
	if fs.Caption != "" {
		fmt.Fprintf(b, "%s\n\n", fs.Caption)
	}
	if rc.spec.citesPaper() {
		fmt.Fprintf(b, "Ours: %s.\n\n", strings.TrimSuffix(fig.describe, "."))
	} else {
		fmt.Fprintf(b, "%s.\n\n", capitalize(strings.TrimSuffix(fig.describe, ".")))
	}
	if fs.Paper != "" {
		fmt.Fprintf(b, "**Paper:** %s\n\n", fs.Paper)
	}
	for _, fr := range fig.fronts {
		fmt.Fprintf(b, "- Pareto %s\n", fr)
	}
	if len(fig.fronts) > 0 {
		b.WriteString("\n")
	}
	for _, w := range fig.warnings {
		fmt.Fprintf(b, "- note: %s\n", w)
	}
	if len(fig.warnings) > 0 {
		b.WriteString("\n")
	}
	var links []string
	for _, f := range formats {
		links = append(links, fmt.Sprintf("[%s](%s.%s)", f, fs.Name, f))
	}
	fmt.Fprintf(b, "Files: %s\n\n", strings.Join(links, ", "))
}

func mdOneLine(s string) string {
	return mdEscape(strings.Join(strings.Fields(s), " "))
}

// sortedKeys returns the keys of m in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// displayPath shows a database path relative to the working directory when
// it lies below it, so reports do not carry one machine's absolute paths.
func displayPath(p string) string {
	if !filepath.IsAbs(p) {
		return p
	}
	wd, err := os.Getwd()
	if err != nil {
		return p
	}
	if rel, err := filepath.Rel(wd, p); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return p
}

// writeClaims writes the reproduction claims, counted, and then the sanity
// checks, which hold by theory or construction and are not counted.
func writeClaims(index *strings.Builder, specs []claims.Claim, verdicts []claims.Result, profile string) {
	index.WriteString("## Claims\n\n")
	kinds := []struct{ kind, heading string }{
		{"reproduction", "### Reproduction claims (counted)\n\n"},
		{"sanity", "### Sanity checks (true by theory or by construction; not counted)\n\n"},
		{"diagnostic", "### Diagnostics (checks of our own setup, not statements of the paper; not counted)\n\n"},
	}
	counts := map[string]map[string]int{}
	total := map[string]int{}
	for i, c := range specs {
		if counts[c.Kind] == nil {
			counts[c.Kind] = map[string]int{}
		}
		counts[c.Kind][verdicts[i].Verdict]++
		total[c.Kind]++
	}
	rep := counts["reproduction"]
	inconclusive := ""
	if rep[claims.Inconclusive] > 0 {
		inconclusive = fmt.Sprintf("%d inconclusive (fits not converged), ", rep[claims.Inconclusive])
	}
	fmt.Fprintf(index, "Each claim is checked by one SQL query over the results (%s profile; the queries are in claims.sql). "+
		"**Reproduction claims: %d of %d reproduced** (%d differ, %s%d without data, %d query errors). "+
		"Not counted: sanity checks %d of %d hold, diagnostics %d of %d as expected.\n\n",
		profile, rep[claims.Reproduced], total["reproduction"], rep[claims.Differs], inconclusive, rep[claims.NoData], rep[claims.QueryError],
		counts["sanity"][claims.Reproduced], total["sanity"], counts["diagnostic"][claims.Reproduced], total["diagnostic"])
	for _, k := range kinds {
		if total[k.kind] == 0 {
			continue
		}
		index.WriteString(k.heading)
		index.WriteString("| # | claim | the paper | expected | ours | verdict |\n|---|---|---|---|---:|---|\n")
		for i, c := range specs {
			if c.Kind != k.kind {
				continue
			}
			r := verdicts[i]
			ours := "—"
			if r.Verdict == claims.Reproduced || r.Verdict == claims.Differs || r.Verdict == claims.Inconclusive {
				ours = fmt.Sprintf("%.4g", r.Value)
			}
			verdict := r.Verdict
			if r.Detail != "" {
				verdict += ": " + r.Detail
			}
			text := c.Text
			if c.PostHoc {
				text += " *(added after the result was seen)*"
			}
			expect := c.Expect
			if c.Threshold != "" {
				expect += " (threshold: " + c.Threshold + ")"
			}
			fmt.Fprintf(index, "| %d | %s | %s | %s | %s | %s |\n", i+1, mdOneLine(text), mdOneLine(c.Paper),
				mdOneLine(expect), ours, mdOneLine(verdict))
		}
		index.WriteString("\n")
	}
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// writeIndexDerived lists the derived values with their documentation.
func writeIndexDerived(b *strings.Builder, specs []claims.Derive) {
	if len(specs) == 0 {
		return
	}
	b.WriteString("Derived quantities (computed by SQL over the results at report time):\n\n")
	for _, d := range specs {
		fmt.Fprintf(b, "- `%s:%s`", d.As, d.Name)
		if d.Doc != "" {
			b.WriteString(": " + mdOneLine(d.Doc))
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
}
