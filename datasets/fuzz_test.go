package datasets

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// The text loaders of every file format go through these parsers:
// parseTable (UCI/dropout data and index files, UCI masks, PMLB, banana,
// snelson, SUSY, house prices, SGEMM's CSV), ints (index files),
// parsePlaneYears and parseFlights (airline), parseMonths (airline's
// months), parseUserCSV with the column layout (the user's csv dataset),
// and the airline row cache reader. Each must return an error, never
// panic, on any input.

func finite(t *testing.T, what string, vs []float64) {
	t.Helper()
	for _, v := range vs {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			t.Fatalf("%s returned a non-finite value %v", what, v)
		}
	}
}

func FuzzParseTable(f *testing.F) {
	f.Add([]byte("1 2 3\n4 5 6\n"), byte(0), false)
	f.Add([]byte("a,b\n1,2\n\n3,4\n"), byte(','), true)
	f.Add([]byte("x\ty\ttarget\n1\t2\t3\n"), byte('\t'), true)
	f.Add([]byte("1,NaN\n"), byte(','), false)
	f.Add([]byte("1,2\n3\n"), byte(','), false)
	f.Fuzz(func(t *testing.T, b []byte, sep byte, header bool) {
		if sep == '\n' {
			return
		}
		vals, cols, err := parseTable("fuzz", b, sep, header)
		if err != nil {
			return
		}
		if cols <= 0 || len(vals)%cols != 0 {
			t.Fatalf("%d values in %d columns", len(vals), cols)
		}
		finite(t, "parseTable", vals)
		if idx, err := ints("fuzz", b, 100); err == nil {
			for _, i := range idx {
				if i < 0 || i >= 100 {
					t.Fatalf("ints returned %d outside [0, 100)", i)
				}
			}
		}
	})
}

func FuzzUserCSV(f *testing.F) {
	f.Add([]byte(userCSV), "y", "is_test", int8(-1))
	f.Add([]byte("1,2,3\n4,5,6\n"), "2", "", int8(0))
	f.Add([]byte("a;b\n1;2\n"), "b", "", int8(1))
	f.Add([]byte("\"a\",b\n\"1\",2\n3,\n"), "a", "", int8(-1))
	f.Fuzz(func(t *testing.T, b []byte, target, mask string, header int8) {
		o := userOptions{header: int(header%2 + 0), delim: ','}
		if bytes.Count(b, []byte{';'}) > bytes.Count(b, []byte{','}) {
			o.delim = ';'
		}
		if target != "" {
			o.target = target
		}
		if mask != "" {
			o.testMask = mask
		}
		tab, err := parseUserCSV("fuzz.csv", b, o)
		if err != nil {
			return
		}
		w := tab.width()
		for i, r := range tab.rows {
			if len(r) != w {
				t.Fatalf("row %d has %d fields, width %d", i, len(r), w)
			}
			finite(t, "parseUserCSV", r)
		}
		inputs, tgt, m, err := o.layout(tab)
		if err != nil {
			return
		}
		seen := map[int]bool{}
		for _, j := range inputs {
			if j < 0 || j >= w || j == tgt || j == m || seen[j] {
				t.Fatalf("layout: input column %d (width %d, target %d, mask %d, inputs %v)", j, w, tgt, m, inputs)
			}
			seen[j] = true
		}
		if m >= 0 {
			if tr, te, err := tab.maskRows(m); err == nil && (len(tr) == 0 || len(te) == 0 || len(tr)+len(te) != len(tab.rows)) {
				t.Fatalf("maskRows: %d training and %d test rows of %d", len(tr), len(te), len(tab.rows))
			}
		}
		d := tab.data(inputs, tgt, seq(0, len(tab.rows)))
		if d.N() != len(tab.rows) {
			t.Fatalf("data has %d rows, table %d", d.N(), len(tab.rows))
		}
	})
}

func FuzzAirline(f *testing.F) {
	f.Add([]byte("tailnum,type,manufacturer,issue_date,model,status,aircraft_type,engine_type,year\nN1,,,,,,,,1999\n"),
		[]byte("Year,Month,DayofMonth,DayOfWeek,DepTime,CRSDepTime,ArrTime,CRSArrTime,UniqueCarrier,FlightNum,TailNum,ActualElapsedTime,CRSElapsedTime,AirTime,ArrDelay,DepDelay,Origin,Dest,Distance,TaxiIn,TaxiOut,Cancelled,CancellationCode,Diverted,CarrierDelay,WeatherDelay,NASDelay,SecurityDelay,LateAircraftDelay\n"+
			"2008,1,3,4,2003,1955,2211,2225,WN,335,N1,128,150,116,-14,8,IAD,TPA,810,4,8,0,,0,NA,NA,NA,NA,NA\n"), "1-4")
	f.Add([]byte("tailnum,year\n"), []byte("Year\n"), "")
	f.Add([]byte(""), []byte(""), "13")
	f.Fuzz(func(t *testing.T, planes, flights []byte, months string) {
		if m, err := parseMonths(months); err == nil {
			any := false
			for _, on := range m[1:] {
				any = any || on
			}
			if !any {
				t.Fatalf("months %q accepted with no month selected", months)
			}
		}
		years, err := parsePlaneYears("planes.csv", planes)
		if err != nil {
			return
		}
		rows, _, err := parseFlights("flights.csv", bytes.NewReader(flights), years)
		if err == nil && len(rows)%9 != 0 {
			t.Fatalf("%d values are not whole rows of 9 (8 inputs, the delay)", len(rows))
		}
	})
}

func FuzzAirlineCache(f *testing.F) {
	dir := f.TempDir()
	key := airlineCacheKey{}
	good := filepath.Join(dir, "seed.bin")
	if err := writeAirlineCache(good, key, airlineCounts{}, []int32{1, 2, 3, 4, 5, 6, 7, 8, 9}); err == nil {
		if b, err := os.ReadFile(good); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("garbage"))
	f.Fuzz(func(t *testing.T, b []byte) {
		// The decoder, not the file: a file written and read per input held
		// the rate near 200 a second, too slow for 10⁶ executions.
		rows, _, _, ok := decodeAirlineCache(bytes.NewReader(b), int64(len(b)), key) // must not panic
		if ok && len(rows)%9 != 0 {
			t.Fatalf("%d values are not whole rows of 9", len(rows))
		}
	})
}
