package figures

import (
	"bytes"
	"image/png"
	"strings"
	"testing"
	"unicode/utf8"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
)

// TestLegendBelowFitsWidth: a legend below the panels never widens the
// figure: its columns fit the width and a label longer than the width is
// shortened with "…".
func TestLegendBelowFitsWidth(t *testing.T) {
	w := 12 * vg.Centimeter
	long := "sgpr " + strings.Repeat("lengthscales=[0.1, 0.2, 0.3, 0.4] ", 6)
	// item is an entry whose last len(detail)+1 runes tell it apart.
	item := func(name, detail string) LegendItem {
		if detail == "" {
			return LegendItem{Label: name}
		}
		return LegendItem{Label: name + " " + detail, Keep: utf8.RuneCountInString(detail) + 1}
	}
	for _, tc := range []struct {
		name    string
		items   []LegendItem
		details []string
		cols    int
	}{
		{"short labels share a row", []LegendItem{item("sgpr", ""), item("svgp", ""), item("vff", ""), item("gpr", "(exact)")}, []string{"", "", "", "(exact)"}, 4},
		{"a long label is shortened", []LegendItem{item(long, ""), item("svgp", "")}, []string{"", ""}, 1},
		{"long labels keep what tells them apart", []LegendItem{item(long, "lengthscale=0.5"), item(long, "lengthscale=2")}, []string{"lengthscale=0.5", "lengthscale=2"}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			items := tc.items
			l := layoutBelow(items, w)
			if len(l.labels) == 2 && l.labels[0] == l.labels[1] {
				t.Errorf("shortened labels %q are the same", l.labels)
			}
			for i, s := range l.labels {
				if d := tc.details[i]; !strings.HasSuffix(s, d) {
					t.Errorf("label %q lost its detail %q", s, d)
				}
			}
			if l.cols != tc.cols {
				t.Errorf("columns = %d, want %d", l.cols, tc.cols)
			}
			used := vg.Length(l.cols)*l.colW + vg.Length(l.cols-1)*belowColGap + 2*belowPad
			if used > w {
				t.Errorf("legend is %v wide, the figure %v", used, w)
			}
			for i, s := range l.labels {
				if belowStyle().Rectangle(s).Max.X+belowThumb+belowGap+2*belowPad > w {
					t.Errorf("label %q is wider than the figure", s)
				}
				if s != items[i].Label && !strings.Contains(s, "…") {
					t.Errorf("label %q shortened without an ellipsis", s)
				}
			}
			// The encoded figure is as wide as one without a legend.
			single := func() *Figure {
				p := NewPlot()
				p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, 1, 0, 1
				return &Figure{Title: "t", Panels: []*plot.Plot{p}}
			}
			f, bare := single(), single()
			f.Below = items
			a, err := f.Encode("png")
			if err != nil {
				t.Fatal(err)
			}
			b, err := bare.Encode("png")
			if err != nil {
				t.Fatal(err)
			}
			ia, _ := png.Decode(bytes.NewReader(a))
			ib, _ := png.Decode(bytes.NewReader(b))
			if ia.Bounds().Dx() != ib.Bounds().Dx() || ia.Bounds().Dy() <= ib.Bounds().Dy() {
				t.Errorf("with the legend %v, without %v: want the same width and more height", ia.Bounds(), ib.Bounds())
			}
		})
	}
}
