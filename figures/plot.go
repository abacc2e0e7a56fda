package figures

import (
	"image/color"
	"math"
	"strings"
	"unicode/utf8"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// NewPlot is a plot with the report's fonts and light grid lines.
func NewPlot() *plot.Plot {
	p := NewBarePlot()
	g := plotter.NewGrid()
	g.Vertical.Color = color.Gray{Y: 0xe0}
	g.Horizontal.Color = color.Gray{Y: 0xe0}
	g.Vertical.Width, g.Horizontal.Width = vg.Points(0.5), vg.Points(0.5)
	p.Add(g)
	return p
}

// NewBarePlot is a plot with the report's fonts and no grid lines.
func NewBarePlot() *plot.Plot {
	p := plot.New()
	p.Title.TextStyle.Font.Size = vg.Points(12)
	p.Title.Padding = vg.Points(6)
	for _, ax := range []*plot.Axis{&p.X, &p.Y} {
		ax.Label.TextStyle.Font.Size = vg.Points(11)
		ax.Tick.Label.Font.Size = vg.Points(9)
		ax.Padding = vg.Points(2)
		ax.Tick.Marker = LinearTicks{}
	}
	return p
}

// StyleLegend sets a legend's font, placement and thumbnail size.
func StyleLegend(l *plot.Legend) {
	l.TextStyle.Font.Size = vg.Points(10)
	l.Left = true
	l.Top = true
	l.ThumbnailWidth = vg.Points(22)
	l.Padding = vg.Points(4)
}

// ColourScale is the viridis map over [zmin, zmax], the range of the
// values drawn: an empty range (no finite value, zmin = +Inf) becomes
// [0, 1] and a single value v becomes [v-½, v+½], so that the colour bar
// always has extent.
func ColourScale(zmin, zmax float64) palette.ColorMap {
	if math.IsInf(zmin, 1) {
		zmin, zmax = 0, 1
	}
	if zmin == zmax {
		zmin, zmax = zmin-0.5, zmax+0.5
	}
	cmap := viridis()
	cmap.SetMin(zmin)
	cmap.SetMax(zmax)
	return cmap
}

// viridis is a perceptually uniform sequential colour map whose ends both
// stand out against a white page.
func viridis() palette.ColorMap {
	hex := []uint32{0x440154, 0x482878, 0x3E4A89, 0x31688E, 0x26828E, 0x1F9E89, 0x35B779, 0x6DCD59, 0xB4DE2C, 0xFDE725}
	controls := make([]color.Color, len(hex))
	for i, h := range hex {
		controls[i] = color.NRGBA{R: uint8(h >> 16), G: uint8(h >> 8), B: uint8(h), A: 0xff}
	}
	cm, err := moreland.NewLuminance(controls)
	if err != nil {
		return moreland.Kindlmann() // unreachable: the controls rise in Luminance
	}
	return cm
}

// ColourAt is the colour of v on c (black outside its range).
func ColourAt(c palette.ColorMap, v float64) color.Color {
	col, err := c.At(v)
	if err != nil {
		return color.Black
	}
	return col
}

// Luminance is the relative luminance of c in [0, 1], to pick black or
// white text over it.
func Luminance(c color.Color) float64 {
	r, g, b, _ := c.RGBA()
	return (0.2126*float64(r) + 0.7152*float64(g) + 0.0722*float64(b)) / 0xffff
}

// ReverseScale maps the axis top-down so matrix row 0 is at the top.
type ReverseScale struct{}

func (ReverseScale) Normalize(min, max, x float64) float64 {
	return (max - x) / (max - min)
}

// ReversedTicks keeps the default tick positions on a reversed axis.
type ReversedTicks struct{}

func (ReversedTicks) Ticks(min, max float64) []plot.Tick { return plot.DefaultTicks{}.Ticks(min, max) }

// ColourBar is the vertical colour scale drawn beside heat-map panels.
func ColourBar(cmap palette.ColorMap, label string) *plot.Plot {
	cb := plot.New()
	cb.HideX()
	cb.Y.Padding = 0
	cb.Y.Label.Text = label
	cb.Y.Label.TextStyle.Font.Size = vg.Points(11)
	cb.Y.Tick.Label.Font.Size = vg.Points(9)
	cb.Add(&plotter.ColorBar{ColorMap: cmap, Vertical: true})
	return cb
}

// MaxTitleRunes is the longest title line of a single-panel figure (about
// the width of its plot area at the default size and font).
const MaxTitleRunes = 60

// WrapTitle breaks s at spaces into lines of at most max runes (a longer
// word stays whole on its own line); existing line breaks are kept.
func WrapTitle(s string, max int) string {
	var out []string
	for _, para := range strings.Split(s, "\n") {
		line := ""
		for _, w := range strings.Fields(para) {
			switch {
			case line == "":
				line = w
			case utf8.RuneCountInString(line)+1+utf8.RuneCountInString(w) <= max:
				line += " " + w
			default:
				out = append(out, line)
				line = w
			}
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}
