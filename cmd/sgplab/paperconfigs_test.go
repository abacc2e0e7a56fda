package main

import (
	"path/filepath"
	"testing"

	"sgplab/datasets"
	"sgplab/report"
	"sgplab/runner"
)

// Every paper config parses, expands in each of its profiles (method and
// dataset names, parameters) and has a valid report section, so a config
// that `make reproduce-<paper>` would reject fails here first.
func TestPaperConfigsValidate(t *testing.T) {
	paths, err := filepath.Glob("../../paper_configs/*.toml")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no paper configs found: %v", err)
	}
	for _, p := range paths {
		t.Run(filepath.Base(p), func(t *testing.T) {
			f, err := runner.Load(p)
			if err != nil {
				t.Fatal(err)
			}
			for _, prof := range f.ProfileNames() {
				runs, _, err := f.Expand(runner.ExpandOptions{Profile: prof, ValidateDataset: datasets.Validate})
				if err != nil {
					t.Fatalf("profile %s: %v", prof, err)
				}
				if len(runs) == 0 {
					t.Errorf("profile %s expands to no runs", prof)
				}
			}
			if _, err := report.Load(p); err != nil {
				t.Fatal(err)
			}
		})
	}
}
