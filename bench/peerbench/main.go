package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"

	"sgplab/gp/linalg"
)

func main() {
	_ = linalg.ReexecWithPreferredCoreType() // as sgplab: OpenBLAS's kernels for this CPU
	if err := dispatch(os.Args[1:]); err != nil {
		if errors.Is(err, errSkipped) {
			return
		}
		fmt.Fprintln(os.Stderr, "peerbench:", err)
		os.Exit(1)
	}
}

func dispatch(args []string) error {
	if len(args) > 0 {
		switch args[0] {
		case "gen":
			return genMain(args[1:])
		case "side":
			return sideMain(args[1:])
		case "table":
			return tableMain(args[1:])
		}
	}
	return benchMain(args, os.Stdout)
}

// genMain writes a data directory (peerbench gen -dir D -n N -m 200,500).
func genMain(args []string) error {
	fs := flag.NewFlagSet("gen", flag.ContinueOnError)
	dir := fs.String("dir", "", "output directory")
	n := fs.Int("n", 10000, "rows")
	ms := fs.String("m", "200,500", "numbers of inducing inputs")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dir == "" {
		return errors.New("gen: -dir is required")
	}
	var mv []int
	for _, s := range strings.Split(*ms, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			return fmt.Errorf("gen: -m %q: %w", *ms, err)
		}
		mv = append(mv, v)
	}
	_, err := writeData(*dir, *n, mv)
	return err
}

// tableMain prints the tables of a results.jsonl again (peerbench table
// out/peerbench/results.jsonl).
func tableMain(args []string) error {
	if len(args) != 1 {
		return errors.New("usage: peerbench table RESULTS.jsonl[.gz]")
	}
	runs, err := readResults(args[0])
	if err != nil {
		return err
	}
	fmt.Print(renderTables(runs, machineInfo()))
	return nil
}

func runtimeProcs() int { return runtime.GOMAXPROCS(0) }
