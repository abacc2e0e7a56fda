package datasets

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
)

// CanonicalBase is where staged files are fetched from: raw files of the
// public GitHub repositories named in each SOURCE.md, at the pinned commit.
const CanonicalBase = "https://raw.githubusercontent.com"

// fetchPlan lists (url path, local name, expected sha256) for a dataset.
func fetchPlan(e *entry) ([][3]string, error) {
	if e.files != nil { // not staged here: no pinned checksum
		switch e.format {
		case fmtUCIMask:
			var plan [][3]string
			for _, f := range e.files {
				plan = append(plan, [3]string{"/treforevans/uci_datasets/f0737523712fe66a1640e4b980b927e8490b58eb/uci_datasets/" + e.folder + "/" + f, f, ""})
			}
			return plan, nil
		case fmtPMLB:
			return [][3]string{{"/EpistasisLab/pmlb/master/datasets/" + e.pmlbID + "/" + e.files[0], e.files[0], ""}}, nil
		case fmtAirline: // only the staged auxiliary table has a public source
			src := stagedFolders[e.folder]
			var plan [][3]string
			for _, f := range src.Files {
				plan = append(plan, [3]string{"/" + src.Repo + "/" + src.Commit + "/" + f.SourcePath, f.Name, f.SHA256})
			}
			return plan, nil
		}
		return nil, fmt.Errorf("datasets: %s cannot be fetched automatically; download by hand: %s", e.name, e.howTo)
	}
	src := stagedFolders[e.folder]
	var plan [][3]string
	for _, f := range e.required() {
		name, sha := f.Name, f.SHA256
		if f.RawName != "" { // staged gzipped; the source holds the plain file
			name, sha = f.RawName, f.RawSHA256
		}
		plan = append(plan, [3]string{"/" + src.Repo + "/" + src.Commit + "/" + f.SourcePath, name, sha})
	}
	return plan, nil
}

// Fetch downloads a dataset's files from the repository its staged copy
// came from, verifies every sha256, and stores them under
// <dataDir>/<folder>/. baseURL "" means CanonicalBase; tests pass an
// httptest server URL. Files already present with the right checksum are
// kept.
func Fetch(ctx context.Context, name, dataDir, baseURL string) error {
	e, err := lookup(name)
	if err != nil {
		return err
	}
	if e.format == fmtSynthetic {
		return fmt.Errorf("datasets: %s is synthetic: nothing to fetch", name)
	}
	if dataDir == "" {
		dataDir = DataDir()
	}
	if baseURL == "" {
		baseURL = CanonicalBase
	}
	plan, err := fetchPlan(e)
	if err != nil {
		return err
	}
	dir := filepath.Join(dataDir, e.folder)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, p := range plan {
		dst := filepath.Join(dir, p[1])
		if p[2] != "" && fileSHA(dst) == p[2] {
			continue
		}
		if err := download(ctx, strings.TrimRight(baseURL, "/")+p[0], dst, p[2]); err != nil {
			return fmt.Errorf("datasets: fetch %s: %w", name, err)
		}
	}
	for _, f := range e.required() {
		if _, _, err := locate(dataDir, e, f); err != nil {
			return fmt.Errorf("datasets: fetch %s: %w", name, err)
		}
	}
	return nil
}

func fileSHA(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return ""
	}
	return hex.EncodeToString(h.Sum(nil))
}

// download writes url to dst atomically, checking the sha256 when want != "".
func download(ctx context.Context, url, dst, want string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	tmp, err := os.CreateTemp(filepath.Dir(dst), ".fetch-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	h := sha256.New()
	if _, err := io.Copy(io.MultiWriter(tmp, h), resp.Body); err != nil {
		tmp.Close()
		return fmt.Errorf("GET %s: %w", url, err)
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if got := hex.EncodeToString(h.Sum(nil)); want != "" && got != want {
		return fmt.Errorf("checksum mismatch for %s: got sha256 %s, want %s (file not stored)", url, got, want)
	}
	return os.Rename(tmp.Name(), dst)
}
