package runner

import (
	"sgplab/gp/param"
	"sgplab/results"
)

// hyperRows flattens a fit's final hyperparameters into the rows of the
// hyperparameters table: one per entry, in the fit's order.
func hyperRows(hs []param.Named) []results.Hyperparameter {
	var out []results.Hyperparameter
	for _, h := range hs {
		for i, v := range h.Value {
			out = append(out, results.Hyperparameter{Name: h.Name, Index: i, Value: v})
		}
	}
	return out
}
