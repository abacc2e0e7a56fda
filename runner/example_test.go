package runner_test

import (
	"fmt"
	"log"

	"sgplab/runner"
)

// Example expands a small grid: every list is a Cartesian product, each run
// gets a stable id (the hash of its canonical spec, so a re-run resumes and
// shards never overlap), and Shard splits the runs among processes.
func Example() {
	const grid = `
name = "example"
[[grid]]
name = "sparse"
methods = ["sgpr", "svgp"]
datasets = ["gp-sample"]
splits = [0, 1]
iterations = 50
[grid.params]
num_inducing = [10, 20]
[[grid.exclude]]
method = "svgp"
num_inducing = 10
`
	f, err := runner.Parse("example.toml", grid)
	if err != nil {
		log.Fatal(err)
	}
	runs, warnings, err := f.Expand(runner.ExpandOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(runs), "runs,", len(warnings), "warnings")
	for _, r := range runs {
		fmt.Printf("%s split=%d num_inducing=%v id=%d hex digits\n", r.Method, r.Split, r.Params["num_inducing"], len(r.ID))
	}
	first, err := runner.Shard(runs, 0, 2)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("shard 0/2 runs", len(first))
	// Output:
	// 6 runs, 0 warnings
	// sgpr split=0 num_inducing=10 id=16 hex digits
	// sgpr split=0 num_inducing=20 id=16 hex digits
	// svgp split=0 num_inducing=20 id=16 hex digits
	// sgpr split=1 num_inducing=10 id=16 hex digits
	// sgpr split=1 num_inducing=20 id=16 hex digits
	// svgp split=1 num_inducing=20 id=16 hex digits
	// shard 0/2 runs 3
}
