package optim_test

import (
	"context"
	"fmt"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
	"sgplab/gp/optim"
	"sgplab/gp/param"
)

// Fit the mean and variance of a Gaussian to data by maximum likelihood:
// first the mean alone, then both.
func ExampleTrain() {
	data := mat.NewDense(4, 1, []float64{1, 2, 4, 5})
	s := param.NewSet()
	_ = s.AddScalar("mean", 0, param.Identity{})
	_ = s.AddScalar("variance", 1, param.DefaultPositive)
	loglik := func(t *ad.Tape, b *param.Bound) (*ad.Node, error) {
		// Σ −½ (x − μ)²/σ² − ½ log σ² (constants dropped)
		d := ad.Sub(t.Const(data), ad.MulScalar(t.Const(mat.NewDense(4, 1, []float64{1, 1, 1, 1})), b.Get("mean")))
		v := b.Get("variance")
		quad := ad.DivScalar(ad.Sum(ad.Square(d)), v)
		return ad.Neg(ad.Add(ad.Scale(0.5, quad), ad.Scale(2, ad.Log(v)))), nil
	}
	rep, err := optim.Train(context.Background(), s, loglik, []optim.Phase{
		{Name: "mean", Trainable: []string{"mean"}, Settings: optim.Settings{MaxIter: 100}},
		{Name: "all", Settings: optim.Settings{MaxIter: 100}},
	}, nil)
	if err != nil {
		panic(err)
	}
	fmt.Printf("mean %.4f variance %.4f (%s)\n", s.Scalar("mean"), s.Scalar("variance"), rep.Status)
	// Output: mean 3.0000 variance 2.5000 (converged: gradient tolerance)
}
