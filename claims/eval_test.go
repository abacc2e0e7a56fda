package claims

import (
	"errors"
	"math"
	"strings"
	"testing"
)

func TestParseExpect(t *testing.T) {
	cases := []struct {
		expr string
		in   []float64
		out  []float64
	}{
		{"< 0.01", []float64{0, 0.0099, -5}, []float64{0.01, 1, math.NaN()}},
		{"<= 2", []float64{2, 1}, []float64{2.0001}},
		{"> -1e-3", []float64{0, 1}, []float64{-0.001, -1}},
		{"≥ 3", []float64{3, 4}, []float64{2.9}},
		{"= 5", []float64{5}, []float64{5.0001}},
		{"in [1, 3]", []float64{1, 2, 3}, []float64{0.99, 3.01}},
		{"= 5 ± 0.1", []float64{4.9, 5.1, 5}, []float64{4.89, 5.11}},
		{"== 2 +- 1", []float64{1, 3}, []float64{3.5}},
	}
	for _, c := range cases {
		e, err := parseExpect(c.expr)
		if err != nil {
			t.Errorf("%q: %v", c.expr, err)
			continue
		}
		for _, v := range c.in {
			if !e.holds(v) {
				t.Errorf("%q should hold for %v", c.expr, v)
			}
		}
		for _, v := range c.out {
			if e.holds(v) {
				t.Errorf("%q should not hold for %v", c.expr, v)
			}
		}
	}
	for _, bad := range []string{"", "about 3", "in [3, 1]", "< x", "= 5 ± -1"} {
		if _, err := parseExpect(bad); err == nil {
			t.Errorf("parseExpect(%q) accepted", bad)
		}
	}
}

type fakeQuerier struct {
	rows [][]any
	err  error
	got  string
}

func (f *fakeQuerier) Query(sql string, args ...any) ([]string, [][]any, error) {
	f.got = sql
	return []string{"v"}, f.rows, f.err
}

func TestEvalClaim(t *testing.T) {
	lt, errs := Compile(Spec{Text: "c", Query: "SELECT x FROM run_metrics WHERE p = {profile}", Expect: "< 1"}, "demo", nil)
	if errs != nil {
		t.Fatal(errs)
	}
	cases := []struct {
		name    string
		q       fakeQuerier
		verdict string
		detail  string
	}{
		{"holds", fakeQuerier{rows: [][]any{{0.5}}}, Reproduced, ""},
		{"integer", fakeQuerier{rows: [][]any{{int64(0)}}}, Reproduced, ""},
		{"violated", fakeQuerier{rows: [][]any{{2.0}}}, Differs, ""},
		{"numeric text", fakeQuerier{rows: [][]any{{"3"}}}, Differs, ""},
		{"null", fakeQuerier{rows: [][]any{{nil}}}, NoData, "NULL"},
		{"no rows", fakeQuerier{}, NoData, "no rows"},
		{"two rows", fakeQuerier{rows: [][]any{{1.0}, {2.0}}}, QueryError, "one number"},
		{"text", fakeQuerier{rows: [][]any{{"abc"}}}, QueryError, "not a number"},
		{"sql error", fakeQuerier{err: errors.New("no such column")}, QueryError, "no such column"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := lt.Eval(&c.q, "quick", false)
			if r.Verdict != c.verdict || !strings.Contains(r.Detail, c.detail) {
				t.Errorf("verdict %q (%s), want %q (%s)", r.Verdict, r.Detail, c.verdict, c.detail)
			}
			if !strings.Contains(c.q.got, "p = 'quick'") || !strings.Contains(c.q.got, "WHERE profile = 'quick'") {
				t.Errorf("query not scoped to the profile: %s", c.q.got)
			}
		})
	}
}

func TestProfileScopedKeepsUserCTEs(t *testing.T) {
	got := profileScoped("with x AS (SELECT 1) SELECT * FROM x", "full")
	if !strings.HasPrefix(got, "WITH runs AS (") || !strings.HasSuffix(got, ", x AS (SELECT 1) SELECT * FROM x") || !strings.Contains(got, "profile IN ('full', '')") {
		t.Errorf("got %s", got)
	}
}
