package runner

import (
	"fmt"

	"sgplab/methods"
)

// natGradParam is the method parameter that trains q(u) by natural
// gradients (methods.VariationalParams).
const natGradParam = "natgrad_step"

// checkNatGrad refuses natgrad_step with any optimizer but Adam. With
// natgrad_step, q(u) moves by natural gradients and every other parameter
// by Adam at learning_rate; there is no natural-gradient recipe with
// L-BFGS. An explicit optimizer = "lbfgs" used to fail every run at Fit,
// and a grid that left optimizer out ran natural gradients with Adam under
// a method whose default is L-BFGS while storing fit.optimizer = "": the
// grid must say "adam", so that what is stored is what ran.
func (x *expander) checkNatGrad(s *settings, m methods.Method, fa fitAxes) {
	if paramDoc(m, natGradParam) == nil {
		return
	}
	src := ""
	for _, layer := range []struct {
		key string
		t   map[string]any
	}{{s.key + "." + natGradParam, s.extra}, {s.key + ".method." + m.Name + "." + natGradParam, s.perMethod[m.Name]}, {s.key + ".params." + natGradParam, s.params}} {
		if _, ok := layer.t[natGradParam]; ok {
			src = layer.key
			break
		}
	}
	if src == "" {
		return
	}
	for _, opt := range fa.optimizers {
		if opt == "adam" {
			continue
		}
		got := fmt.Sprintf("optimizer = %q", opt)
		if opt == "" {
			got = "no optimizer (the method's default)"
		}
		x.f.errorf(x.es, src, "%s trains q(u) by natural gradients and every other parameter of method %s by Adam, but the grid gives %s; "+
			"set optimizer = \"adam\" in this grid or in [grid.method.%s] (learning_rate is Adam's step, default 0.01), or remove %s to train everything with one optimiser",
			natGradParam, m.Name, got, m.Name, natGradParam)
	}
}
