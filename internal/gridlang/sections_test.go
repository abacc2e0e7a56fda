package gridlang

import (
	"reflect"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
)

func expandSrc(t *testing.T, src string) (*Result, []Error) {
	t.Helper()
	var raw map[string]any
	md, err := toml.Decode(src, &raw)
	if err != nil {
		t.Fatalf("%v\n%s", err, src)
	}
	return Expand(raw, md)
}

// reportPart is what the report reads of an expanded file.
func reportPart(r *Result) map[string]any {
	out := map[string]any{}
	for _, k := range []string{"claim", "figure", "table", "report"} {
		if v, ok := r.Raw[k]; ok {
			out[k] = v
		}
	}
	return out
}

// TestSectionsExpandToWrittenOut checks report sections written with
// templates, matrices, when rules and let values against the same
// sections written out: the expanded tables are equal, key by key.
func TestSectionsExpandToWrittenOut(t *testing.T) {
	cases := []struct {
		name, lang, written string
	}{{
		name: "extends merges tables key by key; own keys win",
		lang: `[template.t]
metric = "rmse"
expect = "> 0"
where = { grid = "g", dataset = "yacht" }
[[claim]]
extends = "t"
text = "a"
expect = "< 1"
where = { method = "sgpr" }`,
		written: `[[claim]]
text = "a"
metric = "rmse"
expect = "< 1"
where = { grid = "g", dataset = "yacht", method = "sgpr" }`,
	}, {
		name: "a matrix in the order of the name, when rules skip and set",
		lang: `[[figure]]
name = "f-{k}-{d}"
caption = "{d} with {k}; {{braces}}"
grid = "g-{d}"
matrix.d = ["a", "b"]
matrix.k = { se = {}, m32 = { logy = true } }
[[figure.when]]
k = "m32"
d = "b"
skip = true
[[figure.when]]
d = "a"
set = { columns = 2 }`,
		written: `[[figure]]
name = "f-se-a"
caption = "a with se; {braces}"
grid = "g-a"
columns = 2
[[figure]]
name = "f-se-b"
caption = "b with se; {braces}"
grid = "g-b"
[[figure]]
name = "f-m32-a"
caption = "a with m32; {braces}"
grid = "g-a"
logy = true
columns = 2`,
	}, {
		name: "let values fill text; sections without let keep their braces",
		lang: `[template.sql]
query = "SELECT {x}"
[[report.derive]]
name = "d"
extends = "sql"
let.x = "{1 + 1}"
[[report.derive]]
name = "e"
doc = "sizes {1, 2}"
query = "SELECT 1"
[[table]]
name = "t"
paper_rows = [["a", "1 ± 0.1"]]`,
		written: `[[report.derive]]
name = "d"
query = "SELECT 2"
[[report.derive]]
name = "e"
doc = "sizes {1, 2}"
query = "SELECT 1"
[[table]]
name = "t"
paper_rows = [["a", "1 ± 0.1"]]`,
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, errs := expandSrc(t, c.lang)
			if len(errs) > 0 {
				t.Fatal(errs)
			}
			want, errs := expandSrc(t, c.written)
			if len(errs) > 0 {
				t.Fatal(errs)
			}
			if g, w := reportPart(got), reportPart(want); !reflect.DeepEqual(g, w) {
				t.Errorf("expanded:\n%#v\nwritten out:\n%#v", g, w)
			}
		})
	}
}

// TestSectionsSource checks that every key of an expanded section maps
// back to the key that wrote it.
func TestSectionsSource(t *testing.T) {
	r, errs := expandSrc(t, `[template.t]
metric = "rmse"
[[claim]]
text = "c"
[[claim]]
extends = "t"
text = "{v}"
matrix.v = { a = { expect = "> 0" }, b = {} }`)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	for key, want := range map[string]string{
		"claim[0].text":   "claim[0].text",
		"claim[1].metric": "template.t.metric",
		"claim[1].expect": "claim[1].matrix.v.a.expect",
		"claim[2].text":   "claim[1].text",
		"claim[2].metric": "template.t.metric",
	} {
		if got := r.Source(key); got != want {
			t.Errorf("Source(%q) = %q, want %q", key, got, want)
		}
	}
	if n := len(asArray(r.Raw["claim"])); n != 3 {
		t.Errorf("%d claims, want 3", n)
	}
}

// TestSectionsErrors checks mistakes in report sections: at the source
// key, with the choices.
func TestSectionsErrors(t *testing.T) {
	cases := []struct {
		src, key, want string
	}{
		{"[template.uci]\nmetric = \"rmse\"\n[[claim]]\nextends = \"ucl\"\n", "claim[0].extends", `no template "ucl"; did you mean "uci"?`},
		{"[[figure]]\nname = \"f-{dta}\"\nmatrix.data = [\"a\"]\n", "figure[0].name", `"dta" is not defined; did you mean "data"?`},
		{"[[table]]\nname = \"t\"\ncaption = \"sizes {1, 2\"\nlet.m = 1\n", "table[0].caption", "unclosed {"},
		{"[[claim]]\ntext = \"c\"\nmatrix.k = [\"a\"]\n[[claim.when]]\nkk = \"a\"\nskip = true\n", "claim[0].when[0].kk", "not a matrix variable"},
		{"[report]\n[[report.derive]]\nname = \"d\"\nextends = \"nope\"\n", "report.derive[0].extends", `no template "nope"`},
	}
	for _, c := range cases {
		_, errs := expandSrc(t, c.src)
		found := false
		for _, e := range errs {
			if e.Key == c.key && strings.Contains(e.Msg, c.want) {
				found = true
			}
		}
		if !found {
			t.Errorf("%q: errors %v, want %s: …%s…", c.src, errs, c.key, c.want)
		}
	}
}
