package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunBadFlagValues: a flag value run cannot use is a bad command line:
// exit 2, the flag and what to give instead first on stderr, nothing read
// or run (the database is not even created).
func TestRunBadFlagValues(t *testing.T) {
	dir := t.TempDir()
	grid := filepath.Join(dir, "g.toml")
	if err := os.WriteFile(grid, []byte(signalGrid), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		flags []string
		want  string
	}{
		{[]string{"--jobs", "0"}, "--jobs 0: want at least 1"},
		{[]string{"--jobs", "-3"}, "--jobs -3: want at least 1"},
		{[]string{"--shard", "5/4"}, `invalid --shard "5/4": want i/n with 0 ≤ i < n`},
		{[]string{"--shard", "4/4"}, `invalid --shard "4/4"`},
		{[]string{"--shard", "-1/4"}, `invalid --shard "-1/4"`},
		{[]string{"--shard", "1/0"}, `invalid --shard "1/0"`},
		{[]string{"--shard", "half"}, `invalid --shard "half"`},
		{[]string{"--heartbeat", "0s"}, "--heartbeat 0s is shorter than the minimum 1s"},
		{[]string{"--heartbeat", "1ns"}, "--heartbeat 1ns is shorter than the minimum 1s"},
		{[]string{"--heartbeat", "999ms"}, "--heartbeat 999ms is shorter than the minimum 1s"},
		{[]string{"--heartbeat", "-5s"}, "--heartbeat -5s is shorter than the minimum 1s"},
		{[]string{"--time-limit", "-1s"}, "--time-limit -1s is negative; 0 means no limit"},
		{[]string{"--busy-timeout", "-1s"}, "--busy-timeout -1s: want a positive wait"},
		{[]string{"--busy-timeout", "0s"}, "--busy-timeout 0s: want a positive wait"},
		{[]string{"--mem-limit", "0"}, "--mem-limit 0 is not positive"},
		{[]string{"--mem-limit", "-1GiB"}, `--mem-limit: memory size "-1GiB" is out of range`},
		{[]string{"--mem-limit", "4G"}, "G is ambiguous; write 4GiB (powers of 1024) or 4GB (powers of 1000)"},
		{[]string{"--mem-limit", "lots"}, `--mem-limit: memory size "lots": want a number of bytes`},
		{[]string{"--profile", "bogus"}, `--profile "bogus" (or $PROFILE): want full or quick`},
		{[]string{"--time-limit", "soon"}, `invalid value "soon" for flag -time-limit`},
	} {
		t.Run(strings.Join(c.flags, " "), func(t *testing.T) {
			db := filepath.Join(dir, "never.db")
			code, out, errOut := sgplab(append(append([]string{"run"}, c.flags...), "--db", db, grid)...)
			if code != 2 || !strings.Contains(strings.SplitN(errOut, "\n", 2)[0], c.want) {
				t.Errorf("exit %d, want 2 with %q on the first line of stderr\nstdout:\n%s\nstderr:\n%s", code, c.want, out, errOut)
			}
			if _, err := os.Stat(db); err == nil {
				t.Errorf("the database was created")
			}
		})
	}
	// The smallest accepted values pass the checks.
	if code, out, errOut := sgplab("run", "--dry-run", "--jobs", "1", "--shard", "3/4", "--heartbeat", "1s", "--time-limit", "0s",
		"--busy-timeout", "1ms", "--mem-limit", "1B", "--profile", "full", "--db", filepath.Join(dir, "r.db"), grid); code != 0 {
		t.Errorf("smallest valid values: exit %d\n%s%s", code, out, errOut)
	}
}

// TestRunJobsFromProfile: without --jobs, run takes the profile's jobs key
// (the smallest over the files swept together, a file without it counting
// as 1) and says where the number came from; --jobs wins over it.
func TestRunJobsFromProfile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, extra string) string {
		path := filepath.Join(dir, name)
		src := strings.Replace(signalGrid, `"cli-test-mean", "cli-test-block"`, `"cli-test-mean"`, 1) + extra
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	two := write("two.toml", "[profiles.quick]\nnote = \"n\"\njobs = 2\n")
	none := write("none.toml", "[profiles.quick]\nnote = \"n\"\n")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--profile", "quick", two}, "2 job(s) from profile quick,"},
		{[]string{"--profile", "full", two}, "1 job(s),"},
		{[]string{"--profile", "quick", "--jobs", "1", two}, "1 job(s),"},
		{[]string{"--profile", "quick", "--jobs", "3", two}, "3 job(s),"},
		{[]string{"--profile", "quick", none}, "1 job(s),"},
		{[]string{"--profile", "quick", two, none}, "1 job(s) from profile quick,"},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			args := append([]string{"run", "--isolate=false", "--force", "--db", filepath.Join(dir, "r.db")}, c.args...)
			code, out, errOut := sgplab(args...)
			if code != 0 || !strings.Contains(out, c.want) {
				t.Errorf("exit %d, want 0 and %q in stdout\nstdout:\n%s\nstderr:\n%s", code, c.want, out, errOut)
			}
		})
	}
}
