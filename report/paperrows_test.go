package report

import (
	"reflect"
	"strings"
	"testing"
)

// TestPaperRowsEqualCells checks that a table's paper numbers written as
// rows decode to the same values, in the same order, as the five-line
// [[table.paper]] cells, and that grids a matrix makes are the spec's grids.
func TestPaperRowsEqualCells(t *testing.T) {
	head := "name = \"p\"\n[[grid]]\nname = \"g-{k}\"\nmatrix = { k = [\"a\", \"b\"] }\n\n" +
		"[[table]]\nname = \"t\"\ngrid = \"g-b\"\nrows = \"dataset\"\ncolumns = \"method\"\nmetric = \"rmse\"\n"
	cells := head + `[[table.paper]]
row = "yacht"
column = "svgp"
value = 0.004
std = 0.0
[[table.paper]]
row = "yacht"
column = "gpr"
value = 0.01
[[table.paper]]
row = "energy"
column = "svgp"
value = 1200
std = 3.5
[[table.paper]]
row = "energy"
column = "gpr"
value = -0.5
note = "sign lost in the text, reconstructed"
`
	rows := head + `paper_columns = ["svgp", "gpr"]
paper_rows = [
  ["yacht", "0.004 ± 0.0", 0.01],
  ["energy", "1200 +- 3.5", "-0.5; sign lost in the text, reconstructed"],
  ["kin8nm", "", ""],
]
`
	a, err := Parse("cells.toml", cells)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Parse("rows.toml", rows)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a.Tables[0].Paper, b.Tables[0].Paper) || len(a.Tables[0].Paper) != 4 {
		t.Errorf("rows decode to %+v, cells to %+v", b.Tables[0].Paper, a.Tables[0].Paper)
	}
	c, err := Parse("columns.toml", strings.Replace(rows, "paper_rows", "paper_order = \"columns\"\npaper_rows", 1))
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, pv := range c.Tables[0].Paper {
		order = append(order, pv.Row+"/"+pv.Column)
	}
	if got := strings.Join(order, " "); got != "yacht/svgp energy/svgp yacht/gpr energy/gpr" {
		t.Errorf("paper_order = \"columns\" lists %s", got)
	}
	if got := strings.Join(b.Grids, ","); got != "g-a,g-b" {
		t.Errorf("grids %q, want the matrix's g-a,g-b", got)
	}
	for _, c := range []struct{ rows, want string }{
		{`[["yacht", 1]]`, `rows.toml:13: row "yacht" has 1 cells, paper_columns 2 (svgp, gpr)`},
		{`[["yacht", "0.1 ± x", 1]]`, `rows.toml:13: row "yacht", column "svgp": "0.1 ± x": the std after ± must be a number ≥ 0`},
		{`[["yacht", "about 3", 1]]`, `column "svgp": "about 3": want a number`},
		{`[[1, 2, 3]]`, `rows.toml:13: a paper row starts with its row's name`},
	} {
		src := strings.Replace(rows, "paper_rows = [\n  [\"yacht\", \"0.004 ± 0.0\", 0.01],\n  [\"energy\", \"1200 +- 3.5\", \"-0.5; sign lost in the text, reconstructed\"],\n  [\"kin8nm\", \"\", \"\"],\n]", "paper_rows = "+c.rows, 1)
		if _, err := Parse("rows.toml", src); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("paper_rows = %s: error %v, want %q", c.rows, err, c.want)
		}
	}
}
