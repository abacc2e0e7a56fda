package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"sgplab/results"
)

// sgplabWrapper writes an executable that runs this test binary as sgplab
// (see TestMain), so the deploy scripts can call "$SGPLAB".
func sgplabWrapper(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "sgplab")
	script := "#!/bin/sh\nIFS=$(printf '\\037')\nSGPLAB_CLI_TEST_ARGS=\"$*\" exec " + os.Args[0] + " -test.run='^$'\n"
	script = strings.Replace(script, "SGPLAB_CLI_TEST_ARGS=", "export SGPLAB_CLI_TEST_ARGS; SGPLAB_CLI_TEST_ARGS=", 1)
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// runScript runs a deploy script with bash from the repository root.
func runScript(t *testing.T, script string, env ...string) (int, string) {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", script)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), string(out)
	} else if err != nil {
		t.Fatal(err)
	}
	return 0, string(out)
}

// metricsOf reads every run's status and metrics as text, leaving out what
// measures the machine rather than the run: timings and the load average.
func metricsOf(t *testing.T, db string) map[string]string {
	t.Helper()
	st, err := results.OpenReadOnly(db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	_, rows, err := st.Query(`SELECT r.id, r.status, group_concat(m.name || '=' || quote(m.value), ' ')
		FROM runs r LEFT JOIN (SELECT * FROM metrics WHERE name NOT LIKE '%second%' AND name NOT LIKE 'x_load_avg%' AND name NOT LIKE 'x_peak_rss%' ORDER BY name) m ON m.run_id = r.id
		GROUP BY r.id`)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, r := range rows {
		out[r[0].(string)] = fmt.Sprint(r[1], " ", r[2])
	}
	return out
}

// TestDeployScripts runs the body of the Slurm array job for every index
// (as Slurm would, with SLURM_ARRAY_TASK_ID/COUNT) and the Kubernetes
// Indexed Job body (JOB_COMPLETION_INDEX), then the merge job, and checks
// that the merged database equals an unsharded sweep of the same grid.
func TestDeployScripts(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash not found")
	}
	dir, _ := filepath.Abs(t.TempDir())
	sgplabBin := sgplabWrapper(t, dir)
	grid := filepath.Join(dir, "g.toml")
	if err := os.WriteFile(grid, []byte(strings.Replace(workGrid, "seeds = [0, 1]", "seeds = [0]", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	whole := filepath.Join(dir, "whole.db")
	if code, out, errOut := sgplab("run", "--db", whole, grid); code != 0 {
		t.Fatalf("unsharded run: exit %d\n%s%s", code, out, errOut)
	}
	want := metricsOf(t, whole)
	if len(want) != 12 {
		t.Fatalf("unsharded sweep has %d runs, want 12", len(want))
	}

	const n = 5 // does not divide 12: shards differ in size
	for _, c := range []struct {
		name  string
		index func(i int) []string
		body  string
	}{
		{"slurm", func(i int) []string {
			return []string{fmt.Sprintf("SLURM_ARRAY_TASK_ID=%d", i), fmt.Sprintf("SLURM_ARRAY_TASK_COUNT=%d", n)}
		}, "deploy/slurm/shard.sbatch"},
		{"kubernetes", func(i int) []string {
			return []string{fmt.Sprintf("JOB_COMPLETION_INDEX=%d", i), fmt.Sprintf("SHARDS=%d", n)}
		}, "deploy/shard.sh"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(dir, c.name)
			env := []string{"CONFIG=" + grid, "OUT=" + out, "SGPLAB=" + sgplabBin, "SLURM_SUBMIT_DIR=."}
			merge := append([]string{fmt.Sprintf("SHARDS=%d", n)}, env...)
			// Before any shard ran, the merge has nothing and says so.
			if code, log := runScript(t, "deploy/slurm/merge.sbatch", merge...); code != 1 || !strings.Contains(log, "no shard database") {
				t.Errorf("merge before the shards: exit %d\n%s", code, log)
			}
			for i := 0; i < n; i++ {
				if code, log := runScript(t, c.body, append(env, c.index(i)...)...); code != 0 {
					t.Fatalf("shard %d: exit %d\n%s", i, code, log)
				}
			}
			code, log := runScript(t, "deploy/slurm/merge.sbatch", merge...)
			if code != 0 {
				t.Fatalf("merge: exit %d\n%s", code, log)
			}
			got := metricsOf(t, filepath.Join(out, "results.db"))
			if len(got) != len(want) {
				t.Errorf("merged %d runs, unsharded %d", len(got), len(want))
			}
			for id, w := range want {
				if got[id] != w {
					t.Errorf("run %s: merged %q, unsharded %q", id, got[id], w)
				}
			}
			// A shard that never ran: merge exits 3 and names it.
			os.Remove(filepath.Join(out, "shard-2.db"))
			os.Remove(filepath.Join(out, "results.db"))
			if code, log := runScript(t, "deploy/slurm/merge.sbatch", merge...); code != 3 || !strings.Contains(log, "shard-2.db is missing") {
				t.Errorf("merge without shard 2: exit %d, want 3 naming the missing shard\n%s", code, log)
			}
		})
	}
	if code, log := runScript(t, "deploy/shard.sh", "CONFIG="+grid, "OUT="+dir, "SHARDS=2"); code != 2 || !strings.Contains(log, "no shard index") {
		t.Errorf("shard.sh without an index: exit %d\n%s", code, log)
	}
}

// TestDeployManifestsAgree: the Kubernetes manifests and the Slurm scripts
// call the tested script bodies, and each manifest's completions equals
// its SHARDS (the n of --shard i/n).
func TestDeployManifestsAgree(t *testing.T) {
	read := func(p string) string {
		b, err := os.ReadFile(filepath.Join("..", "..", p))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	sweep, merge := read("deploy/kubernetes/sweep-job.yaml"), read("deploy/kubernetes/merge-job.yaml")
	if !strings.Contains(sweep, "completionMode: Indexed") || !strings.Contains(sweep, `command: ["sh", "deploy/shard.sh"]`) {
		t.Error("sweep-job.yaml is not an Indexed Job running deploy/shard.sh")
	}
	if !strings.Contains(merge, `command: ["sh", "deploy/merge.sh"]`) {
		t.Error("merge-job.yaml does not run deploy/merge.sh")
	}
	completions := regexp.MustCompile(`completions: (\d+)`).FindStringSubmatch(sweep)
	for _, m := range []string{sweep, merge} {
		shards := regexp.MustCompile(`name: SHARDS, value: "(\d+)"`).FindStringSubmatch(m)
		if completions == nil || shards == nil || completions[1] != shards[1] {
			t.Errorf("completions %v and SHARDS %v differ", completions, shards)
		}
	}
	if s := read("deploy/slurm/submit.sh"); !strings.Contains(s, "--dependency=\"afterany:") || !strings.Contains(s, "shard.sbatch") || !strings.Contains(s, "merge.sbatch") {
		t.Error("submit.sh does not queue the array and the dependent merge job")
	}
}
