package report

import (
	"reflect"
	"strings"
	"testing"
)

// templateHead is a grid file's runner part that the report sections
// below refer to.
const templateHead = `name = "p"
[[grid]]
name = "g"
methods = ["sgpr", "svgp"]
datasets = ["yacht", "energy"]
[[grid]]
name = "h"
methods = ["sgpr"]
datasets = ["yacht"]
`

// TestReportTemplatesExpandToWrittenOut checks each construct of the grid
// language in report sections against the sections written out by hand:
// the same spec, claims compiled to the same SQL.
func TestReportTemplatesExpandToWrittenOut(t *testing.T) {
	cases := []struct {
		name, lang, written string
	}{{
		name: "claims extend a template; tables merge key by key, own keys win",
		lang: `[template.uci]
kind = "reproduction"
metric = "rmse"
where = { grid = ["g", "h"], dataset = "yacht" }
[[claim]]
extends = "uci"
text = "a"
where = { method = "sgpr" }
expect = "< 1"
[[claim]]
extends = "uci"
text = "b"
metric = "nlpd"
difference = [{ grid = "g" }, { grid = "h" }]
expect = "> 0"
`,
		written: `[[claim]]
text = "a"
kind = "reproduction"
metric = "rmse"
where = { grid = ["g", "h"], dataset = "yacht", method = "sgpr" }
expect = "< 1"
[[claim]]
text = "b"
kind = "reproduction"
metric = "nlpd"
where = { grid = ["g", "h"], dataset = "yacht" }
difference = [{ grid = "g" }, { grid = "h" }]
expect = "> 0"
`,
	}, {
		name: "a figure matrix: one figure per combination, names and text filled in",
		lang: `[template.fig]
kind = "line"
x = "param:num_inducing"
y = "metric:rmse"
series = "method"
[[figure]]
name = "fig-{data}-{m}"
extends = "fig"
grid = "g"
title = "RMSE on {data}, {m}"
caption = "Set {{ {m} }} of {data}."
filter = { dataset = "{data}" }
matrix.data = ["yacht", "energy"]
matrix.m = { rmse = {}, nlpd = { y = "metric:nlpd", logy = true } }
[[figure.when]]
data = "energy"
m = "nlpd"
skip = true
`,
		written: `[[figure]]
name = "fig-yacht-rmse"
kind = "line"
grid = "g"
title = "RMSE on yacht, rmse"
caption = "Set { rmse } of yacht."
x = "param:num_inducing"
y = "metric:rmse"
series = "method"
filter = { dataset = "yacht" }
[[figure]]
name = "fig-yacht-nlpd"
kind = "line"
grid = "g"
title = "RMSE on yacht, nlpd"
caption = "Set { nlpd } of yacht."
x = "param:num_inducing"
y = "metric:nlpd"
logy = true
series = "method"
filter = { dataset = "yacht" }
[[figure]]
name = "fig-energy-rmse"
kind = "line"
grid = "g"
title = "RMSE on energy, rmse"
caption = "Set { rmse } of energy."
x = "param:num_inducing"
y = "metric:rmse"
series = "method"
filter = { dataset = "energy" }
`,
	}, {
		name: "tables and derived values extend templates; let fills in text; braces stay without let",
		lang: `[template.t]
rows = "method"
columns = "dataset"
metric = "rmse"
digits = 2
caption = "M = {m}, {m * 2} features; quick {{1, 2}}."
[template.sql]
as = "param"
query = "SELECT r.id, 'x' FROM runs r"
[report]
intro = "Sets {a, b}."
[[report.derive]]
name = "d1"
extends = "sql"
[[report.derive]]
name = "d2"
extends = "sql"
doc = "Sizes {1, 2}"
[[table]]
name = "t1"
extends = "t"
grid = "g"
let.m = 10
paper_columns = ["yacht"]
paper_rows = [["sgpr", "0.5 ± 0.1"]]
[[table]]
name = "t2"
extends = "t"
grid = "h"
let.m = 20
`,
		written: `[report]
intro = "Sets {a, b}."
[[report.derive]]
name = "d1"
as = "param"
query = "SELECT r.id, 'x' FROM runs r"
[[report.derive]]
name = "d2"
as = "param"
query = "SELECT r.id, 'x' FROM runs r"
doc = "Sizes {1, 2}"
[[table]]
name = "t1"
grid = "g"
rows = "method"
columns = "dataset"
metric = "rmse"
digits = 2
caption = "M = 10, 20 features; quick {1, 2}."
paper_columns = ["yacht"]
paper_rows = [["sgpr", "0.5 ± 0.1"]]
[[table]]
name = "t2"
grid = "h"
rows = "method"
columns = "dataset"
metric = "rmse"
digits = 2
caption = "M = 20, 40 features; quick {1, 2}."
`,
	}, {
		name: "a claim matrix with when rules setting keys; a named list from let",
		lang: `[template.grids]
let.both = ["g", "h"]
[[claim]]
extends = "grids"
text = "{data}: SGPR minus SVGP on both grids"
metric = "rmse"
where = { grid = "{both}", dataset = "{data}" }
difference = [{ method = "sgpr" }, { method = "svgp" }]
expect = "< 0"
matrix.data = ["yacht", "energy"]
[[claim.when]]
data = "energy"
set = { expect = "<= 0.1", threshold = "0.1: ours" }
`,
		written: `[[claim]]
text = "yacht: SGPR minus SVGP on both grids"
metric = "rmse"
where = { grid = ["g", "h"], dataset = "yacht" }
difference = [{ method = "sgpr" }, { method = "svgp" }]
expect = "< 0"
[[claim]]
text = "energy: SGPR minus SVGP on both grids"
metric = "rmse"
where = { grid = ["g", "h"], dataset = "energy" }
difference = [{ method = "sgpr" }, { method = "svgp" }]
expect = "<= 0.1"
threshold = "0.1: ours"
`,
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Parse("p.toml", templateHead+c.lang)
			if err != nil {
				t.Fatal(err)
			}
			want, err := Parse("p.toml", templateHead+c.written)
			if err != nil {
				t.Fatalf("written out: %v", err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("expanded:\n%+v\nwritten out:\n%+v", got, want)
			}
		})
	}
}

