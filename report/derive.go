package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"sgplab/internal/anyconv"
	"sgplab/results"
)

// DeriveSpec is one [[report.derive]]: a per-run value computed at report
// time by SQL over the whole results database, for quantities that combine
// several metrics or several runs — a gap between two objectives, a time
// normalised by the slowest run of a panel, the exact log marginal
// likelihood of a reference run joined onto every run of the same dataset.
//
// The query returns two columns, run_id and value. As in claims, {profile}
// is replaced by the report's quoted profile and the runs, run_metrics and
// run_params_v tables seen by the query hold only that profile's runs.
// Derivations are applied in order after the runs are loaded; a run the
// query returns no row for simply lacks the value.
type DeriveSpec struct {
	// Name is the metric (results extension name, "x_…") or parameter it
	// defines.
	Name string `toml:"name"`
	// As is "metric" (default: usable as metric:NAME on figure axes, in
	// tables and in filters) or "param" (a category, usable as param:NAME,
	// e.g. a heatmap axis; the value is formatted with Digits significant
	// digits; a text value is used as is). Without a Transform, a claim can
	// use either: as its metric, or in where (a derived parameter is
	// compared by its unrounded value; a number matches to Digits digits).
	As     string `toml:"as"`
	Query  string `toml:"query"`
	Digits int    `toml:"digits"` // significant digits of a derived parameter; default 3
	// Transform is applied to each value in Go, for what SQLite lacks:
	// "log10", "log10abs" (log10 of the magnitude, for signed quantities
	// spanning decades) or "abs". Non-positive values become NaN under log10.
	Transform string `toml:"transform"`
	Doc       string `toml:"doc"` // what it is, shown in index.md
}

var (
	deriveKinds      = []string{"metric", "param"}
	deriveTransforms = []string{"log10", "log10abs", "abs"}
)

func transformValue(name string, v float64) float64 {
	switch name {
	case "log10":
		if v <= 0 {
			return math.NaN()
		}
		return math.Log10(v)
	case "log10abs":
		if v == 0 {
			return math.NaN()
		}
		return math.Log10(math.Abs(v))
	case "abs":
		return math.Abs(v)
	}
	return v
}

func (s *Spec) validateDerive(loc *locator) []error {
	var errs []error
	seen := map[string]bool{}
	for i := range s.Report.Derive {
		d := &s.Report.Derive[i]
		p := fmt.Sprintf("report.derive[%d]", i)
		bad := func(key, format string, args ...any) {
			errs = append(errs, fmt.Errorf("%s: %s", loc.at(p+key), fmt.Sprintf(format, args...)))
		}
		if d.As == "" {
			d.As = "metric"
		}
		switch {
		case !contains(deriveKinds, d.As):
			bad(".as", "unknown as = %q; valid: %s", d.As, list(deriveKinds))
		case d.Name == "":
			bad("", "a derived value needs a name")
		case d.As == "metric" && !strings.HasPrefix(d.Name, results.ExtensionPrefix):
			bad(".name", "a derived metric %q must be an extension name starting with %q, so it never shadows a stored metric", d.Name, results.ExtensionPrefix)
		case d.As == "metric":
			if err := results.CheckMetricName(d.Name); err != nil {
				bad(".name", "%v", err)
			}
		case !nameRE.MatchString(d.Name):
			bad(".name", "parameter name %q must be letters, digits, '.', '_' or '-'", d.Name)
		}
		if seen[d.As+":"+d.Name] {
			bad(".name", "%s %q is derived twice", d.As, d.Name)
		}
		seen[d.As+":"+d.Name] = true
		if strings.TrimSpace(d.Query) == "" {
			bad(".query", "a derived value needs a query returning (run_id, value)")
		}
		if d.Transform != "" && !contains(deriveTransforms, d.Transform) {
			bad(".transform", "unknown transform %q; valid: %s", d.Transform, list(deriveTransforms))
		}
		if d.Digits < 0 || d.Digits > 17 {
			bad(".digits", "digits = %d is outside 0…17", d.Digits)
		}
	}
	return errs
}

// applyDerived runs every derivation and attaches the values to the runs;
// subset as for evalClaim.
func applyDerived(specs []DeriveSpec, q querier, profile string, subset bool, runs []*run) error {
	byID := make(map[string]*run, len(runs))
	for _, r := range runs {
		byID[r.ID] = r
	}
	for _, d := range specs {
		sql := scopedQuery(d.Query, profile, subset)
		cols, rows, err := q.Query(sql)
		if err != nil {
			return fmt.Errorf("report: derived %s %q: %w", d.As, d.Name, err)
		}
		if len(cols) != 2 {
			return fmt.Errorf("report: derived %s %q: the query must return 2 columns (run_id, value), got %d", d.As, d.Name, len(cols))
		}
		for _, row := range rows {
			r := byID[anyconv.String(row[0])]
			if r == nil {
				continue // a run of another grid or profile
			}
			v, ok := anyconv.FloatOrText(row[1])
			if !ok {
				if cat := anyconv.String(row[1]); d.As == "param" && row[1] != nil && cat != "" {
					r.Params[d.Name] = cat // a text category, e.g. a method variant
					continue
				}
				v = math.NaN()
			}
			v = transformValue(d.Transform, v)
			if d.As == "param" {
				if math.IsNaN(v) {
					continue
				}
				digits := d.Digits
				if digits == 0 {
					digits = 3
				}
				r.Params[d.Name] = strconv.FormatFloat(roundSignificant(v, digits), 'g', -1, 64)
				continue
			}
			r.Metrics[d.Name] = v
		}
	}
	return nil
}

// roundSignificant rounds x to n significant digits, so that values equal up to
// floating-point noise fall into one category.
func roundSignificant(x float64, n int) float64 {
	if x == 0 || math.IsInf(x, 0) || math.IsNaN(x) {
		return x
	}
	v, err := strconv.ParseFloat(strconv.FormatFloat(x, 'g', n, 64), 64)
	if err != nil {
		return x
	}
	return v
}

// writeIndexDerived lists the derived values with their documentation.
func writeIndexDerived(b *strings.Builder, specs []DeriveSpec) {
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
