package inducing

import (
	"math"
	"os"
	"path/filepath"
	"testing"
)

// FuzzFromCSV reads arbitrary z_file contents: an error, never a panic,
// and a matrix that reads has the requested width and finite entries.
func FuzzFromCSV(f *testing.F) {
	f.Add([]byte("x1,x2\n0.1,0.2\n0.3,0.4\n"), 2)
	f.Add([]byte("# comment\n1\n\n2\n"), 0)
	f.Add([]byte("1,2\n3\n"), 0)
	f.Add([]byte("1,inf\n"), 2)
	f.Fuzz(func(t *testing.T, b []byte, dim int) {
		if dim < 0 || dim > 64 {
			return
		}
		p := filepath.Join(t.TempDir(), "z.csv")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		z, err := FromCSV(p, dim)
		if err != nil {
			return
		}
		r, c := z.Dims()
		if r == 0 || (dim > 0 && c != dim) {
			t.Fatalf("%d×%d matrix for dim %d", r, c, dim)
		}
		for i := 0; i < r; i++ {
			for j := 0; j < c; j++ {
				if v := z.At(i, j); math.IsNaN(v) || math.IsInf(v, 0) {
					t.Fatalf("Z[%d][%d] = %v", i, j, v)
				}
			}
		}
	})
}
