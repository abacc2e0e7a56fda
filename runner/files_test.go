package runner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sgplab/results"
)

// TestFileContentInRunID: a file parameter's sha256 is part of the run id,
// so editing the file makes new runs, and a run whose file changed after
// expansion fails instead of recording the new content under the old id.
func TestFileContentInRunID(t *testing.T) {
	dir := t.TempDir()
	z := filepath.Join(dir, "z.csv")
	write := func(s string) {
		if err := os.WriteFile(z, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	src := base + "[grid.method.fake-mean]\nz_file = \"" + z + "\"\n"
	ids := func() ([]*RunSpec, map[string]bool) {
		t.Helper()
		runs, _, err := expand(t, src, "")
		if err != nil {
			t.Fatal(err)
		}
		set := map[string]bool{}
		for _, r := range runs {
			set[r.ID] = true
		}
		return runs, set
	}
	write("0.1\n0.5\n")
	runs1, a := ids()
	_, again := ids()
	write("0.1\n0.6\n")
	runs2, b := ids()
	for id := range a {
		if !again[id] {
			t.Errorf("run id %s not stable for unchanged file content", id)
		}
		if b[id] {
			t.Errorf("run id %s reused after the z_file content changed", id)
		}
	}
	if got := runs1[0].Files["z_file"]; len(got) != 64 || got == runs2[0].Files["z_file"] {
		t.Errorf("Files[z_file] = %q and %q, want two different sha256 hex digests", got, runs2[0].Files["z_file"])
	}
	if !strings.Contains(string(runs2[0].Canonical()), `"files":{"z_file":"`+runs2[0].Files["z_file"]+`"}`) {
		t.Errorf("canonical spec lacks the file hash: %s", runs2[0].Canonical())
	}
	var flat []string
	for _, p := range runs2[0].FlatParams() {
		flat = append(flat, p[0]+"="+p[1])
	}
	if !strings.Contains(strings.Join(flat, " "), "sha256.z_file="+runs2[0].Files["z_file"]) {
		t.Errorf("flat params lack sha256.z_file: %v", flat)
	}

	// runs2 were expanded with the second content; editing the file again
	// before they run fails them with a message that says so.
	write("0.1\n0.7\n")
	r, st := newRunner(t, filepath.Join(dir, "r.db"))
	sum, err := r.Run(context.Background(), runs2[:1])
	if err != nil {
		t.Fatal(err)
	}
	if sum.Failed != 1 {
		t.Fatalf("summary %v, want the run failed", sum)
	}
	rec, _, err := st.Run(runs2[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Status != results.StatusFailed || !strings.Contains(rec.Error, "z_file "+z+" changed since the grid was expanded") {
		t.Errorf("run %s: %q, want failed because z_file changed", rec.Status, rec.Error)
	}
	// Unchanged content runs and records the hash in provenance.
	runs3, _ := ids()
	if _, err := r.Run(context.Background(), runs3[:1]); err != nil {
		t.Fatal(err)
	}
	rec, _, _ = st.Run(runs3[0].ID)
	if rec.Status != results.StatusDone || !strings.Contains(rec.Provenance, `"InputFiles":{"z_file":"`+runs3[0].Files["z_file"]) {
		t.Errorf("run %s, provenance %s: want done with the z_file hash", rec.Status, rec.Provenance)
	}
}

// paramErr is a dataset check's error about one dataset parameter, as
// datasets.ParamError.
type paramErr struct{ param string }

func (e paramErr) Error() string        { return "no column " + e.param }
func (e paramErr) DatasetParam() string { return e.param }

// TestDatasetErrorAtParamLine: a dataset check's error that names a
// dataset parameter (a user CSV's misspelt target) is reported at that
// parameter's line, other errors at the grid's datasets line.
func TestDatasetErrorAtParamLine(t *testing.T) {
	src := base + "[grid.dataset]\nfile = \"d.csv\"\ntarget = \"Y\"\n"
	for _, c := range []struct {
		err  error
		want string
	}{
		{paramErr{"target"}, `test.toml:14: grid[0].dataset.target: dataset "toy": no column target`},
		{paramErr{"inputs"}, `test.toml:12: grid[0].dataset.inputs: dataset "toy": no column inputs`}, // not in the file: its table's line
		{errors.New("no test set"), `test.toml:6: grid[0].datasets: dataset "toy": no test set`},
	} {
		f, err := Parse("test.toml", src)
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = f.Expand(ExpandOptions{ValidateDataset: func(string, map[string]any) error { return nil },
			CheckRun: func(string, map[string]any, string, string, []int) error { return c.err }})
		if err == nil || err.Error() != c.want {
			t.Errorf("error %v, want %q", err, c.want)
		}
	}
}
