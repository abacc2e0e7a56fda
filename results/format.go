package results

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Output formats of WriteRows.
const (
	FormatTable = "table"
	FormatCSV   = "csv"
	FormatJSON  = "json"
)

// WriteRows writes a query result as an aligned text table, CSV (with a
// header row) or JSON (an array of objects keyed by column, in column
// order). Floats are written in the shortest form that reads back exactly.
// NULL is empty in CSV, "NULL" in a table and null in JSON; infinities are
// "+Inf"/"-Inf" (strings in JSON, which has no infinity).
func WriteRows(w io.Writer, format string, cols []string, rows [][]any) error {
	for i, r := range rows {
		if len(r) != len(cols) {
			return fmt.Errorf("results: row %d has %d values for %d columns", i, len(r), len(cols))
		}
	}
	switch format {
	case FormatTable:
		return writeTable(w, cols, rows)
	case FormatCSV:
		return writeCSV(w, cols, rows)
	case FormatJSON:
		return writeJSON(w, cols, rows)
	}
	return fmt.Errorf("results: unknown output format %q: use table, csv or json", format)
}

// cell formats one value as text; ok is false for NULL.
func cell(v any) (s string, ok bool) {
	switch v := v.(type) {
	case nil:
		return "", false
	case float64:
		return formatFloat(v), true
	case float32:
		return formatFloat(float64(v)), true
	case int64:
		return strconv.FormatInt(v, 10), true
	case int:
		return strconv.Itoa(v), true
	case uint64:
		return strconv.FormatUint(v, 10), true
	case string:
		return v, true
	case []byte:
		return string(v), true
	case bool:
		return strconv.FormatBool(v), true
	case time.Time:
		return v.UTC().Format(time.RFC3339Nano), true
	}
	return fmt.Sprint(v), true
}

func formatFloat(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

func isNumber(v any) bool {
	switch v.(type) {
	case float64, float32, int64, int, uint64:
		return true
	}
	return false
}

func writeTable(w io.Writer, cols []string, rows [][]any) error {
	width := make([]int, len(cols))
	numeric := make([]bool, len(cols))
	for j, c := range cols {
		width[j] = utf8.RuneCountInString(c)
		numeric[j] = true
	}
	text := make([][]string, len(rows))
	for i, r := range rows {
		text[i] = make([]string, len(r))
		for j, v := range r {
			s, ok := cell(v)
			if !ok {
				s = "NULL"
			} else if !isNumber(v) {
				numeric[j] = false
			}
			// One line per row: a table cell must not break the layout.
			s = strings.NewReplacer("\n", `\n`, "\r", `\r`, "\t", `\t`).Replace(s)
			text[i][j] = s
			width[j] = max(width[j], utf8.RuneCountInString(s))
		}
	}
	bw := bufio.NewWriter(w)
	line := func(vals []string, rightAlign bool) {
		for j, s := range vals {
			if j > 0 {
				bw.WriteString("  ")
			}
			pad := strings.Repeat(" ", width[j]-utf8.RuneCountInString(s))
			last := j == len(vals)-1
			switch {
			case rightAlign && numeric[j]:
				bw.WriteString(pad + s)
			case last:
				bw.WriteString(s)
			default:
				bw.WriteString(s + pad)
			}
		}
		bw.WriteByte('\n')
	}
	line(cols, true)
	rule := make([]string, len(cols))
	for j := range cols {
		rule[j] = strings.Repeat("-", width[j])
	}
	line(rule, false)
	for _, r := range text {
		line(r, true)
	}
	return bw.Flush()
}

func writeCSV(w io.Writer, cols []string, rows [][]any) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(cols); err != nil {
		return err
	}
	rec := make([]string, len(cols))
	for _, r := range rows {
		for j, v := range r {
			rec[j], _ = cell(v)
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func writeJSON(w io.Writer, cols []string, rows [][]any) error {
	// Repeated column names (SELECT a.id, b.id) get a suffix so that every
	// object key is unique.
	keys := make([][]byte, len(cols))
	used := make(map[string]bool, len(cols))
	for j, c := range cols {
		k := c
		for n := 2; used[k]; n++ {
			k = c + "_" + strconv.Itoa(n)
		}
		used[k] = true
		keys[j], _ = json.Marshal(k)
	}
	bw := bufio.NewWriter(w)
	bw.WriteString("[")
	for i, r := range rows {
		if i > 0 {
			bw.WriteString(",")
		}
		bw.WriteString("\n  {")
		for j, v := range r {
			if j > 0 {
				bw.WriteString(", ")
			}
			bw.Write(keys[j])
			bw.WriteString(": ")
			b, err := jsonValue(v)
			if err != nil {
				return fmt.Errorf("results: column %s: %w", cols[j], err)
			}
			bw.Write(b)
		}
		bw.WriteString("}")
	}
	if len(rows) > 0 {
		bw.WriteString("\n")
	}
	bw.WriteString("]\n")
	return bw.Flush()
}

func jsonValue(v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return []byte("null"), nil
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return json.Marshal(formatFloat(x))
		}
		return []byte(formatFloat(x)), nil
	case []byte:
		return json.Marshal(string(x))
	case time.Time:
		return json.Marshal(x.UTC().Format(time.RFC3339Nano))
	}
	return json.Marshal(v)
}

// Export writes all runs with their metrics, one row per run × metric, as
// csv or json (or table): ExportWhat with ExportMetrics and no filter.
func (s *Store) Export(w io.Writer, format string) error {
	return s.ExportWhat(w, format, ExportMetrics, ExportFilter{})
}
