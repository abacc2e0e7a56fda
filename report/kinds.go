package report

import (
	"strings"
)

// figureKind is one kind of [[figure]]: check validates a spec of the kind
// and fills in its defaults (after the name, and before the checks every
// figure drawn from runs shares), build draws it. Adding a kind is adding
// an entry to figureKinds.
type figureKind struct {
	check func(f *FigureSpec, bad badFunc)
	build func(fs FigureSpec, runs []*run, q querier, rc *renderCtx) (*figure, error)
	// usesZ: z is a key of the kind (the colour of a heatmap, the column of
	// a field).
	usesZ bool
	// computed: drawn from first principles, not from runs; the checks
	// runs need do not apply.
	computed bool
}

// figureKindNames lists the kinds in the order error messages give them.
var figureKindNames = []string{"line", "scatter", "band", "heatmap", "trace", "matrix", "curve", "field", "pareto", "terms", "dots", "illustration"}

// figureKinds maps each kind's name to what it does.
var figureKinds = map[string]figureKind{
	"line":         {check: checkXYFigure, build: buildRunsFigure},
	"band":         {check: checkXYFigure, build: buildRunsFigure},
	"scatter":      {check: checkXYFigure, build: buildRunsFigure},
	"heatmap":      {check: checkHeatmap, build: buildRunsFigure, usesZ: true},
	"pareto":       {check: checkPareto, build: buildRunsFigure},
	"trace":        {check: checkTrace, build: buildTraceFigure},
	"matrix":       {check: checkMatrix, build: buildMatrix},
	"curve":        {check: checkCurve, build: buildCurve},
	"field":        {check: checkField, build: buildField, usesZ: true},
	"terms":        {check: checkTerms, build: buildTerms},
	"dots":         {check: checkDots, build: buildDots},
	"illustration": {check: checkIllustration, build: buildIllustration, computed: true},
}

// isMetricDim reports whether d is "metric:NAME" with a name.
func isMetricDim(d string) bool { return strings.HasPrefix(d, "metric:") && len(d) > len("metric:") }

// checkXYFigure: a line, band or scatter plot of a metric against a
// dimension.
func checkXYFigure(f *FigureSpec, bad badFunc) {
	if err := checkDim(f.X, true); err != nil {
		bad(".x", "x: %v", err)
	}
	if !isMetricDim(f.Y) {
		bad(".y", "y must be \"metric:NAME\", got %q", f.Y)
	}
}

// checkHeatmap: categorical x and y, a metric as the colour.
func checkHeatmap(f *FigureSpec, bad badFunc) {
	for _, d := range []struct{ key, v string }{{"x", f.X}, {"y", f.Y}} {
		if err := checkDim(d.v, true); err != nil {
			bad("."+d.key, "%s: %v", d.key, err)
		}
	}
	if !isMetricDim(f.Z) {
		bad(".z", "a heatmap needs z = \"metric:NAME\" (the colour), got %q", f.Z)
	}
}

// checkPareto: cost against quality, both metrics, lower is better.
func checkPareto(f *FigureSpec, bad badFunc) {
	for _, d := range []struct{ key, v string }{{"x", f.X}, {"y", f.Y}} {
		if !isMetricDim(d.v) {
			bad("."+d.key, "a pareto figure needs %s = \"metric:NAME\" (lower is better), got %q", d.key, d.v)
		}
	}
	if f.ReferenceMethod != "" {
		bad(".reference_method", "a pareto figure draws every method as points; reference_method is for line and band figures")
	}
}

// checkTrace: the optimiser's objective against iteration or time.
func checkTrace(f *FigureSpec, bad badFunc) {
	orDefault(&f.X, "iteration")
	orDefault(&f.Y, "objective")
	if f.X != "iteration" && f.X != "elapsed" {
		bad(".x", "a trace figure has x = \"iteration\" or \"elapsed\", not %q", f.X)
	}
	if f.Y != "objective" {
		bad(".y", "a trace figure plots y = \"objective\", not %q", f.Y)
	}
}

