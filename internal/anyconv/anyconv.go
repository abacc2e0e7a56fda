// Package anyconv converts the dynamically typed values that TOML and JSON
// decoding and SQL queries return (any) to numbers and text. It is the one
// place that knows which Go types those decoders produce.
package anyconv

import (
	"fmt"
	"strconv"
	"strings"
)

// Float returns v as a float64 when it is a number of any Go numeric type
// (TOML decodes integers as int64, JSON and SQLite reals as float64);
// ok is false for anything else, text included.
func Float(v any) (f float64, ok bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case float32:
		return float64(x), true
	case int64:
		return float64(x), true
	case int:
		return float64(x), true
	case int32:
		return float64(x), true
	case uint64:
		return float64(x), true
	case uint:
		return float64(x), true
	case uint32:
		return float64(x), true
	}
	return 0, false
}

// FloatOrText is Float, and for text (string or []byte, as SQLite returns
// a value stored as TEXT) the number it spells, surrounding space allowed.
func FloatOrText(v any) (float64, bool) {
	if f, ok := Float(v); ok {
		return f, true
	}
	var s string
	switch x := v.(type) {
	case string:
		s = x
	case []byte:
		s = string(x)
	default:
		return 0, false
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	return f, err == nil
}

// String returns v as text: "" for nil (SQL NULL), strings and []byte as
// they are, anything else as fmt.Sprint prints it.
func String(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case []byte:
		return string(x)
	}
	return fmt.Sprint(v)
}

// Int64 returns v as an integer: integers as they are, a float64
// truncated, text parsed in base 10; 0 for anything else.
func Int64(v any) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case int:
		return int64(x)
	case float64:
		return int64(x)
	}
	n, _ := strconv.ParseInt(String(v), 10, 64)
	return n
}

// TypeName describes a decoded TOML value for an error message: its kind and,
// for a scalar, the value ("string \"se\"", "integer 3", "a list").
func TypeName(v any) string {
	switch x := v.(type) {
	case string:
		return fmt.Sprintf("string %q", x)
	case int64:
		return fmt.Sprintf("integer %d", x)
	case float64:
		return fmt.Sprintf("number %v", x)
	case bool:
		return fmt.Sprintf("boolean %v", x)
	case []any:
		return "a list"
	case map[string]any:
		return "a table"
	case []map[string]any:
		return "an array of tables"
	case nil:
		return "nothing"
	}
	return fmt.Sprintf("%T", v)
}
