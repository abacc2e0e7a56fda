package datasets

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// sourceRow is one file row of a SOURCE.md table: | file | bytes | sha256 | ….
type sourceRow struct {
	size int64
	sha  string
}

var (
	shaCell  = regexp.MustCompile("^`?([0-9a-f]{64})`?$")
	nameCell = regexp.MustCompile("^`?([A-Za-z0-9_.-]+)`?$")
)

// parseSourceMD returns the file rows of the tables in a SOURCE.md.
func parseSourceMD(text string) map[string]sourceRow {
	rows := map[string]sourceRow{}
	for _, line := range strings.Split(text, "\n") {
		cells := strings.Split(strings.TrimSpace(line), "|")
		if len(cells) < 5 {
			continue
		}
		name := nameCell.FindStringSubmatch(strings.TrimSpace(cells[1]))
		size, err := strconv.ParseInt(strings.ReplaceAll(strings.TrimSpace(cells[2]), ",", ""), 10, 64)
		sha := shaCell.FindStringSubmatch(strings.TrimSpace(cells[3]))
		if name == nil || err != nil || sha == nil {
			continue
		}
		rows[name[1]] = sourceRow{size, sha[1]}
	}
	return rows
}

// TestChecksumTableMatchesSourceMD re-checks the generated stagedFolders
// table (sources_gen.go) against the SOURCE.md of every staged folder and
// the files on disk.
func TestChecksumTableMatchesSourceMD(t *testing.T) {
	dir := stagedDir(t)
	mds, err := filepath.Glob(filepath.Join(dir, "*", "SOURCE.md"))
	if err != nil || len(mds) == 0 {
		t.Skipf("no */SOURCE.md under %s", dir)
	}
	onDisk := map[string]bool{}
	for _, md := range mds {
		folder := filepath.Base(filepath.Dir(md))
		onDisk[folder] = true
		b, err := os.ReadFile(md)
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		rows := parseSourceMD(text)
		src, ok := stagedFolders[folder]
		if !ok {
			t.Errorf("%s: staged folder with a SOURCE.md is missing from stagedFolders", folder)
			continue
		}
		if !strings.Contains(text, src.Commit) {
			t.Errorf("%s: commit %s not in SOURCE.md", folder, src.Commit)
		}
		for _, f := range src.Files {
			r, ok := rows[f.Name]
			switch {
			case !ok:
				t.Errorf("%s/%s: no row in SOURCE.md", folder, f.Name)
			case r.size != f.Size || r.sha != f.SHA256:
				t.Errorf("%s/%s: table %d %s, SOURCE.md %d %s", folder, f.Name, f.Size, f.SHA256, r.size, r.sha)
			}
			if st, err := os.Stat(filepath.Join(dir, folder, f.Name)); err != nil || st.Size() != f.Size {
				t.Errorf("%s/%s: on disk %v (err %v), table says %d bytes", folder, f.Name, st, err, f.Size)
			}
			if f.RawName != "" {
				// The decompressed source is described in prose or an
				// "(uncompressed …)" row: its checksum and size must appear.
				if !strings.Contains(text, f.RawSHA256) || !strings.Contains(strings.ReplaceAll(text, ",", ""), fmt.Sprint(f.RawSize)) {
					t.Errorf("%s/%s: raw %s (%d bytes, sha256 %s) not stated in SOURCE.md", folder, f.Name, f.RawName, f.RawSize, f.RawSHA256)
				}
			}
		}
	}
	for folder := range stagedFolders {
		if !onDisk[folder] {
			t.Errorf("stagedFolders has %s but %s has no %s/SOURCE.md", folder, dir, folder)
		}
	}
}

func TestParseSourceMD(t *testing.T) {
	rows := parseSourceMD("| file | bytes | sha256 |\n|---|---|---|\n| `a.gz` | 1,234 | `" + strings.Repeat("ab", 32) + "` | x |\n| b | 7 | " + strings.Repeat("0", 64) + " |\n| (uncompressed a) | 9 | " + strings.Repeat("1", 64) + " |\n")
	if len(rows) != 2 || rows["a.gz"].size != 1234 || rows["b"].sha != strings.Repeat("0", 64) {
		t.Errorf("parsed %v", rows)
	}
}

func TestPM1(t *testing.T) {
	got, err := pm1("f", []float64{0, 1, 1})
	if err != nil || got[0] != -1 || got[1] != 1 {
		t.Errorf("pm1 = %v, %v", got, err)
	}
	if _, err := pm1("f", []float64{0, -1}); err == nil || !strings.Contains(err.Error(), "f: row 2: label -1") {
		t.Errorf("bad label error: %v", err)
	}
}
