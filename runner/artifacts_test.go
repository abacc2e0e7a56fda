package runner

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"sgplab/results"
)

func TestRunStoresArtifacts(t *testing.T) {
	src := `
name = "t"
[[grid]]
name = "g"
methods = ["fake-mean"]
datasets = ["toy"]
iterations = 1
artifacts = ["train", "predictions"]
`
	runs, _, err := expand(t, src, "")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(runs[0].Canonical()), `"artifacts":["predictions","train"]`) {
		t.Fatalf("artifacts not in the run identity: %s", runs[0].Canonical())
	}
	plain, _, err := expand(t, strings.Replace(src, `artifacts = ["train", "predictions"]`, "", 1), "")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(plain[0].Canonical()), "artifacts") {
		t.Fatalf("a grid without artifacts changed its canonical spec: %s", plain[0].Canonical())
	}
	r, st := newRunner(t, filepath.Join(t.TempDir(), "a.db"))
	if sum, err := r.Run(context.Background(), runs); err != nil || sum.Done != 1 {
		t.Fatalf("%v %v", sum, err)
	}
	arts, err := st.Artifacts(runs[0].ID)
	if err != nil || len(arts) != 2 {
		t.Fatalf("artifacts %+v %v", arts, err)
	}
	pred, train := arts[0], arts[1]
	if pred.Name != "predictions" || pred.Rows != 20 || strings.Join(pred.Columns, ",") != "x0,y,mean,var_f,var_y" {
		t.Fatalf("predictions %+v", pred)
	}
	// The fake predicts the training mean (y = i%5 → 2) with unit variance.
	mean, _ := pred.Column("mean")
	vy, _ := pred.Column("var_y")
	x, _ := pred.Column("x0")
	if mean[7] != 2 || vy[7] != 1 || x[19] != 19 {
		t.Fatalf("mean %v var_y %v x %v", mean[7], vy[7], x[19])
	}
	if y, _ := train.Column("y"); train.Rows != 20 || y[6] != 1 {
		t.Fatalf("train %+v", train)
	}
}

func TestUnknownArtifactFailsTheRun(t *testing.T) {
	runs, _, err := expand(t, `
name = "t"
[[grid]]
name = "g"
methods = ["fake-mean"]
datasets = ["toy"]
iterations = 1
artifacts = ["kernel_matrix"]
`, "")
	if err != nil {
		t.Fatal(err)
	}
	r, st := newRunner(t, filepath.Join(t.TempDir(), "a.db"))
	if sum, err := r.Run(context.Background(), runs); err != nil || sum.Failed != 1 {
		t.Fatalf("%v %v", sum, err)
	}
	rr, _, _ := st.Run(runs[0].ID)
	if rr.Status != results.StatusFailed || !strings.Contains(rr.Error, "exports no artifacts") {
		t.Fatalf("run %s: %q", rr.Status, rr.Error)
	}
	if _, _, err := expand(t, `
name = "t"
[[grid]]
name = "g"
methods = ["fake-mean"]
datasets = ["toy"]
iterations = 1
artifacts = ["Bad Name"]
`, ""); err == nil || !strings.Contains(err.Error(), "snake case") {
		t.Fatalf("bad name error = %v", err)
	}
}
