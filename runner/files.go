package runner

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// A grid parameter that names a file (a user's CSV, z_file) is part of a
// run's identity through the file's content, not only its name: the
// expander hashes the file, RunSpec.Files carries the sha256 into the
// canonical spec, and the run checks the hash again before it reads the
// file, so an edited file never silently reuses old runs.

// isDatasetFileParam reports whether dataset parameter k names a file.
func isDatasetFileParam(k string) bool { return k == "file" || strings.HasSuffix(k, "_file") }

// isMethodFileParam reports whether method parameter k names a file.
func isMethodFileParam(k string) bool { return strings.HasSuffix(k, "_file") }

type fileHash struct {
	sum string
	err error
}

// HashFile returns the hex sha256 of the file at path.
func HashFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// fileHashes hashes the file parameters of params (once per path per
// expansion); keys are prefixed "dataset." for dataset parameters.
func (x *expander) fileHashes(key, _ string, params map[string]any, isFile func(string) bool) map[string]string {
	out := map[string]string{}
	prefix := ""
	if strings.HasSuffix(key, ".dataset") {
		prefix = "dataset."
	}
	for _, k := range sortedKeys(params) {
		path, ok := params[k].(string)
		if !ok || path == "" || !isFile(k) {
			continue
		}
		h, done := x.hashes[path]
		if !done {
			h.sum, h.err = HashFile(path)
			x.hashes[path] = h
		}
		if h.err != nil {
			x.f.errorf(x.es, key+"."+k, "cannot read %s (paths are relative to the working directory): %v", path, h.err)
			continue
		}
		out[prefix+k] = h.sum
	}
	return out
}

// checkFiles verifies, before a run reads them, that the method's file
// parameters still have the content the run's identity was made with.
func checkFiles(spec *RunSpec) error {
	for k, want := range spec.Files {
		if strings.HasPrefix(k, "dataset.") {
			continue // the dataset loader checks its own files
		}
		path, _ := spec.Params[k].(string)
		got, err := HashFile(path)
		if err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
		if got != want {
			return fmt.Errorf("%s %s changed since the grid was expanded (sha256 %s, run id made with %s); run the grid again to get runs for the new content", k, path, got[:12], want[:12])
		}
	}
	return nil
}

// datasetKey is the key a dataset check's error is reported at: the
// dataset parameter it names (an error with a DatasetParam method, such as
// a user CSV's misspelt target column), else the grid's datasets list.
func datasetKey(key string, err error) string {
	var pe interface{ DatasetParam() string }
	if errors.As(err, &pe) {
		return key + ".dataset." + pe.DatasetParam()
	}
	return key + ".datasets"
}
