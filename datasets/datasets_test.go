package datasets

import (
	"bytes"
	"compress/gzip"
	"context"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
)

// stagedDir returns SGPLAB_DATA resolved against the repository root, or
// skips the test.
func stagedDir(t testing.TB) string {
	t.Helper()
	d := os.Getenv("SGPLAB_DATA")
	if d == "" {
		t.Skip("SGPLAB_DATA is not set: skipping tests on the staged datasets (CI sets SGPLAB_DATA=../shared/datasets)")
	}
	if !filepath.IsAbs(d) {
		root, _ := os.Getwd()
		for {
			if _, err := os.Stat(filepath.Join(root, "go.mod")); err == nil {
				break
			}
			up := filepath.Dir(root)
			if up == root {
				t.Fatal("go.mod not found above the test directory")
			}
			root = up
		}
		d = filepath.Join(root, d)
	}
	if _, err := os.Stat(d); err != nil {
		t.Skipf("SGPLAB_DATA=%s does not exist", d)
	}
	return d
}

func TestStagedDatasetsLoad(t *testing.T) {
	dir := stagedDir(t)
	staged := 0
	for _, in := range List(dir) {
		e := registry[in.Name]
		if e.format == fmtSynthetic {
			continue
		}
		if _, ok := stagedFolders[e.folder]; ok && e.files == nil && !in.Present {
			t.Errorf("%s: staged folder %s but reported absent", in.Name, e.folder)
		}
		if !in.Present {
			continue
		}
		staged++
		t.Run(in.Name, func(t *testing.T) {
			t.Parallel()
			p, err := Prepare(Request{Name: in.Name, DataDir: dir, Protocol: ProtoAllTrain, Scaling: ScaleNone})
			if err != nil {
				t.Fatal(err)
			}
			if p.Train.N() != e.n || p.Train.D() != e.d {
				t.Errorf("N×D = %d×%d, registry says %d×%d", p.Train.N(), p.Train.D(), e.n, e.d)
			}
			for _, f := range p.Provenance.Files {
				if !f.Pinned || len(f.SHA256) != 64 {
					t.Errorf("file %s not verified against a pinned checksum", f.Path)
				}
			}
		})
	}
	if staged < 30 {
		t.Errorf("only %d staged datasets present", staged)
	}
}

func TestSplitCounts(t *testing.T) {
	dir := stagedDir(t)
	for _, tc := range []struct {
		name, proto string
		split       int
		train, test int
	}{
		// spherical-ODGP paper's printed training sizes (floor(0.9 N)).
		{"concrete", ProtoRandom9010, 0, 927, 103},
		{"energy", ProtoRandom9010, 3, 691, 77},
		{"kin8nm", ProtoRandom9010, 1, 7372, 820},
		{"power", ProtoRandom9010, 4, 8611, 957},
		{"yacht", ProtoRandom9010, 2, 277, 31},
		{"concrete", ProtoPublished, 19, 927, 103},
		{"kin8nm", ProtoPublished, 0, 7373, 819},
		{"protein", ProtoPublished, 4, 41157, 4573},
		{"keggdirected", ProtoFold, 0, 48827 - 4882, 4882},
		{"tamielectric", ProtoFold, 1, 45781 - 4579, 4579},
		{"temperature", ProtoRandom8020, 0, 12947, 3236}, // IFF Table 1
		{"susy-10k", ProtoPublished, 0, 10000, 1000},
		{"pmlb-564_fried", ProtoRandom9010, 0, 36691, 4077},
	} {
		p, err := Prepare(Request{Name: tc.name, Protocol: tc.proto, Split: tc.split, Seed: 1, DataDir: dir})
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if p.Train.N() != tc.train || p.Test.N() != tc.test {
			t.Errorf("%s %s split %d: %d/%d, want %d/%d", tc.name, tc.proto, tc.split, p.Train.N(), p.Test.N(), tc.train, tc.test)
		}
	}
}

