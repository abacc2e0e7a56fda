package report

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse parses arbitrary paper configs (tables, figures, claims,
// report keys), seeded with every config of the repository: no panic, and
// the same input always gives the same error (validation must not depend
// on map order).
func FuzzParse(f *testing.F) {
	for _, pattern := range []string{"../paper_configs/*.toml", "../experiments/*.toml"} {
		files, _ := filepath.Glob(pattern)
		for _, p := range files {
			if b, err := os.ReadFile(p); err == nil {
				f.Add(string(b))
			}
		}
	}
	f.Add("name = \"x\"\n[[table]]\nname = \"t\"\n")
	f.Add("name = \"x\"\n[[claim]]\nname = \"c\"\n[[figure]]\nname = \"f\"\nkind = \"line\"\n")
	f.Fuzz(func(t *testing.T, src string) {
		_, err1 := Parse("fuzz.toml", src)
		_, err2 := Parse("fuzz.toml", src)
		if (err1 == nil) != (err2 == nil) || (err1 != nil && err1.Error() != err2.Error()) {
			t.Fatalf("two parses of the same config disagree:\n%v\n%v", err1, err2)
		}
	})
}
