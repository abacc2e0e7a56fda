package tomlline

import "testing"

func TestScan(t *testing.T) {
	src := `name = "x"
arr = [
  1,
  "a]",
]
[[grid]]
name = "a"
[grid.params]
k = 1
[[grid.exclude]]
m = 1
[[grid]]
name = "b"
[[grid.exclude]]
m = 2
[[grid.exclude]]
"quoted.key" = """
multi
"""
after = 1
`
	ix := Scan(src)
	want := map[string]int{"name": 1, "arr": 2, "grid[0]": 6, "grid[0].params.k": 9, "grid[0].exclude[0].m": 11,
		"grid[1].name": 13, "grid[1].exclude[0].m": 15, "grid[1].exclude[1].quoted.key": 17, "grid[1].exclude[1].after": 20}
	for k, l := range want {
		if got := ix.Line(k); got != l {
			t.Errorf("Line(%s) = %d, want %d", k, got, l)
		}
	}
	if got := ix.Line("grid[1].exclude[1].nothing"); got != 16 {
		t.Errorf("ancestor fallback = %d, want 16", got)
	}
}

// TestScanTables: the paths the report's errors use, comments and
// multi-line values skipped, and undecoded keys found by their unindexed
// path.
func TestScanTables(t *testing.T) {
	src := `name = "x"   # comment with = sign
[[table]]
name = "a"
query = """
not = a key
"""
[[table.paper]]
row = "r"
[[table]]
name = "b"
rows = [
  "x = y",
]
[[table.paper]]
value = 1
[[table.paper]]
value = 2
[report.labels]
"a.b" = "c"
`
	ix := Scan(src)
	cases := map[string]int{
		"name":                    1,
		"table[0].name":           3,
		"table[0].query":          4,
		"table[0].paper[0].row":   8,
		"table[1].name":           10,
		"table[1].paper[0].value": 15,
		"table[1].paper[1].value": 17,
		"table[1].paper[1].std":   16, // falls back to the element header
		"report.labels.a.b":       19,
		"figure[0].kind":          0,
	}
	for path, want := range cases {
		if got := ix.Line(path); got != want {
			t.Errorf("Line(%q) = %d, want %d", path, got, want)
		}
	}
	if _, ok := ix["table[0].not"]; ok {
		t.Error("a line inside a multi-line string was read as a key")
	}
	if got := ix.FirstUnindexed("table.paper.value"); got != 15 {
		t.Errorf("FirstUnindexed = %d, want 15", got)
	}
}
