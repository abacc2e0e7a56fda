package main

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp"
)

// The reference recipe (docs/performance.md): X ~ N(0, I₈) from PCG(1, 2),
// y = Σ_d sin(x_d) + 0.1·ε drawn row by row, Z = the first M rows of X,
// SE-ARD kernel with lengthscale 1.5 and variance 1, noise variance 0.01.
// It is gp/inference's BenchmarkRecipe* data: the first rows do not depend
// on N, so every shape shares them.
const (
	refDim         = 8
	refLengthscale = 1.5
	refVariance    = 1.0
	refNoise       = 0.01
)

// meta is meta.json of a data directory: what both sides read.
type meta struct {
	Recipe      string  `json:"recipe"`
	N           int     `json:"n"`
	D           int     `json:"d"`
	Lengthscale float64 `json:"lengthscale"`
	Variance    float64 `json:"variance"`
	Noise       float64 `json:"noise_variance"`
	// X and Y are raw little-endian float64 files (X row-major N×D).
	X string `json:"x"`
	Y string `json:"y"`
	// Z maps M to a CSV of the inducing inputs (shortest round-trip
	// decimals, so both sides parse the same float64 bits).
	Z map[string]string `json:"z"`
}

// referenceData draws the reference recipe's first n rows.
func referenceData(n int) gp.Data {
	rng := rand.New(rand.NewPCG(1, 2))
	x := mat.NewDense(n, refDim, nil)
	y := make([]float64, n)
	for i := range n {
		for j := range refDim {
			v := rng.NormFloat64()
			x.Set(i, j, v)
			y[i] += math.Sin(v)
		}
		y[i] += 0.1 * rng.NormFloat64()
	}
	return gp.Data{X: x, Y: y}
}

// writeData writes the reference data of n rows and Z files for every M of
// ms into dir (created) and returns the meta.json it wrote.
func writeData(dir string, n int, ms []int) (meta, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return meta{}, err
	}
	d := referenceData(n)
	md := meta{Recipe: "X ~ N(0, I8) (PCG 1, 2), y = sum_d sin(x_d) + 0.1 eps, Z = first M rows",
		N: n, D: refDim, Lengthscale: refLengthscale, Variance: refVariance, Noise: refNoise,
		X: "x.f64", Y: "y.f64", Z: map[string]string{}}
	if err := writeFloats(filepath.Join(dir, md.X), d.X.RawMatrix().Data); err != nil {
		return meta{}, err
	}
	if err := writeFloats(filepath.Join(dir, md.Y), d.Y); err != nil {
		return meta{}, err
	}
	for _, m := range ms {
		if m > n {
			return meta{}, fmt.Errorf("M = %d exceeds N = %d", m, n)
		}
		name := fmt.Sprintf("z%d.csv", m)
		var b strings.Builder
		for i := range m {
			for j := range refDim {
				if j > 0 {
					b.WriteByte(',')
				}
				b.WriteString(strconv.FormatFloat(d.X.At(i, j), 'g', -1, 64))
			}
			b.WriteByte('\n')
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(b.String()), 0o644); err != nil {
			return meta{}, err
		}
		md.Z[strconv.Itoa(m)] = name
	}
	js, err := json.MarshalIndent(md, "", "  ")
	if err != nil {
		return meta{}, err
	}
	return md, os.WriteFile(filepath.Join(dir, "meta.json"), append(js, '\n'), 0o644)
}

// readData reads the data directory dir: its meta and the training data.
func readData(dir string) (meta, gp.Data, error) {
	var md meta
	js, err := os.ReadFile(filepath.Join(dir, "meta.json"))
	if err != nil {
		return md, gp.Data{}, err
	}
	if err := json.Unmarshal(js, &md); err != nil {
		return md, gp.Data{}, fmt.Errorf("%s/meta.json: %w", dir, err)
	}
	x, err := readFloats(filepath.Join(dir, md.X), md.N*md.D)
	if err != nil {
		return md, gp.Data{}, err
	}
	y, err := readFloats(filepath.Join(dir, md.Y), md.N)
	if err != nil {
		return md, gp.Data{}, err
	}
	return md, gp.Data{X: mat.NewDense(md.N, md.D, x), Y: y}, nil
}

func writeFloats(path string, v []float64) error {
	b := make([]byte, 8*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(f))
	}
	return os.WriteFile(path, b, 0o644)
}

func readFloats(path string, n int) ([]float64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(b) != 8*n {
		return nil, fmt.Errorf("%s: %d bytes, want %d float64 values", path, len(b), n)
	}
	v := make([]float64, n)
	for i := range v {
		v[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
	}
	return v, nil
}
