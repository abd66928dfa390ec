package offline

import (
	"regexp"

	"github.com/kljensen/snowball/english"

	"github.com/docent-hq/docent/search"
)

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

// scorer measures how much of one question's terms a set or unit holds.
type scorer struct {
	terms []string
	idf   map[string]float64
	total float64 // Σ idf over terms
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
