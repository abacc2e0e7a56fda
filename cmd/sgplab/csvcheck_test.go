package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// TestCSVColumnTypoBeforeRunning: a misspelt column of a user CSV is one
// error at the grid key's line, with the file's columns and "did you
// mean", at --dry-run and before any run (before: --dry-run listed the runs
// and exited 0, and run failed each of them, exit 3).
func TestCSVColumnTypoBeforeRunning(t *testing.T) {
	t.Chdir(t.TempDir())
	csv := "x1,x2,is_test,y\n"
	for i := range 20 {
		csv += strings.Repeat("0.5,", 2) + map[bool]string{true: "1", false: "0"}[i%4 == 0] + ",1.5\n"
	}
	if err := os.WriteFile("data.csv", []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	grid := `name = "typo"
[[grid]]
name = "m"
methods = ["sgpr"]
datasets = ["csv"]
splits = [0, 1, 2]
iterations = 5
[grid.params]
num_inducing = [5]
[grid.dataset]
file = "data.csv"
target = "Y"
inputs = [["x1", "x2"]]
test_fraction = 0.25
`
	if err := os.WriteFile("typo.toml", []byte(grid), 0o644); err != nil {
		t.Fatal(err)
	}
	const want = `typo.toml:12: grid[0].dataset.target: dataset "csv": datasets: csv: data.csv: param target = "Y": no such column (did you mean "y"?); columns: x1, x2, is_test, y`
	for _, args := range [][]string{{"run", "--dry-run", "typo.toml"}, {"run", "typo.toml"}} {
		var out, errb bytes.Buffer
		code := Main(args, &out, &errb)
		if code != 1 || !strings.Contains(errb.String(), want) || strings.Count(errb.String(), "no such column") != 1 {
			t.Errorf("sgplab %s: exit %d, stdout %q, stderr %q; want exit 1 and one error %q", strings.Join(args, " "), code, out.String(), errb.String(), want)
		}
		if _, err := os.Stat("out"); !os.IsNotExist(err) {
			t.Errorf("sgplab %s created out/ (a database) before refusing the grid", strings.Join(args, " "))
		}
	}
	// Fixed, the same grid runs.
	if err := os.WriteFile("typo.toml", []byte(strings.Replace(grid, `target = "Y"`, `target = "y"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := Main([]string{"run", "--dry-run", "typo.toml"}, &out, &errb); code != 0 || !strings.Contains(out.String(), "3 runs") {
		t.Errorf("fixed grid: exit %d, %s%s", code, out.String(), errb.String())
	}
}
