package datasets

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeFile(t *testing.T, dir, name, s string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const userCSV = `x1,x2,is_test,y
0,10,0,1
1,11,0,2
2,12,1,3
3,13,0,4
4,14,1,5
5,15,0,6
6,16,0,7
7,17,0,8
8,18,0,9
9,19,0,10
`

func TestUserCSVLayouts(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "d.csv", userCSV)
	noHeader := writeFile(t, dir, "n.csv", strings.SplitN(userCSV, "\n", 2)[1])
	semi := writeFile(t, dir, "s.csv", strings.ReplaceAll(userCSV, ",", ";"))
	test := writeFile(t, dir, "t.csv", "x1,x2,is_test,y\n20,30,0,21\n21,31,0,22\n")
	cases := []struct {
		name           string
		params         map[string]any
		task           string
		ntrain, ntest  int
		dim            int
		proto          string
		firstX, firstY float64 // first training row (no scaling)
	}{
		{"mask", map[string]any{"file": file, "test_mask": "is_test", "target": "y"}, "", 8, 2, 2, ProtoTestMask, 0, 1},
		{"mask by index", map[string]any{"file": file, "test_mask": int64(2)}, "", 8, 2, 2, ProtoTestMask, 0, 1},
		{"inputs selected", map[string]any{"file": file, "test_mask": "is_test", "inputs": []any{"x2"}}, "", 8, 2, 1, ProtoTestMask, 10, 1},
		{"no header", map[string]any{"file": noHeader, "test_mask": int64(2), "target": int64(3), "inputs": []any{int64(1)}}, "", 8, 2, 1, ProtoTestMask, 10, 1},
		{"forced header false", map[string]any{"file": noHeader, "header": false, "test_mask": int64(2)}, "", 8, 2, 2, ProtoTestMask, 0, 1},
		{"delimiter", map[string]any{"file": semi, "delimiter": ";", "test_mask": "is_test"}, "", 8, 2, 2, ProtoTestMask, 0, 1},
		{"test file", map[string]any{"file": file, "test_file": test, "inputs": []any{"x1", "x2"}}, "", 10, 2, 2, ProtoTestFile, 0, 1},
		{"fraction", map[string]any{"file": file, "test_fraction": 0.3, "inputs": []any{"x1"}}, "", 7, 3, 1, ProtoRandomFrac, -1, -1},
		{"default fraction", map[string]any{"file": file, "inputs": []any{"x1"}}, "", 9, 1, 1, ProtoRandomFrac, -1, -1},
		{"subset", map[string]any{"file": file, "n": int64(5), "test_fraction": 0.2}, "", 4, 1, 3, ProtoRandomFrac, -1, -1},
		{"classification", map[string]any{"file": file, "target": "is_test", "inputs": []any{"x1"}, "test_fraction": 0.5}, Classification, 5, 5, 1, ProtoRandomFrac, -1, -1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := Prepare(Request{Name: UserCSV, Params: c.params, Scaling: ScaleNone, Task: c.task})
			if err != nil {
				t.Fatal(err)
			}
			_, d := p.Train.X.Dims()
			if p.Train.N() != c.ntrain || p.Test.N() != c.ntest || d != c.dim {
				t.Fatalf("train %d test %d dim %d, want %d %d %d", p.Train.N(), p.Test.N(), d, c.ntrain, c.ntest, c.dim)
			}
			if p.Provenance.Protocol != c.proto {
				t.Errorf("protocol %s, want %s", p.Provenance.Protocol, c.proto)
			}
			if c.firstY >= 0 && (p.Train.X.At(0, 0) != c.firstX || p.Train.Y[0] != c.firstY) {
				t.Errorf("first training row x=%v y=%v, want %v %v", p.Train.X.At(0, 0), p.Train.Y[0], c.firstX, c.firstY)
			}
			if len(p.Provenance.Files) == 0 || len(p.Provenance.Files[0].SHA256) != 64 {
				t.Errorf("provenance files %v lack the sha256", p.Provenance.Files)
			}
			if c.task == Classification {
				for _, y := range append(append([]float64(nil), p.Train.Y...), p.Test.Y...) {
					if y != -1 && y != 1 {
						t.Fatalf("label %v, want ±1", y)
					}
				}
			}
		})
	}
	// A random fraction depends on split and seed, and only on them.
	get := func(split int, seed uint64) []float64 {
		p, err := Prepare(Request{Name: UserCSV, Params: map[string]any{"file": file, "test_fraction": 0.3}, Scaling: ScaleNone, Split: split, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		return p.Test.Y
	}
	if a, b := get(0, 0), get(0, 0); !equalF(a, b) {
		t.Errorf("same split and seed gave test targets %v and %v", a, b)
	}
	if a, b := get(0, 0), get(1, 0); equalF(a, b) {
		t.Errorf("splits 0 and 1 gave the same test set %v", a)
	}
}

func equalF(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestUserCSVErrors(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "d.csv", userCSV)
	cases := []struct {
		name   string
		params map[string]any
		body   string // replaces the file when set
		task   string
		sha    string
		want   string
	}{
		{"no file", map[string]any{"target": "y"}, "", "", "", "param file is required"},
		{"unknown param", map[string]any{"file": file, "traget": "y"}, "", "", "", `unknown param "traget"; valid: file (string)`},
		{"two test sources", map[string]any{"file": file, "test_mask": "is_test", "test_fraction": 0.2}, "", "", "", "at most one of test_file, test_mask and test_fraction"},
		{"bad fraction", map[string]any{"file": file, "test_fraction": 1.5}, "", "", "", "want 0 < test_fraction < 1"},
		{"no such column", map[string]any{"file": file, "target": "z"}, "", "", "", `param target = "z": no such column; columns: x1, x2, is_test, y`},
		{"index out of range", map[string]any{"file": file, "target": int64(9)}, "", "", "", "param target = 9, but the file has 4 columns (0..3)"},
		{"input is target", map[string]any{"file": file, "inputs": []any{"x1", "y"}}, "", "", "", `column 3 ("y") is the target`},
		{"missing value", map[string]any{"file": "BODY"}, "a,b\n1,2\n3,\n", "", "", "d2.csv:3: column 1 (\"b\"): missing value"},
		{"non-numeric", map[string]any{"file": "BODY", "header": false}, "1,2\n3,x\n", "", "", "d2.csv:2: column 1: non-numeric value \"x\""},
		{"ragged", map[string]any{"file": "BODY"}, "1,2\n3\n", "", "", "d2.csv:2"},
		{"header only", map[string]any{"file": "BODY"}, "a,b\n", "", "", "no data rows"},
		{"name without header", map[string]any{"file": "BODY", "target": "b"}, "1,2\n3,4\n", "", "", "names a column, but the file has no header"},
		{"three classes", map[string]any{"file": file, "target": "x1"}, "", Classification, "", "classification needs exactly 2 target values, found 10"},
		{"overflow", map[string]any{"file": "BODY", "header": false}, "1,2\n3,1e999\n", "", "", `d2.csv:2: column 1: number beyond float64's range ±1.8e308 (overflow) "1e999"`},
		{"overflow in the first row is data", map[string]any{"file": "BODY"}, "1e999,2\n3,4\n", "", "", `d2.csv:1: column 0: number beyond float64's range ±1.8e308 (overflow) "1e999"`},
		{"mask not 0/1", map[string]any{"file": file, "test_mask": "x2", "target": "y"}, "", "", "", `d.csv:2: test_mask column 1 ("x2") is 10; a test mask is 1 for a test row and 0 for a training row`},
		{"mask all 1", map[string]any{"file": "BODY", "test_mask": "m"}, "x,m,y\n1,1,2\n3,1,4\n", "", "", `test_mask column 1 ("m") is 1 on every row, which leaves no training rows`},
		{"mask all 0", map[string]any{"file": "BODY", "test_mask": "m"}, "x,m,y\n1,0,2\n3,0,4\n", "", "", `test_mask column 1 ("m") is 0 on every row, which leaves no test rows`},
		{"changed file", map[string]any{"file": file}, "", "", strings.Repeat("0", 64), "changed since the grid was expanded"},
		{"bad delimiter", map[string]any{"file": file, "delimiter": ";;"}, "", "", "", "want one character"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.params["file"] == "BODY" {
				c.params["file"] = writeFile(t, dir, "d2.csv", c.body)
			}
			_, err := Prepare(Request{Name: UserCSV, Params: c.params, Task: c.task, FileSHA256: map[string]string{"file": c.sha}})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want it to contain %q", err, c.want)
			}
		})
	}
}

