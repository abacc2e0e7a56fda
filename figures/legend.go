package figures

import (
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// A legend below the panels is laid out in as many columns as fit the
// figure's width, so that it never makes the figure wider than its plots;
// an entry too long for the width is shortened with "…".

// LegendItem is one entry of a legend drawn below the panels.
type LegendItem struct {
	Label string
	// Keep is how many runes at the end of label say what distinguishes
	// the entry (e.g. " lengthscale=0.5"): shortening cuts before them.
	Keep   int
	Thumbs []plot.Thumbnailer
}

// Sizes of the legend below the panels.
var (
	belowFont      = vg.Points(9)
	belowThumb     = vg.Points(22)
	belowGap       = vg.Points(5)  // between a thumbnail and its text
	belowColGap    = vg.Points(14) // between columns
	belowPad       = vg.Points(6)  // around the block
	belowRowHeight = vg.Points(13)
)

func belowStyle() text.Style {
	return text.Style{Color: color.Black, Font: font.From(plot.DefaultFont, belowFont),
		XAlign: text.XLeft, YAlign: text.YCenter, Handler: plot.DefaultTextHandler}
}

// belowLayout is the legend's arrangement for a figure width w: the labels
// as drawn (shortened to fit), the column width and count, and the height.
type belowLayout struct {
	labels []string
	colW   vg.Length
	cols   int
	height vg.Length
}

func layoutBelow(items []LegendItem, w vg.Length) belowLayout {
	if len(items) == 0 {
		return belowLayout{}
	}
	st := belowStyle()
	maxText := w - 2*belowPad - belowThumb - belowGap
	l := belowLayout{labels: make([]string, len(items))}
	for i, it := range items {
		l.labels[i] = fitText(st, it.Label, it.Keep, maxText)
		if tw := belowThumb + belowGap + st.Rectangle(l.labels[i]).Max.X; tw > l.colW {
			l.colW = tw
		}
	}
	l.cols = max(1, int((w-2*belowPad+belowColGap)/(l.colW+belowColGap)))
	l.cols = min(l.cols, len(items))
	rows := (len(items) + l.cols - 1) / l.cols
	l.height = vg.Length(rows)*belowRowHeight + 2*belowPad
	return l
}

// fitText shortens s with "…" until it is at most w wide: the part before
// its last keep runes first, so that entries differing only there stay
// apart; then, if that is not enough, from the end.
func fitText(st text.Style, s string, keep int, w vg.Length) string {
	if st.Rectangle(s).Max.X <= w {
		return s
	}
	r := []rune(s)
	keep = min(max(keep, 0), len(r))
	head, tail := r[:len(r)-keep], string(r[len(r)-keep:])
	for n := len(head) - 1; n > 0 && keep > 0; n-- {
		if t := string(head[:n]) + "…" + tail; st.Rectangle(t).Max.X <= w {
			return t
		}
	}
	for n := len(r) - 1; n > 0; n-- {
		if t := string(r[:n]) + "…"; st.Rectangle(t).Max.X <= w {
			return t
		}
	}
	return "…"
}

// drawBelow draws the items into c (the strip below the panels), row by
// row, columns left to right, centred horizontally.
func drawBelow(c draw.Canvas, items []LegendItem, l belowLayout) {
	st := belowStyle()
	used := vg.Length(l.cols)*l.colW + vg.Length(l.cols-1)*belowColGap
	x0 := c.Min.X + (c.Max.X-c.Min.X-used)/2
	top := c.Max.Y - belowPad
	for i, it := range items {
		row, col := i/l.cols, i%l.cols
		x := x0 + vg.Length(col)*(l.colW+belowColGap)
		yMid := top - vg.Length(row)*belowRowHeight - belowRowHeight/2
		icon := draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{
			Min: vg.Point{X: x, Y: yMid - belowRowHeight/2 + vg.Points(2)},
			Max: vg.Point{X: x + belowThumb, Y: yMid + belowRowHeight/2 - vg.Points(2)},
		}}
		for _, t := range it.Thumbs {
			t.Thumbnail(&icon)
		}
		c.FillText(st, vg.Point{X: x + belowThumb + belowGap, Y: yMid}, l.labels[i])
	}
}
