package datasets

// fileSum is one staged file with its pinned checksum. For files that were
// gzip-compressed when staged, RawName/RawSHA256 describe the source bytes,
// which is what Fetch downloads and what the loader also accepts.
type fileSum struct {
	Name       string
	Size       int64
	SHA256     string
	SourcePath string
	RawName    string
	RawSize    int64
	RawSHA256  string
}

// folderSource is the public repository a staged folder was copied from.
type folderSource struct {
	Repo   string // owner/name on GitHub
	Commit string
	Files  []fileSum
}
