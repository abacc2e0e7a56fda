package gridlang

import (
	"fmt"

	"github.com/BurntSushi/toml"
)

// keyOrder maps the resolved path of every table ("grid[1].matrix") to
// its keys in the order the file defines them: the decoded maps forget
// it, and a matrix's combinations (so the grids and rows it makes) follow
// it. The decoder lists the keys of every element of an array of tables
// without an index, each element starting with the array's own key.
func keyOrder(raw map[string]any, keys []toml.Key) map[string][]string {
	order := map[string][]string{}
	count := map[string]int{} // resolved array-of-tables path → elements seen
	add := func(parent, k string) {
		for _, o := range order[parent] {
			if o == k {
				return
			}
		}
		order[parent] = append(order[parent], k)
	}
	for _, k := range keys {
		path := ""
		var cur any = raw
		for i, part := range k {
			parent := path
			path = join(path, part)
			var next any
			if m, ok := cur.(map[string]any); ok {
				next = m[part]
			}
			last := i == len(k)-1
			// Dotted keys (a.b = 1) list only the full path: the parts
			// before it are defined where they first appear.
			add(parent, part)
			arr, isArray := next.([]map[string]any)
			if !isArray {
				cur = next
				continue
			}
			if last {
				count[path]++
			}
			n := max(count[path]-1, 0)
			path = fmt.Sprintf("%s[%d]", path, n)
			cur = nil
			if n < len(arr) {
				cur = arr[n]
			}
		}
	}
	return order
}

// join is the path of key b below path a ("" is the top level).
func join(a, b string) string {
	if a == "" {
		return b
	}
	return a + "." + b
}
