package runner

import (
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

var updateIDs = flag.Bool("update-ids", false, "rewrite testdata/run_ids.golden from the current configs")

// TestRunIDsUnchanged guards the run ids of experiments/*.toml: a run id is
// the hash of the run's canonical spec, and a database keeps a run under
// it, so a change to how specs are sealed (a new optional grid key such as
// stop_tol, say) must leave the ids of grids that do not use it alone, or
// every stored result would silently be orphaned and re-run. The golden
// file holds, per config and profile, the number of runs and the sha256 of
// their ids in expansion order. A deliberate change (a config edited, a
// method default changed) is recorded with
//
//	go test ./runner -run TestRunIDsUnchanged -update-ids
func TestRunIDsUnchanged(t *testing.T) {
	paths, err := filepath.Glob("../experiments/*.toml")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no experiments: %v", err)
	}
	sort.Strings(paths)
	var lines []string
	for _, p := range paths {
		f, err := Load(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, prof := range []string{FullProfile, QuickProfile} {
			if _, ok := f.Profiles[prof]; !ok && prof != FullProfile {
				continue
			}
			runs, _, err := f.Expand(ExpandOptions{Profile: prof})
			if err != nil {
				lines = append(lines, fmt.Sprintf("%s %s error", filepath.Base(p), prof))
				continue
			}
			h := sha256.New()
			for _, r := range runs {
				fmt.Fprintln(h, r.ID)
			}
			lines = append(lines, fmt.Sprintf("%s %s %d %s", filepath.Base(p), prof, len(runs), hex.EncodeToString(h.Sum(nil))[:16]))
		}
	}
	got := strings.Join(lines, "\n") + "\n"
	golden := filepath.Join("testdata", "run_ids.golden")
	if *updateIDs {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (create it with -update-ids)", err)
	}
	if got != string(want) {
		t.Errorf("run ids of experiments/*.toml changed:\ngot\n%swant\n%sif the change is deliberate, run go test ./runner -run TestRunIDsUnchanged -update-ids", got, want)
	}
}