// TestReportTemplateErrors checks that a mistake in or through a template
// is reported at the line that wrote it, with the choices.
func TestReportTemplateErrors(t *testing.T) {
	cases := []struct {
		name, src string
		want      []string // substrings of the error
	}{
		{"unknown template", `[template.uci]
metric = "rmse"
[[claim]]
extends = "ucl"
text = "c"
query = "SELECT 1"
expect = "< 1"
`, []string{"p.toml:13:", `claim[0].extends: no template "ucl"; did you mean "uci"?`}},
		{"unknown key in a template, at the template's line", `[template.fig]
kind = "line"
colour = 1
[[figure]]
name = "f"
extends = "fig"
grid = "g"
x = "param:m"
y = "metric:rmse"
`, []string{"p.toml:12:", `unknown key "colour" in [[figure]]`}},
		{"bad value in a template, at the template's line", `[template.t]
rows = "method"
columns = "dataset"
metric = "rmse"
aggregate = "avg"
[[table]]
name = "t1"
extends = "t"
grid = "g"
`, []string{"p.toml:14:", `unknown aggregate "avg"`}},
		{"bad value in the second figure of a matrix, at the variant", `[[figure]]
name = "f-{m}"
kind = "line"
grid = "g"
x = "param:m"
y = "metric:rmse"
matrix.m = { a = {}, b = { band = "3std" } }
`, []string{"p.toml:16:", `unknown band "3std"`}},
		{"undefined variable in text", `[[claim]]
text = "{dta}"
metric = "rmse"
where = { grid = "g" }
expect = "< 1"
matrix.data = ["yacht"]
`, []string{"p.toml:11:", `claim[0].text: {dta}: "dta" is not defined; did you mean "data"?`}},
		{"an unclosed brace in a section with let", `[[claim]]
text = "sizes {1, 2"
metric = "rmse"
where = { grid = "g" }
expect = "< 1"
let.m = 1
`, []string{"p.toml:11:", "unclosed { (write {{ for a brace)"}},
		{"when without a matrix", `[[claim]]
text = "c"
query = "SELECT 1"
expect = "< 1"
[[claim.when]]
x = 1
skip = true
`, []string{"p.toml:15:", "claim[0].when[0].x: not a matrix variable"}},
		{"a wrong type in a template", `[template.t]
digits = "three"
[[table]]
name = "t1"
extends = "t"
grid = "g"
rows = "method"
columns = "dataset"
metric = "rmse"
`, []string{"p.toml:11:", "incompatible types", "integer"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("p.toml", templateHead+c.src)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

// TestTemplateUnknownKeyOnce checks that an unknown key in a template that
// several sections extend is reported once, at the template's line.
func TestTemplateUnknownKeyOnce(t *testing.T) {
	src := templateHead + `[template.fig]
kind = "line"
colour = 1
[[figure]]
name = "f1"
extends = "fig"
grid = "g"
x = "param:m"
y = "metric:rmse"
[[figure]]
name = "f2"
extends = "fig"
grid = "g"
x = "param:m"
y = "metric:rmse"
`
	_, err := Parse("p.toml", src)
	if err == nil {
		t.Fatal("no error")
	}
	if n := strings.Count(err.Error(), `unknown key "colour"`); n != 1 || !strings.Contains(err.Error(), "p.toml:12:") {
		t.Errorf("error %q: want the unknown key once, at p.toml:12", err)
	}
}
