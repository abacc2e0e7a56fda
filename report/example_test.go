package report_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"sgplab/report"
	"sgplab/results"
)

func Example() {
	dir, _ := os.MkdirTemp("", "report")
	defer os.RemoveAll(dir)
	config := filepath.Join(dir, "paper.toml")
	os.WriteFile(config, []byte(`
name = "paper"
[[grid]]
name = "uci"
[[table]]
name = "table-1"
title = "Test RMSE"
grid = "uci"
rows = "dataset"
columns = "method"
metric = "rmse"
rank = "lower"
[[table.paper]]
row = "concrete"
column = "sgpr"
value = 5.0
`), 0o644)
	spec, err := report.Load(config)
	if err != nil {
		log.Fatal(err)
	}
	st, err := results.Open(filepath.Join(dir, "results.db"))
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	for split, v := range []float64{5.2, 5.4} {
		st.SaveRun(results.Run{ID: fmt.Sprint("r", split), Grid: "uci", Method: "sgpr", Dataset: "concrete",
			Split: split, Status: results.StatusDone}, []results.Metric{{Name: "rmse", Value: v}}, nil)
	}
	sum, err := report.Render(spec, st, filepath.Join(dir, "out"), report.Options{})
	if err != nil {
		log.Fatal(err)
	}
	md, _ := os.ReadFile(filepath.Join(dir, "out", "table-1.md"))
	fmt.Println(len(sum.Files), "files; profile", sum.Profile)
	fmt.Print(string(md[:len("### Test RMSE\n")]))
	// Output:
	// 4 files; profile full
	// ### Test RMSE
}
