package results

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestWriteRows(t *testing.T) {
	cols := []string{"name", "n", "value"}
	tenth := 0.1 // a variable, so 0.1+0.2 is not folded to an exact constant
	rows := [][]any{
		{"sgpr", int64(12), tenth + 0.2},
		{"a,b \"q\"", nil, math.Inf(-1)},
		{"multi\nline", int64(-3), 1e-300},
	}
	for _, c := range []struct{ format, want string }{
		{FormatTable, "" +
			"name            n                value\n" +
			"-----------  ----  -------------------\n" +
			"sgpr           12  0.30000000000000004\n" +
			"a,b \"q\"      NULL                 -Inf\n" +
			"multi\\nline    -3               1e-300\n"},
		{FormatCSV, "name,n,value\nsgpr,12,0.30000000000000004\n\"a,b \"\"q\"\"\",,-Inf\n\"multi\nline\",-3,1e-300\n"},
		{FormatJSON, "[\n" +
			`  {"name": "sgpr", "n": 12, "value": 0.30000000000000004},` + "\n" +
			`  {"name": "a,b \"q\"", "n": null, "value": "-Inf"},` + "\n" +
			`  {"name": "multi\nline", "n": -3, "value": 1e-300}` + "\n]\n"},
	} {
		t.Run(c.format, func(t *testing.T) {
			var b bytes.Buffer
			if err := WriteRows(&b, c.format, cols, rows); err != nil {
				t.Fatal(err)
			}
			if b.String() != c.want {
				t.Errorf("got\n%s\nwant\n%s", b.String(), c.want)
			}
		})
	}
}

// TestWriteRowsRoundTrip parses CSV and JSON back and checks that floats
// survive exactly.
func TestWriteRowsRoundTrip(t *testing.T) {
	cols := []string{"id", "id", "x"}
	var rows [][]any
	for i := range 50 {
		rows = append(rows, []any{"r" + strconv.Itoa(i), int64(i), math.Pi * math.Pow(10, float64(i-25)) / 3})
	}
	var b bytes.Buffer
	if err := WriteRows(&b, FormatCSV, cols, rows); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range rows {
		if f, _ := strconv.ParseFloat(recs[i+1][2], 64); f != r[2].(float64) {
			t.Errorf("csv row %d: %s != %v", i, recs[i+1][2], r[2])
		}
	}
	b.Reset()
	if err := WriteRows(&b, FormatJSON, cols, rows); err != nil {
		t.Fatal(err)
	}
	var objs []map[string]any
	if err := json.Unmarshal(b.Bytes(), &objs); err != nil {
		t.Fatal(err)
	}
	for i, r := range rows {
		o := objs[i]
		if o["id"] != r[0] || o["id_2"] != float64(i) || o["x"] != r[2] {
			t.Errorf("json row %d = %v, want %v", i, o, r)
		}
	}
}

func TestWriteRowsErrors(t *testing.T) {
	for _, c := range []struct {
		name, format string
		rows         [][]any
		want         string
	}{
		{"format", "xml", nil, `unknown output format "xml"`},
		{"short row", FormatCSV, [][]any{{1}}, "row 0 has 1 values for 2 columns"},
	} {
		err := WriteRows(&bytes.Buffer{}, c.format, []string{"a", "b"}, c.rows)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.name, err, c.want)
		}
	}
	var b bytes.Buffer
	if err := WriteRows(&b, FormatJSON, []string{"a"}, nil); err != nil || b.String() != "[]\n" {
		t.Errorf("empty json = %q, %v", b.String(), err)
	}
	b.Reset()
	if err := WriteRows(&b, FormatTable, []string{"t"}, [][]any{{time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)}}); err != nil ||
		!strings.Contains(b.String(), "2024-01-02T03:04:05Z") {
		t.Errorf("time cell = %q, %v", b.String(), err)
	}
}

func TestExport(t *testing.T) {
	s := openTemp(t)
	ok := sampleRun("ok")
	failed := sampleRun("bad")
	failed.Status, failed.Error = StatusFailed, "NaN objective"
	if err := s.SaveRun(ok, []Metric{{"rmse", 0.5}, {"nlpd", -1.25}}, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveRun(failed, nil, nil); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := s.Export(&b, FormatCSV); err != nil {
		t.Fatal(err)
	}
	want := "run_id,grid,method,dataset,split,seed,profile,status,error,metric,value\n" +
		"bad,vish-table1,sgpr,kin40k,3,9223372036854775813,quick,failed,NaN objective,,\n" +
		"ok,vish-table1,sgpr,kin40k,3,9223372036854775813,quick,done,,nlpd,-1.25\n" +
		"ok,vish-table1,sgpr,kin40k,3,9223372036854775813,quick,done,,rmse,0.5\n"
	if b.String() != want {
		t.Errorf("export csv:\n%s\nwant\n%s", b.String(), want)
	}
	b.Reset()
	if err := s.Export(&b, FormatJSON); err != nil {
		t.Fatal(err)
	}
	var objs []map[string]any
	if err := json.Unmarshal(b.Bytes(), &objs); err != nil || len(objs) != 3 || objs[2]["value"] != 0.5 {
		t.Errorf("export json = %s (%v)", b.String(), err)
	}
	if err := s.Export(&b, "xlsx"); err == nil {
		t.Error("Export accepted format xlsx")
	}
}
