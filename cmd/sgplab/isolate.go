package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"

	"sgplab/datasets"
	"sgplab/runner"
)

// runOneCommand is the hidden subcommand that runs one run in a child
// process of `sgplab run` (runner.ServeChild).
const runOneCommand = "run-one"

func cmdRunOne(args []string, stdout, stderr io.Writer) error {
	fs := newFlags(runOneCommand, "", "Internal: runs the run that `sgplab run` writes to stdin and streams its\nprogress and result to file descriptor 3. Not for use by hand.", stdout, stderr)
	dataDir := fs.String("data-dir", datasets.DataDir(), "dataset directory")
	if _, err := parse(fs, args); err != nil {
		return err
	}
	return runner.ServeChild(os.Stdin, runner.ChildResults(), prepareFunc(*dataDir))
}

// childCommand returns the command that runs one run of this sweep in a
// child process: this very executable's run-one.
func childCommand(dataDir string) (func() *exec.Cmd, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("isolation needs the path of the sgplab executable: %w", err)
	}
	return func() *exec.Cmd { return exec.Command(exe, runOneCommand, "--data-dir", dataDir) }, nil
}
