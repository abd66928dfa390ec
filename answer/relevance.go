package answer

import (
	"math"
	"regexp"
	"strings"

	"github.com/kljensen/snowball/english"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/search"
)

// DefaultMinScore is the answer threshold used when GateOptions.MinScore
// is 0. The gate compares it with the closest page's evidence: the share
// of the question (IDF weighted) that its best unit covers, with its
// headings, or, when larger, the relevance of that unit's chunk less
// DefaultChunkRelevance − DefaultMinScore; see the package documentation.
const DefaultMinScore = 0.45

// DefaultChunkRelevance is the relevance (the per-candidate signal of the
// package documentation) at which, under the default threshold, the
// chunk holding the best unit answers even when no single unit reaches
// DefaultMinScore.
const DefaultChunkRelevance = 0.5

// Weights combine the components of the relevance signal. Each component
// lies in [0, 1]; weights that sum to 1 keep relevance in [0, 1] as well.
type Weights struct {
	// Coverage weighs the IDF-weighted share of question terms in the chunk.
	Coverage float64
	// Vector weighs the chunk's cosine similarity to the question.
	Vector float64
	// Keyword weighs whether BM25 returned the chunk at all.
	Keyword float64
}

// DefaultWeights are the weights used when Options.Weights is zero.
var DefaultWeights = Weights{Coverage: 0.6, Vector: 0.3, Keyword: 0.1}

// fillers are question words that carry no topic; they are removed from
// the question's terms (after stemming) on top of the English stopwords.
//
// The second group are light verbs, which say little about the topic
// ("take", "use", "put", "make", "go"), and words for when the asker is
// asking ("tomorrow", "this afternoon").
//
// The fourth group are prepositions the English stopword list lacks.
//
// The third group are English contractions written without their
// apostrophe, as people type them in chat ("whats", "im", "cant"), and
// chat shorthand; the analyzer would otherwise keep them as words that no
// document holds.
var fillers = stemSet("much", "many", "can", "could", "would", "get", "got",
	"need", "want", "like", "know", "tell", "please", "also", "anyone",
	"someone", "somebody", "thing", "things", "way", "okay", "ok", "hi",
	"hello", "hey", "thanks", "thank", "possible", "actually", "really",
	"exactly", "supposed", "question", "wondering", "anything", "something",
	"everything", "still", "usually", "mine", "yours", "ours", "ever",

	"whats", "wheres", "whos", "hows", "thats", "theres", "heres", "im",
	"ive", "youre", "youve", "theyre", "weve", "cant", "dont", "doesnt",
	"didnt", "isnt", "arent", "wasnt", "werent", "hasnt", "havent", "hadnt",
	"wont", "wouldnt", "shouldnt", "couldnt", "lets", "pls", "plz", "thx",
	"etc", "btw", "fyi", "asap", "super", "gonna", "wanna", "isn", "doesn",
	"don", "didn", "wasn", "aren", "hasn", "haven", "won", "wouldn",
	"couldn", "shouldn", "weren", "hadn", "yo", "lol", "lmao", "haha", "omg",
	"idk", "tbh", "imo", "ty", "hiya", "sup", "wat", "wut",

	"take", "took", "use", "put", "make", "made", "go", "going", "went",
	"give", "gave", "let", "say", "said", "think", "try", "find", "just",
	"tomorrow", "today", "tonight", "yesterday", "afternoon", "morning",

	"onto", "upon", "toward", "towards", "via", "among", "amongst", "whilst", "besides")

func stemSet(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[english.Stem(w, true)] = true
	}
	return m
}

// degreeRE matches "how" with the adverb of degree it asks with ("how
// long", "how often"): the adverb asks for an amount and is no topic word.
var degreeRE = regexp.MustCompile(`(?i)\bhow\s+(long|often|fast|soon|far|quickly|frequently|early|late|old|big|large)\b`)

// clockRE matches a time of day ("3am", "10:30 pm"): when the asker is
// asking, not what.
var clockRE = regexp.MustCompile(`(?i)\b\d{1,2}(:\d\d)?\s?(am|pm)\b`)

// queryTerms returns the distinct content terms of a question, in order.
func queryTerms(text string) []string {
	text = degreeRE.ReplaceAllString(text, "how")
	text = clockRE.ReplaceAllString(text, " ")
	seen := map[string]bool{}
	var terms []string
	search.AnalyzeFunc(text, func(t string) {
		if fillers[t] || seen[t] {
			return
		}
		seen[t] = true
		terms = append(terms, t)
	})
	return terms
}

