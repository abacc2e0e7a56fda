package results

import (
	"math"
	"testing"
)

// Queries can use ln, exp, sqrt and power (not built into this SQLite).
func TestMathFunctions(t *testing.T) {
	s := openTemp(t)
	_, rows, err := s.Query("SELECT ln(2.0), exp(1.5), sqrt(2.0), power(2.0, 0.5), ln(json_extract('{\"s\": 3}', '$.s'))")
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{math.Ln2, math.Exp(1.5), math.Sqrt2, math.Sqrt2, math.Log(3)}
	for i, w := range want {
		if got, ok := rows[0][i].(float64); !ok || got != w {
			t.Errorf("column %d = %v, want %v", i, rows[0][i], w)
		}
	}
}
