package search

import (
	"slices"
	"strings"
	"testing"

	"github.com/kljensen/snowball/english"
)

func TestAnalyze(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []string
	}{
		{"empty", "", nil},
		{"stopwords dropped", "the and of a", nil},
		{"stems and lowercases", "Running Runners ran", []string{"run", "runner", "ran"}},
		{"splits punctuation", "COVID-19 vaccines, (mRNA)", []string{"covid", "19", "vaccin", "mrna"}},
		{"camel case stays whole for the embedder", "excludedContentTypes", []string{"excludedcontenttyp"}},
		{"drops one letter words keeps digits", "x 7 b12", []string{"7", "b12"}},
		{"unicode letters", "Café naïve", []string{"café", "naïv"}},
		{"long term cut", strings.Repeat("é", 30), []string{strings.Repeat("é", 20)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Analyze(tc.in); !slices.Equal(got, tc.want) {
				t.Fatalf("Analyze(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

// TestWordsKeepsCamelCase: the words handed to an engine that tokenizes
// on its own (Typesense) are not split, since it indexes them whole.
func TestWordsKeepsCamelCase(t *testing.T) {
	var got []string
	Words("excludedContentTypes", func(w string) { got = append(got, w) })
	if !slices.Equal(got, []string{"excludedcontenttypes"}) {
		t.Errorf("Words = %q", got)
	}
}

func TestStemCacheAgreesWithSnowball(t *testing.T) {
	words := []string{"running", "runners", "generalization", "vaccines", "naïve", "studies", "studies"}
	for range 2 { // the second pass reads the cache
		for _, w := range words {
			if got, want := stem(w), english.Stem(w, true); got != want {
				t.Errorf("stem(%q) = %q, want %q", w, got, want)
			}
		}
	}
}

// BenchmarkAnalyze analyzes a paragraph of prose, the unit of indexing.
func BenchmarkAnalyze(b *testing.B) {
	text := strings.Repeat("Alterations of the architecture of cerebral white matter in the developing human brain can affect cortical development and result in functional disabilities. ", 20)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		AnalyzeFunc(text, func(string) {})
	}
}

func TestCountTokens(t *testing.T) {
	for in, want := range map[string]int{"": 0, "  ,, ": 0, "The cat, a dog!": 4, "COVID-19 x": 3, "naïve café": 2} {
		if got := CountTokens(in); got != want {
			t.Errorf("CountTokens(%q) = %d, want %d", in, got, want)
		}
	}
}

func TestAnalyzeKeywordsCamelCase(t *testing.T) {
	for in, want := range map[string][]string{
		"set excludedContentTypes on the HTTPRouter": {"set", "excludedcontenttyp", "exclud", "content", "type", "httprouter", "http", "router"},
		"IPv4, JSON, siRNA, HeLa and macOS":          {"ipv4", "json", "sirna", "hela", "maco"},
		"ipStrategy":                                 {"ipstrategi", "ip", "strategi"},
	} {
		var got []string
		AnalyzeKeywords(in, func(t string) { got = append(got, t) })
		if !slices.Equal(got, want) {
			t.Errorf("AnalyzeKeywords(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestAnalyzeKeywords(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []string
	}{
		{"short stopword list keeps negation and order", "It is not the case after all", []string{"not", "case", "after", "all"}},
		{"stems and lowercases", "Running Runners", []string{"run", "runner"}},
		{"diacritics folded", "Café Zürich naïve Straße", []string{"cafe", "zurich", "naiv", "straße"}},
		{"non-Latin scripts kept", "東京 オフィス", []string{"東京", "オフィス"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			AnalyzeKeywords(tc.in, func(term string) { got = append(got, term) })
			if !slices.Equal(got, tc.want) {
				t.Errorf("AnalyzeKeywords(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestJaccard(t *testing.T) {
	set := func(ws ...string) map[string]bool {
		m := map[string]bool{}
		for _, w := range ws {
			m[w] = true
		}
		return m
	}
	for _, tc := range []struct {
		a, b map[string]bool
		want float64
	}{
		{set("a", "b"), set("a", "b"), 1},
		{set("a", "b"), set("b", "c"), 1.0 / 3},
		{set("a"), set("b"), 0},
		{set(), set("a"), 0},
		{nil, nil, 0},
	} {
		if got := Jaccard(tc.a, tc.b); got != tc.want {
			t.Errorf("Jaccard(%v, %v) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}
