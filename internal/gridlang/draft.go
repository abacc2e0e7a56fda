package gridlang

import (
	"fmt"
	"maps"
	"strings"
)

// draft is a table being assembled from several sources, with the source
// path of every key set (relative paths: "params.eps"; a key without an
// entry comes from its nearest ancestor's source).
type draft struct {
	t      map[string]any
	origin map[string]string
}

func newDraft() *draft { return &draft{t: map[string]any{}, origin: map[string]string{}} }

func (d *draft) clone() *draft {
	return &draft{t: deepClone(d.t).(map[string]any), origin: maps.Clone(d.origin)}
}

// merge lays src (defined at source path at) over d: tables merge key by
// key, any other value (lists, arrays of tables too) replaces d's. Keys
// in skip are left out at the top level.
func (d *draft) merge(src map[string]any, at string, skip ...string) {
	d.mergeAt(d.t, "", src, func(rel string) string { return join(at, rel) }, skip)
}

// mergeDraft lays another draft over d, each key keeping its source.
func (d *draft) mergeDraft(o *draft) {
	d.mergeAt(d.t, "", o.t, o.source, nil)
}

func (d *draft) mergeAt(dst map[string]any, rel string, src map[string]any, srcOf func(string) string, skip []string) {
	for _, k := range sortedKeys(src) {
		if rel == "" && contains(skip, k) {
			continue
		}
		v := src[k]
		r := join(rel, k)
		if sub, ok := v.(map[string]any); ok {
			if have, ok := dst[k].(map[string]any); ok {
				d.mergeAt(have, r, sub, srcOf, nil)
				continue
			}
		}
		// When rules accumulate: a grid's rules apply after those of the
		// templates it extends, each keeping its source.
		if add, ok := deepClone(v).([]map[string]any); ok && rel == "" && k == keyWhen {
			have, _ := dst[k].([]map[string]any)
			if len(have) == 0 {
				d.origin[keyWhen] = srcOf(keyWhen)
			}
			for i := range add {
				d.origin[fmt.Sprintf("%s[%d]", keyWhen, len(have)+i)] = srcOf(fmt.Sprintf("%s[%d]", keyWhen, i))
			}
			dst[k] = append(have, add...)
			continue
		}
		for o := range d.origin {
			if strings.HasPrefix(o, r+".") || strings.HasPrefix(o, r+"[") {
				delete(d.origin, o)
			}
		}
		dst[k] = deepClone(v)
		d.origin[r] = srcOf(r)
		// A table taken whole keeps the sources of its own keys.
		if sub, ok := v.(map[string]any); ok {
			d.recordAll(sub, r, srcOf)
		}
	}
}

func (d *draft) recordAll(t map[string]any, rel string, srcOf func(string) string) {
	for k, v := range t {
		r := join(rel, k)
		if s := srcOf(r); s != join(srcOf(rel), k) {
			d.origin[r] = s
		}
		if sub, ok := v.(map[string]any); ok {
			d.recordAll(sub, r, srcOf)
		}
	}
}

// source is the source path of the relative key path p.
func (d *draft) source(p string) string { return sourceOf(d.origin, p) }
