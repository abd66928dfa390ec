package handbook_test

import (
	"bufio"
	"bytes"
	"go/scanner"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/docent-hq/docent/examples/handbook"
)

// TestSynonymsLiveInTheHandbook: the handbook's synonyms are its own
// data. No Go code outside this folder holds one of its entries (a pair
// of phrases it says mean the same, both as string literals of one
// file): corpus knowledge in code would answer this handbook's questions
// and no other deployment's.
func TestSynonymsLiveInTheHandbook(t *testing.T) {
	type rule struct{ from, to string }
	var rules []rule
	sc := bufio.NewScanner(bytes.NewReader(handbook.Synonyms))
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "#")
		left, right, ok := strings.Cut(line, "=>")
		if !ok {
			continue
		}
		for _, f := range strings.Split(left, ",") {
			for _, to := range strings.Split(right, ",") {
				rules = append(rules, rule{norm(f), norm(to)})
			}
		}
	}
	if len(rules) < 10 {
		t.Fatalf("synonyms.txt has %d one-way entries, want the handbook's", len(rules))
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	here, _ := filepath.Abs(".")
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (path == here || strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		lits, err := literals(path)
		if err != nil {
			return err
		}
		for _, r := range rules {
			if lits[r.from] && lits[r.to] {
				t.Errorf("%s holds the handbook synonym %q => %q", strings.TrimPrefix(path, root+"/"), r.from, r.to)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// literals returns the string literals of a Go file, normalised.
func literals(path string) (map[string]bool, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var s scanner.Scanner
	fset := token.NewFileSet()
	s.Init(fset.AddFile(path, -1, len(src)), src, nil, 0)
	out := map[string]bool{}
	for {
		_, tok, lit := s.Scan()
		if tok == token.EOF {
			return out, nil
		}
		if tok == token.STRING {
			if v, err := strconv.Unquote(lit); err == nil {
				out[norm(v)] = true
			}
		}
	}
}

func norm(s string) string { return strings.Join(strings.Fields(strings.ToLower(s)), " ") }
