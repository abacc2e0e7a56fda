package methods

import (
	"context"
	"maps"
	"strings"
	"testing"

	"sgplab/gp/optim"
)

// TestResolveRecipe: what a grid's fit settings replace in a default
// recipe. An optimiser named by the grid replaces the default's and its
// natural gradients; natgrad_step asks for them; Adam's step is the
// grid's, else the default's, else optim's; with L-BFGS it is 0.
func TestResolveRecipe(t *testing.T) {
	ng := Recipe{Optimizer: optim.Adam, LearningRate: 0.05, NatGrad: 1, Iterations: 40}
	svgp, err := Lookup("svgp")
	if err != nil {
		t.Fatal(err)
	}
	withNG, err := svgp.Validate(map[string]any{"natgrad_step": 0.3})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		def  Recipe
		p    Params
		opt  FitOptions
		want Recipe
	}{
		{"defaults", ng, Params{}, FitOptions{Iterations: 7}, Recipe{Optimizer: optim.Adam, LearningRate: 0.05, NatGrad: 1, Iterations: 7}},
		{"named adam drops natural gradients", ng, Params{}, FitOptions{Optimizer: "adam"}, Recipe{Optimizer: optim.Adam, LearningRate: 0.05}},
		{"named lbfgs", ng, Params{}, FitOptions{Optimizer: "LBFGS", LearningRate: 0.2}, Recipe{Optimizer: optim.LBFGS}},
		{"grid rate", ng, Params{}, FitOptions{LearningRate: 0.2}, Recipe{Optimizer: optim.Adam, LearningRate: 0.2, NatGrad: 1}},
		{"natgrad_step", Recipe{Optimizer: optim.LBFGS}, withNG, FitOptions{Optimizer: "adam"}, Recipe{Optimizer: optim.Adam, LearningRate: optim.DefaultAdamLearningRate, NatGrad: 0.3}},
		{"optim's rate", Recipe{Optimizer: optim.LBFGS}, Params{}, FitOptions{Optimizer: "adam"}, Recipe{Optimizer: optim.Adam, LearningRate: optim.DefaultAdamLearningRate}},
		{"stop", Recipe{Optimizer: optim.LBFGS, StopTol: 1e-5}, Params{}, FitOptions{Stop: optim.Rule{Tol: 1e-3}}, Recipe{Optimizer: optim.LBFGS, StopTol: 1e-3}},
		{"no fit", Recipe{}, Params{}, FitOptions{Optimizer: "adam", Iterations: 3}, Recipe{Iterations: 3}},
	} {
		if got := resolveRecipe(tc.def, tc.p, tc.opt); got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

// TestDeclaredRecipeRuns: every method fits by the optimiser its declared
// default recipe names (the trace's phase), so that what `sgplab methods`
// shows and a run stores (Method.Recipe) is what runs.
func TestDeclaredRecipeRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("fits every method")
	}
	for _, m := range All() {
		c, ok := reproCases[m.Name]
		if !ok {
			c = reproDefault
		}
		t.Run(m.Name, func(t *testing.T) {
			raw := maps.Clone(c.raw)
			if raw == nil {
				raw = map[string]any{}
			}
			if paramDocOf(m, "init_iterations") != nil {
				raw["init_iterations"] = int64(0) // its phases are relabelled init/all
			}
			p, err := m.Validate(raw)
			if err != nil {
				t.Fatal(err)
			}
			train := reproData(1, min(c.n, 300), c.dim)
			opt := FitOptions{Iterations: 2, Seed: 1, Task: Regression}
			want := m.Recipe(p, opt, train.N())
			model, err := Build(m.Name, raw)
			if err != nil {
				t.Fatal(err)
			}
			phases := map[string]bool{}
			if _, err := model.Fit(context.Background(), train, opt, func(pr Progress) { phases[pr.Phase] = true }); err != nil {
				t.Fatal(err)
			}
			var ran []string
			for ph := range phases {
				ran = append(ran, ph)
			}
			phase := want.Optimizer
			if want.NatGrad > 0 {
				phase = "natgrad+adam"
			}
			switch {
			case want.Optimizer == "" && len(ran) > 0:
				t.Errorf("declared no optimisation, ran phases %v", ran)
			case want.Optimizer != "" && (len(ran) != 1 || !strings.HasPrefix(ran[0], phase)):
				t.Errorf("declared %s (phase %s), ran phases %v", want, phase, ran)
			}
		})
	}
}

func paramDocOf(m Method, name string) *ParamDoc {
	for i := range m.Params {
		if m.Params[i].Name == name {
			return &m.Params[i]
		}
	}
	return nil
}
