package datasets

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp"
	"sgplab/internal/anyconv"
)

// UserCSV is the dataset name under which a grid reads the user's own CSV
// file: datasets = ["csv"] with [grid.dataset] file = "my.csv" and the
// options below. The file's sha256 is part of every run's identity (the
// runner hashes every *file parameter) and of its provenance.
const UserCSV = "csv"

// User-file protocols: the test set comes from a second file, from a mask
// column, or is a seeded random fraction of the rows.
const (
	ProtoTestFile   = "test-file"
	ProtoTestMask   = "test-mask"
	ProtoRandomFrac = "random-fraction"
)

// userParams documents the parameters of the csv dataset (name, kind, doc).
var userParams = [][3]string{
	{"file", "string", "path of the CSV file (relative to the working directory)"},
	{"header", "bool", "whether the first row names the columns (default: detected, a first row with a non-numeric field is a header)"},
	{"delimiter", "string", "field separator, one character (default \",\"; \"\\t\" for tab)"},
	{"target", "column", "target column: a header name or a 0-based index (default: the last column)"},
	{"inputs", "columns", "input columns: one name or index, or a list of them; in a grid a list of lists, inputs = [[\"x1\", \"x2\"]], since a flat list sweeps (default: every column but the target and test_mask)"},
	{"test_file", "string", "a second CSV (same columns) that is the test set: protocol test-file"},
	{"test_mask", "column", "a 0/1 column whose rows with 1 are the test set, those with 0 the training set: protocol test-mask"},
	{"test_fraction", "float", "fraction of rows drawn (PCG, seeded by split and seed) as the test set: protocol random-fraction (default 0.1)"},
	{"n", "int", "use a random subset of n rows (before splitting; random-fraction only)"},
}

// UserFileParams are the csv dataset parameters that name files; the runner
// hashes them into the run identity.
var UserFileParams = []string{"file", "test_file"}

// userOptions are the parsed csv parameters.
type userOptions struct {
	file, testFile   string
	header           int // -1 detect, 0 no, 1 yes
	delim            rune
	target, testMask any // string name, int index or nil
	inputs           []any
	testFraction     float64
	n                int
}

func userParamNames() string {
	var out []string
	for _, p := range userParams {
		out = append(out, p[0]+" ("+p[1]+")")
	}
	return strings.Join(out, ", ")
}

