package wordnet

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

func TestRelated(t *testing.T) {
	for _, tc := range []struct {
		word, pos string
		want      string // must be among the related lemmas
		not       string // must not be
	}{
		{"grandma", Noun, "grandmother", ""},
		{"kids", Noun, "child", "josh"},  // plural; the noun's senses, not the verb's
		{"passed away", Verb, "die", ""}, // phrase with an inflected first word
		{"automobiles", Noun, "car", ""},
		{"went", Verb, "travel", ""}, // irregular inflection (go)
		{"salary", "", "pay", ""},
	} {
		got := Related(tc.word, tc.pos)
		if !slices.Contains(got, tc.want) || (tc.not != "" && slices.Contains(got, tc.not)) {
			t.Errorf("Related(%q, %q) = %v, want it to hold %q and not %q", tc.word, tc.pos, got, tc.want, tc.not)
		}
	}
	if got := Related("xyzzyplugh", ""); got != nil {
		t.Errorf("Related(unknown) = %v, want nil", got)
	}
	if got := Related("  ", ""); got != nil {
		t.Errorf("Related(blank) = %v, want nil", got)
	}
	if got := Related("grandma", Verb); got != nil {
		t.Errorf("Related(grandma, verb) = %v, want nil", got)
	}
}

func TestBaseForms(t *testing.T) {
	got := BaseForms("ponies")
	if !slices.Contains(got, "pony") {
		t.Errorf("BaseForms(ponies) = %v, want pony among them", got)
	}
}

// TestTableCurrent regenerates the table from the WordNet database when
// it is installed (Debian's wordnet-base; .ci/run installs it) and checks
// the committed file is what the generator writes.
func TestTableCurrent(t *testing.T) {
	if _, err := os.Stat("/usr/share/wordnet/data.noun"); err != nil {
		t.Skip("WordNet database not installed (apt-get install wordnet-base)")
	}
	out := filepath.Join(t.TempDir(), "wordnet.txt.gz")
	cmd := exec.Command("go", "run", "./gen", "-dict", "/usr/share/wordnet", "-out", out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gen: %v\n%s", err, b)
	}
	want, got := unzip(t, out), unzip(t, "wordnet.txt.gz")
	if !bytes.Equal(want, got) {
		t.Error("wordnet.txt.gz is not what gen writes: run go generate ./internal/wordnet and commit")
	}
}

func unzip(t *testing.T, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
