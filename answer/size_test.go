package answer

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// maxCoreLines bounds the non-test code of package answer: the contracts,
// the pipeline, the trace, verify, stream and format. An answerer's rules
// belong in its own package (answer/offline, answer/llmstage).
const maxCoreLines = 2000

func TestCoreStaysSmall(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			total++
		}
		fh.Close()
	}
	t.Logf("package answer: %d lines of non-test code", total)
	if total > maxCoreLines {
		t.Errorf("package answer has %d lines of non-test code, over %d: move an answerer's rules into its own package", total, maxCoreLines)
	}
}