// parseUserParams checks the csv dataset's parameters: every name known,
// every value of the right type, file given, at most one test-set source.
func parseUserParams(params map[string]any) (userOptions, error) {
	o := userOptions{header: -1, delim: ',', testFraction: 0.1}
	known := map[string]string{}
	for _, p := range userParams {
		known[p[0]] = p[1]
	}
	bad := func(k string, v any) error {
		return fmt.Errorf("datasets: csv: param %s = %v (%T) should be %s; valid: %s", k, v, v, known[k], userParamNames())
	}
	column := func(k string, v any) (any, error) {
		switch x := v.(type) {
		case string:
			if x == "" {
				return nil, fmt.Errorf("datasets: csv: param %s is empty: give a header name or a 0-based column index", k)
			}
			return x, nil
		case int64, int, float64:
			f, _ := anyconv.Float(x)
			if f != math.Trunc(f) || f < 0 || f > 1e6 {
				return nil, fmt.Errorf("datasets: csv: param %s = %v is not a column index (0-based integer)", k, v)
			}
			return int(f), nil
		}
		return nil, bad(k, v)
	}
	for _, k := range slices.Sorted(maps.Keys(params)) {
		v := params[k]
		var err error
		switch k {
		case "file", "test_file":
			s, ok := v.(string)
			if !ok {
				return o, bad(k, v)
			}
			if s == "" {
				return o, fmt.Errorf("datasets: csv: param %s is empty", k)
			}
			if k == "file" {
				o.file = s
			} else {
				o.testFile = s
			}
		case "header":
			b, ok := v.(bool)
			if !ok {
				return o, bad(k, v)
			}
			o.header = 0
			if b {
				o.header = 1
			}
		case "delimiter":
			s, ok := v.(string)
			if s == `\t` {
				s = "\t"
			}
			if !ok || len([]rune(s)) != 1 || s == "\"" || s == "\n" || s == "\r" {
				return o, fmt.Errorf("datasets: csv: param delimiter = %v: want one character such as \",\", \";\" or \"\\t\"", v)
			}
			o.delim = []rune(s)[0]
		case "target":
			if o.target, err = column(k, v); err != nil {
				return o, err
			}
		case "test_mask":
			if o.testMask, err = column(k, v); err != nil {
				return o, err
			}
		case "inputs":
			l, ok := v.([]any)
			if !ok { // one column (a grid's flat list sweeps single columns)
				l, ok = []any{v}, true
			}
			if len(l) == 0 {
				return o, fmt.Errorf("datasets: csv: param inputs = %v: want a non-empty list of column names or 0-based indices", v)
			}
			for _, e := range l {
				c, err := column(k, e)
				if err != nil {
					return o, err
				}
				o.inputs = append(o.inputs, c)
			}
		case "test_fraction":
			f, ok := anyconv.Float(v)
			if !ok {
				return o, bad(k, v)
			}
			if !(f > 0 && f < 1) {
				return o, fmt.Errorf("datasets: csv: param test_fraction = %v: want 0 < test_fraction < 1", v)
			}
			o.testFraction = f
		case "n":
			n, _, err := intParam(params, k)
			if err != nil {
				return o, err
			}
			if n < 2 {
				return o, fmt.Errorf("datasets: csv: param n = %d, need at least 2", n)
			}
			o.n = n
		default:
			return o, fmt.Errorf("datasets: csv: unknown param %q; valid: %s", k, userParamNames())
		}
	}
	if o.file == "" {
		return o, fmt.Errorf("datasets: csv: param file is required: [grid.dataset] file = \"path/to/data.csv\"")
	}
	sources := 0
	for _, set := range []bool{o.testFile != "", o.testMask != nil, params["test_fraction"] != nil} {
		if set {
			sources++
		}
	}
	if sources > 1 {
		return o, errors.New("datasets: csv: give at most one of test_file, test_mask and test_fraction (the test set comes from one place)")
	}
	if o.n > 0 && (o.testFile != "" || o.testMask != nil) {
		return o, errors.New("datasets: csv: param n (a random subset) only works with test_fraction, not with test_file or test_mask")
	}
	return o, nil
}

// protocol is the split protocol the options imply.
func (o userOptions) protocol() string {
	switch {
	case o.testFile != "":
		return ProtoTestFile
	case o.testMask != nil:
		return ProtoTestMask
	}
	return ProtoRandomFrac
}

// userProtocols are the protocols a csv grid may set explicitly.
func (o userOptions) protocols() []string {
	if p := o.protocol(); p != ProtoRandomFrac {
		return []string{p}
	}
	return []string{ProtoRandomFrac, ProtoRandom9010, ProtoRandom8020, ProtoLast10}
}

// csvTable is a parsed CSV: column names ("" when there is no header) and
// numeric rows.
type csvTable struct {
	path  string
	names []string
	rows  [][]float64
	lines []int // source line of each row, for messages
	sha   string
}

// readUserCSV reads and parses path; want, when not empty, is the sha256
// the run was expanded with: a file edited since is refused rather than
// recorded under the old identity.
func readUserCSV(path, want string, o userOptions) (*csvTable, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("datasets: csv: %w", err)
	}
	sum := sha256.Sum256(b)
	got := hex.EncodeToString(sum[:])
	if want != "" && got != want {
		return nil, fmt.Errorf("datasets: csv: %s changed since the grid was expanded (sha256 %s, run id made with %s); run the grid again to get runs for the new content", path, got[:12], want[:min(12, len(want))])
	}
	t, err := parseUserCSV(path, b, o)
	if err != nil {
		return nil, err
	}
	t.sha = got
	return t, nil
}

