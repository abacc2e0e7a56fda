package datasets

import (
	"bufio"
	"bytes"
	"compress/bzip2"
	"compress/gzip"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"
)

// The airline set is rebuilt from the ASA Data Expo 2009 files the way the
// Fusi & Hensman (2013) preprocessing script does (see airline/SOURCE.md):
// keep Cancelled == 0 and Diverted == 0, inner-join plane-data.csv on the
// tail number, drop manufacture year 0, plane_age = Year - year, drop rows
// with any missing value. Inputs are the VFF/IFF loader's 8 columns with
// ArrTime/DepTime converted from hhmm to minutes after midnight; the
// target is ArrDelay in minutes.

// airlineInputs are the input columns, in order; airlineTarget the target.
var airlineInputs = []string{"Month", "DayofMonth", "DayOfWeek", "plane_age", "AirTime", "Distance", "ArrTime", "DepTime"}

const airlineTarget = "ArrDelay"

// airlineFlightCols are the 2008.csv columns the loader reads (Data Expo
// header names).
var airlineFlightCols = []string{"Year", "Month", "DayofMonth", "DayOfWeek", "DepTime", "ArrTime", "TailNum",
	"AirTime", "ArrDelay", "Distance", "Cancelled", "Diverted"}

// airlineCounts records what the filter removed (for provenance).
type airlineCounts struct {
	Read, CancelledOrDiverted, NoPlane, PlaneYear0, Missing, Kept int64
}

func (c airlineCounts) String() string {
	return fmt.Sprintf("%d flight records read; dropped %d cancelled/diverted, %d without a plane-data.csv match, %d with year 0000, %d with a missing value; %d kept",
		c.Read, c.CancelledOrDiverted, c.NoPlane, c.PlaneYear0, c.Missing, c.Kept)
}

// parsePlaneYears reads plane-data.csv into tailnum -> manufacture year
// (NaN when missing or "None", as pandas' na_values='None').
func parsePlaneYears(path string, b []byte) (map[string]float64, error) {
	lines := strings.Split(strings.ReplaceAll(string(b), "\r\n", "\n"), "\n")
	if len(lines) == 0 {
		return nil, fmt.Errorf("datasets: %s: empty file", path)
	}
	head := strings.Split(strings.TrimSpace(lines[0]), ",")
	iTail, iYear := -1, -1
	for i, h := range head {
		switch strings.TrimSpace(h) {
		case "tailnum":
			iTail = i
		case "year":
			iYear = i
		}
	}
	if iTail < 0 || iYear < 0 {
		return nil, fmt.Errorf("datasets: %s: header lacks the columns tailnum and year: %q", path, lines[0])
	}
	years := make(map[string]float64, len(lines))
	for ln, l := range lines[1:] {
		if strings.TrimSpace(l) == "" {
			continue
		}
		f := strings.Split(l, ",")
		if len(f) > len(head) {
			return nil, fmt.Errorf("datasets: %s:%d: %d fields, header has %d", path, ln+2, len(f), len(head))
		}
		tail := strings.TrimSpace(f[iTail])
		if tail == "" {
			continue
		}
		if _, dup := years[tail]; dup {
			return nil, fmt.Errorf("datasets: %s:%d: duplicate tailnum %q (the join would duplicate flights)", path, ln+2, tail)
		}
		y := math.NaN()
		if iYear < len(f) {
			if s := strings.TrimSpace(f[iYear]); !isNA(s) {
				v, problem := parseField(s)
				if problem != "" {
					return nil, fmt.Errorf("datasets: %s:%d: year: %s %q", path, ln+2, problem, s)
				}
				y = v
			}
		}
		years[tail] = y
	}
	return years, nil
}

// isNA reports pandas' default missing-value spellings plus "None".
func isNA(s string) bool {
	switch s {
	case "", "NA", "N/A", "NaN", "nan", "NULL", "null", "None", "#N/A", "n/a", "<NA>":
		return true
	}
	return false
}

