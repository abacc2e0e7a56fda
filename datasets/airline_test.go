package datasets

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// dataExpoHeader is the column layout of the ASA Data Expo 2009 yearly files.
const dataExpoHeader = "Year,Month,DayofMonth,DayOfWeek,DepTime,CRSDepTime,ArrTime,CRSArrTime,UniqueCarrier,FlightNum," +
	"TailNum,ActualElapsedTime,CRSElapsedTime,AirTime,ArrDelay,DepDelay,Origin,Dest,Distance,TaxiIn,TaxiOut,Cancelled," +
	"CancellationCode,Diverted,CarrierDelay,WeatherDelay,NASDelay,SecurityDelay,LateAircraftDelay"

// flightRow is one fixture flight and, when kept, its expected
// (Month, DayofMonth, DayOfWeek, plane_age, AirTime, Distance, ArrTime
// minutes, DepTime minutes, ArrDelay), written out by hand.
type flightRow struct {
	month, day, dow     string
	dep, arr, tail      string
	air, delay, dist    string
	cancelled, diverted string
	want                []float64 // nil: dropped
	why                 string
}

// flightFixture uses tails T1 (built 1998), T0 (year 0000), TN (None),
// TX (tail only in plane-data) and TB (built 2008); TZ is unknown. For the
// staged plane-data.csv the caller maps them onto real tail numbers.
func flightFixture() []flightRow {
	return []flightRow{
		{"1", "3", "4", "2003", "2211", "T1", "116", "-14", "810", "0", "0", []float64{1, 3, 4, 10, 116, 810, 22*60 + 11, 20*60 + 3, -14}, "kept"},
		{"1", "31", "4", "0005", "2400", "T1", "60", "7", "400", "0", "0", []float64{1, 31, 4, 10, 60, 400, 1440, 5, 7}, "hhmm 0005 and 2400"},
		{"4", "30", "3", "1259", "0101", "TB", "45", "120", "300", "0", "0", []float64{4, 30, 3, 0, 45, 300, 61, 12*60 + 59, 120}, "built 2008: age 0 is kept"},
		{"7", "4", "5", "955", "1130", "T1", "80", "0", "500", "0", "0", []float64{7, 4, 5, 10, 80, 500, 11*60 + 30, 9*60 + 55, 0}, "3-digit hhmm"},
		{"2", "1", "5", "NA", "NA", "T1", "NA", "NA", "500", "1", "0", nil, "cancelled"},
		{"2", "2", "6", "1000", "NA", "T1", "NA", "NA", "500", "0", "1", nil, "diverted"},
		{"2", "3", "7", "1000", "1100", "TZ", "50", "3", "500", "0", "0", nil, "unknown tail"},
		{"2", "4", "1", "1000", "1100", "T0", "50", "3", "500", "0", "0", nil, "year 0000"},
		{"2", "5", "2", "1000", "1100", "TN", "50", "3", "500", "0", "0", nil, "year None"},
		{"2", "6", "3", "1000", "1100", "TX", "50", "3", "500", "0", "0", nil, "tail-only plane record"},
		{"2", "7", "4", "1000", "1100", "T1", "50", "NA", "500", "0", "0", nil, "ArrDelay NA"},
		{"3", "8", "5", "1000", "1100", "T1", "", "3", "500", "0", "0", nil, "AirTime empty"},
		{"12", "25", "4", "2359", "0010", "T1", "95", "-3", "700", "0", "0", []float64{12, 25, 4, 10, 95, 700, 10, 23*60 + 59, -3}, "December"},
	}
}

