package methods

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
	"sgplab/gp/features"
	"sgplab/gp/inference"
	"sgplab/gp/kernels"
	"sgplab/gp/optim"
	"sgplab/gp/param"
)

// The re-selection loop never ends worse than its first round, leaves the
// parameters at the best round (re-evaluating the bound there gives the
// reported value) and stops within the round budget.
func TestReselectLoopImprovesAndRestores(t *testing.T) {
	train := iffTestData(200, 4)
	const m = 8
	k, err := kernels.New("se", 1, kernels.Options{Lengthscales: []float64{0.2}})
	if err != nil {
		t.Fatal(err)
	}
	set := param.NewSet()
	if err := k.Declare(set, "kernel."); err != nil {
		t.Fatal(err)
	}
	if err := set.AddScalar("noise_variance", 1, param.DefaultPositive); err != nil {
		t.Fatal(err)
	}
	zp := features.NewInducingPoints(mat.NewDense(m, 1, nil))
	zp.Fixed = true
	if err := zp.Declare(set, ""); err != nil {
		t.Fatal(err)
	}
	obj := func(tape *ad.Tape, b *param.Bound) (*ad.Node, error) {
		out, _, err := inference.SGPR(k.Bind(b, "kernel."), zp.Bind(b, ""), tape.Const(train.X), train.Y,
			b.Get("noise_variance"), inference.Options{Jitter: inference.DefaultJitter})
		return out, err
	}
	var perRound []float64
	trainRound := func(ctx context.Context, _ int) (optim.Report, error) {
		rep, err := optim.Train(ctx, set, obj, []optim.Phase{{
			Trainable: []string{"kernel.variance", "kernel.lengthscales", "noise_variance"},
			Settings:  optim.Settings{MaxIter: 100},
		}}, nil)
		perRound = append(perRound, rep.Objective)
		return rep, err
	}
	r := reselect{x: train.X, m: m, kern: k, kernelPrefix: "kernel.", zName: "z"}
	best, _, rounds, err := reselectLoop(context.Background(), set, r, 6, trainRound)
	if err != nil {
		t.Fatal(err)
	}
	if rounds < 2 || rounds > 6 || len(perRound) != rounds {
		t.Fatalf("ran %d rounds (%d trainings), want 2…6", rounds, len(perRound))
	}
	if best < perRound[0] {
		t.Errorf("best %v is below the first round %v", best, perRound[0])
	}
	for _, v := range perRound {
		if v > best {
			t.Errorf("a round reached %v above the reported best %v", v, best)
		}
	}
	tape := ad.NewTape()
	out, err := obj(tape, set.Bind(tape))
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(out.Scalar()-best) > 1e-9*math.Abs(best) {
		t.Errorf("bound at the restored parameters %v, reported best %v", out.Scalar(), best)
	}
	// Z is a set of distinct training inputs (greedy selection).
	z := set.Value("z")
	seen := map[float64]bool{}
	for i := 0; i < m; i++ {
		v := z.At(i, 0)
		found := false
		for j := 0; j < train.N(); j++ {
			if train.X.At(j, 0) == v {
				found = true
			}
		}
		if !found || seen[v] {
			t.Errorf("z[%d] = %v is not a distinct training input", i, v)
		}
		seen[v] = true
	}
}

func TestKMeansZDeterministic(t *testing.T) {
	train := iffTestData(300, 5)
	a, err := kmeansZ(train.X, 7, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	b, err := kmeansZ(train.X, 7, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := a.Dims(); r != 7 || !mat.Equal(a, b) {
		t.Errorf("k-means Z: %d centres, equal across identical seeds: %v", r, mat.Equal(a, b))
	}
}