func TestAirlineSubsampleAndLast10(t *testing.T) {
	dir := stagedDir(t)
	p, err := Prepare(Request{Name: "concrete", Protocol: ProtoAirline, Params: map[string]any{"n": int64(600)}, DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if p.Train.N() != 400 || p.Test.N() != 200 {
		t.Errorf("airline-2/3 with n=600: %d/%d, want 400/200", p.Train.N(), p.Test.N())
	}
	p, err = Prepare(Request{Name: "concrete", Protocol: ProtoLast10, DataDir: dir, Scaling: ScaleNone})
	if err != nil {
		t.Fatal(err)
	}
	full, _ := Prepare(Request{Name: "concrete", Protocol: ProtoAllTrain, DataDir: dir, Scaling: ScaleNone})
	if p.Test.N() != 103 || p.Test.Y[102] != full.Train.Y[1029] || p.Train.Y[0] != full.Train.Y[0] {
		t.Errorf("last-10pct: test %d rows; last test y %v vs last row %v", p.Test.N(), p.Test.Y[102], full.Train.Y[1029])
	}
}

func TestDeterminismAndDisjoint(t *testing.T) {
	dir := stagedDir(t)
	req := Request{Name: "yacht", Split: 3, Seed: 7, DataDir: dir, Scaling: ScaleNone}
	a, err := Prepare(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Prepare(req)
	if !mat.Equal(a.Train.X, b.Train.X) {
		t.Fatal("same request gave different data")
	}
	req.Split = 4
	c, _ := Prepare(req)
	if mat.Equal(a.Train.X, c.Train.X) {
		t.Fatal("different splits gave the same data")
	}
	seen := map[float64]int{}
	for _, y := range append(append([]float64{}, a.Train.Y...), a.Test.Y...) {
		seen[y]++
	}
	full, _ := Prepare(Request{Name: "yacht", Protocol: ProtoAllTrain, DataDir: dir, Scaling: ScaleNone})
	for _, y := range full.Train.Y {
		seen[y]--
	}
	for y, k := range seen {
		if k != 0 {
			t.Fatalf("train+test is not a permutation of the data (y=%v count %d)", y, k)
		}
	}
}

func TestScaling(t *testing.T) {
	dir := stagedDir(t)
	raw, _ := Prepare(Request{Name: "concrete", Split: 0, Seed: 3, DataDir: dir, Scaling: ScaleNone})
	for _, tc := range []struct {
		scaling string
		check   func(x []float64) (bool, string)
	}{
		{ScaleStdTrain, func(x []float64) (bool, string) {
			m, s := stat.PopMeanStdDev(x, nil)
			return math.Abs(m) < 1e-12 && math.Abs(s-1) < 1e-12, "mean 0 sd 1"
		}},
		{ScaleUnitBox, func(x []float64) (bool, string) {
			return math.Abs(floats(x, math.Min)) < 1e-12 && math.Abs(floats(x, math.Max)-1) < 1e-12, "range [0,1]"
		}},
		{"box:2.5", func(x []float64) (bool, string) {
			return math.Abs(floats(x, math.Min)+2.5) < 1e-12 && math.Abs(floats(x, math.Max)-2.5) < 1e-12, "range [-2.5,2.5]"
		}},
	} {
		p, err := Prepare(Request{Name: "concrete", Split: 0, Seed: 3, DataDir: dir, Scaling: tc.scaling})
		if err != nil {
			t.Fatal(err)
		}
		for j := 0; j < p.Train.D(); j++ {
			if ok, want := tc.check(mat.Col(nil, j, p.Train.X)); !ok {
				t.Errorf("%s: column %d not %s", tc.scaling, j, want)
			}
			// Inverse transform recovers the raw test inputs.
			for i := 0; i < p.Test.N(); i++ {
				if got := p.Test.X.At(i, j)*p.XScale[j] + p.XShift[j]; math.Abs(got-raw.Test.X.At(i, j)) > 1e-9*(1+math.Abs(got)) {
					t.Fatalf("%s: inverse x mismatch %v vs %v", tc.scaling, got, raw.Test.X.At(i, j))
				}
			}
		}
		for i, y := range p.Test.Y {
			if got := y*p.YScale + p.YShift; math.Abs(got-raw.Test.Y[i]) > 1e-9*(1+math.Abs(got)) {
				t.Fatalf("%s: inverse y mismatch", tc.scaling)
			}
		}
	}
	// Full-data statistics (bayesian_benchmarks): std + 1e-6 over all rows.
	p, _ := Prepare(Request{Name: "concrete", Split: 0, Seed: 3, DataDir: dir, Scaling: ScaleStdFull})
	all := append(append([]float64{}, raw.Train.Y...), raw.Test.Y...)
	m, s := stat.PopMeanStdDev(all, nil)
	if math.Abs(p.YShift-m) > 1e-9 || math.Abs(p.YScale-(s+1e-6)) > 1e-9 {
		t.Errorf("standardize-full: shift/scale %v/%v, want %v/%v", p.YShift, p.YScale, m, s+1e-6)
	}
}

func floats(x []float64, f func(a, b float64) float64) float64 {
	r := x[0]
	for _, v := range x {
		r = f(r, v)
	}
	return r
}

func TestBadInput(t *testing.T) {
	dir := stagedDir(t)
	tmp := t.TempDir()
	// Missing file: names file, directory and fetch command.
	_, err := Prepare(Request{Name: "concrete", DataDir: tmp})
	if err == nil || !strings.Contains(err.Error(), "concrete/data.txt") || !strings.Contains(err.Error(), tmp) || !strings.Contains(err.Error(), "sgplab data fetch concrete") {
		t.Errorf("missing file error: %v", err)
	}
	// Checksum mismatch.
	os.MkdirAll(filepath.Join(tmp, "snelson"), 0o755)
	for _, f := range []string{"train_inputs", "train_outputs"} {
		b, _ := os.ReadFile(filepath.Join(dir, "snelson", f))
		if f == "train_outputs" {
			b = append(b, ' ')
		}
		os.WriteFile(filepath.Join(tmp, "snelson", f), b, 0o644)
	}
	if _, err := Prepare(Request{Name: "snelson", DataDir: tmp}); err == nil || !strings.Contains(err.Error(), "checksum mismatch") {
		t.Errorf("checksum error: %v", err)
	}
	for _, tc := range []struct{ name, in, want string }{
		{"ragged", "1 2 3\n4 5\n", "f:2: ragged row"},
		{"non-numeric", "1 2\n3 x\n", "f:2: field 2: non-numeric"},
		{"nan", "1 2\nNaN 3\n", "f:2: field 1: non-finite"},
		{"inf", "1 2\n\n3 +Inf\n", "f:3: field 2: non-finite"},
		{"overflow", "1 2\n-1e999 3\n", `f:2: field 1: number beyond float64's range ±1.8e308 (overflow) "-1e999"`},
		{"empty", "\n\n", "no data rows"},
	} {
		if _, _, err := parseTable("f", []byte(tc.in), 0, false); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.name, err, tc.want)
		}
	}
	// Index files: an index beyond the int range used to convert to −2⁶³
	// and pass the range check (FuzzParseTable, "10000000000000000000").
	for _, tc := range []struct {
		name, in string
		n        int
		want     string // "" = valid
	}{
		{"in range", "0 99\n", 100, ""},
		{"at n", "100\n", 100, "index 100 out of range [0, 100)"},
		{"beyond int64", "10000000000000000000\n", 100, "index 1e+19 out of range [0, 100)"},
		{"negative", "-1\n", 100, "index -1 out of range"},
		{"fraction", "1.5\n", 100, "index 1.5 out of range"},
		{"unbounded", "123456\n", 0, ""},
		{"unbounded beyond int64", "1e19\n", 0, "1e+19 is not a non-negative integer below 2⁵³"},
	} {
		idx, err := ints("f", []byte(tc.in), tc.n)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("ints %s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("ints %s: got %v, %v; want an error with %q", tc.name, idx, err, tc.want)
		}
	}
	for _, tc := range []struct {
		req  Request
		want string
	}{
		{Request{Name: "concrete", Protocol: ProtoPublished, Split: 20}, "split 20 does not exist"},
		{Request{Name: "protein", Protocol: ProtoPublished, Split: 5}, "ships 5 splits"},
		{Request{Name: "concrete", Params: map[string]any{"n": 5000}}, "only 1030 rows"},
		{Request{Name: "concrete", Params: map[string]any{"nn": 5}}, "n (int)"},
		{Request{Name: "concrete", Params: map[string]any{"n": "lots"}}, "should be int"},
		{Request{Name: "concretee"}, "valid names:"},
		{Request{Name: "concrete", Protocol: "bogus"}, "unknown protocol"},
		{Request{Name: "concrete", Scaling: "bogus"}, "unknown scaling"},
		{Request{Name: "pmlb-564_fried", Protocol: ProtoPublished}, "no published splits"},
		{Request{Name: "gp-sample", Params: map[string]any{"kernel": "rbf"}}, "unknown kernel"},
		{Request{Name: "gp-sample", Params: map[string]any{"method": "cholesky", "n": 30000}}, "dense"},
	} {
		tc.req.DataDir = dir
		if _, err := Prepare(tc.req); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: got %v, want %q", tc.req, err, tc.want)
		}
	}
}

