package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestRunWithoutDatabase: without the WordNet files the generator says
// what to install and writes nothing.
func TestRunWithoutDatabase(t *testing.T) {
	out := filepath.Join(t.TempDir(), "wordnet.txt.gz")
	err := run(t.TempDir(), out)
	if err == nil || !strings.Contains(err.Error(), "wordnet-base") {
		t.Fatalf("run on an empty folder: %v, want an error naming wordnet-base", err)
	}
	if matches, _ := filepath.Glob(out); len(matches) != 0 {
		t.Errorf("wrote %s", out)
	}
}
