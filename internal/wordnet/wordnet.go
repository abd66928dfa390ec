// Package wordnet answers what general English words mean the same or
// name the general kind of thing, from a table generated from WordNet 3.0
// (see gen/ and LICENSE): for a lemma, the lemmas of its most frequent
// senses — synonyms, then derivationally related forms, then the
// hypernym (the general kind) — in order of preference. It knows no
// corpus: the offline answerer uses it for a question word the docs never
// use, to find the word they use instead.
package wordnet

//go:generate go run ./gen -dict /usr/share/wordnet -out wordnet.txt.gz

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"io"
	"sort"
	"strings"
	"sync"
)

//go:embed wordnet.txt.gz
var table []byte

// data is the decompressed table: sorted lines "lemma\trel|rel|…", and
// exception lines "~form\tbase" (irregular inflections), with the start
// of each line.
var data struct {
	once  sync.Once
	text  string
	lines []int32
}

func load() {
	data.once.Do(func() {
		zr, err := gzip.NewReader(bytes.NewReader(table))
		if err != nil {
			panic("wordnet: embedded table: " + err.Error())
		}
		b, err := io.ReadAll(zr)
		if err != nil {
			panic("wordnet: embedded table: " + err.Error())
		}
		data.text = string(b)
		for i := 0; i < len(data.text); {
			j := strings.IndexByte(data.text[i:], '\n')
			if j < 0 {
				j = len(data.text) - i
			}
			if data.text[i] != '#' {
				data.lines = append(data.lines, int32(i))
			}
			i += j + 1
		}
	})
}

// line returns the value of key's line ("" when there is none).
func line(key string) (string, bool) {
	load()
	n := len(data.lines)
	at := func(k int) string {
		s := data.text[data.lines[k]:]
		if e := strings.IndexByte(s, '\n'); e >= 0 {
			s = s[:e]
		}
		return s
	}
	k := sort.Search(n, func(k int) bool {
		l := at(k)
		lk, _, _ := strings.Cut(l, "\t")
		return lk >= key
	})
	if k == n {
		return "", false
	}
	lk, v, _ := strings.Cut(at(k), "\t")
	if lk != key {
		return "", false
	}
	return v, true
}

// Parts of speech.
const (
	Noun      = "n"
	Verb      = "v"
	Adjective = "a"
	Adverb    = "r"
)

// Related returns the lemmas related to word as a part of speech (Noun,
// Verb, ...; "" for any, nouns first) — one word or a phrase such as
// "pass away", in any inflection ("passed away", "kids") — best first;
// nil when WordNet does not know it so.
func Related(word, pos string) []string {
	word = strings.Join(strings.Fields(strings.ToLower(word)), " ")
	if word == "" {
		return nil
	}
	first, rest, _ := strings.Cut(word, " ")
	var out []string
	seen := map[string]bool{}
	for _, base := range BaseForms(first) {
		key := base
		if rest != "" {
			key += " " + rest
		}
		v, ok := line(key)
		if !ok || seen[key] {
			continue
		}
		seen[key] = true
		for _, field := range strings.Split(v, "\t") {
			p, rels, _ := strings.Cut(field, ":")
			if pos != "" && p != pos {
				continue
			}
			for _, r := range strings.Split(rels, "|") {
				if !seen[r] {
					seen[r] = true
					out = append(out, r)
				}
			}
		}
	}
	return out
}

// Known reports whether WordNet has an entry for word (in any
// inflection).
func Known(word string) bool { return len(Related(word, "")) > 0 }

// suffixes are WordNet's detachment rules (morphy): an inflected ending
// and what replaces it, for nouns, verbs and adjectives.
var suffixes = [][2]string{
	{"s", ""}, {"ses", "s"}, {"xes", "x"}, {"zes", "z"}, {"ches", "ch"}, {"shes", "sh"}, {"men", "man"}, {"ies", "y"},
	{"es", "e"}, {"es", ""}, {"ed", "e"}, {"ed", ""}, {"ing", "e"}, {"ing", ""},
	{"er", ""}, {"est", ""}, {"er", "e"}, {"est", "e"},
}

// BaseForms returns the forms word may be an inflection of, the word
// itself first: its irregular base ("went": "go"), then each form the
// detachment rules give. Forms need not be lemmas; Related looks each up.
func BaseForms(word string) []string {
	word = strings.ToLower(word)
	out := []string{word}
	if v, ok := line("~" + word); ok {
		out = append(out, v)
	}
	for _, s := range suffixes {
		if strings.HasSuffix(word, s[0]) && len(word) > len(s[0])+1 {
			out = append(out, strings.TrimSuffix(word, s[0])+s[1])
		}
	}
	return out
}