// atoi parses an optional sign and decimal digits (a trailing ".0" is
// accepted); ok is false for anything else, including NA.
func atoi(b []byte) (v int64, ok bool) {
	if i := bytes.IndexByte(b, '.'); i >= 0 {
		for _, c := range b[i+1:] {
			if c != '0' {
				return 0, false
			}
		}
		b = b[:i]
	}
	neg := false
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		neg = b[0] == '-'
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 12 {
		return 0, false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	if neg {
		v = -v
	}
	return v, true
}

func hhmmToMinutes(v int64) int64 { return 60*(v/100) + v%100 }

// parseFlights streams the Data Expo CSV and returns the kept rows as
// int32 values, 9 per row (the 8 inputs then ArrDelay).
func parseFlights(path string, r io.Reader, years map[string]float64) ([]int32, airlineCounts, error) {
	var c airlineCounts
	br := bufio.NewReaderSize(r, 1<<20)
	head, err := br.ReadString('\n')
	if err != nil && head == "" {
		return nil, c, fmt.Errorf("datasets: %s: no header line: %v", path, err)
	}
	idx := map[string]int{}
	nf := 0
	for i, h := range strings.Split(strings.TrimRight(head, "\r\n"), ",") {
		idx[strings.Trim(strings.TrimSpace(h), `"`)] = i
		nf++
	}
	col := make([]int, len(airlineFlightCols))
	for k, name := range airlineFlightCols {
		i, ok := idx[name]
		if !ok {
			return nil, c, fmt.Errorf("datasets: %s: header lacks column %s (expected the ASA Data Expo 2009 layout Year,Month,DayofMonth,DayOfWeek,DepTime,...)", path, name)
		}
		col[k] = i
	}
	// want[j] = position in airlineFlightCols of CSV field j, or -1.
	want := make([]int, nf)
	for j := range want {
		want[j] = -1
	}
	for k, j := range col {
		want[j] = k
	}
	const (
		cYear = iota
		cMonth
		cDay
		cDow
		cDep
		cArr
		cTail
		cAir
		cDelay
		cDist
		cCancel
		cDivert
	)
	fields := make([][]byte, len(airlineFlightCols))
	out := make([]int32, 0, 1<<20)
	line := 1
	for {
		l, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			return nil, c, fmt.Errorf("datasets: %s:%d: line longer than 1 MiB", path, line+1)
		}
		if len(l) == 0 && err != nil {
			if err == io.EOF {
				break
			}
			return nil, c, fmt.Errorf("datasets: %s: %w", path, err)
		}
		line++
		l = bytes.TrimRight(l, "\r\n")
		if len(l) == 0 {
			if err == io.EOF {
				break
			}
			continue
		}
		j := 0
		for start := 0; ; j++ {
			end := bytes.IndexByte(l[start:], ',')
			var f []byte
			if end < 0 {
				f = l[start:]
			} else {
				f = l[start : start+end]
			}
			if j < nf && want[j] >= 0 {
				fields[want[j]] = bytes.Trim(f, `" `)
			}
			if end < 0 {
				break
			}
			start += end + 1
		}
		if j+1 != nf {
			return nil, c, fmt.Errorf("datasets: %s:%d: %d fields, header has %d", path, line, j+1, nf)
		}
		c.Read++
		cancelled, ok1 := atoi(fields[cCancel])
		diverted, ok2 := atoi(fields[cDivert])
		if !ok1 || !ok2 {
			return nil, c, fmt.Errorf("datasets: %s:%d: Cancelled/Diverted %q/%q are not 0/1", path, line, fields[cCancel], fields[cDivert])
		}
		if cancelled != 0 || diverted != 0 {
			c.CancelledOrDiverted++
			continue
		}
		built, found := years[string(fields[cTail])]
		if !found {
			c.NoPlane++
			continue
		}
		if built == 0 {
			c.PlaneYear0++
			continue
		}
		var v [9]int64
		ok := !math.IsNaN(built)
		get := func(k int) int64 {
			x, good := atoi(fields[k])
			ok = ok && good
			return x
		}
		year := get(cYear)
		v[0], v[1], v[2] = get(cMonth), get(cDay), get(cDow)
		v[3] = year - int64(built)
		v[4], v[5] = get(cAir), get(cDist)
		v[6], v[7] = hhmmToMinutes(get(cArr)), hhmmToMinutes(get(cDep))
		v[8] = get(cDelay)
		if !ok {
			c.Missing++
			continue
		}
		for _, x := range v {
			if x < math.MinInt32 || x > math.MaxInt32 {
				return nil, c, fmt.Errorf("datasets: %s:%d: value %d out of range", path, line, x)
			}
			out = append(out, int32(x))
		}
		c.Kept++
		if err == io.EOF {
			break
		}
	}
	if c.Kept == 0 {
		return nil, c, fmt.Errorf("datasets: %s: no flight survives the filter (%v)", path, c)
	}
	return out, c, nil
}

