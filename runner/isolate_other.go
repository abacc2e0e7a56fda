//go:build !unix

package runner

import (
	"errors"
	"os"
)

func exitSignal(*os.ProcessState) (string, bool) { return "", false }

func peakRSS(*os.ProcessState) int64 { return 0 }

func setMemLimit(int64) error {
	return errors.New("a per-run memory limit needs a Unix system")
}
