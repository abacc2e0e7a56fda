package report

import (
	"bytes"
	"image/color"
	"math"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// TestOrderedContourIsDeterministic renders a level with many closed
// components (gonum strokes them in map order) several times: every
// rendering must be the same bytes.
func TestOrderedContourIsDeterministic(t *testing.T) {
	const n = 41
	g := fieldGrid{}
	for i := 0; i < n; i++ {
		v := -6 + 12*float64(i)/(n-1)
		g.x = append(g.x, v)
		g.y = append(g.y, v)
	}
	for r := 0; r < n; r++ {
		for c := 0; c < n; c++ {
			g.z = append(g.z, math.Cos(g.x[c])*math.Cos(g.y[r]))
		}
	}
	render := func() []byte {
		p := plot.New()
		c := plotter.NewContour(g, []float64{0.5}, nil)
		c.LineStyles = []draw.LineStyle{{Color: color.Black, Width: vg.Points(1)}}
		p.Add(orderedContour{c})
		canvas := vgsvg.New(4*vg.Inch, 4*vg.Inch)
		p.Draw(draw.New(canvas))
		var b bytes.Buffer
		if _, err := canvas.WriteTo(&b); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	first := render()
	if n := bytes.Count(first, []byte("<path")); n < 5 {
		t.Fatalf("%d paths: the level should have several components", n)
	}
	for i := 0; i < 10; i++ {
		if !bytes.Equal(render(), first) {
			t.Fatalf("rendering %d differs from the first", i+1)
		}
	}
}