// airlineCache is the on-disk cache of the parsed rows, next to the data:
// parsing the 690 MB CSV (or decompressing the bz2) takes a minute, the
// cache a second. It is keyed by the flights file's name, size and
// modification time and the plane-data.csv checksum; the flights file's
// sha256 computed while parsing is stored for provenance.
const airlineCacheMagic = "SGPLAIR1"

type airlineCacheKey struct {
	Name      string
	Size      int64
	ModTime   int64
	PlaneSHA  string
	SourceSHA string // not part of the key: recorded at parse time
}

func airlineCachePath(flights string) string {
	return filepath.Join(filepath.Dir(flights), ".sgplab-airline-cache.bin")
}

func writeAirlineCache(path string, k airlineCacheKey, c airlineCounts, rows []int32) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".sgplab-airline-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	w := bufio.NewWriterSize(tmp, 1<<20)
	w.WriteString(airlineCacheMagic)
	for _, s := range []string{k.Name, k.PlaneSHA, k.SourceSHA} {
		binary.Write(w, binary.LittleEndian, uint32(len(s)))
		w.WriteString(s)
	}
	for _, v := range []int64{k.Size, k.ModTime, c.Read, c.CancelledOrDiverted, c.NoPlane, c.PlaneYear0, c.Missing, c.Kept, int64(len(rows))} {
		binary.Write(w, binary.LittleEndian, v)
	}
	if err := binary.Write(w, binary.LittleEndian, rows); err != nil {
		tmp.Close()
		return err
	}
	if err := w.Flush(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// readAirlineCache returns the cached rows if the cache file matches want.
func readAirlineCache(path string, want airlineCacheKey) ([]int32, airlineCounts, string, bool) {
	f, err := os.Open(path)
	if err != nil {
		return nil, airlineCounts{}, "", false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, airlineCounts{}, "", false
	}
	return decodeAirlineCache(bufio.NewReaderSize(f, 1<<20), fi.Size(), want)
}

// decodeAirlineCache reads a cache of size bytes from r (split from
// readAirlineCache so that FuzzAirlineCache runs without a file per input).
func decodeAirlineCache(r io.Reader, size int64, want airlineCacheKey) ([]int32, airlineCounts, string, bool) {
	var c airlineCounts
	magic := make([]byte, len(airlineCacheMagic))
	if _, err := io.ReadFull(r, magic); err != nil || string(magic) != airlineCacheMagic {
		return nil, c, "", false
	}
	var strs [3]string
	for i := range strs {
		var n uint32
		if binary.Read(r, binary.LittleEndian, &n) != nil || n > 4096 {
			return nil, c, "", false
		}
		b := make([]byte, n)
		if _, err := io.ReadFull(r, b); err != nil {
			return nil, c, "", false
		}
		strs[i] = string(b)
	}
	var ints [9]int64
	if binary.Read(r, binary.LittleEndian, &ints) != nil {
		return nil, c, "", false
	}
	if strs[0] != want.Name || strs[1] != want.PlaneSHA || ints[0] != want.Size || ints[1] != want.ModTime || ints[8] < 0 || ints[8]%9 != 0 {
		return nil, c, "", false
	}
	// A damaged count must not allocate more than the file can hold.
	if ints[8] > size/4 {
		return nil, c, "", false
	}
	c = airlineCounts{ints[2], ints[3], ints[4], ints[5], ints[6], ints[7]}
	rows := make([]int32, ints[8])
	if binary.Read(r, binary.LittleEndian, rows) != nil {
		return nil, c, "", false
	}
	return rows, c, strs[2], true
}

// openFlights opens the flights file, decompressing by extension, and
// hashes the raw bytes as they are read.
func openFlights(p string) (io.Reader, func() string, func() error, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, nil, nil, err
	}
	h := sha256.New()
	raw := io.TeeReader(bufio.NewReaderSize(f, 1<<20), h)
	var r io.Reader = raw
	switch {
	case strings.HasSuffix(p, ".bz2"):
		r = bzip2.NewReader(raw)
	case strings.HasSuffix(p, ".gz"):
		zr, err := gzip.NewReader(raw)
		if err != nil {
			f.Close()
			return nil, nil, nil, fmt.Errorf("datasets: %s: %w", p, err)
		}
		r = zr
	}
	sum := func() string {
		io.Copy(io.Discard, raw) // hash any trailing bytes the decompressor did not read
		return hex.EncodeToString(h.Sum(nil))
	}
	return r, sum, f.Close, nil
}

