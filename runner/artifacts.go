package runner

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"

	"gonum.org/v1/gonum/mat"

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
	// ArtifactField holds predictions of a model with 2-D inputs on a
	// fieldSize × fieldSize grid over the training inputs' box widened by
	// a tenth of its width on each side (coordinates as the model saw
	// them): x0, x1, mean, var_f and p = p(y = +1) (classification; NaN
	// for regression), x0 varying fastest — decision boundaries and 2-D
	// posterior means.
	ArtifactField = "field"
)

// fieldSize is the number of grid points per axis of ArtifactField.
const fieldSize = 81

// RunnerArtifacts lists the artifacts the runner produces for any method
// (z and q for any method that has inducing inputs and a stored q(u):
// methods.ArtifactZ, methods.ArtifactQ).
var RunnerArtifacts = []string{ArtifactPredictions, ArtifactTrain, ArtifactField, methods.ArtifactZ, methods.ArtifactQ}

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
		case ArtifactField:
			a, err := fieldArtifact(oc.data.Train, model)
			if err != nil {
				return nil, err
			}
			out = append(out, a)
		case methods.ArtifactZ, methods.ArtifactQ:
			a, err := methods.FittedArtifact(name, oc.fit.Fitted)
			if err != nil {
				return nil, fmt.Errorf("method %s: %w", spec.Method, err)
			}
			out = append(out, results.Artifact{Name: a.Name, Columns: a.Columns, Rows: a.Rows, Data: a.Data})
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

// fieldArtifact predicts on the ArtifactField grid.
func fieldArtifact(train gp.Data, model methods.Model) (results.Artifact, error) {
	n, dim := train.X.Dims()
	if dim != 2 || n == 0 {
		return results.Artifact{}, fmt.Errorf("artifact %q needs training data with 2 inputs, got %d × %d", ArtifactField, n, dim)
	}
	var lo, hi [2]float64
	for j := 0; j < 2; j++ {
		lo[j], hi[j] = math.Inf(1), math.Inf(-1)
		for i := 0; i < n; i++ {
			lo[j], hi[j] = math.Min(lo[j], train.X.At(i, j)), math.Max(hi[j], train.X.At(i, j))
		}
		w := hi[j] - lo[j]
		if w == 0 {
			w = 1
		}
		lo[j], hi[j] = lo[j]-w/10, hi[j]+w/10
	}
	g := mat.NewDense(fieldSize*fieldSize, 2, nil)
	for r := 0; r < fieldSize; r++ {
		for c := 0; c < fieldSize; c++ {
			g.Set(r*fieldSize+c, 0, lo[0]+(hi[0]-lo[0])*float64(c)/(fieldSize-1))
			g.Set(r*fieldSize+c, 1, lo[1]+(hi[1]-lo[1])*float64(r)/(fieldSize-1))
		}
	}
	p, err := model.Predict(g)
	if err != nil {
		return results.Artifact{}, fmt.Errorf("artifact %q: %w", ArtifactField, err)
	}
	m := fieldSize * fieldSize
	col := func(v []float64, i int) float64 {
		if len(v) == m {
			return v[i]
		}
		return nanValue
	}
	a := results.Artifact{Name: ArtifactField, Columns: []string{"x0", "x1", "mean", "var_f", "p"}, Rows: m}
	for i := 0; i < m; i++ {
		a.Data = append(a.Data, g.At(i, 0), g.At(i, 1), col(p.Mean, i), col(p.VarF, i), col(p.ProbPositive, i))
	}
	return a, nil
}

var nanValue = math.NaN()

func sortByFirstInput(order []int, d gp.Data) {
	sort.SliceStable(order, func(a, b int) bool { return d.X.At(order[a], 0) < d.X.At(order[b], 0) })
}