// parseUserCSV parses CSV bytes: numeric fields only, no missing values,
// every row as long as the first.
func parseUserCSV(path string, b []byte, o userOptions) (*csvTable, error) {
	return parseCSV(path, bytes.NewReader(b), o, 0)
}

// readUserHeader reads the header (or, without one, the width) of the CSV
// file at path and its first data row, not the rest: enough to resolve the
// column parameters when a grid is expanded.
func readUserHeader(path string, o userOptions) (*csvTable, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("datasets: csv: %w", err)
	}
	defer f.Close()
	return parseCSV(path, bufio.NewReader(f), o, 1)
}

// parseCSV parses CSV from r, stopping after maxRows data rows when
// maxRows > 0.
func parseCSV(path string, in io.Reader, o userOptions, maxRows int) (*csvTable, error) {
	r := csv.NewReader(in)
	r.Comma = o.delim
	r.Comment = '#'
	r.TrimLeadingSpace = true
	r.ReuseRecord = true
	t := &csvTable{path: path}
	first := true
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) && errors.Is(pe.Err, csv.ErrFieldCount) {
				return nil, fmt.Errorf("datasets: csv: %s:%d: %d fields, the first row has %d", path, pe.Line, len(rec), r.FieldsPerRecord)
			}
			return nil, fmt.Errorf("datasets: csv: %s: %w", path, err)
		}
		line, _ := r.FieldPos(0)
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue // a blank line inside a one-column file
		}
		if first {
			first = false
			isHeader := o.header == 1
			if o.header == -1 {
				for _, f := range rec {
					if !isNumber(strings.TrimSpace(f)) {
						isHeader = true
						break
					}
				}
			}
			if isHeader {
				t.names = make([]string, len(rec))
				seen := map[string]bool{}
				for j, f := range rec {
					name := strings.TrimSpace(f)
					if seen[name] {
						return nil, fmt.Errorf("datasets: csv: %s:%d: column name %q appears twice", path, line, name)
					}
					seen[name] = true
					t.names[j] = name
				}
				continue
			}
		}
		row := make([]float64, len(rec))
		for j, f := range rec {
			s := strings.TrimSpace(f)
			v, what := parseField(s)
			if what != "" {
				if s == "" || strings.EqualFold(s, "na") || strings.EqualFold(s, "nan") || strings.EqualFold(s, "null") {
					what = "missing value (remove or impute the row)"
				}
				return nil, fmt.Errorf("datasets: csv: %s:%d: column %s: %s %q", path, line, t.colName(j), what, s)
			}
			row[j] = v
		}
		t.rows = append(t.rows, row)
		t.lines = append(t.lines, line)
		if len(t.rows) == maxRows {
			break
		}
	}
	if len(t.rows) == 0 {
		return nil, fmt.Errorf("datasets: csv: %s: no data rows", path)
	}
	return t, nil
}

func (t *csvTable) width() int {
	if t.names != nil {
		return len(t.names)
	}
	if len(t.rows) > 0 {
		return len(t.rows[0])
	}
	return 0
}

func (t *csvTable) colName(j int) string {
	if t.names != nil && j < len(t.names) {
		return fmt.Sprintf("%d (%q)", j, t.names[j])
	}
	return strconv.Itoa(j)
}

// ParamError is an error about one parameter of a dataset, so that a grid
// reports it at that parameter's line (DatasetParam names it).
type ParamError struct {
	Param string
	Err   error
}

func (e *ParamError) Error() string { return e.Err.Error() }

func (e *ParamError) Unwrap() error { return e.Err }

// DatasetParam is the name of the parameter at fault.
func (e *ParamError) DatasetParam() string { return e.Param }