// termSet returns the set of analyzed terms in text.
func termSet(text string) map[string]bool {
	set := map[string]bool{}
	search.AnalyzeFunc(text, func(t string) { set[t] = true })
	// A compound written in parts also matches its joined spelling:
	// "break-glass" holds "breakglass", "401(k)" holds "401k".
	if strings.ContainsAny(text, "-(") {
		for _, w := range compounds(text) {
			set[english.Stem(joinCompound(w), true)] = true
		}
	}
	return set
}

// relevance is the absolute relevance of one candidate, with its parts.
type relevance struct {
	Coverage float64
	Vector   float64
	Keyword  float64
	Score    float64
}

// scorer measures relevance of candidates to one question.
type scorer struct {
	terms   []string
	idf     map[string]float64
	total   float64 // Σ idf over terms
	weights Weights
}

// newScorer estimates IDF for the question terms over the candidate term
// sets, preferring known values from idf when it is not nil.
func newScorer(terms []string, sets []map[string]bool, known func(string) (float64, bool), w Weights) *scorer {
	s := &scorer{terms: terms, idf: make(map[string]float64, len(terms)), weights: w}
	n := float64(len(sets))
	for _, t := range terms {
		if known != nil {
			if v, ok := known(t); ok && v > 0 {
				s.idf[t] = v
				s.total += v
				continue
			}
		}
		df := 0.0
		for _, set := range sets {
			if set[t] {
				df++
			}
		}
		v := math.Log(1 + (n-df+0.5)/(df+0.5))
		s.idf[t] = v
		s.total += v
	}
	return s
}

// coverage is the IDF-weighted share of question terms found in set, with
// terms found only in extra (heading context) counting extraWeight.
func (s *scorer) coverage(set, extra map[string]bool, extraWeight float64) float64 {
	if s.total == 0 {
		return 0
	}
	got := 0.0
	for _, t := range s.terms {
		switch {
		case set[t]:
			got += s.idf[t]
		case extra[t]:
			got += extraWeight * s.idf[t]
		}
	}
	return got / s.total
}

// A unit's words count fully toward its coverage of a question; words
// only in the section headings above it count sectionWeight, words only
// in the document title titleWeight.
// A row or list item rarely repeats the heading it sits under, so for
// them words of the section headings count structWeight. Every unit of a
// page is about the page's subject: title words count fully.
const (
	sectionWeight = 0.5
	structWeight  = 0.8
	titleWeight   = 1.0
)

// unitCoverage is the IDF-weighted share of the question's terms in a
// unit, its section headings and its document title (see sectionWeight).
func (s *scorer) unitCoverage(u unit) float64 {
	if s.total == 0 {
		return 0
	}
	got := 0.0
	for _, t := range s.terms {
		got += s.idf[t] * unitWeight(u, t)
	}
	return got / s.total
}

// unitWeight is how much term t counts toward a unit's coverage.
func unitWeight(u unit, t string) float64 {
	// A word in both the headings and the title counts as a title word.
	switch {
	case u.Terms[t]:
		return 1
	case u.Title[t]:
		return titleWeight
	case u.Context[t] && u.Kind != kindSentence:
		return structWeight
	case u.Context[t]:
		return sectionWeight
	}
	return 0
}

// gain is the IDF-weighted share of question terms in set that covered
// does not hold yet.
func (s *scorer) gain(set, covered map[string]bool) float64 {
	if s.total == 0 {
		return 0
	}
	got := 0.0
	for _, t := range s.terms {
		if set[t] && !covered[t] {
			got += s.idf[t]
		}
	}
	return got / s.total
}

// score combines the components for one hit whose text has term set set.
func (s *scorer) score(h docent.Hit, set map[string]bool) relevance {
	r := relevance{Coverage: s.coverage(set, nil, 0)}
	r.Vector = math.Max(0, math.Min(1, h.VectorScore))
	if h.KeywordRank > 0 {
		r.Keyword = 1
	}
	r.Score = s.weights.Coverage*r.Coverage + s.weights.Vector*r.Vector + s.weights.Keyword*r.Keyword
	return r
}
