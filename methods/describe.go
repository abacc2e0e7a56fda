package methods

import (
	"fmt"
	"strconv"
	"strings"
)

// A DefaultLine is one topic of a method's defaults, for `sgplab methods`
// and docs/methods.md: e.g. {"kernel", "kernel = matern32, variance = 1,
// lengthscales = [1], ard = true"}.
type DefaultLine struct{ Topic, Text string }

// defaultTopics sort parameters into the topics a reader compares methods
// by; a parameter in none is listed with the others only.
var defaultTopics = []struct {
	topic  string
	params []string
}{
	{"kernel", []string{"kernel", "structure", "variance", "lengthscales", "ard", "weight_variances", "bias_variance", "train_weights", "train_hyper"}},
	{"likelihood", []string{"likelihood", "noise_variance"}},
	{"inducing variables", []string{"num_inducing", "num_orthogonal", "frequencies", "freqs_per_dim", "max_level", "bases", "num_features",
		"base", "orthogonal", "activation", "inducing_init", "directions_init", "train_inducing", "train_directions"}},
	{"q(u)", []string{"objective", "whiten", "covariance", "q_update", "init_iterations"}},
}

// Defaults describes the method's defaults by topic: its kernel and
// initial hyperparameters, likelihood, inducing variables and their
// initialisation, the parameterisation of q(u), and the fit recipe (Fit)
// of every case that differs (task, minibatches).
func (m Method) Defaults() []DefaultLine {
	docs := map[string]ParamDoc{}
	for _, d := range m.Params {
		docs[d.Name] = d
	}
	var out []DefaultLine
	for _, t := range defaultTopics {
		var parts []string

		for _, name := range t.params {
			d, ok := docs[name]
			if !ok {
				continue
			}
			v := FormatDefault(d)
			if d.Chooses != "" && d.Default == nil {
				v = "unset (" + d.Chooses + " sets M)"
			}
			parts = append(parts, name+" = "+v)
		}
		if t.topic == "q(u)" && m.QInit != "" {
			parts = append(parts, m.QInit)
		}
		if len(parts) > 0 {
			out = append(out, DefaultLine{t.topic, strings.Join(parts, ", ")})
		}
	}
	p, err := m.Validate(nil)
	if err != nil {
		return out
	}
	// One entry per distinct recipe, labelled by the cases it serves when
	// the cases differ.
	type group struct {
		r     Recipe
		cases []FitCase
	}
	var groups []*group
	for _, c := range m.FitCases(true) {
		r := m.DefaultFit(p, c)
		var g *group
		for _, h := range groups {
			if h.r == r {
				g = h
			}
		}
		if g == nil {
			g = &group{r: r}
			groups = append(groups, g)
		}
		g.cases = append(g.cases, c)
	}
	var fit []string
	for _, g := range groups {
		what := g.r.String()
		if len(groups) > 1 {
			what = describeCases(m, g.cases) + ": " + what
		}
		fit = append(fit, what)
	}
	text := strings.Join(fit, "; ")
	if m.FitDoc != "" {
		text += ". " + m.FitDoc
	}
	return append(out, DefaultLine{"fit", text})
}

// describeCases names a set of fit cases: "full batch", "with
// batch_size", a task, or both.
func describeCases(m Method, cs []FitCase) string {
	tasks, modes := map[Task]int{}, map[bool]int{}
	for _, c := range cs {
		tasks[c.Task]++
		modes[c.Minibatch]++
	}
	mode := func(mini bool) string {
		if mini {
			return "with batch_size"
		}
		return "full batch"
	}
	switch {
	case len(modes) == 1 && len(tasks) == len(m.Tasks):
		return mode(cs[0].Minibatch)
	case len(tasks) == 1 && len(modes) == 2:
		return string(cs[0].Task)
	}
	var parts []string
	for _, c := range cs {
		parts = append(parts, string(c.Task)+" "+mode(c.Minibatch))
	}
	return strings.Join(parts, ", ")
}

// FormatDefault is a parameter's default as a grid would spell it, or
// "(none)".
func FormatDefault(d ParamDoc) string {
	switch v := d.Default.(type) {
	case nil:
		return "(none)"
	case string:
		return strconv.Quote(v)
	case []float64:
		s := make([]string, len(v))
		for i, x := range v {
			s[i] = strconv.FormatFloat(x, 'g', -1, 64)
		}
		return "[" + strings.Join(s, ", ") + "]"
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	return fmt.Sprint(d.Default)
}

// Kernel is the kernel a run with parameters p uses ("" for a method
// without one).
func (m Method) Kernel(p Params) string {
	if m.KernelName != nil {
		return m.KernelName(p)
	}
	return p.String("kernel")
}

// fixedKernel is the KernelName of a method with one kernel.
func fixedKernel(name string) func(Params) string { return func(Params) string { return name } }

// KernelFamily is the family of a kernel name, what a comparison of
// methods should hold fixed: the kernel without its geometry (sphere-se
// and se are both SE; chordal-matern32 is Matérn-3/2) or additive
// structure (additive(matern52) is Matérn-5/2).
func KernelFamily(name string) string {
	if inner, ok := strings.CutPrefix(name, "additive("); ok {
		name = strings.TrimSuffix(inner, ")")
	}
	for _, geometry := range []string{"sphere-", "chordal-"} {
		name = strings.TrimPrefix(name, geometry)
	}
	return name
}

// Likelihood is the likelihood a run with parameters p uses on task
// ("" counts as regression): its likelihood parameter, "auto" resolved by
// the task, or Gaussian for a method without one.
func (m Method) Likelihood(p Params, task Task) string {
	switch l := p.String("likelihood"); {
	case l != "" && l != "auto":
		return l
	case l == "auto" && task == Classification:
		return "bernoulli"
	}
	return "gaussian"
}
