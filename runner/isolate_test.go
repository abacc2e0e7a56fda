package runner

import (
	"bytes"
	"context"
	"encoding/gob"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestRunSpecSurvivesTheChildPipe: every run of every grid and paper
// config in the repository, in every profile, reaches a child process
// unchanged: the same values with the same Go types (a method reads an
// Int parameter as int), the same canonical JSON and id.
func TestRunSpecSurvivesTheChildPipe(t *testing.T) {
	var paths []string
	for _, g := range []string{"../experiments/*.toml", "../paper_configs/*.toml"} {
		p, _ := filepath.Glob(g)
		paths = append(paths, p...)
	}
	checked := 0
	for _, p := range paths {
		f, err := Load(p)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		for _, prof := range f.ProfileNames() {
			specs, _, err := f.Expand(ExpandOptions{Profile: prof})
			if err != nil {
				t.Logf("%s profile %s does not expand here (%v); skipped", p, prof, err)
				continue
			}
			for _, s := range specs {
				var buf bytes.Buffer
				if err := gob.NewEncoder(&buf).Encode(childRequest{Spec: *s, MemLimit: 1 << 30}); err != nil {
					t.Fatalf("%s: run %s: %v", p, s.ID, err)
				}
				var got childRequest
				if err := gob.NewDecoder(&buf).Decode(&got); err != nil {
					t.Fatalf("%s: run %s: %v", p, s.ID, err)
				}
				if err := got.Spec.seal(); err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(&got.Spec, s) || got.MemLimit != 1<<30 {
					t.Fatalf("%s: run %s changed on its way to the child:\nsent %#v\ngot  %#v", p, s.ID, *s, got.Spec)
				}
				checked++
			}
		}
	}
	if checked < 1000 {
		t.Errorf("only %d runs checked; the configs expand to far more", checked)
	}
	t.Logf("%d runs checked", checked)
}

func TestParseBytes(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
		err  string
	}{
		{"512MiB", 512 << 20, ""},
		{"1.5GiB", 3 << 29, ""},
		{"2 GiB", 2 << 30, ""},
		{"800MB", 800e6, ""},
		{"4kB", 4000, ""},
		{"1048576", 1 << 20, ""},
		{"100B", 100, ""},
		{"4G", 0, "ambiguous; write 4GiB"},
		{"512m", 0, "ambiguous"},
		{"lots", 0, "want a number of bytes"},
		{"", 0, "want a number of bytes"},
		{"NaNMiB", 0, "want a number of bytes"},
		{"-1GiB", 0, "out of range"},
		{"1e30GiB", 0, "out of range"},
	} {
		got, err := ParseBytes(c.in)
		switch {
		case c.err == "" && (err != nil || got != c.want):
			t.Errorf("ParseBytes(%q) = %d, %v; want %d", c.in, got, err, c.want)
		case c.err != "" && (err == nil || !bytes.Contains([]byte(err.Error()), []byte(c.err))):
			t.Errorf("ParseBytes(%q) = %d, %v; want an error saying %q", c.in, got, err, c.err)
		}
	}
	for n, want := range map[int64]string{512: "512 B", 100 << 20: "100 MiB", 3 << 29: "1.5 GiB", 5 << 40: "5 TiB"} {
		if got := FormatBytes(n); got != want {
			t.Errorf("FormatBytes(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestIsolationNeedsAChildCommand: a Runner asked to isolate runs, or given
// a memory limit, without a way to start a child refuses before any run.
func TestIsolationNeedsAChildCommand(t *testing.T) {
	runs, _, err := expand(t, mixed, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, set := range []func(*Runner){
		func(r *Runner) { r.Isolate = true },
		func(r *Runner) { r.MemLimit = 1 << 30 },
		func(*Runner) { runs[1].MemLimit = 1 << 30 },
	} {
		r, st := newRunner(t, filepath.Join(t.TempDir(), "r.db"))
		set(r)
		if _, err := r.Run(context.Background(), runs); err == nil || !strings.Contains(err.Error(), "no ChildCommand") {
			t.Errorf("Run: %v, want an error saying there is no ChildCommand", err)
		}
		if n := count(t, st, "SELECT COUNT(*) FROM runs"); n != 0 {
			t.Errorf("%d runs recorded", n)
		}
	}
}
