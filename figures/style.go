package figures

import (
	"fmt"
	"image/color"
	"maps"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Okabe–Ito colours: distinct for colour-blind readers and in greyscale
// print when combined with the marker shapes below.
var seriesColors = []color.NRGBA{
	{0x00, 0x72, 0xB2, 0xff}, // blue
	{0xD5, 0x5E, 0x00, 0xff}, // vermillion
	{0x00, 0x9E, 0x73, 0xff}, // bluish green
	{0xCC, 0x79, 0xA7, 0xff}, // reddish purple
	{0xE6, 0x9F, 0x00, 0xff}, // orange
	{0x56, 0xB4, 0xE9, 0xff}, // sky blue
	{0x33, 0x33, 0x33, 0xff}, // near black
	{0x99, 0x88, 0x22, 0xff}, // olive
}

var seriesGlyphs = []draw.GlyphDrawer{
	draw.CircleGlyph{}, draw.SquareGlyph{}, draw.TriangleGlyph{}, draw.RingGlyph{},
	draw.BoxGlyph{}, draw.PyramidGlyph{}, draw.CrossGlyph{}, draw.PlusGlyph{},
}

var seriesDashes = [][]vg.Length{nil, {vg.Points(6), vg.Points(2)}, {vg.Points(2), vg.Points(2)},
	{vg.Points(6), vg.Points(2), vg.Points(2), vg.Points(2)}}

// SeriesColor is the colour of series i.
func SeriesColor(i int) color.NRGBA { return seriesColors[i%len(seriesColors)] }

// SeriesGlyph shifts the marker by one per pass through the colours, so
// that series i and i+8 (same colour) differ in marker too.
func SeriesGlyph(i int) draw.GlyphStyle {
	shape := seriesGlyphs[(i+i/len(seriesColors))%len(seriesGlyphs)]
	return draw.GlyphStyle{Color: SeriesColor(i), Radius: vg.Points(3), Shape: shape}
}

// SeriesLine is the line of series i: its colour, dashed from the ninth
// series on.
func SeriesLine(i int) draw.LineStyle {
	ls := draw.LineStyle{Color: SeriesColor(i), Width: vg.Points(1.5)}
	if i >= len(seriesColors) {
		ls.Dashes = seriesDashes[(i/len(seriesColors))%len(seriesDashes)]
	}
	return ls
}

// Fade is c with opacity alpha.
func Fade(c color.NRGBA, alpha uint8) color.NRGBA { c.A = alpha; return c }

// Style is a series' colour and dashes fixed by the config.
type Style struct {
	Color  color.NRGBA
	Dashes []vg.Length // nil: solid
}

// Grey is the series_style colour "grey", also drawn for reference lines.
var Grey = color.NRGBA{0x70, 0x70, 0x70, 0xff}

var namedColors = map[string]color.NRGBA{
	"blue": {0x1f, 0x4e, 0xc8, 0xff}, "green": {0x1a, 0x9a, 0x3c, 0xff}, "red": {0xd6, 0x27, 0x28, 0xff},
	"black": {0x00, 0x00, 0x00, 0xff}, "orange": {0xff, 0x7f, 0x0e, 0xff}, "purple": {0x80, 0x3c, 0xa0, 0xff},
	"grey": Grey, "brown": {0x8c, 0x56, 0x4b, 0xff},
}

var namedDashes = map[string][]vg.Length{
	"solid": nil, "dashed": {vg.Points(6), vg.Points(3)}, "dotted": {vg.Points(1.5), vg.Points(2)},
}

// ParseStyles reads series_style values "COLOUR" or "COLOUR dashed"
// (COLOUR: a name or #rrggbb; dashes: solid, dashed, dotted).
func ParseStyles(m map[string]string) (map[string]Style, error) {
	out := map[string]Style{}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		f := strings.Fields(m[k])
		if len(f) == 0 || len(f) > 2 {
			return nil, fmt.Errorf("series_style %q = %q: want \"COLOUR\" or \"COLOUR DASHES\"", k, m[k])
		}
		var st Style
		if c, ok := namedColors[f[0]]; ok {
			st.Color = c
		} else if len(f[0]) == 7 && f[0][0] == '#' {
			h, err := strconv.ParseUint(f[0][1:], 16, 32)
			if err != nil {
				return nil, fmt.Errorf("series_style %q: colour %q is not #rrggbb", k, f[0])
			}
			st.Color = color.NRGBA{R: uint8(h >> 16), G: uint8(h >> 8), B: uint8(h), A: 0xff}
		} else {
			return nil, fmt.Errorf("series_style %q: unknown colour %q; names: %s, or #rrggbb", k, f[0], strings.Join(slices.Sorted(maps.Keys(namedColors)), ", "))
		}
		if len(f) == 2 {
			d, ok := namedDashes[f[1]]
			if !ok {
				return nil, fmt.Errorf("series_style %q: unknown dashes %q; valid: dashed, dotted, solid", k, f[1])
			}
			st.Dashes = d
		}
		out[k] = st
	}
	return out, nil
}
