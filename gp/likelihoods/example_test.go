package likelihoods_test

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
	"sgplab/gp/likelihoods"
	"sgplab/gp/param"
)

func Example() {
	lik, err := likelihoods.New("bernoulli")
	if err != nil {
		panic(err)
	}
	s := param.NewSet()
	if err := lik.Declare(s, "likelihood."); err != nil {
		panic(err)
	}
	t := ad.NewTape()
	b := s.Bind(t)
	mu := t.Var(mat.NewDense(2, 1, []float64{0.5, -1}))
	v := t.Var(mat.NewDense(2, 1, []float64{0.2, 1}))
	y := mat.NewDense(2, 1, []float64{1, 1})
	ve := lik.VarExp(b, "likelihood.", mu, v, y)
	fmt.Printf("E[log Φ(yf)] = %.4f, %.4f\n", ve.Value().At(0, 0), ve.Value().At(1, 0))
	p, _ := lik.Predict(s, "likelihood.", []float64{0.5, -1}, []float64{0.2, 1})
	fmt.Printf("p(y=+1) = %.4f, %.4f\n", p[0], p[1])
	// Output:
	// E[log Φ(yf)] = -0.4199, -2.2318
	// p(y=+1) = 0.6760, 0.2398
}
