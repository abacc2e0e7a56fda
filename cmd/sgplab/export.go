package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"sgplab/results"
	"sgplab/runner"
)

// exportArgs are the command line of `sgplab results export`.
type exportArgs struct {
	db, format, what, out, profile string
	filter                         results.ExportFilter
	configs                        []string // CONFIG.toml arguments: only their current runs
}

// cmdExport writes runs, metrics, hyperparameters, traces or an artifact of
// the selected runs to stdout (csv, json, table) or, for an artifact as
// npy, one file per run into a.out.
func cmdExport(a exportArgs, stdout, stderr io.Writer) error {
	path := a.db
	if len(a.configs) > 0 {
		ids, db, err := configRunIDs(a.configs, a.profile, stderr)
		if err != nil {
			return err
		}
		if path == "" {
			path = db
		}
		a.filter.IDs = ids
		// The profile chose the expansion: a grid the profile leaves as it
		// is keeps the full profile's runs, stored as full.
		a.filter.Profile = ""
	}
	if path == "" {
		return fmt.Errorf("export needs --db, the database to export, or a config file whose database to read")
	}
	if _, err := os.Stat(path); err != nil && len(a.configs) > 0 {
		return fmt.Errorf("no results database at %s yet: `sgplab run %s` fills it", path, strings.Join(a.configs, " "))
	}
	store, err := openChecked(path)
	if err != nil {
		return err
	}
	defer store.Close()
	if a.format == "npy" {
		if a.out == "" {
			return fmt.Errorf("--format npy writes one file per run: give -o DIR")
		}
		n, err := store.ExportNPY(a.out, a.what, a.filter)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "wrote %d %s array(s) and index.%s.csv to %s\n", n, a.what, a.what, a.out)
		return nil
	}
	if a.out != "" {
		return fmt.Errorf("-o is the directory of an npy export (or merge's output); csv, json and table go to stdout")
	}
	return store.ExportWhat(stdout, a.format, a.what, a.filter)
}

// configRunIDs expands config files under profile (every profile a file
// defines when empty) into the ids of their current runs, and returns the
// database the first file names.
func configRunIDs(paths []string, profile string, stderr io.Writer) (map[string]struct{}, string, error) {
	ids := map[string]struct{}{}
	db := ""
	for _, p := range paths {
		f, err := runner.Load(p)
		if err != nil {
			return nil, "", err
		}
		profiles := f.ProfileNames()
		if profile != "" {
			if _, err := f.Profile(profile); err != nil {
				return nil, "", err
			}
			profiles = []string{profile}
		}
		expected, err := expectedRuns(f, profiles, stderr)
		if err != nil {
			return nil, "", err
		}
		for _, list := range expected.IDs {
			for _, id := range list {
				ids[id] = struct{}{}
			}
		}
		if db == "" {
			db = defaultDB(f)
		} else if d := defaultDB(f); d != db {
			return nil, "", fmt.Errorf("config files %s and %s use different databases (%s, %s); give --db", paths[0], p, db, d)
		}
	}
	return ids, db, nil
}
