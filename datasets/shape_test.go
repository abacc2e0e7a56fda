package datasets

import "testing"

func TestShape(t *testing.T) {
	for _, c := range []struct {
		name   string
		params map[string]any
		n, d   int
		exact  bool
	}{
		{"gp-sample", map[string]any{"n": int64(50)}, 50, 1, true},
		{"gp-sample", map[string]any{"n": int64(70), "dim": int64(3)}, 70, 3, true},
		{"yacht", nil, 308, 6, false},
		{"yacht", map[string]any{"n": int64(100)}, 100, 6, false},
		{"naval", map[string]any{"drop_constant_inputs": true}, 11934, 0, false},
		{UserCSV, map[string]any{"file": "x.csv"}, 0, 0, false},
		{"no-such-dataset", nil, 0, 0, false},
	} {
		n, d, exact := Shape(c.name, c.params)
		if n != c.n || d != c.d || exact != c.exact {
			t.Errorf("Shape(%s, %v) = %d, %d, %v; want %d, %d, %v", c.name, c.params, n, d, exact, c.n, c.d, c.exact)
		}
	}
}
