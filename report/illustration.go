package report

import (
	"fmt"
	"image/color"
	"math"
	"math/rand/v2"
	"sort"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// An illustration is a figure computed from first principles rather than
// from runs (kind = "illustration", illustration = NAME): a paper's
// conceptual drawing, regenerated exactly. Each builder is deterministic.
var illustrations = map[string]func(fs FigureSpec) (*figure, error){
	"iff-construction": buildIFFConstruction,
}

func illustrationNames() []string {
	var names []string
	for n := range illustrations {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func buildIllustration(fs FigureSpec, _ []*run, _ querier, rc *renderCtx) (*figure, error) {
	b, ok := illustrations[fs.Illustration]
	if !ok {
		return nil, fmt.Errorf("unknown illustration %q; valid: %s", fs.Illustration, strings.Join(illustrationNames(), ", "))
	}
	f, err := b(fs)
	if err != nil {
		return nil, err
	}
	if fs.Title != "" {
		f.title = rc.title(fs.Title)
	}
	return f, nil
}

// iffConstruction is the computation behind Figure 1 of Cheema &
// Rasmussen (2023): a GP prior with an SE kernel (unit variance and
// lengthscale) written in the frequency domain, conditioned on (b) point
// Fourier features and (c) integrated Fourier features (IFF), in the data
// domain f(x) and the frequency domain.
//
// The continuum of frequencies is replaced by a fine grid ξ_j = (j+½)Δ,
// j < J, on (0, ξmax): f(x) = Σ_j A_j cos 2πξ_j x + B_j sin 2πξ_j x with
// A_j, B_j ~ N(0, 2 s(ξ_j) Δ) independent, so Var f(x) = 2Δ Σ_j s(ξ_j) → k(0)
// = 1. The frequency domain is drawn as w±_j = (A_j ± B_j)/(2√Δ), the
// real white noise at ±ξ_j with variance s(ξ_j). Features:
//   - (b) Fourier: w±_j at the fine frequency nearest each z_m (a point
//     evaluation of the white noise);
//   - (c) IFF: the average of w± over the box [z_m − ε/2, z_m + ε/2] (the
//     paper's Eq. 12 up to the 1/s normalisation, which is constant over a
//     box in the midpoint approximation it uses).
//
// Both are linear in the independent weights, so conditioning is exact
// (Matheron's rule per feature: each feature involves disjoint weights).
// The "data" are the features of one draw from the prior (drawn in red).
type iffConstruction struct {
	eps, xmax, ximax float64
	perBox, boxes    int // fine frequencies per box; boxes (features per sign) covered by the features
	delta            float64
	xi, s            []float64 // fine grid and s(ξ)
	x                []float64 // data-domain grid
}

func newIFFConstruction() *iffConstruction {
	c := &iffConstruction{eps: 0.025, xmax: 5, ximax: 0.6, perBox: 400, boxes: 16}
	c.delta = c.eps / float64(c.perBox)
	nbox := int(math.Round(c.ximax / c.eps))
	j := nbox * c.perBox
	c.xi, c.s = make([]float64, j), make([]float64, j)
	for i := range c.xi {
		c.xi[i] = (float64(i) + 0.5) * c.delta
		c.s[i] = seSpectral(c.xi[i])
	}
	const nx = 201
	c.x = make([]float64, nx)
	for i := range c.x {
		c.x[i] = -c.xmax + 2*c.xmax*float64(i)/(nx-1)
	}
	return c
}

// seSpectral is s(ξ) = √(2π) exp(−2π²ξ²), the spectral density of the SE
// kernel with unit variance and lengthscale (∫ s = 1).
func seSpectral(xi float64) float64 {
	return math.Sqrt(2*math.Pi) * math.Exp(-2*math.Pi*math.Pi*xi*xi)
}

// boxCentre is z_m = (m + ½) ε.
func (c *iffConstruction) boxCentre(m int) float64 { return (float64(m) + 0.5) * c.eps }

// pointIndex is the fine frequency nearest z_m (its box's middle).
func (c *iffConstruction) pointIndex(m int) int { return m*c.perBox + c.perBox/2 }

// weights holds w+ and w− on the fine grid (A = √Δ (w+ + w−), B = √Δ (w+ − w−)).
type weights struct{ plus, minus []float64 }

func (c *iffConstruction) draw(rng *rand.Rand) weights {
	w := weights{make([]float64, len(c.xi)), make([]float64, len(c.xi))}
	for j := range c.xi {
		sd := math.Sqrt(c.s[j])
		w.plus[j] = sd * rng.NormFloat64()
		w.minus[j] = sd * rng.NormFloat64()
	}
	return w
}

// f evaluates f(x) = Σ_j √Δ [(w+ + w−) cos 2πξx + (w+ − w−) sin 2πξx].
func (c *iffConstruction) f(w weights) []float64 {
	out := make([]float64, len(c.x))
	sq := math.Sqrt(c.delta)
	for i, x := range c.x {
		var v float64
		for j, xi := range c.xi {
			sn, cs := math.Sincos(2 * math.Pi * xi * x)
			v += sq * ((w.plus[j]+w.minus[j])*cs + (w.plus[j]-w.minus[j])*sn)
		}
		out[i] = v
	}
	return out
}

// feature says which fine weights a feature averages (equal weights).
func (c *iffConstruction) feature(m int, integrated bool) []int {
	if !integrated {
		return []int{c.pointIndex(m)}
	}
	idx := make([]int, c.perBox)
	for k := range idx {
		idx[k] = m*c.perBox + k
	}
	return idx
}

// condition applies Matheron's rule: w ← w + Σ_m v a (u_m − aᵀw)/(aᵀ V a)
// for each feature (disjoint supports, so features condition independently),
// on both signs, where u are the features of truth.
func (c *iffConstruction) condition(w, truth weights, integrated bool) weights {
	out := weights{append([]float64(nil), w.plus...), append([]float64(nil), w.minus...)}
	for m := 0; m < c.boxes; m++ {
		idx := c.feature(m, integrated)
		a := 1 / float64(len(idx))
		var vs float64
		for _, j := range idx {
			vs += a * a * c.s[j]
		}
		for _, pair := range []struct{ dst, w, t []float64 }{{out.plus, w.plus, truth.plus}, {out.minus, w.minus, truth.minus}} {
			var u, aw float64
			for _, j := range idx {
				u += a * pair.t[j]
				aw += a * pair.w[j]
			}
			for _, j := range idx {
				pair.dst[j] += c.s[j] * a * (u - aw) / vs
			}
		}
	}
	return out
}

// moments returns the exact conditional mean and variance of f(x) given the
// features of truth (none: the prior).
func (c *iffConstruction) moments(truth weights, conditioned, integrated bool) (mean, variance []float64) {
	mean, variance = make([]float64, len(c.x)), make([]float64, len(c.x))
	if !conditioned {
		for i := range c.x {
			variance[i] = 2 * c.delta * sum(c.s)
		}
		return mean, variance
	}
	zero := weights{make([]float64, len(c.xi)), make([]float64, len(c.xi))}
	mean = c.f(c.condition(zero, truth, integrated))
	sq := math.Sqrt(c.delta)
	for i, x := range c.x {
		v := 2 * c.delta * sum(c.s)
		// Per feature and sign: f(x) = Σ_j g±_j w±_j with g± = √Δ (cos ± sin);
		// conditioning on aᵀw± removes (Σ_j g±_j s_j a)² / (a² Σ_j s_j).
		for m := 0; m < c.boxes; m++ {
			idx := c.feature(m, integrated)
			a := 1 / float64(len(idx))
			var gp, gm, vs float64
			for _, j := range idx {
				sn, cs := math.Sincos(2 * math.Pi * c.xi[j] * x)
				gp += sq * (cs + sn) * c.s[j] * a
				gm += sq * (cs - sn) * c.s[j] * a
				vs += a * a * c.s[j]
			}
			v -= (gp*gp + gm*gm) / vs
		}
		variance[i] = v
	}
	return mean, variance
}

// spectrum coarse-grains w± to the feature resolution: per box of width ε,
// g = ε^{-1/2} ∫_box w dξ ≈ √(Δ/ε)·… so that Var g = the box mean of s ≈
// s(z). It returns box centres on (−ξmax, ξmax) and g there.
func (c *iffConstruction) spectrum(w weights) (z, g []float64) {
	nbox := len(c.xi) / c.perBox
	z, g = make([]float64, 2*nbox), make([]float64, 2*nbox)
	scale := 1 / math.Sqrt(float64(c.perBox))
	for m := 0; m < nbox; m++ {
		var p, q float64
		for k := 0; k < c.perBox; k++ {
			p += w.plus[m*c.perBox+k]
			q += w.minus[m*c.perBox+k]
		}
		z[nbox-1-m], g[nbox-1-m] = -c.boxCentre(m), q*scale
		z[nbox+m], g[nbox+m] = c.boxCentre(m), p*scale
	}
	return z, g
}

// spectrumSD is the standard deviation of the coarse-grained spectrum per
// box, prior or given the features (point features leave a box's average
// almost unknown; integrated ones fix it).
func (c *iffConstruction) spectrumSD(conditioned, integrated bool) []float64 {
	nbox := len(c.xi) / c.perBox
	sd := make([]float64, 2*nbox)
	for m := 0; m < nbox; m++ {
		var tot float64
		for k := 0; k < c.perBox; k++ {
			tot += c.s[m*c.perBox+k]
		}
		v := tot / float64(c.perBox)
		if conditioned && m < c.boxes {
			if integrated {
				v = 0
			} else {
				sj := c.s[c.pointIndex(m)]
				v -= sj * sj / (float64(c.perBox) * sj)
			}
		}
		sd[nbox-1-m], sd[nbox+m] = math.Sqrt(math.Max(v, 0)), math.Sqrt(math.Max(v, 0))
	}
	return sd
}

func sum(v []float64) float64 {
	var t float64
	for _, x := range v {
		t += x
	}
	return t
}

// The authors' notebook (fig1.ipynb): blue dashed mean, blue shading at
// alpha 0.4, 0.2, 0.1 for 1–3 sd, black samples fading as 1/(i+1), red
// stars for the inducing values.
var (
	illBlue = color.NRGBA{0x4C, 0x72, 0xB0, 0xff}
	illRed  = color.NRGBA{0xD0, 0x20, 0x20, 0xff}
)

const illSamples = 6

func buildIFFConstruction(fs FigureSpec) (*figure, error) {
	c := newIFFConstruction()
	rng := rand.New(rand.NewPCG(7, 1))
	truth := c.draw(rng)
	prior := make([]weights, illSamples)
	for i := range prior {
		prior[i] = c.draw(rng)
	}
	f := &figure{title: "Figure 1: the IFF construction", cols: 3}
	type col struct {
		label                   string
		conditioned, integrated bool
	}
	cols := []col{{"(a) prior", false, false}, {"(b) Fourier features", true, false}, {"(c) IFF", true, true}}
	var top, bottom []*plot.Plot
	for _, cl := range cols {
		mean, variance := c.moments(truth, cl.conditioned, cl.integrated)
		p := newPlot()
		p.Title.Text = cl.label + ": data domain"
		p.X.Label.Text, p.Y.Label.Text = "x", "f(x)"
		sd := make([]float64, len(variance))
		for i, v := range variance {
			sd[i] = math.Sqrt(math.Max(v, 0))
		}
		if err := addBands(p, c.x, mean, sd); err != nil {
			return nil, err
		}
		for i, w := range prior {
			if cl.conditioned {
				w = c.condition(w, truth, cl.integrated)
			}
			if err := addLine(p, c.x, c.f(w), color.NRGBA{0, 0, 0, uint8(255 / (i + 1))}, 1, nil); err != nil {
				return nil, err
			}
		}
		if err := addLine(p, c.x, mean, illBlue, 1.5, []vg.Length{vg.Points(5), vg.Points(3)}); err != nil {
			return nil, err
		}
		if cl.conditioned {
			if err := addLine(p, c.x, c.f(truth), illRed, 1.2, nil); err != nil {
				return nil, err
			}
		}
		p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = -c.xmax, c.xmax, -3.6, 3.6
		top = append(top, p)

		q := newPlot()
		q.Title.Text = cl.label + ": frequency domain"
		q.X.Label.Text, q.Y.Label.Text = "ξ (cycles per unit length)", "Ff(ξ), box average of width ε"
		z, _ := c.spectrum(truth)
		zeros := make([]float64, len(z))
		gmean := zeros
		if cl.conditioned && cl.integrated {
			_, gmean = c.spectrum(c.condition(weights{make([]float64, len(c.xi)), make([]float64, len(c.xi))}, truth, true))
		}
		if err := addBands(q, z, gmean, c.spectrumSD(cl.conditioned, cl.integrated)); err != nil {
			return nil, err
		}
		for i, w := range prior {
			if cl.conditioned {
				w = c.condition(w, truth, cl.integrated)
			}
			_, g := c.spectrum(w)
			if err := addLine(q, z, g, color.NRGBA{0, 0, 0, uint8(255 / (i + 1))}, 1, nil); err != nil {
				return nil, err
			}
		}
		if err := addLine(q, z, gmean, illBlue, 1.5, []vg.Length{vg.Points(5), vg.Points(3)}); err != nil {
			return nil, err
		}
		if cl.conditioned {
			var stars plotter.XYs
			for m := 0; m < c.boxes; m++ {
				idx := c.feature(m, cl.integrated)
				var up, um float64
				for _, j := range idx {
					up += truth.plus[j]
					um += truth.minus[j]
				}
				// On the coarse-grained scale: a box average of w has sd
				// √(s/perBox); rescale by √perBox as spectrum does. A point
				// value already has sd √s.
				k := 1 / float64(len(idx))
				if cl.integrated {
					k = 1 / math.Sqrt(float64(len(idx)))
				}
				stars = append(stars, plotter.XY{X: c.boxCentre(m), Y: up * k}, plotter.XY{X: -c.boxCentre(m), Y: um * k})
			}
			if err := addStars(q, stars); err != nil {
				return nil, err
			}
		}
		q.X.Min, q.X.Max = -c.ximax, c.ximax
		bottom = append(bottom, q)
	}
	f.panels = append(top, bottom...)
	// One y range per row.
	for _, row := range [][]*plot.Plot{bottom} {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, p := range row {
			lo, hi = math.Min(lo, p.Y.Min), math.Max(hi, p.Y.Max)
		}
		for _, p := range row {
			p.Y.Min, p.Y.Max = lo, hi
		}
	}
	legend := plot.NewLegend()
	for _, e := range []struct {
		name string
		th   plot.Thumbnailer
	}{
		{"mean", lineThumb(illBlue, []vg.Length{vg.Points(5), vg.Points(3)})},
		{"±1, 2, 3 sd", polyThumb(fadeColor(illBlue, 0x66))},
		{"samples", lineThumb(color.Black, nil)},
		{"the draw conditioned on", lineThumb(illRed, nil)},
		{"feature values u", starThumb()},
	} {
		legend.Add(e.name, e.th)
	}
	styleLegend(&legend)
	f.legend = &legend
	_, v0 := c.moments(truth, true, true)
	mid := len(c.x) / 2
	var zs float64
	for m := 0; m < c.boxes; m++ {
		zs += seSpectral(c.boxCentre(m))
	}
	_, vb := c.moments(truth, true, false)
	f.describe = fmt.Sprintf("computed exactly on a fine frequency grid (Δ = ε/%d, ε = %g, %d features per sign up to |ξ| = %g; seed 7): "+
		"prior sd 1; after Fourier features the sd of f(0) is %.3f (→ 1 as Δ → 0); after IFF %.3f, the square root of the spectral mass "+
		"outside the features' band (1 − 2ε Σ s(z_m) = %.4f by the midpoint rule, the IFF trace term per point)",
		c.perBox, c.eps, c.boxes, float64(c.boxes)*c.eps, math.Sqrt(vb[mid]), math.Sqrt(math.Max(v0[mid], 0)), 1-2*c.eps*zs)
	return f, nil
}

func addBands(p *plot.Plot, x, mean, sd []float64) error {
	for k := 3; k >= 1; k-- {
		poly := make(plotter.XYs, 0, 2*len(x))
		for i := range x {
			poly = append(poly, plotter.XY{X: x[i], Y: mean[i] - float64(k)*sd[i]})
		}
		for i := len(x) - 1; i >= 0; i-- {
			poly = append(poly, plotter.XY{X: x[i], Y: mean[i] + float64(k)*sd[i]})
		}
		pg, err := plotter.NewPolygon(poly)
		if err != nil {
			return err
		}
		// Nested shading: alpha 0.1, 0.2, 0.4 as the notebook, cumulative.
		pg.Color = fadeColor(illBlue, []uint8{0x66, 0x33, 0x1a}[k-1])
		pg.LineStyle.Width = 0
		p.Add(pg)
	}
	return nil
}

func addLine(p *plot.Plot, x, y []float64, c color.Color, width float64, dashes []vg.Length) error {
	xy := make(plotter.XYs, len(x))
	for i := range x {
		xy[i] = plotter.XY{X: x[i], Y: y[i]}
	}
	l, err := plotter.NewLine(xy)
	if err != nil {
		return err
	}
	l.LineStyle = draw.LineStyle{Color: c, Width: vg.Points(width), Dashes: dashes}
	p.Add(l)
	return nil
}

// addStars draws red asterisks (a plus over a cross).
func addStars(p *plot.Plot, xy plotter.XYs) error {
	for _, shape := range []draw.GlyphDrawer{draw.PlusGlyph{}, draw.CrossGlyph{}} {
		s, err := plotter.NewScatter(xy)
		if err != nil {
			return err
		}
		s.GlyphStyle = draw.GlyphStyle{Color: illRed, Radius: vg.Points(4), Shape: shape}
		p.Add(s)
	}
	return nil
}

type thumb func(c *draw.Canvas)

func (t thumb) Thumbnail(c *draw.Canvas) { t(c) }

func lineThumb(col color.Color, dashes []vg.Length) plot.Thumbnailer {
	return thumb(func(c *draw.Canvas) {
		y := c.Center().Y
		c.StrokeLine2(draw.LineStyle{Color: col, Width: vg.Points(1.5), Dashes: dashes}, c.Min.X, y, c.Max.X, y)
	})
}

func polyThumb(col color.Color) plot.Thumbnailer {
	return thumb(func(c *draw.Canvas) {
		c.SetColor(col)
		c.Fill(c.Rectangle.Path())
	})
}

func starThumb() plot.Thumbnailer {
	return thumb(func(c *draw.Canvas) {
		for _, shape := range []draw.GlyphDrawer{draw.PlusGlyph{}, draw.CrossGlyph{}} {
			c.DrawGlyph(draw.GlyphStyle{Color: illRed, Radius: vg.Points(4), Shape: shape}, c.Center())
		}
	})
}