func TestFetch(t *testing.T) {
	dir := stagedDir(t)
	// Serve the staged bytes at their repository paths (the kin8nm source
	// is the uncompressed data.txt).
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for folder, src := range stagedFolders {
			for _, f := range src.Files {
				if r.URL.Path != "/"+src.Repo+"/"+src.Commit+"/"+f.SourcePath {
					continue
				}
				b, _ := os.ReadFile(filepath.Join(dir, folder, f.Name))
				if f.RawName != "" {
					zr, _ := gzip.NewReader(bytes.NewReader(b))
					var out bytes.Buffer
					out.ReadFrom(zr)
					b = out.Bytes()
				}
				if strings.Contains(r.URL.RawQuery, "corrupt") {
					b[0] ^= 1
				}
				w.Write(b)
				return
			}
		}
		http.NotFound(w, r)
	}))
	defer srv.Close()
	tmp := t.TempDir()
	for _, name := range []string{"kin8nm", "banana"} {
		if err := Fetch(context.Background(), name, tmp, srv.URL); err != nil {
			t.Fatal(err)
		}
		p, err := Prepare(Request{Name: name, DataDir: tmp, Protocol: ProtoAllTrain})
		if err != nil {
			t.Fatal(err)
		}
		if p.Train.N() != registry[name].n {
			t.Errorf("%s fetched: N = %d", name, p.Train.N())
		}
	}
	if _, err := os.Stat(filepath.Join(tmp, "kin8nm", "data.txt")); err != nil {
		t.Error("kin8nm: source bytes not stored as data.txt")
	}
	bad := t.TempDir()
	if err := Fetch(context.Background(), "snelson", bad, srv.URL+"/?corrupt="); err == nil || !strings.Contains(err.Error(), "404") && !strings.Contains(err.Error(), "checksum") {
		t.Errorf("corrupt download: %v", err)
	}
	if err := Fetch(context.Background(), "airline", bad, srv.URL); err == nil {
		t.Error("airline fetch should explain the manual download")
	}
}

