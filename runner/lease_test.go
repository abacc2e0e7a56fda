package runner

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp"
	"sgplab/methods"
	"sgplab/results"
)

// gateModel fits once gate is closed, whatever its context says: a fit
// that finishes although its claim was taken over meanwhile.
type gateModel struct{ meanModel }

var (
	gateStarted = make(chan struct{}, 4)
	gate        chan struct{}
)

func (g *gateModel) Fit(ctx context.Context, d gp.Data, opt methods.FitOptions, progress func(methods.Progress)) (methods.FitResult, error) {
	gateStarted <- struct{}{}
	<-gate
	return g.meanModel.Fit(ctx, d, opt, progress)
}

func (g *gateModel) Predict(x *mat.Dense) (methods.Prediction, error) { return g.meanModel.Predict(x) }

func init() {
	methods.Register(methods.Method{
		Name: "fake-gate", Summary: "fits once the test opens a gate", Tasks: []methods.Task{methods.Regression},
		New: func(methods.Params) (methods.Model, error) { return &gateModel{}, nil },
	})
}

// stealLease does what a second worker does to a worker that stopped
// heartbeating: it finds the claim stale, takes it over and finishes the
// run with its own metrics and trace. It returns every row of the run as
// the thief left it.
func stealLease(t *testing.T, path, id string) string {
	t.Helper()
	raw, err := sql.Open("sqlite3", "file:"+path+"?_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	// The victim was stopped long enough for its claim to look dead.
	if _, err := raw.Exec("UPDATE claims SET heartbeat = 0 WHERE run_id = ?", id); err != nil {
		t.Fatal(err)
	}
	b, err := results.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	rec := results.Run{ID: id, Method: "thief", Dataset: "toy", Status: results.StatusDone, Host: "B"}
	res, lease, err := b.Lease(rec, results.NewWorker("B", time.Hour), time.Now(), false)
	if err != nil || res != results.Leased {
		t.Fatalf("takeover: %v, %v", res, err)
	}
	rec.Finished = time.Now().UTC()
	if err := b.SaveLeased(lease, rec, []results.Metric{{Name: "rmse", Value: 0.125}}, []results.TracePoint{{Iteration: 1, Objective: 7}}, nil); err != nil {
		t.Fatal(err)
	}
	return rows(t, b, id)
}

func rows(t *testing.T, s *results.Store, id string) string {
	t.Helper()
	var out strings.Builder
	for _, table := range []string{"runs", "metrics", "traces", "run_params", "artifacts", "claims"} {
		col := "run_id"
		if table == "runs" {
			col = "id"
		}
		_, rs, err := s.Query("SELECT * FROM "+table+" WHERE "+col+" = ?", id)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&out, "%s %v\n", table, rs)
	}
	return out.String()
}

// TestStolenLeaseIsAbandoned: a worker whose claim another worker took
// over while it was stopped records nothing of that run — whether a
// heartbeat notices first and stops the run, the fit finishes anyway, or
// the sweep is interrupted (SIGTERM) — and the other worker's finished run
// stays as it left it.
func TestStolenLeaseIsAbandoned(t *testing.T) {
	for _, c := range []struct {
		name, method string
		heartbeat    time.Duration
		interrupt    bool
		wantErr      error
	}{
		// The heartbeat finds the claim gone and stops the run at once.
		{"heartbeat stops the run", "fake-block", MinHeartbeat, false, nil},
		// No heartbeat in time: the fit finishes, its write is refused.
		{"final write refused", "fake-gate", time.Hour, false, nil},
		// Interrupted before any heartbeat: the interrupted record is refused.
		{"interrupted record refused", "fake-block", time.Hour, true, ErrInterrupted},
	} {
		t.Run(c.name, func(t *testing.T) {
			runs, _, err := expand(t, strings.Replace(mixed, `["fake-mean", "fake-panic", "fake-fail"]`, `["`+c.method+`"]`, 1), "")
			if err != nil {
				t.Fatal(err)
			}
			runs = runs[:1]
			path := filepath.Join(t.TempDir(), "r.db")
			r, st := newRunner(t, path)
			r.Heartbeat = c.heartbeat
			g := make(chan struct{})
			gate = g
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			thief, stolen := make(chan string, 1), make(chan struct{})
			defer func() { <-stolen }()
			go func() {
				defer close(stolen)
				if c.method == "fake-gate" {
					<-gateStarted
				} else {
					<-started
				}
				thief <- stealLease(t, path, runs[0].ID)
				if c.interrupt {
					cancel()
				}
				close(g)
			}()
			t0 := time.Now()
			sum, err := r.Run(ctx, runs)
			if !errors.Is(err, c.wantErr) && err != c.wantErr {
				t.Fatalf("Run: %v, want %v", err, c.wantErr)
			}
			if sum.Abandoned != 1 || sum.Done+sum.Failed+sum.Interrupted != 0 {
				t.Errorf("summary %+v: want the run abandoned and nothing recorded", sum)
			}
			if !strings.Contains(sum.String(), "1 abandoned") {
				t.Errorf("summary line %q does not count the abandoned run", sum.String())
			}
			if got, thiefRows := rows(t, st, runs[0].ID), <-thief; got != thiefRows {
				t.Errorf("the stopped worker changed the other worker's run:\nwas\n%s\nnow\n%s", thiefRows, got)
			}
			if out := r.Out.(fmt.Stringer).String(); !strings.Contains(out, "lease lost "+runs[0].ID) {
				t.Errorf("no log line for the abandoned run:\n%s", out)
			}
			if took := time.Since(t0); c.heartbeat == MinHeartbeat && took > r.Grace+3*MinHeartbeat {
				t.Errorf("the heartbeat took %s to stop the run", took)
			}
		})
	}
}

// TestHeartbeatFloor: a heartbeat below MinHeartbeat, or a stale window
// that a busy-timeout wait could outlast, is refused before any run.
func TestHeartbeatFloor(t *testing.T) {
	runs, _, err := expand(t, mixed, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		beat, stale time.Duration
		want        string
	}{
		{time.Nanosecond, 0, "shorter than the minimum 1s"},
		{999 * time.Millisecond, 0, "shorter than the minimum 1s"},
		{-time.Second, 0, "shorter than the minimum 1s"},
		{time.Second, 3 * time.Second, "2 × busy timeout + 4 × heartbeat"},
	} {
		r, st := newRunner(t, filepath.Join(t.TempDir(), "r.db"))
		r.Heartbeat, r.StaleAfter = c.beat, c.stale
		if _, err := r.Run(context.Background(), runs); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("heartbeat %s, stale %s: %v, want an error saying %q", c.beat, c.stale, err, c.want)
		}
		if n := count(t, st, "SELECT COUNT(*) FROM runs"); n != 0 {
			t.Errorf("heartbeat %s: %d runs recorded", c.beat, n)
		}
	}
	if got, want := StaleWindow(10*time.Second, 10*time.Second), time.Minute; got != want {
		t.Errorf("default stale window %s, want %s", got, want)
	}
}
