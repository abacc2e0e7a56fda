package datasets

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
)

// WriteExampleCSV writes example.csv into dir: 600 rows of a smooth 2-D
// function plus noise, drawn with a fixed PCG seed, with a header
// (x1, x2, is_test, y) and a mask column marking a quarter of the rows as
// test rows. It is what experiments/csv.toml runs on, so the repository
// needs no data file. It returns the path written.
func WriteExampleCSV(dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	rng := rand.New(rand.NewPCG(2026, 12))
	var b strings.Builder
	b.WriteString("x1,x2,is_test,y\n")
	for i := 0; i < 600; i++ {
		x1, x2 := 4*rng.Float64()-2, 4*rng.Float64()-2
		f := math.Sin(2*x1) + 0.5*math.Cos(3*x2) + 0.3*x1*x2
		y := f + 0.1*rng.NormFloat64()
		test := 0
		if i%4 == 3 {
			test = 1
		}
		fmt.Fprintf(&b, "%.6f,%.6f,%d,%.6f\n", x1, x2, test, y)
	}
	path := filepath.Join(dir, "example.csv")
	return path, os.WriteFile(path, []byte(b.String()), 0o644)
}