// paramErrorf makes a *ParamError about param k.
func paramErrorf(k, format string, args ...any) error {
	return &ParamError{Param: k, Err: fmt.Errorf(format, args...)}
}

// col resolves a column reference (name or index) of param k.
func (t *csvTable) col(k string, ref any) (int, error) {
	switch x := ref.(type) {
	case int:
		if x >= t.width() {
			return 0, paramErrorf(k, "datasets: csv: %s: param %s = %d, but the file has %d columns (0..%d)", t.path, k, x, t.width(), t.width()-1)
		}
		return x, nil
	case string:
		if t.names == nil {
			if j, err := strconv.Atoi(x); err == nil && j >= 0 && j < t.width() {
				return j, nil
			}
			return 0, paramErrorf(k, "datasets: csv: %s: param %s = %q names a column, but the file has no header (set header = true, or use a 0-based index)", t.path, k, x)
		}
		for j, n := range t.names {
			if n == x {
				return j, nil
			}
		}
		return 0, paramErrorf(k, "datasets: csv: %s: param %s = %q: no such column%s; columns: %s", t.path, k, x, didYouMean(x, t.names), strings.Join(t.names, ", "))
	}
	return 0, paramErrorf(k, "datasets: csv: param %s: bad column reference %v", k, ref)
}

// layout resolves the input, target and mask columns of t.
func (o userOptions) layout(t *csvTable) (inputs []int, target, mask int, err error) {
	w := t.width()
	target, mask = w-1, -1
	if o.target != nil {
		if target, err = t.col("target", o.target); err != nil {
			return
		}
	}
	if o.testMask != nil {
		if mask, err = t.col("test_mask", o.testMask); err != nil {
			return
		}
		if mask == target {
			err = paramErrorf("test_mask", "datasets: csv: %s: test_mask and target are the same column %s", t.path, t.colName(mask))
			return
		}
	}
	if o.inputs != nil {
		seen := map[int]bool{}
		for _, ref := range o.inputs {
			j, e := t.col("inputs", ref)
			if e != nil {
				return nil, 0, 0, e
			}
			if j == target || j == mask || seen[j] {
				what := map[bool]string{true: "the target", false: "test_mask"}[j == target]
				if seen[j] {
					what = "listed twice"
				}
				return nil, 0, 0, paramErrorf("inputs", "datasets: csv: %s: inputs: column %s is %s", t.path, t.colName(j), what)
			}
			seen[j] = true
			inputs = append(inputs, j)
		}
	} else {
		for j := 0; j < w; j++ {
			if j != target && j != mask {
				inputs = append(inputs, j)
			}
		}
	}
	if len(inputs) == 0 {
		err = fmt.Errorf("datasets: csv: %s: no input columns left (the file has %d columns)", t.path, w)
	}
	return
}

// checkColumns resolves the column parameters (target, inputs, test_mask)
// against the header of the file, and of test_file, which must put them in
// the same columns. Run before anything runs, so that a misspelt column
// name is one error at the grid's line instead of a failure of every run.
func (o userOptions) checkColumns() error {
	t, err := readUserHeader(o.file, o)
	if err != nil {
		return err
	}
	inputs, target, _, err := o.layout(t)
	if err != nil || o.testFile == "" {
		return err
	}
	tt, err := readUserHeader(o.testFile, o)
	if err != nil {
		return err
	}
	return o.sameLayout(t, tt, inputs, target)
}

// sameLayout checks that test file tt has the columns of file t, with the
// inputs and the target where t has them.
func (o userOptions) sameLayout(t, tt *csvTable, inputs []int, target int) error {
	if tt.width() != t.width() {
		return paramErrorf("test_file", "datasets: csv: test_file %s has %d columns, file %s has %d", o.testFile, tt.width(), o.file, t.width())
	}
	tin, ttarget, _, err := o.layout(tt)
	if err != nil {
		return err
	}
	if !slices.Equal(tin, inputs) || ttarget != target {
		return paramErrorf("test_file", "datasets: csv: test_file %s: its header puts the inputs or the target in other columns than %s", o.testFile, o.file)
	}
	return nil
}

