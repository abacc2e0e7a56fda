package claims

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"sgplab/internal/anyconv"
	"sgplab/results"
)

// Derive is one [[report.derive]]: a per-run value computed at report
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
type Derive struct {
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

// CheckDerived validates a config's derived values, setting the default
// as = "metric"; a FieldError's key is "[i]" and the key below it.
func CheckDerived(ds []Derive) []FieldError {
	var errs []FieldError
	seen := map[string]bool{}
	for i := range ds {
		d := &ds[i]
		p := fmt.Sprintf("[%d]", i)
		bad := func(key, format string, args ...any) {
			errs = append(errs, fieldErr(p+key, format, args...))
		}
		if d.As == "" {
			d.As = "metric"
		}
		switch {
		case !slices.Contains(deriveKinds, d.As):
			bad(".as", "unknown as = %q; valid: %s", d.As, strings.Join(deriveKinds, ", "))
		case d.Name == "":
			bad("", "a derived value needs a name")
		case d.As == "metric" && !strings.HasPrefix(d.Name, results.ExtensionPrefix):
			bad(".name", "a derived metric %q must be an extension name starting with %q, so it never shadows a stored metric", d.Name, results.ExtensionPrefix)
		case d.As == "metric":
			if err := results.CheckMetricName(d.Name); err != nil {
				bad(".name", "%v", err)
			}
		case !paramNameRE.MatchString(d.Name):
			bad(".name", "parameter name %q must be letters, digits, '.', '_' or '-'", d.Name)
		}
		if seen[d.As+":"+d.Name] {
			bad(".name", "%s %q is derived twice", d.As, d.Name)
		}
		seen[d.As+":"+d.Name] = true
		if strings.TrimSpace(d.Query) == "" {
			bad(".query", "a derived value needs a query returning (run_id, value)")
		}
		if d.Transform != "" && !slices.Contains(deriveTransforms, d.Transform) {
			bad(".transform", "unknown transform %q; valid: %s", d.Transform, strings.Join(deriveTransforms, ", "))
		}
		if d.Digits < 0 || d.Digits > 17 {
			bad(".digits", "digits = %d is outside 0…17", d.Digits)
		}
	}
	return errs
}

// paramNameRE is the form of a derived parameter's name.
var paramNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)

// Value is a derived value of one run: Metric for as = "metric" (NaN
// where the query gives no number), Param for as = "param" (the number
// rounded to the derivation's digits, or the text the query gives).
type Value struct {
	Run    string
	Metric float64
	Param  string
}

// Values runs the derivation, in the report's profile as Claim.Eval runs a
// claim (subset as there), and returns the value of each run the query
// gives one for, in the query's order. A parameter that is not a number
// or text is left out.
func (d Derive) Values(q Querier, profile string, subset bool) ([]Value, error) {
	cols, rows, err := q.Query(scopedQuery(d.Query, profile, subset))
	if err != nil {
		return nil, fmt.Errorf("claims: derived %s %q: %w", d.As, d.Name, err)
	}
	if len(cols) != 2 {
		return nil, fmt.Errorf("claims: derived %s %q: the query must return 2 columns (run_id, value), got %d", d.As, d.Name, len(cols))
	}
	var out []Value
	for _, row := range rows {
		val := Value{Run: anyconv.String(row[0])}
		v, ok := anyconv.FloatOrText(row[1])
		if !ok {
			if cat := anyconv.String(row[1]); d.As == "param" && row[1] != nil && cat != "" {
				val.Param = cat // a text category, e.g. a method variant
				out = append(out, val)
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
			val.Param = strconv.FormatFloat(roundSignificant(v, digits), 'g', -1, 64)
		} else {
			val.Metric = v
		}
		out = append(out, val)
	}
	return out, nil
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