// checkOneRunPerPanel: the kinds that draw one run's artifact per panel
// take neither x, y nor series.
func checkOneRunPerPanel(f *FigureSpec, bad badFunc, use string) {
	if f.X != "" || f.Y != "" || f.Series != "" {
		bad("", "a %s figure draws one run per panel from its artifact; x, y and series are not used (use %s)", f.Kind, use)
	}
}

// checkArtifactPanels: one run's array per panel, on a colour scale that
// zmin and zmax may fix.
func checkArtifactPanels(f *FigureSpec, bad badFunc) {
	checkOneRunPerPanel(f, bad, "panels and filter")
	if f.ZMin > f.ZMax {
		bad(".zmin", "zmin %g > zmax %g", f.ZMin, f.ZMax)
	}
}

// orDefault sets *s to def when it is empty.
func orDefault(s *string, def string) {
	if *s == "" {
		*s = def
	}
}

// checkMatrix: a per-run array drawn as a matrix.
func checkMatrix(f *FigureSpec, bad badFunc) {
	if f.Artifact == "" {
		bad(".artifact", "a matrix figure needs artifact = \"NAME\" (a per-run array the grid stores, e.g. kernel_matrix)")
	}
	checkArtifactPanels(f, bad)
}

// checkCurve: a run's predictive curve over its training points.
func checkCurve(f *FigureSpec, bad badFunc) {
	orDefault(&f.Artifact, "predictions")
	orDefault(&f.ReferenceArtifact, "train")
	checkArtifactPanels(f, bad)
}

// checkField: the runner's 2-D grid artifact: colour z (default p), the
// contour at the middle of the colour scale, training points.
func checkField(f *FigureSpec, bad badFunc) {
	orDefault(&f.Artifact, "field")
	orDefault(&f.Z, "p")
	orDefault(&f.ReferenceArtifact, "train")
	checkArtifactPanels(f, bad)
}

// checkTerms: columns of a per-run 1-D artifact as lines; the reference
// artifact's x0 values (e.g. inducing inputs) as dashed verticals.
func checkTerms(f *FigureSpec, bad badFunc) {
	if f.Artifact == "" {
		bad(".artifact", "a terms figure needs artifact = \"NAME\" (a per-run array with an x0 column, e.g. variance_terms)")
	}
	if len(f.Lines) == 0 {
		bad(".lines", "a terms figure needs lines = [\"COLUMN\", …], the artifact's columns to draw")
	}
	checkOneRunPerPanel(f, bad, "panels, filter and lines")
}

// checkDots: categorical rows (y), a metric along x, one marker per series.
func checkDots(f *FigureSpec, bad badFunc) {
	if !isMetricDim(f.X) {
		bad(".x", "a dots figure needs x = \"metric:NAME\", got %q", f.X)
	}
	if err := checkDim(f.Y, true); err != nil || strings.HasPrefix(f.Y, "metric:") {
		bad(".y", "a dots figure needs y = a categorical dimension (param:NAME, grid, method, dataset), got %q", f.Y)
	}
}

// checkIllustration: a computed drawing (illustration.go) takes no runs.
func checkIllustration(f *FigureSpec, bad badFunc) {
	if _, ok := illustrationBuilders[f.Illustration]; !ok {
		bad(".illustration", "unknown illustration %q; valid: %s", f.Illustration, list(illustrationNames()))
	}
	if f.Grid != "" || len(f.GridSet) > 0 || f.X != "" || f.Y != "" || f.Series != "" {
		bad("", "an illustration is computed, not drawn from runs: grid, x, y and series are not used")
	}
}

// buildRunsFigure draws the kinds that aggregate runs into series and
// panels (plot.go).
func buildRunsFigure(fs FigureSpec, runs []*run, _ querier, rc *renderCtx) (*figure, error) {
	return buildFigure(fs, runs, nil, rc)
}

// buildTraceFigure draws the optimiser traces of the runs the figure uses.
func buildTraceFigure(fs FigureSpec, runs []*run, q querier, rc *renderCtx) (*figure, error) {
	var used []*run
	for _, r := range runs {
		if rc.usable(r) && fs.filter.matches(r) {
			used = append(used, r)
		}
	}
	traces, err := loadTraces(q, used)
	if err != nil {
		return nil, err
	}
	return buildFigure(fs, runs, traces, rc)
}