func TestCheckRun(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "d.csv", userCSV)
	cases := []struct {
		name, dataset   string
		params          map[string]any
		protocol, scale string
		splits          []int
		want            string // "" = valid
	}{
		{"synthetic ok", "gp-sample", map[string]any{"n_test": int64(10)}, "", "", []int{0, 5}, ""},
		{"synthetic n_test 0", "gp-sample", map[string]any{"n_test": int64(0)}, "", "", []int{0}, "n_test = 0 gives no test set"},
		{"default n_test 0", "vof-regression", nil, "", "", []int{0}, "set [grid.dataset] n_test"},
		{"synthetic protocol", "gp-sample", nil, "random-90-10", "", []int{0}, `only supports protocol "synthetic"`},
		{"all-train default", "snelson", nil, "", "", []int{0}, "its default protocol is all-train; set [grid.dataset] protocol to one of: random-90-10"},
		{"all-train explicit", "yacht", nil, "all-train", "", []int{0}, "protocol all-train has no test set"},
		{"unknown protocol", "yacht", nil, "random-50-50", "", []int{0}, `unknown protocol "random-50-50"; valid: random-90-10`},
		{"bad scaling", "yacht", nil, "", "standardise", []int{0}, `unknown scaling "standardise"`},
		{"snelson with test", "snelson", nil, "random-90-10", "", []int{0, 40}, ""},
		{"csv fraction splits", UserCSV, map[string]any{"file": file}, "", "", []int{0, 9}, ""},
		{"csv mask split 1", UserCSV, map[string]any{"file": file, "test_mask": "is_test"}, "", "", []int{0, 1}, "protocol test-mask has one split (0), not 1"},
		{"csv wrong protocol", UserCSV, map[string]any{"file": file, "test_mask": "is_test"}, "random-90-10", "", []int{0}, `protocol "random-90-10" does not fit the parameters; valid: test-mask`},
		{"csv missing file", UserCSV, map[string]any{"file": filepath.Join(dir, "nope.csv")}, "", "", []int{0}, "no such file"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := CheckRun(c.dataset, c.params, c.protocol, c.scale, c.splits, t.TempDir())
			switch {
			case c.want == "" && err != nil:
				t.Errorf("unexpected error %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Errorf("error %v, want it to contain %q", err, c.want)
			}
		})
	}
}

