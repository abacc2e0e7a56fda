package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sgplab/internal/testhelp"
	"sgplab/methods"
)

// TestMethodsPageCurrent: docs/methods.md is what `sgplab methods
// --markdown` writes (regenerate with make docs, or go test ./cmd/sgplab
// -run TestMethodsPageCurrent -update). The page is made of the registered
// methods without this package's test doubles (cli-test-*).
func TestMethodsPageCurrent(t *testing.T) {
	var cli bytes.Buffer
	if code := Main([]string{"methods", "--markdown"}, &cli, &bytes.Buffer{}); code != 0 || !strings.HasPrefix(cli.String(), "# Methods\n") {
		t.Fatalf("methods --markdown: exit %d, %q…", code, cli.String()[:min(40, cli.Len())])
	}
	var real []methods.Method
	for _, m := range methods.All() {
		if !strings.HasPrefix(m.Name, "cli-test-") {
			real = append(real, m)
		}
	}
	var out bytes.Buffer
	if err := writeMethodsMarkdown(&out, real); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("..", "..", "docs", "methods.md")
	if *updateRunIDs {
		if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if out.String() != string(want) {
		n, _, _ := testhelp.FirstDiff(out.String(), string(want))
		t.Fatalf("docs/methods.md is stale from line %d (make docs regenerates it)", n)
	}
}

// TestMethodsShowDefaults: `sgplab methods` shows every method's fit
// recipe (optimiser, learning rate where Adam runs, iterations) and, for
// every method with a kernel parameter, the kernel and its initial
// hyperparameters, likelihood and q(u) defaults where it has them. Before,
// only the parameter table: no optimiser, learning rate or iterations.
func TestMethodsShowDefaults(t *testing.T) {
	var out, errb bytes.Buffer
	if code := Main([]string{"methods"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	blocks := map[string]string{}
	for _, b := range strings.Split(out.String(), "\n\n") {
		blocks[strings.Fields(b)[0]] = b
	}
	for _, m := range methods.All() {
		b := blocks[m.Name]
		if !strings.Contains(b, "\n  fit: ") {
			t.Errorf("%s: no fit recipe:\n%s", m.Name, b)
		}
		for _, p := range []struct{ param, topic string }{{"kernel", "kernel"}, {"noise_variance", "likelihood"}, {"whiten", "q(u)"}, {"num_inducing", "inducing variables"}} {
			for _, d := range m.Params {
				if d.Name == p.param && !strings.Contains(b, "\n  "+p.topic+": ") {
					t.Errorf("%s: has %s but shows no %s defaults", m.Name, p.param, p.topic)
				}
			}
		}
	}
	for _, want := range []string{
		"svgp — ", "  fit: full batch: L-BFGS, 10000 iterations at most (until converged at stop_tol 1e-05)",
		"natural gradients on q(u) (γ = 0.1) + Adam (learning rate 0.01) on the rest",
		"ski — ", "  fit: Adam (learning rate 0.1), 100 iterations",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("sgplab methods lacks %q", want)
		}
	}
}
