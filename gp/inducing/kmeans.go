package inducing

import (
	"errors"
	"math"
	"math/rand/v2"
	"sync/atomic"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"sgplab/internal/goroutines"
)

// KMeansMaxIter bounds Lloyd's iterations; they usually stop far earlier,
// when no assignment changes.
const KMeansMaxIter = 300

// KMeansRelTol stops Lloyd's iterations when an iteration improves the
// objective by less than this fraction.
const KMeansRelTol = 1e-4

// chunkRows fixes the work split of the assignment step independently of
// the number of cores, so results do not depend on the machine.
const chunkRows = 4096

// KMeans clusters the rows of x into m groups and returns the centres:
// k-means++ seeding (Arthur & Vassilvitskii 2007) followed by Lloyd
// iterations until no point changes cluster or the objective improves by
// less than KMeansRelTol. An emptied cluster is moved to
// the point farthest from its centre. The result depends only on x, m and
// the state of rng.
func KMeans(x *mat.Dense, m int, rng *rand.Rand) (*mat.Dense, error) {
	if _, _, err := checkArgs("KMeans", x, m); err != nil {
		return nil, err
	}
	if rng == nil {
		return nil, errors.New("inducing: KMeans: nil random source")
	}
	centres := kmeansPlusPlus(x, m, rng)
	lloyd(x, centres)
	return centres, nil
}

func sqDist(a, b []float64) float64 {
	var s float64
	for i, v := range a {
		d := v - b[i]
		s += d * d
	}
	return s
}

// kmeansPlusPlus draws the first centre uniformly, then each next one with
// probability proportional to its squared distance to the nearest centre.
func kmeansPlusPlus(x *mat.Dense, m int, rng *rand.Rand) *mat.Dense {
	n, d := x.Dims()
	c := mat.NewDense(m, d, nil)
	first := rng.IntN(n)
	c.SetRow(0, x.RawRowView(first))
	dist := make([]float64, n)
	for i := range dist {
		dist[i] = sqDist(x.RawRowView(i), c.RawRowView(0))
	}
	for k := 1; k < m; k++ {
		total := floats.Sum(dist)
		pick := -1
		if total > 0 {
			u := rng.Float64() * total
			var acc float64
			for i, v := range dist {
				acc += v
				if v > 0 && acc >= u {
					pick = i
					break
				}
			}
			if pick < 0 { // rounding at the end of the cumulative sum
				pick = floats.MaxIdx(dist)
			}
		} else {
			pick = rng.IntN(n) // every point coincides with a centre
		}
		c.SetRow(k, x.RawRowView(pick))
		ck := c.RawRowView(k)
		for i := range dist {
			dist[i] = math.Min(dist[i], sqDist(x.RawRowView(i), ck))
		}
	}
	return c
}

// assign sets label[i] to the nearest centre of row i and returns the
// number of changed labels and the k-means objective Σ‖xᵢ − c_label‖².
func assign(x, c *mat.Dense, label []int, dist []float64) (changed int, obj float64) {
	n, _ := x.Dims()
	m, _ := c.Dims()
	nChunks := (n + chunkRows - 1) / chunkRows
	changes := make([]int, nChunks)
	objs := make([]float64, nChunks)
	_, d := x.Dims()
	cd := make([]float64, 0, m*d) // centres, contiguous
	for k := 0; k < m; k++ {
		cd = append(cd, c.RawRowView(k)...)
	}
	work := func(ch int) {
		lo, hi := ch*chunkRows, min((ch+1)*chunkRows, n)
		for i := lo; i < hi; i++ {
			xi := x.RawRowView(i)
			best, bestD := 0, math.Inf(1)
			for k := 0; k < m; k++ {
				ck := cd[k*d : (k+1)*d]
				var dk float64
				for j, v := range xi {
					t := v - ck[j]
					dk += t * t
					if dk >= bestD {
						break // cannot win; saves most of the work for far centres
					}
				}
				if dk < bestD {
					best, bestD = k, dk
				}
			}
			if label[i] != best {
				changes[ch]++
				label[i] = best
			}
			dist[i] = bestD
			objs[ch] += bestD
		}
	}
	if nChunks == 1 {
		work(0)
	} else {
		// Chunks are taken from a counter, not fed through a channel: a
		// goroutine that panicked would leave the feeder blocked forever.
		var next atomic.Int64
		var g goroutines.Group
		for range 2 {
			g.Go(func() {
				for ch := int(next.Add(1)) - 1; ch < nChunks; ch = int(next.Add(1)) - 1 {
					work(ch)
				}
			})
		}
		g.Wait()
	}
	// Summed in chunk order: the same on any number of cores.
	for ch := range changes {
		changed += changes[ch]
		obj += objs[ch]
	}
	return changed, obj
}

// lloyd refines centres in place and returns the final objective.
func lloyd(x, c *mat.Dense) float64 {
	n, d := x.Dims()
	m, _ := c.Dims()
	label := make([]int, n)
	for i := range label {
		label[i] = -1
	}
	dist := make([]float64, n)
	counts := make([]int, m)
	obj := math.Inf(1)
	for it := 0; it < KMeansMaxIter; it++ {
		prev := obj
		var changed int
		changed, obj = assign(x, c, label, dist)
		// Stop when nothing moves, or when the objective no longer improves
		// by KMeansRelTol (the slow tail on unstructured data).
		if changed == 0 || prev-obj <= KMeansRelTol*obj {
			break
		}
		c.Zero()
		for k := range counts {
			counts[k] = 0
		}
		for i, k := range label {
			floats.Add(c.RawRowView(k), x.RawRowView(i))
			counts[k]++
		}
		for k := 0; k < m; k++ {
			if counts[k] == 0 {
				// Move an empty centre to the worst-served point.
				far := floats.MaxIdx(dist)
				c.SetRow(k, x.RawRowView(far))
				dist[far] = 0
				continue
			}
			floats.Scale(1/float64(counts[k]), c.RawRowView(k)[:d])
		}
	}
	return obj
}

// Objective is the k-means objective Σᵢ minₖ ‖xᵢ − zₖ‖² of centres z.
func Objective(x, z *mat.Dense) float64 {
	n, _ := x.Dims()
	label := make([]int, n)
	_, obj := assign(x, z, label, make([]float64, n))
	return obj
}
