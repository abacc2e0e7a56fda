package report

import (
	"bytes"
	"strings"
	"testing"
)

func TestIllustrationFigure(t *testing.T) {
	src := "name = \"p\"\n[[grid]]\nname = \"g\"\n[grid.params]\nm = 1\n[[figure]]\nname = \"figure-1\"\nkind = \"illustration\"\nillustration = \"iff-construction\"\n"
	spec, err := Parse("p.toml", src)
	if err != nil {
		t.Fatal(err)
	}
	f, err := buildIllustration(spec.Figures[0], nil, nil, &renderCtx{})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Panels) != 6 {
		t.Fatalf("%d panels, want 6 (3 columns × data and frequency domain)", len(f.Panels))
	}
	for _, p := range f.Panels {
		if p.Title.Text == "" {
			t.Error("unlabelled panel")
		}
	}
	png, err := f.Encode("png")
	if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Fatalf("png: %v", err)
	}
	for _, c := range []struct{ src, want string }{
		{strings.Replace(src, "iff-construction", "iff", 1), `unknown illustration "iff"; valid: iff-construction`},
		{src + "grid = \"g\"\n", "an illustration is computed"},
	} {
		if _, err := Parse("p.toml", c.src); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want one containing %q", err, c.want)
		}
	}
}
