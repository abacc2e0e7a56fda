package param_test

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
	"sgplab/gp/param"
)

// A variance stored through softplus and a fixed offset: the optimiser's
// vector holds only the trainable raw value, and the gradient is taken with
// respect to it (chain rule through the transform included).
func ExampleSet() {
	s := param.NewSet()
	if err := s.AddScalar("variance", 2, param.Positive{}); err != nil {
		fmt.Println(err)
		return
	}
	if err := s.Add("offset", mat.NewDense(1, 2, []float64{1, -1}), param.Identity{}); err != nil {
		fmt.Println(err)
		return
	}
	s.SetTrainable(false, "offset")

	// objective = variance² + Σ offset
	t := ad.NewTape()
	b := s.Bind(t)
	out := ad.Add(ad.Square(b.Get("variance")), ad.Sum(b.Get("offset")))
	t.Backward(out)

	// d out / d u = 2·variance · sigmoid(u) = 4(1 − e⁻²), with variance = softplus(u) = 2.
	fmt.Printf("vector length %d, objective %.4f, gradient %.4f\n", s.Len(), out.Scalar(), b.Gradient()[0])
	for _, p := range s.Natural() {
		fmt.Println(p.Name, p.Value)
	}
	// Output:
	// vector length 1, objective 4.0000, gradient 3.4587
	// variance [2]
	// offset [1 -1]
}
