package runner

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"

	"sgplab/gp"
	"sgplab/methods"
	"sgplab/results"
)

// Artifacts the runner produces itself for any method; other names listed
// under a grid's `artifacts` key are asked of the model (methods.ArtifactModel).
const (
	// ArtifactPredictions holds the test inputs (x0, x1, …), the test targets
	// y in original units and the predictive mean, var_f and var_y, one row
	// per test point, sorted by x0 so 1-D curves draw directly.
	ArtifactPredictions = "predictions"
	// ArtifactTrain holds the training inputs and targets (x0, …, y) as the
	// model saw them.
	ArtifactTrain = "train"
)

// RunnerArtifacts lists the artifacts the runner produces for any method.
var RunnerArtifacts = []string{ArtifactPredictions, ArtifactTrain}

var artifactNameRE = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// buildArtifacts computes the artifacts a run asked for.
func buildArtifacts(spec *RunSpec, oc outcome, model methods.Model) ([]results.Artifact, error) {
	var out []results.Artifact
	for _, name := range spec.Artifacts {
		switch name {
		case ArtifactPredictions:
			a, err := predictionArtifact(oc)
			if err != nil {
				return nil, err
			}
			out = append(out, a)
		case ArtifactTrain:
			out = append(out, dataArtifact(name, oc.data.Train))
		default:
			am, ok := model.(methods.ArtifactModel)
			if !ok {
				return nil, fmt.Errorf("artifact %q: method %s exports no artifacts (the runner itself produces %v)", name, spec.Method, RunnerArtifacts)
			}
			a, err := am.Artifact(name, oc.data.Train, oc.data.Test)
			if err != nil {
				return nil, fmt.Errorf("artifact %q: %w", name, err)
			}
			ra := results.Artifact{Name: a.Name, Columns: a.Columns, Rows: a.Rows, Data: a.Data}
			if ra.Name == "" {
				ra.Name = name
			}
			if err := ra.Validate(); err != nil {
				return nil, err
			}
			out = append(out, ra)
		}
	}
	return out, nil
}

func inputColumns(d int) []string {
	cols := make([]string, d)
	for j := range cols {
		cols[j] = "x" + strconv.Itoa(j)
	}
	return cols
}

func dataArtifact(name string, d gp.Data) results.Artifact {
	n, dim := d.X.Dims()
	a := results.Artifact{Name: name, Columns: append(inputColumns(dim), "y"), Rows: n}
	for i := 0; i < n; i++ {
		for j := 0; j < dim; j++ {
			a.Data = append(a.Data, d.X.At(i, j))
		}
		a.Data = append(a.Data, d.Y[i])
	}
	return a
}

func predictionArtifact(oc outcome) (results.Artifact, error) {
	test := oc.data.Test
	if test.X == nil {
		return results.Artifact{}, fmt.Errorf("artifact %q needs a test set", ArtifactPredictions)
	}
	n, dim := test.X.Dims()
	p := oc.pred
	col := func(v []float64, i int) float64 {
		if len(v) == n {
			return v[i]
		}
		return nanValue
	}
	y := oc.data.TestY
	if y == nil {
		y = test.Y
	}
	scale, shift := oc.data.YScale, oc.data.YShift
	if scale == 0 {
		scale = 1
	}
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	sortByFirstInput(order, test)
	a := results.Artifact{Name: ArtifactPredictions, Columns: append(inputColumns(dim), "y", "mean", "var_f", "var_y"), Rows: n}
	for _, i := range order {
		for j := 0; j < dim; j++ {
			a.Data = append(a.Data, test.X.At(i, j))
		}
		// Predictions in the original units of y, like the scored metrics.
		a.Data = append(a.Data, col(y, i), shift+scale*col(p.Mean, i), scale*scale*col(p.VarF, i), scale*scale*col(p.VarY, i))
	}
	return a, nil
}

var nanValue = math.NaN()

func sortByFirstInput(order []int, d gp.Data) {
	sort.SliceStable(order, func(a, b int) bool { return d.X.At(order[a], 0) < d.X.At(order[b], 0) })
}
