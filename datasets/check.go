package datasets

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
)

// CheckRun validates, before anything runs, what Prepare would only find
// out per run: the protocol is one the dataset has, the scaling parses,
// the protocol leaves a test set (every run is scored on one), each
// split exists under the protocol, and a user CSV's column parameters
// (target, inputs, test_mask) name columns of its header (an error about
// one is a *ParamError, with "did you mean"). dataDir is used to count a real
// dataset's published splits when its files are present; absent files are
// not an error here (the runs report them).
func CheckRun(name string, params map[string]any, protocol, scaling string, splits []int, dataDir string) error {
	if name == UserCSV {
		return checkUserRun(params, protocol, scaling, splits)
	}
	e, err := lookup(name)
	if err != nil {
		return err
	}
	if scaling != "" {
		if err := CheckScaling(scaling); err != nil {
			return fmt.Errorf("datasets: %s: %w", name, err)
		}
	}
	proto := protocol
	if proto == "" {
		proto = e.protocol
	}
	if e.format == fmtSynthetic {
		if proto != ProtoSynthetic {
			return fmt.Errorf("datasets: %s: synthetic data only supports protocol %q, not %q", name, ProtoSynthetic, proto)
		}
		if e.gen.validate != nil {
			// Not a GP draw (airline-synthetic): its own check; it always
			// leaves a test set.
			return e.gen.check(params)
		}
		c, err := e.gen.resolve(params)
		if err != nil {
			return fmt.Errorf("datasets: %s: %w", name, err)
		}
		if c.nTest < 1 {
			return fmt.Errorf("datasets: %s: n_test = %d gives no test set, and every run is scored on one; set [grid.dataset] n_test (e.g. n_test = 500)", name, c.nTest)
		}
		return nil
	}
	valid := protocolsFor(e, nil)
	if hasPublishedSplits(e) {
		valid = append(valid, ProtoPublished, ProtoFold)
	}
	if !slices.Contains(valid, proto) {
		return fmt.Errorf("datasets: %s: unknown protocol %q; valid: %s", name, proto, strings.Join(valid, ", "))
	}
	if proto == ProtoAllTrain {
		var with []string
		for _, p := range valid {
			if p != ProtoAllTrain {
				with = append(with, p)
			}
		}
		how := "set protocol"
		if protocol == "" {
			how = "its default protocol is all-train; set [grid.dataset] protocol"
		}
		return fmt.Errorf("datasets: %s: protocol all-train has no test set, and every run is scored on one; %s to one of: %s", name, how, strings.Join(with, ", "))
	}
	if proto == ProtoPublished || proto == ProtoFold {
		if n, ok := publishedSplits(e, dataDir); ok {
			for _, s := range splits {
				if s >= n {
					return fmt.Errorf("datasets: %s: split %d does not exist under protocol %s: the dataset ships %d splits (0..%d)", name, s, proto, n, n-1)
				}
			}
		}
	}
	return nil
}

func checkUserRun(params map[string]any, protocol, scaling string, splits []int) error {
	o, err := parseUserParams(params)
	if err != nil {
		return err
	}
	if scaling != "" {
		if err := CheckScaling(scaling); err != nil {
			return fmt.Errorf("datasets: csv: %w", err)
		}
	}
	proto := protocol
	if proto == "" {
		proto = o.protocol()
	}
	if !slices.Contains(o.protocols(), proto) {
		return fmt.Errorf("datasets: csv: protocol %q does not fit the parameters; valid: %s", proto, strings.Join(o.protocols(), ", "))
	}
	if proto == ProtoTestFile || proto == ProtoTestMask {
		for _, s := range splits {
			if s != 0 {
				return fmt.Errorf("datasets: csv: protocol %s has one split (0), not %d; use test_fraction for replicated random splits", proto, s)
			}
		}
	}
	for _, f := range []string{o.file, o.testFile} {
		if f == "" {
			continue
		}
		if _, err := os.Stat(f); err != nil {
			return fmt.Errorf("datasets: csv: %w", err)
		}
	}
	return o.checkColumns()
}

// hasPublishedSplits reports whether a registry dataset ships splits.
func hasPublishedSplits(e *entry) bool {
	switch e.format {
	case fmtDropout, fmtUCIMask, fmtSUSY10k:
		return true
	}
	return e.protocol == ProtoPublished || e.protocol == ProtoFold
}

// publishedSplits counts a dataset's published splits from its files
// without loading the data; ok is false when they cannot be counted.
func publishedSplits(e *entry, dir string) (n int, ok bool) {
	if dir == "" {
		dir = DataDir()
	}
	switch e.format {
	case fmtSUSY10k:
		return 1, true
	case fmtDropout:
		p, _, err := locate(dir, e, fileByName(e, "n_splits.txt"))
		if err != nil {
			return 0, false
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return 0, false
		}
		n, err := strconv.Atoi(strings.TrimSpace(string(b)))
		return n, err == nil && n > 0
	case fmtUCIMask:
		p, _, err := locate(dir, e, fileByName(e, "test_mask.csv.gz"))
		if err != nil {
			return 0, false
		}
		f, err := os.Open(p)
		if err != nil {
			return 0, false
		}
		defer f.Close()
		zr, err := gzip.NewReader(f)
		if err != nil {
			return 0, false
		}
		line, err := bufio.NewReader(zr).ReadBytes('\n')
		if len(bytes.TrimSpace(line)) == 0 && err != nil {
			return 0, false
		}
		return bytes.Count(line, []byte{','}) + 1, true
	}
	return 0, false
}

// Size is the number of rows a dataset with these parameters has before
// splitting (param n when given, else the generator's or the registry's
// size), for cost estimates; 0 when unknown (a user's CSV).
func Size(name string, params map[string]any) int {
	if n, ok, err := intParam(params, "n"); ok && err == nil {
		return n
	}
	e, err := lookup(name)
	if err != nil {
		return 0
	}
	if e.gen != nil {
		if c, err := e.gen.resolve(params); err == nil {
			return c.n
		}
	}
	return e.n
}

// Shape is what is known of a dataset's size before loading it, for the
// checks a method makes before anything runs: n rows (the training rows
// exactly when exact is set, as for a synthetic draw; otherwise at most,
// the rows before the test split) and d input columns; 0 when unknown (a
// user's CSV, or parameters that drop columns).
func Shape(name string, params map[string]any) (n, d int, exact bool) {
	e, err := lookup(name)
	if err != nil {
		return 0, 0, false
	}
	if e.gen != nil {
		if e.gen.validate == nil {
			if c, err := e.gen.resolve(params); err == nil {
				return c.n, c.dim, true
			}
		}
		return Size(name, params), e.d, false
	}
	d = e.d
	if drop, _ := params["drop_constant_inputs"].(bool); drop {
		d = 0
	}
	return Size(name, params), d, false
}
