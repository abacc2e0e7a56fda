// Command sgplab runs experiment grids of sparse variational Gaussian
// process methods, records every run in SQLite, and renders papers' tables
// and figures from the results.
//
//	sgplab run experiments/demo.toml        run a grid (resumes; --jobs, --shard, --dry-run)
//	sgplab status experiments/demo.toml     done / failed / pending per grid
//	sgplab query --db F "SELECT ..."        SQL over the results (table, csv, json)
//	sgplab report paper_configs/vof.toml    tables and figures into out/<name>/
//	sgplab methods                          registered methods and their parameters
//	sgplab data list | fetch NAME           datasets and where they come from
//	sgplab results export | merge | prune   move results between databases; drop stale runs
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"sgplab/gp/linalg"
)

type command struct {
	name, summary string
	run           func(args []string, stdout, stderr io.Writer) error
}

var commands []command

// internalCommands are run like commands but not listed: the parts of
// sgplab that it runs itself.
var internalCommands = []command{
	{runOneCommand, "run one run in a child process of sgplab run (isolation)", cmdRunOne},
}

func init() {
	commands = []command{
		{"run", "run the runs of grid files that the database does not hold yet", cmdRun},
		{"status", "show what a database holds: done / failed / pending runs per grid", cmdStatus},
		{"query", "run SQL against a results database", cmdQuery},
		{"report", "render a paper config's tables and figures from the results", cmdReport},
		{"methods", "list the registered methods with their parameters", cmdMethods},
		{"data", "list datasets or fetch one", cmdData},
		{"results", "export, merge or prune results databases", cmdResults},
	}
}

// errUsage marks an error already explained by a usage message.
var errUsage = errors.New("usage")

// Exit statuses of sgplab (documented in docs/running.md and `sgplab run --help`):
//
//	0    success; for run: every run of the grid (or shard) is done
//	1    an error: bad grid file, database error, ...
//	2    bad command line
//	3    run: the sweep finished but some runs failed (or are not done)
//	130  run: interrupted by SIGINT (128 + 2); 143 by SIGTERM (128 + 15)
const (
	exitRunsFailed  = 3
	exitInterrupted = 130
)

func main() {
	// OpenBLAS's fallback kernels on a CPU it does not know are 4–5× slower
	// than those the CPU runs (linalg.PreferredCoreType); on failure, go on.
	_ = linalg.ReexecWithPreferredCoreType()
	os.Exit(Main(os.Args[1:], os.Stdout, os.Stderr))
}

// Main runs the CLI and returns the exit status.
func Main(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stdout)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	for _, c := range append(commands, internalCommands...) {
		if c.name == args[0] {
			err := c.run(args[1:], stdout, stderr)
			switch {
			case err == nil:
				return 0
			case errors.Is(err, flag.ErrHelp):
				return 0
			case errors.Is(err, errUsage):
				return 2
			case errors.As(err, new(*exitError)) && !errors.Is(err, errInterrupted):
				var e *exitError
				errors.As(err, &e)
				fmt.Fprintln(stderr, "sgplab "+c.name+":", err)
				return e.code
			case errors.Is(err, errInterrupted):
				fmt.Fprintln(stderr, "sgplab:", err)
				var e *exitError
				if errors.As(err, &e) {
					return e.code
				}
				return exitInterrupted
			}
			fmt.Fprintln(stderr, "sgplab "+c.name+":", err)
			return 1
		}
	}
	fmt.Fprintf(stderr, "sgplab: unknown command %q; commands: %s\n", args[0], strings.Join(commandNames(), ", "))
	return 2
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "sgplab: sparse variational GP research harness\n\nUsage: sgplab COMMAND [flags] [args]\n\nCommands:")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-8s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun 'sgplab COMMAND --help' for a command's flags.")
}

func commandNames() []string {
	var out []string
	for _, c := range commands {
		out = append(out, c.name)
	}
	sort.Strings(out)
	return out
}