func writeFlights(t *testing.T, path string, rows []flightRow, tails map[string]string) []byte {
	t.Helper()
	var b strings.Builder
	b.WriteString(dataExpoHeader + "\n")
	for i, r := range rows {
		tail := r.tail
		if m, ok := tails[tail]; ok {
			tail = m
		}
		fmt.Fprintf(&b, "2008,%s,%s,%s,%s,1955,%s,2225,WN,%d,%s,128,150,%s,%s,8,IAD,TPA,%s,4,8,%s,,%s,NA,NA,NA,NA,NA\n",
			r.month, r.day, r.dow, r.dep, r.arr, 300+i, tail, r.air, r.delay, r.dist, r.cancelled, r.diverted)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return []byte(b.String())
}

func expectedFlights(rows []flightRow, months [13]bool) [][]float64 {
	var out [][]float64
	for _, r := range rows {
		if r.want != nil && months[int(r.want[0])] {
			out = append(out, r.want)
		}
	}
	return out
}

func checkAirline(t *testing.T, tb *table, want [][]float64) {
	t.Helper()
	n, d := tb.x.Dims()
	if n != len(want) || d != 8 || len(tb.y) != n {
		t.Fatalf("loaded %d×%d (%d y), want %d×8", n, d, len(tb.y), len(want))
	}
	for i, w := range want {
		for j := 0; j < 8; j++ {
			if tb.x.At(i, j) != w[j] {
				t.Errorf("row %d %s = %v, want %v", i, airlineInputs[j], tb.x.At(i, j), w[j])
			}
		}
		if tb.y[i] != w[8] {
			t.Errorf("row %d ArrDelay = %v, want %v", i, tb.y[i], w[8])
		}
	}
}

// TestParseFlightsGenerated checks the filter and feature construction on
// a generated plane table (no staged data needed).
func TestParseFlightsGenerated(t *testing.T) {
	plane := "tailnum,type,manufacturer,issue_date,model,status,aircraft_type,engine_type,year\n" +
		"T1,Corporation,BOEING,11/03/1997,767-332,Valid,Fixed Wing Multi-Engine,Turbo-Fan,1998\n" +
		"T0,Corporation,BOEING,11/03/1997,767-332,Valid,Fixed Wing Multi-Engine,Turbo-Fan,0000\n" +
		"TN,Corporation,BOEING,None,767-332,Valid,Fixed Wing Multi-Engine,Turbo-Fan,None\n" +
		"TX\n" +
		"TB,Corporation,EMBRAER,01/02/2008,ERJ,Valid,Fixed Wing Multi-Engine,Turbo-Fan,2008\n"
	years, err := parsePlaneYears("plane", []byte(plane))
	if err != nil {
		t.Fatal(err)
	}
	if len(years) != 5 || years["T1"] != 1998 || years["T0"] != 0 || !math.IsNaN(years["TN"]) || !math.IsNaN(years["TX"]) {
		t.Fatalf("plane years %v", years)
	}
	rows := flightFixture()
	path := filepath.Join(t.TempDir(), "2008.csv")
	b := writeFlights(t, path, rows, nil)
	got, c, err := parseFlights(path, bytes.NewReader(b), years)
	if err != nil {
		t.Fatal(err)
	}
	all, _ := parseMonths("")
	want := expectedFlights(rows, all)
	if c.Read != int64(len(rows)) || c.CancelledOrDiverted != 2 || c.NoPlane != 1 || c.PlaneYear0 != 1 || c.Missing != 4 || c.Kept != int64(len(want)) {
		t.Errorf("counts %+v", c)
	}
	var xs []float64
	for _, v := range got {
		xs = append(xs, float64(v))
	}
	tb := &table{}
	tb.x, tb.y = columns(xs, 9, seq(0, 8), 8)
	checkAirline(t, tb, want)

	for _, tc := range []struct{ name, plane, flights, want string }{
		{"plane header", "tail,year\nA,1\n", dataExpoHeader + "\n", "lacks the columns tailnum and year"},
		{"plane year", "tailnum,year\nA,19x8\n", dataExpoHeader + "\n", `p:2: year: non-numeric value "19x8"`},
		{"plane year overflow", "tailnum,year\nA,1e999\n", dataExpoHeader + "\n", `p:2: year: number beyond float64's range ±1.8e308 (overflow) "1e999"`},
		{"plane dup", "tailnum,year\nA,1990\nA,1991\n", dataExpoHeader + "\n", "duplicate tailnum"},
		{"flight header", "tailnum,year\nA,1990\n", "Year,Month\n2008,1\n", "header lacks column DayofMonth"},
		{"ragged", "tailnum,year\nA,1990\n", dataExpoHeader + "\n2008,1,2\n", "3 fields, header has 29"},
		{"cancelled", "tailnum,year\nA,1990\n", dataExpoHeader + "\n" + strings.Repeat("x,", 21) + "NA,,0,NA,NA,NA,NA,NA\n", "Cancelled/Diverted"},
		{"none kept", "tailnum,year\nA,1990\n", dataExpoHeader + "\n" + "2008,1,3,4,2003,1955,2211,2225,WN,335,B,128,150,116,-14,8,IAD,TPA,810,4,8,0,,0,NA,NA,NA,NA,NA\n", "no flight survives"},
	} {
		years, err := parsePlaneYears("p", []byte(tc.plane))
		if err == nil {
			_, _, err = parseFlights("f", strings.NewReader(tc.flights), years)
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestParseMonthsAndAtoi(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []int
		ok   bool
	}{
		{"", []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, true},
		{"1-4", []int{1, 2, 3, 4}, true},
		{"2, 5-6,12", []int{2, 5, 6, 12}, true},
		{"0-3", nil, false}, {"4-1", nil, false}, {"13", nil, false}, {"jan", nil, false},
	} {
		m, err := parseMonths(tc.in)
		if (err == nil) != tc.ok {
			t.Errorf("%q: err %v", tc.in, err)
			continue
		}
		var got []int
		for i, b := range m {
			if b {
				got = append(got, i)
			}
		}
		if tc.ok && fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%q: months %v, want %v", tc.in, got, tc.want)
		}
	}
	for _, tc := range []struct {
		in string
		v  int64
		ok bool
	}{{"12", 12, true}, {"-14", -14, true}, {"+3", 3, true}, {"7.0", 7, true}, {"7.5", 0, false}, {"NA", 0, false}, {"", 0, false}, {"-", 0, false}, {"1e3", 0, false}} {
		v, ok := atoi([]byte(tc.in))
		if ok != tc.ok || v != tc.v {
			t.Errorf("atoi(%q) = %d, %v", tc.in, v, ok)
		}
	}
}

// TestAirlineLoader runs the full loader on a generated 2008.csv (plain,
// gzip and bzip2) with the staged plane-data.csv, whose checksum is pinned.
func TestAirlineLoader(t *testing.T) {
	staged := stagedDir(t)
	planeBytes, err := os.ReadFile(filepath.Join(staged, "airline", "plane-data.csv"))
	if err != nil {
		t.Skipf("staged plane-data.csv: %v", err)
	}
	years, err := parsePlaneYears("plane-data.csv", planeBytes)
	if err != nil {
		t.Fatal(err)
	}
	if len(years) != 5029 {
		t.Errorf("staged plane-data.csv: %d tail numbers, SOURCE.md says 5,029", len(years))
	}
	// Real tail numbers for the fixture's roles (sorted for determinism).
	tails := map[string]string{"TZ": "NOPE-TAIL"}
	var names []string
	for k := range years {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		y := years[k]
		switch {
		case y == 1998 && tails["T1"] == "":
			tails["T1"] = k
		case y == 2008 && tails["TB"] == "":
			tails["TB"] = k
		case y == 0 && tails["T0"] == "":
			tails["T0"] = k
		case math.IsNaN(y) && tails["TX"] == "":
			tails["TX"] = k
		case math.IsNaN(y) && tails["TN"] == "":
			tails["TN"] = k
		}
	}
	e := registry["airline"]
	rows := flightFixture()
	all, _ := parseMonths("")
	for _, variant := range []string{"2008.csv", "2008.csv.gz", "2008.csv.bz2"} {
		t.Run(variant, func(t *testing.T) {
			dir := t.TempDir()
			folder := filepath.Join(dir, "airline")
			plain := writeFlights(t, filepath.Join(folder, "2008.csv"), rows, tails)
			os.WriteFile(filepath.Join(folder, "plane-data.csv"), planeBytes, 0o644)
			switch variant {
			case "2008.csv.gz":
				var buf bytes.Buffer
				zw := gzip.NewWriter(&buf)
				zw.Write(plain)
				zw.Close()
				os.WriteFile(filepath.Join(folder, variant), buf.Bytes(), 0o644)
				os.Remove(filepath.Join(folder, "2008.csv"))
			case "2008.csv.bz2":
				if _, err := exec.LookPath("bzip2"); err != nil {
					t.Skip("no bzip2 binary to make the fixture")
				}
				if out, err := exec.Command("bzip2", filepath.Join(folder, "2008.csv")).CombinedOutput(); err != nil {
					t.Fatalf("bzip2: %v %s", err, out)
				}
			}
			raw, _ := os.ReadFile(filepath.Join(folder, variant))
			sum := sha256.Sum256(raw)
			if !e.present(dir) {
				t.Fatal("airline reported absent with the files in place")
			}
			tb, err := load(dir, e, nil)
			if err != nil {
				t.Fatal(err)
			}
			checkAirline(t, tb, expectedFlights(rows, all))
			if len(tb.files) != 2 || !tb.files[0].Pinned || tb.files[1].Path != filepath.Join("airline", variant) || tb.files[1].SHA256 != hex.EncodeToString(sum[:]) || tb.files[1].Pinned {
				t.Errorf("provenance files %+v", tb.files)
			}
			if strings.Contains(strings.Join(tb.notes, ";"), "from the cache") {
				t.Error("first load claims a cache hit")
			}
			// Second load: from the on-disk cache, same arrays and checksum.
			tb2, err := load(dir, e, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(strings.Join(tb2.notes, ";"), "from the cache") {
				t.Errorf("second load did not use the cache: %v", tb2.notes)
			}
			checkAirline(t, tb2, expectedFlights(rows, all))
			if tb2.files[1].SHA256 != tb.files[1].SHA256 {
				t.Error("cached checksum differs")
			}
			// A changed file invalidates the cache.
			p := filepath.Join(folder, variant)
			later := time.Now().Add(time.Hour)
			os.Chtimes(p, later, later)
			tb3, err := load(dir, e, map[string]any{"months": "1-4"})
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(strings.Join(tb3.notes, ";"), "from the cache") {
				t.Error("cache used after the flights file changed")
			}
			m14, _ := parseMonths("1-4")
			checkAirline(t, tb3, expectedFlights(rows, m14))
		})
	}
	// Through Prepare: subsample n, 2/3 split, unit box from training rows.
	dir := t.TempDir()
	writeFlights(t, filepath.Join(dir, "airline", "2008.csv"), rows, tails)
	os.WriteFile(filepath.Join(dir, "airline", "plane-data.csv"), planeBytes, 0o644)
	p, err := Prepare(Request{Name: "airline", DataDir: dir, Seed: 3, Params: map[string]any{"n": int64(4)}})
	if err != nil {
		t.Fatal(err)
	}
	if p.Train.N() != 2 || p.Test.N() != 2 || p.Train.D() != 8 || p.Provenance.Protocol != ProtoAirline || p.Provenance.Scaling != ScaleUnitBox {
		t.Errorf("prepared %d/%d D=%d %s %s", p.Train.N(), p.Test.N(), p.Train.D(), p.Provenance.Protocol, p.Provenance.Scaling)
	}
	if _, err := Prepare(Request{Name: "airline", DataDir: dir, Params: map[string]any{"months": "13"}}); err == nil || !strings.Contains(err.Error(), "bad months") {
		t.Errorf("bad months: %v", err)
	}
}

// TestAirlineAbsent checks that the error names the file to download and
// does not promise an automatic fetch of the flight records.
func TestAirlineAbsent(t *testing.T) {
	dir := t.TempDir()
	_, err := Prepare(Request{Name: "airline", DataDir: dir})
	if err == nil {
		t.Fatal("no error without data")
	}
	msg := err.Error()
	for _, want := range []string{"airline/2008.csv", "2008.csv.bz2", "doi:10.7910/DVN/HG7NV7", "cannot be fetched automatically", dir} {
		if !strings.Contains(msg, want) {
			t.Errorf("absent message lacks %q: %s", want, msg)
		}
	}
	if strings.Contains(msg, "run `sgplab data fetch airline`") {
		t.Errorf("absent message promises a fetch of the flight records: %s", msg)
	}
	if (&MissingError{Dataset: "x", File: "x/f", Dir: "d", Fetchable: true}).Error() != `datasets: x: file x/f not found in data directory "d" (SGPLAB_DATA); run `+"`sgplab data fetch x`" {
		t.Error("fetchable MissingError text")
	}
}