// maskRows splits the rows of t by the test_mask column: 1 marks a test
// row, 0 a training row. Any other value is refused with its line (a
// feature column picked by mistake would otherwise make every row a test
// row), and so is a mask that leaves either set empty.
func (t *csvTable) maskRows(mask int) (train, test []int, err error) {
	for i, r := range t.rows {
		switch r[mask] {
		case 0:
			train = append(train, i)
		case 1:
			test = append(test, i)
		default:
			return nil, nil, fmt.Errorf("datasets: csv: %s:%d: test_mask column %s is %v; a test mask is 1 for a test row and 0 for a training row", t.path, t.lines[i], t.colName(mask), r[mask])
		}
	}
	if len(train) == 0 || len(test) == 0 {
		v, set := 1, "training"
		if len(test) == 0 {
			v, set = 0, "test"
		}
		return nil, nil, fmt.Errorf("datasets: csv: %s: test_mask column %s is %d on every row, which leaves no %s rows (1 marks a test row, 0 a training row)", t.path, t.colName(mask), v, set)
	}
	return train, test, nil
}

// data builds X and y from rows of t.
func (t *csvTable) data(inputs []int, target int, rows []int) gp.Data {
	x := mat.NewDense(max(len(rows), 1), len(inputs), nil)
	y := make([]float64, len(rows))
	for i, r := range rows {
		for k, j := range inputs {
			x.Set(i, k, t.rows[r][j])
		}
		y[i] = t.rows[r][target]
	}
	if len(rows) == 0 {
		return gp.Data{}
	}
	return gp.Data{X: x, Y: y}
}

// labels maps two distinct target values to -1 (the smaller) and +1.
func labels(path string, ys ...[]float64) (note string, err error) {
	set := map[float64]bool{}
	for _, y := range ys {
		for _, v := range y {
			set[v] = true
		}
	}
	vals := slices.Sorted(maps.Keys(set))
	if len(vals) != 2 {
		shown := vals
		if len(shown) > 5 {
			shown = shown[:5]
		}
		return "", fmt.Errorf("datasets: csv: %s: classification needs exactly 2 target values, found %d (%v…); set task = \"regression\" or pick the label column with target", path, len(vals), shown)
	}
	for _, y := range ys {
		for i, v := range y {
			y[i] = -1
			if v == vals[1] {
				y[i] = 1
			}
		}
	}
	return fmt.Sprintf("labels %v → -1, %v → +1", vals[0], vals[1]), nil
}

