package results

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"strings"
)

// npyMagic starts every NPY file: "\x93NUMPY", then the format version.
const npyMagic = "\x93NUMPY"

// WriteNPY writes a rows × cols float64 array (data row-major) in the NPY
// format, version 1.0, which numpy.load reads: the magic string and
// version, a little-endian uint16 header length, the header — the Python
// dict {'descr': '<f8', 'fortran_order': False, 'shape': (rows, cols), }
// padded with spaces and ended by a newline so that the data starts at a
// multiple of 64 bytes — then the values as little-endian float64.
func WriteNPY(w io.Writer, rows, cols int, data []float64) error {
	if rows < 0 || cols < 0 || len(data) != rows*cols {
		return fmt.Errorf("results: npy: %d values for %d × %d", len(data), rows, cols)
	}
	dict := fmt.Sprintf("{'descr': '<f8', 'fortran_order': False, 'shape': (%d, %d), }", rows, cols)
	// magic (6) + version (2) + length (2) + header, padded to 64.
	pre := len(npyMagic) + 4
	total := (pre + len(dict) + 1 + 63) / 64 * 64
	header := dict + strings.Repeat(" ", total-pre-len(dict)-1) + "\n"
	if len(header) > math.MaxUint16 {
		return fmt.Errorf("results: npy header of %d bytes does not fit version 1.0", len(header))
	}
	bw := bufio.NewWriter(w)
	bw.WriteString(npyMagic)
	bw.Write([]byte{1, 0})
	var n [8]byte
	binary.LittleEndian.PutUint16(n[:2], uint16(len(header)))
	bw.Write(n[:2])
	bw.WriteString(header)
	for _, v := range data {
		binary.LittleEndian.PutUint64(n[:], math.Float64bits(v))
		bw.Write(n[:])
	}
	return bw.Flush()
}
