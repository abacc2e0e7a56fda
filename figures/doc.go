// Package figures is the drawing layer of the report: it knows gonum/plot
// and nothing of runs, configs or the results database.
//
// A Figure is panels laid out in a grid under a title, with a legend on the
// right or below the panels and an optional colour bar; Encode writes it
// as PNG (150 dpi), SVG or PDF. A legend below (LegendItem, legend.go) is
// laid out in as many columns as fit the figure's width, so it never makes
// the figure wider than its plots; a label too long for the width is
// shortened with "…", sparing the end that tells entries apart.
//
// The rest are the pieces a report's figures are drawn with:
//
//   - the series palette: Okabe–Ito colours (SeriesColor) with markers
//     (SeriesGlyph) and dashes (SeriesLine) that keep series apart in
//     greyscale print and beyond eight series;
//   - styles a config fixes by name (ParseStyles: "blue dashed",
//     "#1f77b4 dotted");
//   - plots with the report's fonts (NewPlot, NewBarePlot), titles wrapped
//     to the plot's width (WrapTitle), legends (StyleLegend);
//   - tick markers: LogTicks label narrow log ranges with 1-2-5 steps,
//     LinearTicks print "25" rather than "25.00";
//   - the viridis colour scale (ColourScale) with its colour bar
//     (ColourBar), and an axis drawn top-down for matrices (ReverseScale);
//   - glyphs: a hollow down-triangle for a point clamped on a log axis
//     (DownTriangle), diamonds, filled or hollow marks (Mark), and legend
//     thumbnails (LineThumb, PolyThumb).
//
// The cut between packages: report decides what to draw from the results
// (which runs form a point, a series, a panel, a band, what the caption
// says) and figures how it looks; a change of layout or palette touches
// only this package, and its tests need no database. Output is
// deterministic (no map order reaches the drawing), except where gonum's
// own contouring draws its paths in map order (the report's field
// figures).
package figures