// newFlags makes a flag set for a command. Its usage text (synopsis, doc,
// examples, flags) goes to stdout for --help, so that it can be paged or
// grepped, and to stderr after a usage error.
func newFlags(name, args, doc string, stdout, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("sgplab "+name, flag.ContinueOnError)
	fs.SetOutput(&helpWriter{stdout: stdout, stderr: stderr})
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintf(w, "Usage: sgplab %s [flags] %s\n\n%s\n", name, args, doc)
		if ex := examples[name]; ex != "" {
			fmt.Fprintf(w, "\nExamples:\n%s\n", strings.TrimRight(ex, "\n"))
		}
		fmt.Fprintln(w, "\nFlags:")
		fs.PrintDefaults()
	}
	return fs
}

// usageErr reports what was wrong with a command line before its usage
// text, so that a misuse names the fault instead of leaving the reader to
// diff the synopsis against what they typed, and returns errUsage.
func usageErr(fs *flag.FlagSet, format string, args ...any) error {
	fmt.Fprintf(fs.Output(), "%s: %s\n\n", fs.Name(), fmt.Sprintf(format, args...))
	fs.Usage()
	return errUsage
}

// helpWriter is a flag set's output: stderr, or stdout once --help was asked.
type helpWriter struct {
	stdout, stderr io.Writer
	help           bool
}

func (h *helpWriter) Write(p []byte) (int, error) {
	if h.help {
		return h.stdout.Write(p)
	}
	return h.stderr.Write(p)
}

// examples are shown by each command's --help; every one is meant to work
// as written from the repository root.
var examples = map[string]string{
	"run": `  sgplab run experiments/demo.toml                      # runs what out/demo/results.db lacks
  sgplab run --dry-run experiments/demo.toml            # list runs: id, status, description
  sgplab run --profile quick paper_configs/vof.toml     # the reduced, labelled profile
  sgplab run --jobs 2 --time-limit 30m --force experiments/example.toml
  sgplab run --shard 0/4 --db out/shards/vof-0.db paper_configs/vof.toml`,
	"status": `  sgplab status experiments/demo.toml                   # done / failed / pending per grid
  sgplab status --db out/demo/results.db                # what the database holds`,
	"query": `  sgplab query --db out/demo/results.db "SELECT method, AVG(value) AS rmse FROM run_metrics WHERE metric = 'rmse' GROUP BY method"
  sgplab query --db out/demo/results.db --format csv "SELECT * FROM runs WHERE status = 'failed'"`,
	"report": `  sgplab report experiments/demo.toml                   # tables and figures into out/demo/
  sgplab report experiments/sweep-example.toml          # a sweep without tables: the default report
  sgplab report --profile quick --formats png,pdf paper_configs/iff.toml`,
	"methods": `  sgplab methods                                        # every method
  sgplab methods sgpr svgp                              # just these`,
	"data": `  sgplab data list                                      # what is present in $SGPLAB_DATA
  SGPLAB_DATA=../shared/datasets sgplab data list
  sgplab data fetch boston                              # download (network needed) and verify checksums
  sgplab data example-csv                               # out/example-csv/example.csv for experiments/csv.toml`,
	"results": `  sgplab results export --db out/demo/results.db --format csv > results.csv
  sgplab results export experiments/demo.toml --what hyperparameters   # the config's current runs only
  sgplab results export --db out/demo/results.db --grid demo/svgp --what traces
  sgplab results export paper_configs/odvff.toml --what predictions --format npy -o out/odvff/npy
  sgplab results merge out/shards/vof-*.db -o out/vof/results.db
  sgplab results prune --dry-run paper_configs/vof.toml     # list runs the current config no longer expands to
  sgplab results prune --profile quick paper_configs/vof.toml`,
}

// parsedHook, set only by tests, receives every command line whose flags
// parsed, with its positional arguments, and stops the command there with
// the hook's error: the docs' commands are checked without running them.
var parsedHook func(command string, pos []string) error

// parse parses flags allowing them before and after positional arguments.
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	for _, a := range args {
		if a == "--" {
			break
		}
		if a == "-h" || a == "-help" || a == "--help" {
			if h, ok := fs.Output().(*helpWriter); ok {
				h.help = true
			}
			fs.Usage()
			return nil, flag.ErrHelp
		}
	}
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, errUsage
		}
		args = fs.Args()
		if len(args) == 0 {
			if parsedHook != nil {
				return nil, parsedHook(fs.Name(), pos)
			}
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}