// parseMonths reads the months parameter: "" (all), "1-4", "1,2,3".
func parseMonths(s string) ([13]bool, error) {
	var m [13]bool
	if strings.TrimSpace(s) == "" {
		for i := 1; i <= 12; i++ {
			m[i] = true
		}
		return m, nil
	}
	bad := fmt.Errorf("datasets: airline: bad months %q: want e.g. \"1-4\" or \"1,2,3\" with months 1..12", s)
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		a, err1 := strconv.Atoi(strings.TrimSpace(lo))
		b, err2 := a, error(nil)
		if isRange {
			b, err2 = strconv.Atoi(strings.TrimSpace(hi))
		}
		if err1 != nil || err2 != nil || a < 1 || b > 12 || a > b {
			return m, bad
		}
		for i := a; i <= b; i++ {
			m[i] = true
		}
	}
	return m, nil
}

func loadAirline(src *source) (*table, error) {
	dir, e, t, params := src.dir, src.e, src.t, src.params
	monthsParam, _ := params["months"].(string)
	months, err := parseMonths(monthsParam)
	if err != nil {
		return nil, err
	}
	// The flight records are the file a user has to download: report them first.
	flights, _, err := locate(dir, e, fileByName(e, "2008.csv"))
	if err != nil {
		return nil, err
	}
	pb, pp, err := readVerified(dir, e, fileByName(e, "plane-data.csv"), &t.files)
	if err != nil {
		return nil, err
	}
	years, err := parsePlaneYears(pp, pb)
	if err != nil {
		return nil, err
	}
	st, err := os.Stat(flights)
	if err != nil {
		return nil, err
	}
	key := airlineCacheKey{Name: filepath.Base(flights), Size: st.Size(), ModTime: st.ModTime().UnixNano(), PlaneSHA: t.files[0].SHA256}
	cachePath := airlineCachePath(flights)
	rows, counts, sha, hit := readAirlineCache(cachePath, key)
	if hit {
		t.notes = append(t.notes, "parsed rows read from the cache "+cachePath+" (flights file size and mtime unchanged)")
	} else {
		r, sum, closeFn, err := openFlights(flights)
		if err != nil {
			return nil, err
		}
		rows, counts, err = parseFlights(flights, r, years)
		if err == nil {
			sha = sum()
		}
		closeFn()
		if err != nil {
			return nil, err
		}
		key.SourceSHA = sha
		if werr := writeAirlineCache(cachePath, key, counts, rows); werr != nil {
			t.notes = append(t.notes, "parsed rows not cached: "+werr.Error())
		}
	}
	rel, _ := filepath.Rel(dir, flights)
	t.files = append(t.files, FileRecord{Path: rel, SHA256: sha})
	t.notes = append(t.notes, counts.String())
	keep := func(i int) bool { m := rows[i]; return m >= 1 && m <= 12 && months[m] }
	k := 0
	for i := 0; i < len(rows); i += 9 {
		if keep(i) {
			k++
		}
	}
	if k == 0 {
		return nil, fmt.Errorf("datasets: airline: no flights in months %q", monthsParam)
	}
	xs := make([]float64, 0, k*len(airlineInputs))
	y := make([]float64, 0, k)
	for i := 0; i < len(rows); i += 9 {
		if !keep(i) {
			continue
		}
		for j := 0; j < 8; j++ {
			xs = append(xs, float64(rows[i+j]))
		}
		y = append(y, float64(rows[i+8]))
	}
	t.x, t.y = mat.NewDense(k, len(airlineInputs), xs), y
	if monthsParam != "" {
		t.notes = append(t.notes, fmt.Sprintf("months %s only: %d rows", monthsParam, k))
	}
	return t, nil
}
