package figures

import (
	"math"
	"strconv"

	"gonum.org/v1/plot"
)

// LogTicks labels a log axis so that narrow ranges still get numbers:
// 1-2-5 steps (or every integer multiple inside one decade) with
// unlabelled minor ticks, powers of ten only over many decades.
type LogTicks struct{}

func (LogTicks) Ticks(min, max float64) []plot.Tick {
	if !(min > 0) || !(max >= min) {
		return nil
	}
	lo := int(math.Floor(math.Log10(min)))
	hi := int(math.Ceil(math.Log10(max)))
	decades := hi - lo
	labelled := map[int]bool{1: true}
	switch {
	case max/min < 10:
		labelled = map[int]bool{1: true, 2: true, 3: true, 4: true, 5: true, 6: true, 7: true, 8: true, 9: true}
		if max/min > 4 {
			labelled = map[int]bool{1: true, 2: true, 3: true, 5: true}
		}
	case decades <= 2:
		labelled = map[int]bool{1: true, 2: true, 5: true}
	}
	every := 1 + decades/8 // label every n-th decade on very wide axes
	var ticks []plot.Tick
	for e := lo; e <= hi; e++ {
		base := math.Pow(10, float64(e))
		for m := 1; m <= 9; m++ {
			v := roundSig(float64(m) * base)
			if v < min*(1-1e-12) || v > max*(1+1e-12) {
				continue
			}
			t := plot.Tick{Value: v}
			if labelled[m] && (m != 1 || (e-lo)%every == 0) {
				t.Label = FormatTick(v)
			}
			if decades > 8 && m != 1 {
				continue // minor ticks would be a smear
			}
			ticks = append(ticks, t)
		}
	}
	return ticks
}

// LinearTicks are gonum's default ticks with labels printed without
// trailing zeros ("25" rather than "25.00").
type LinearTicks struct{}

func (LinearTicks) Ticks(min, max float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(min, max)
	for i, t := range ticks {
		if t.Label != "" {
			ticks[i].Label = FormatTick(t.Value)
		}
	}
	return ticks
}

func roundSig(v float64) float64 {
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 12, 64), 64)
	return r
}

// FormatTick prints a tick value without trailing zeros, in exponent
// form when it is very large or small.
func FormatTick(v float64) string {
	v = roundSig(v)
	a := math.Abs(v)
	if a != 0 && (a >= 1e6 || a < 1e-4) {
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}
