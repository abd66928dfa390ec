package offline

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

func TestParseSynonyms(t *testing.T) {
	s, err := ParseSynonyms("wiki.txt", strings.NewReader(
		"# Tinkerwell's own words\n\n"+
			"cubby => locker          # one-way\n"+
			"Fob, key fob,  door tag  # equivalent\n"+
			"cnc, router => cnc router\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Len() != 3 {
		t.Fatalf("Len = %d, want 3", s.Len())
	}
	tests := []struct {
		name, phrase string
		want         []string
	}{
		{"one-way: the left side means the right", "cubby", []string{"locker"}},
		{"one-way: the right side means nothing back", "locker", nil},
		{"equivalent: each means the others", "key fob", []string{"fob", "door tag"}},
		{"equivalent, lower-cased and spaces folded", "door tag", []string{"fob", "key fob"}},
		{"several phrases on the left", "router", []string{"cnc router"}},
		{"no entry", "kiln", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := s.meanings(tt.phrase); !slices.Equal(got, tt.want) {
				t.Errorf("meanings(%q) = %q, want %q", tt.phrase, got, tt.want)
			}
		})
	}
	if got := s.longest(); got != 2 {
		t.Errorf("longest = %d, want 2 (key fob, door tag)", got)
	}
}

func TestParseSynonymsErrors(t *testing.T) {
	tests := []struct {
		name, text, want string
	}{
		{"one-way without a right side", "# c\ncubby =>\n", "wiki.txt:2: \"cubby =>\": want phrases on both sides of =>"},
		{"one-way without a left side", "\n\n => locker\n", "wiki.txt:3: \"=> locker\": want phrases on both sides of =>"},
		{"a single phrase", "fob, key fob\nlocker\n", "wiki.txt:2: \"locker\": want at least two phrases"},
		{"commas only", "fob, key fob\n, ,\n", "wiki.txt:2:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseSynonyms("wiki.txt", strings.NewReader(tt.text))
			if err == nil || !strings.HasPrefix(err.Error(), "offline: synonyms: ") || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want one naming %q", err, tt.want)
			}
		})
	}
}

func TestSynonymsAddMerge(t *testing.T) {
	s, err := ParseSynonyms("a", strings.NewReader("cubby => locker\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Add("Makerspace => Tinkerwell"); err != nil {
		t.Fatal(err)
	}
	if got := s.meanings("makerspace"); !slices.Equal(got, []string{"tinkerwell"}) {
		t.Errorf("added entry means %q", got)
	}
	if err := s.Add("lonely"); err == nil || !strings.HasPrefix(err.Error(), "offline: synonyms: ") {
		t.Errorf("Add of a bad entry: %v", err)
	}
	if s.Len() != 2 {
		t.Errorf("Len %d after a failed Add, want 2", s.Len())
	}
	o, _ := ParseSynonyms("b", strings.NewReader("bench, workbench\n"))
	s.Merge(o)
	s.Merge(s)   // itself: no change
	s.Merge(nil) // none: no change
	if s.Len() != 3 || !slices.Equal(s.meanings("workbench"), []string{"bench"}) {
		t.Errorf("after Merge: Len %d, workbench means %q", s.Len(), s.meanings("workbench"))
	}
	if o.Len() != 1 {
		t.Errorf("Merge changed its argument: Len %d", o.Len())
	}
	var none *Synonyms
	if none.Len() != 0 || none.meanings("cubby") != nil || none.longest() != 0 {
		t.Error("nil synonyms mean something")
	}
}

func TestSynonymsConcurrentAdd(t *testing.T) {
	s := &Synonyms{}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if err := s.Add("cubby => locker"); err != nil {
				t.Error(err)
			}
			s.meanings("cubby")
			s.longest()
		})
	}
	wg.Wait()
	if s.Len() != 8 {
		t.Errorf("Len %d, want 8", s.Len())
	}
}

func TestLoadSynonyms(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "synonyms.txt")
	if err := os.WriteFile(path, []byte("cubby => locker\nbad line\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadSynonyms(path); err == nil || !strings.Contains(err.Error(), path+":2:") {
		t.Errorf("err = %v, want the file and line", err)
	}
	if err := os.WriteFile(path, []byte("cubby => locker\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := LoadSynonyms(path)
	if err != nil || s.Len() != 1 {
		t.Errorf("LoadSynonyms = %v, %v", s, err)
	}
	if _, err := LoadSynonyms(filepath.Join(dir, "missing.txt")); err == nil || !strings.HasPrefix(err.Error(), "offline: synonyms: ") {
		t.Errorf("missing file: %v", err)
	}
}