// prepareUser loads the csv dataset of req.
func prepareUser(req Request) (*Prepared, error) {
	o, err := parseUserParams(req.Params)
	if err != nil {
		return nil, err
	}
	task := req.Task
	if task == "" {
		task = Regression
	}
	if task != Regression && task != Classification {
		return nil, fmt.Errorf("datasets: csv: unknown task %q; valid: %s, %s", task, Regression, Classification)
	}
	proto := req.Protocol
	if proto == "" {
		proto = o.protocol()
	}
	if !slices.Contains(o.protocols(), proto) {
		return nil, fmt.Errorf("datasets: csv: protocol %q does not fit the parameters; valid: %s", proto, strings.Join(o.protocols(), ", "))
	}
	scaling := req.Scaling
	if scaling == "" {
		scaling = ScaleStdTrain
	}
	if err := CheckScaling(scaling); err != nil {
		return nil, fmt.Errorf("datasets: csv: %w", err)
	}
	t, err := readUserCSV(o.file, req.FileSHA256["file"], o)
	if err != nil {
		return nil, err
	}
	inputs, target, mask, err := o.layout(t)
	if err != nil {
		return nil, err
	}
	e := &entry{name: UserCSV, task: task}
	prov := Provenance{Name: UserCSV, Protocol: proto, Scaling: scaling, Seed: req.Seed, Split: req.Split, Params: req.Params,
		Files: []FileRecord{{Path: o.file, SHA256: t.sha}}}
	names := make([]string, len(inputs))
	for i, j := range inputs {
		names[i] = t.colName(j)
	}
	prov.Notes = append(prov.Notes, fmt.Sprintf("user CSV: inputs columns %s, target column %s", strings.Join(names, ", "), t.colName(target)))
	var train, test gp.Data
	switch proto {
	case ProtoTestFile:
		if req.Split != 0 {
			return nil, fmt.Errorf("datasets: csv: protocol test-file has one split (0), not %d", req.Split)
		}
		tt, err := readUserCSV(o.testFile, req.FileSHA256["test_file"], o)
		if err != nil {
			return nil, err
		}
		if err := o.sameLayout(t, tt, inputs, target); err != nil {
			return nil, err
		}
		prov.Files = append(prov.Files, FileRecord{Path: o.testFile, SHA256: tt.sha})
		train = t.data(inputs, target, seq(0, len(t.rows)))
		test = tt.data(inputs, target, seq(0, len(tt.rows)))
		prov.Notes = append(prov.Notes, "test set: every row of test_file")
	case ProtoTestMask:
		if req.Split != 0 {
			return nil, fmt.Errorf("datasets: csv: protocol test-mask has one split (0), not %d", req.Split)
		}
		tr, te, err := t.maskRows(mask)
		if err != nil {
			return nil, err
		}
		train, test = t.data(inputs, target, tr), t.data(inputs, target, te)
		prov.Notes = append(prov.Notes, fmt.Sprintf("test set: rows with test_mask column %s = 1", t.colName(mask)))
	default:
		tab := &table{y: make([]float64, len(t.rows))}
		params := map[string]any{}
		if o.n > 0 {
			params["n"] = o.n
		}
		var tr, te []int
		if proto == ProtoRandomFrac {
			if o.n > len(t.rows) {
				return nil, fmt.Errorf("datasets: csv: requested n = %d but %s has only %d rows", o.n, o.file, len(t.rows))
			}
			sub := len(t.rows)
			if o.n > 0 {
				sub = o.n
			}
			rng := rngFor(UserCSV, req.Split, req.Seed, "split")
			p := rng.Perm(len(t.rows))[:sub]
			ntest := int(math.Round(o.testFraction * float64(sub)))
			te, tr = p[:ntest], p[ntest:]
			prov.Notes = append(prov.Notes, fmt.Sprintf("test set: round(%g·%d) = %d rows, PCG permutation of (split %d, seed %d)", o.testFraction, sub, ntest, req.Split, req.Seed))
		} else {
			var notes []string
			tr, te, notes, err = splitIndices(e, tab, proto, Request{Params: params, Split: req.Split, Seed: req.Seed})
			if err != nil {
				return nil, err
			}
			prov.Notes = append(prov.Notes, notes...)
		}
		sort.Ints(tr)
		sort.Ints(te)
		train, test = t.data(inputs, target, tr), t.data(inputs, target, te)
	}
	if train.N() == 0 || test.N() == 0 {
		return nil, fmt.Errorf("datasets: csv: %s: protocol %s leaves %d training and %d test rows; both must be non-empty", o.file, proto, train.N(), test.N())
	}
	if task == Classification {
		note, err := labels(o.file, train.Y, test.Y)
		if err != nil {
			return nil, err
		}
		prov.Notes = append(prov.Notes, note)
	}
	return finish(e, prov, train, test, scaling, train)
}

// CheckScaling reports whether s names a scaling.
func CheckScaling(s string) error {
	_, err := fitScaler(s, gp.Data{X: mat.NewDense(1, 1, nil), Y: []float64{0}}, false)
	return err
}
