package figures

import (
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// DownTriangle is a hollow triangle pointing down: "below this".
type DownTriangle struct{}

func (DownTriangle) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	c.SetLineStyle(draw.LineStyle{Color: sty.Color, Width: vg.Points(1)})
	r := sty.Radius
	var path vg.Path
	path.Move(vg.Point{X: pt.X - r, Y: pt.Y + r*0.6})
	path.Line(vg.Point{X: pt.X + r, Y: pt.Y + r*0.6})
	path.Line(vg.Point{X: pt.X, Y: pt.Y - r})
	path.Close()
	c.Stroke(path)
}

// Diamond draws a filled diamond (the markers of Tiao et al. 2023).
type Diamond struct{}

func (Diamond) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	c.SetLineStyle(draw.LineStyle{Color: sty.Color, Width: vg.Points(0.5)})
	r := sty.Radius * 1.3
	var p vg.Path
	p.Move(vg.Point{X: pt.X, Y: pt.Y + r})
	p.Line(vg.Point{X: pt.X + r*0.75, Y: pt.Y})
	p.Line(vg.Point{X: pt.X, Y: pt.Y - r})
	p.Line(vg.Point{X: pt.X - r*0.75, Y: pt.Y})
	p.Close()
	c.SetColor(sty.Color)
	c.Fill(p)
}

// Mark draws a circle, square, triangle or diamond, filled or hollow.
type Mark struct {
	Shape  int  // 0 circle, 1 square, 2 triangle, else diamond
	Hollow bool // white inside
}

func (g Mark) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	r := sty.Radius
	var path vg.Path
	switch g.Shape {
	case 0:
		path.Move(vg.Point{X: pt.X + r, Y: pt.Y})
		path.Arc(pt, r, 0, 2*math.Pi)
	case 1:
		r *= 0.9
		path.Move(vg.Point{X: pt.X - r, Y: pt.Y - r})
		path.Line(vg.Point{X: pt.X + r, Y: pt.Y - r})
		path.Line(vg.Point{X: pt.X + r, Y: pt.Y + r})
		path.Line(vg.Point{X: pt.X - r, Y: pt.Y + r})
	case 2:
		r *= 1.2
		path.Move(vg.Point{X: pt.X - r, Y: pt.Y - r*0.7})
		path.Line(vg.Point{X: pt.X + r, Y: pt.Y - r*0.7})
		path.Line(vg.Point{X: pt.X, Y: pt.Y + r})
	default:
		r *= 1.25
		path.Move(vg.Point{X: pt.X, Y: pt.Y - r})
		path.Line(vg.Point{X: pt.X + r, Y: pt.Y})
		path.Line(vg.Point{X: pt.X, Y: pt.Y + r})
		path.Line(vg.Point{X: pt.X - r, Y: pt.Y})
	}
	path.Close()
	if g.Hollow {
		c.SetColor(color.White)
		c.Fill(path)
		c.SetLineStyle(draw.LineStyle{Color: sty.Color, Width: vg.Points(1.3)})
		c.Stroke(path)
		return
	}
	c.SetColor(sty.Color)
	c.Fill(path)
}

// Thumb is a legend thumbnail drawn by a function.
type Thumb func(c *draw.Canvas)

func (t Thumb) Thumbnail(c *draw.Canvas) { t(c) }

// LineThumb is a legend thumbnail of a line.
func LineThumb(col color.Color, dashes []vg.Length) plot.Thumbnailer {
	return Thumb(func(c *draw.Canvas) {
		y := c.Center().Y
		c.StrokeLine2(draw.LineStyle{Color: col, Width: vg.Points(1.5), Dashes: dashes}, c.Min.X, y, c.Max.X, y)
	})
}

// PolyThumb is a legend thumbnail of a filled area.
func PolyThumb(col color.Color) plot.Thumbnailer {
	return Thumb(func(c *draw.Canvas) {
		c.SetColor(col)
		c.Fill(c.Rectangle.Path())
	})
}