func TestWriteList(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteList(&buf, t.TempDir()); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, n := range Names() {
		if !strings.Contains(out, n) {
			t.Errorf("list lacks %s", n)
		}
	}
	for _, want := range []string{"ABSENT", "48,827 x 20", "53,413 x 19", "3 inputs here", "two preprocessings", "generated"} {
		if !strings.Contains(out, want) && !(want == "two preprocessings" && strings.Contains(out, "a second preprocessing")) {
			t.Errorf("list lacks %q", want)
		}
	}
}

// TestPresent: a generated dataset and an unregistered name (a user's CSV)
// are present; a staged one is present where its files are and absent in
// an empty directory.
func TestPresent(t *testing.T) {
	empty := t.TempDir()
	for _, tc := range []struct {
		name, dir string
		want      bool
	}{
		{"gp-sample", empty, true},
		{"my-own.csv", empty, true},
		{"yacht", empty, false},
	} {
		if got := Present(tc.name, tc.dir); got != tc.want {
			t.Errorf("Present(%q, %q) = %v, want %v", tc.name, tc.dir, got, tc.want)
		}
	}
	if dir := os.Getenv("SGPLAB_DATA"); dir != "" && !Present("yacht", dir) {
		t.Errorf("yacht absent from SGPLAB_DATA=%s", dir)
	}
}

// TestEveryFormatHasALoader: every registry dataset that is not generated
// is read by its format's loader.
func TestEveryFormatHasALoader(t *testing.T) {
	for name, e := range registry {
		if _, ok := loaders[e.format]; !ok && e.format != fmtSynthetic {
			t.Errorf("dataset %s: no loader for its format %d", name, e.format)
		}
	}
	if _, ok := loaders[fmtSynthetic]; ok {
		t.Error("synthetic datasets are generated, not loaded")
	}
}
