package gridlang

import (
	"maps"
	"path"
	"slices"
	"strings"

	"sgplab/internal/suggest"
)

// profiles merges every profile's glob entries ([profiles.quick.grids."fig2-*"])
// into the grids they match.
func (x *expansion) profiles() {
	ps, ok := x.raw["profiles"].(map[string]any)
	if !ok {
		return
	}
	outPs := maps.Clone(ps)
	for _, pn := range sortedKeys(ps) {
		p, ok := ps[pn].(map[string]any)
		if !ok {
			continue
		}
		gs, ok := p["grids"].(map[string]any)
		if !ok {
			continue
		}
		at := "profiles." + pn + ".grids"
		out := map[string]any{}
		var globs []string
		for _, k := range x.order[at] {
			if _, ok := gs[k]; ok && isGlob(k) {
				globs = append(globs, k)
			}
		}
		for _, k := range sortedKeys(gs) {
			if isGlob(k) && !contains(globs, k) {
				globs = append(globs, k)
			}
		}
		for _, k := range sortedKeys(gs) {
			if !isGlob(k) {
				out[k] = deepClone(gs[k])
				x.res.Origin[at+"."+k] = at + "." + k
			}
		}
		for _, g := range globs {
			if _, err := path.Match(g, ""); err != nil {
				x.errorf(at+"."+g, "bad pattern: %v", err)
				continue
			}
			if _, ok := gs[g].(map[string]any); !ok {
				x.errorf(at+"."+g, "must be a table of grid keys, got %s", typeName(gs[g]))
				continue
			}
			if !slices.ContainsFunc(x.names, func(n string) bool { m, _ := path.Match(g, n); return m }) {
				x.errorf(at+"."+g, "pattern %q matches no grid%s; grids: %s", g, suggest.Hint(g, x.names), strings.Join(x.names, ", "))
			}
		}
		// Per grid: the patterns it matches in file order, then its own
		// entry, each laid over the last.
		for _, name := range x.names {
			d := newDraft()
			first := ""
			for _, g := range globs {
				t, ok := gs[g].(map[string]any)
				if m, _ := path.Match(g, name); ok && m {
					d.merge(t, at+"."+g)
					if first == "" {
						first = at + "." + g
					}
				}
			}
			if first == "" {
				continue
			}
			if t, ok := gs[name].(map[string]any); ok {
				d.merge(t, at+"."+name)
				first = at + "." + name
			}
			out[name] = d.t
			x.res.Origin[at+"."+name] = first
			for rel, src := range d.origin {
				x.res.Origin[at+"."+name+"."+rel] = src
			}
		}
		np := maps.Clone(p)
		np["grids"] = out
		outPs[pn] = np
	}
	x.res.Raw["profiles"] = outPs
}

func isGlob(s string) bool { return strings.ContainsAny(s, "*?[") }