// TestCheckRunCSVColumns: the column parameters of a user CSV are resolved
// against the file's header when the grid is expanded (before, a misspelt
// name passed CheckRun and failed every run), as a *ParamError naming the
// parameter, with the file's columns and "did you mean".
func TestCheckRunCSVColumns(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "d.csv", userCSV)
	sameCols := writeFile(t, dir, "t.csv", "x1,x2,is_test,y\n20,30,0,21\n")
	otherCols := writeFile(t, dir, "t3.csv", "x1,x2,y\n20,30,21\n")
	moved := writeFile(t, dir, "tm.csv", "y,x1,x2,is_test\n21,20,30,0\n")
	noHeader := writeFile(t, dir, "n.csv", "1,2,3\n4,5,6\n")
	for _, c := range []struct {
		name   string
		params map[string]any
		param  string // the *ParamError's parameter; "" = valid
		want   string
	}{
		{"target case", map[string]any{"file": file, "target": "Y"}, "target",
			`d.csv: param target = "Y": no such column (did you mean "y"?); columns: x1, x2, is_test, y`},
		{"input typo", map[string]any{"file": file, "inputs": []any{"x1", "x3"}}, "inputs",
			`param inputs = "x3": no such column (did you mean "x1"?); columns: x1, x2, is_test, y`},
		{"mask typo", map[string]any{"file": file, "test_mask": "istest"}, "test_mask",
			`param test_mask = "istest": no such column (did you mean "is_test"?)`},
		{"nothing near", map[string]any{"file": file, "target": "pressure"}, "target",
			`param target = "pressure": no such column; columns: x1, x2, is_test, y`},
		{"index out of range", map[string]any{"file": file, "target": int64(4)}, "target", "param target = 4, but the file has 4 columns (0..3)"},
		{"input is the target", map[string]any{"file": file, "inputs": []any{"y"}}, "inputs", `column 3 ("y") is the target`},
		{"mask is the target", map[string]any{"file": file, "test_mask": "y"}, "test_mask", "test_mask and target are the same column"},
		{"name without header", map[string]any{"file": noHeader, "target": "c"}, "target", "names a column, but the file has no header"},
		{"test file columns", map[string]any{"file": file, "test_file": otherCols}, "test_file", "t3.csv has 3 columns, file " + file + " has 4"},
		{"test file order", map[string]any{"file": file, "test_file": moved, "inputs": []any{"x1", "x2"}}, "test_file", "its header puts the inputs or the target in other columns"},
		{"ok", map[string]any{"file": file, "target": "y", "inputs": []any{"x1", "x2"}, "test_file": sameCols}, "", ""},
		{"ok by index", map[string]any{"file": noHeader, "target": int64(0)}, "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := CheckRun(UserCSV, c.params, "", "", []int{0}, dir)
			var pe *ParamError
			switch {
			case c.param == "" && err != nil:
				t.Errorf("unexpected error %v", err)
			case c.param == "":
			case !errors.As(err, &pe) || pe.Param != c.param || !strings.Contains(err.Error(), c.want):
				t.Errorf("error %v, want a *ParamError about %s containing %q", err, c.param, c.want)
			}
		})
	}
}

// TestCheckRunPublishedSplits counts published splits from the staged
// files without loading the data.
func TestCheckRunPublishedSplits(t *testing.T) {
	dir := os.Getenv("SGPLAB_DATA")
	if dir == "" {
		t.Skip("SGPLAB_DATA not set: the staged datasets are needed to count published splits")
	}
	for _, c := range []struct {
		name string
		n    int
	}{{"yacht", 20}, {"elevators", 10}} {
		if err := CheckRun(c.name, nil, ProtoPublished, "", []int{c.n - 1}, dir); err != nil && c.name == "yacht" {
			t.Errorf("%s split %d: %v", c.name, c.n-1, err)
		}
		err := CheckRun(c.name, nil, map[string]string{"yacht": ProtoPublished, "elevators": ProtoFold}[c.name], "", []int{c.n}, dir)
		if err == nil || !strings.Contains(err.Error(), "does not exist") {
			t.Errorf("%s split %d: error %v, want it to say the split does not exist", c.name, c.n, err)
		}
	}
}
