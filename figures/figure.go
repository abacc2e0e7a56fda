package figures

import (
	"bytes"
	"fmt"
	"image/color"
	"io"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgpdf"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Figure is a drawn figure: panels laid out in a grid under its title, with
// a legend on the right (Legend) or below (Below, in as many columns as
// fit the width) and an optional colour bar (Colorbar).
type Figure struct {
	Title  string
	Panels []*plot.Plot
	// Cols is the number of panels per row; 0 is up to 3.
	Cols   int
	Legend *plot.Legend // drawn right of the panels, or nil
	// Below is a legend drawn under the panels (legend.go), instead of
	// Legend.
	Below    []LegendItem
	Colorbar *plot.Plot // a heat map's colour scale, or nil
	// PanelW and PanelH are a panel's size; 0 is 12 cm × 9 cm.
	PanelW, PanelH vg.Length
}

// Encode lays the panels out in a grid with the shared legend and colour
// bar on the right and the figure title on top, and encodes it.
func (f *Figure) Encode(format string) ([]byte, error) {
	n := len(f.Panels)
	cols := f.Cols
	if cols <= 0 {
		cols = min(n, 3)
	}
	rows := (n + cols - 1) / cols
	pw, ph := f.PanelW, f.PanelH
	if pw == 0 {
		pw = 12 * vg.Centimeter
	}
	if ph == 0 {
		ph = 9 * vg.Centimeter
	}
	right := vg.Length(0)
	if f.Legend != nil {
		right += f.legendWidth() + vg.Points(12)
	}
	if f.Colorbar != nil {
		right += 2.4 * vg.Centimeter
	}
	top := vg.Length(0)
	if n > 1 {
		top = vg.Points(26)
	}
	w := vg.Length(cols)*pw + right
	h := vg.Length(rows)*ph + top
	bl := layoutBelow(f.Below, w)
	h += bl.height
	var c vg.CanvasWriterTo
	switch format {
	case "png":
		c = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(150))}
	case "svg":
		c = vgsvg.New(w, h)
	case "pdf":
		c = vgpdf.New(w, h)
	default:
		return nil, fmt.Errorf("unknown format %q", format)
	}
	dc := draw.New(c)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	main := dc
	main.Max.X -= right
	main.Max.Y -= top
	main.Min.Y += bl.height
	grid := make([][]*plot.Plot, rows)
	for r := range grid {
		grid[r] = make([]*plot.Plot, cols)
		for col := range grid[r] {
			if k := r*cols + col; k < n {
				grid[r][col] = f.Panels[k]
			}
		}
	}
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Points(10), PadY: vg.Points(10),
		PadTop: vg.Points(4), PadBottom: vg.Points(4), PadLeft: vg.Points(4), PadRight: vg.Points(8)}
	canvases := plot.Align(grid, tiles, main)
	for r := range grid {
		for col, p := range grid[r] {
			if p != nil {
				p.Draw(canvases[r][col])
			}
		}
	}
	if n > 1 {
		st := text.Style{Color: color.Black, Font: font.From(plot.DefaultFont, vg.Points(14)),
			XAlign: text.XCenter, YAlign: text.YCenter, Handler: plot.DefaultTextHandler}
		dc.FillText(st, vg.Point{X: (dc.Min.X + dc.Max.X - right) / 2, Y: dc.Max.Y - top/2}, f.Title)
	}
	x := dc.Max.X - right
	if f.Colorbar != nil {
		cbc := dc
		cbc.Min.X = x + vg.Points(10)
		cbc.Max.X = cbc.Min.X + 2.2*vg.Centimeter
		cbc.Min.Y += vg.Points(30)
		cbc.Max.Y -= top + vg.Points(24)
		f.Colorbar.Draw(cbc)
		x = cbc.Max.X
	}
	if f.Legend != nil {
		lc := dc
		lc.Min.X = x + vg.Points(8)
		lc.Max.Y -= top + vg.Points(24)
		f.Legend.Draw(lc)
	}
	if len(f.Below) > 0 {
		bc := dc
		bc.Max.Y = bc.Min.Y + bl.height
		drawBelow(bc, f.Below, bl)
	}
	var buf bytes.Buffer
	if _, err := c.WriteTo(io.Writer(&buf)); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func (f *Figure) legendWidth() vg.Length {
	r := f.Legend.Rectangle(draw.Canvas{Rectangle: vg.Rectangle{Max: vg.Point{X: 1000, Y: 1000}}})
	return r.Max.X - r.Min.X
}
