package methods

import "sgplab/gp"

// Artifact is an array a model exports after Fit for figures that need more
// than scalar metrics (e.g. an approximate kernel matrix): a Rows×len(Columns)
// table, row-major.
type Artifact struct {
	Name    string
	Columns []string
	Rows    int
	Data    []float64
}

// ArtifactModel is implemented by models that can export named arrays. The
// runner asks for the names a grid lists under `artifacts` that it does not
// produce itself ("predictions", "train").
type ArtifactModel interface {
	// Artifact computes the named array after Fit; test are the run's test
	// inputs. An unknown name is an error listing the names offered.
	Artifact(name string, train, test gp.Data) (Artifact, error)
}
