package eval

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"unicode"
)

// Long-query sets: passage-length versions of a BEIR set's queries, built
// at measurement time from the set itself (so no corpus text is stored
// anywhere), deterministic for a seed. They check that retrieval does not
// degrade when people paste a paragraph around their question.
const (
	// LongContext puts a pasted paragraph before each query: one sentence
	// of a judged-relevant document (the one with the smallest ID) among
	// two sentences of unrelated documents, in random order, like a log
	// excerpt of which one line is the error the answer is about. The
	// query text follows.
	LongContext = "long-context"
	// LongNoise puts the query among three sentences from three other
	// corpus documents, none judged relevant to it, at a random position:
	// an unrelated paragraph pasted around the question.
	LongNoise = "long-noise"
)

// LongKinds are the long-query sets, in report order.
var LongKinds = []string{LongContext, LongNoise}

// longSentences is how many sentences a long query adds to the query.
// The corpus must hold a document with a sentence that is not relevant to
// each query.
const longSentences = 3

// LongQueries returns b with each query replaced by its long version of
// the given kind (LongContext or LongNoise), built with a generator seeded
// by seed. The corpus and judgments are b's; the Split names the kind
// ("test/long-context"). It returns an error for an unknown kind.
func LongQueries(b *BEIR, kind string, seed uint64) (*BEIR, error) {
	if kind != LongContext && kind != LongNoise {
		return nil, fmt.Errorf("eval: long queries: unknown kind %q (want %s)", kind, strings.Join(LongKinds, " or "))
	}
	byID := make(map[string]int, len(b.Corpus))
	for i, d := range b.Corpus {
		byID[strings.TrimPrefix(d.ID, BEIRPrefix)] = i
	}
	rng := rand.New(rand.NewPCG(seed, 0x6c6f6e67)) // "long"
	out := *b
	out.Split = b.Split + "/" + kind
	out.Queries = make([]Query, len(b.Queries))
	for i, q := range b.Queries {
		var parts []string
		noise := longSentences
		if kind == LongContext {
			rel := make([]string, 0, len(b.Qrels[q.ID]))
			for id, grade := range b.Qrels[q.ID] {
				if _, ok := byID[id]; ok && grade > 0 {
					rel = append(rel, id)
				}
			}
			slices.SortFunc(rel, compareIDs)
			if len(rel) > 0 {
				if s := Sentences(b.Corpus[byID[rel[0]]].Body); len(s) > 0 {
					parts = append(parts, s[rng.IntN(len(s))])
					noise--
				}
			}
		}
		for range noise {
			parts = append(parts, unrelatedSentence(rng, b, q.ID))
		}
		rng.Shuffle(len(parts), func(i, j int) { parts[i], parts[j] = parts[j], parts[i] })
		if kind == LongContext {
			parts = append(parts, q.Text)
		} else {
			parts = slices.Insert(parts, rng.IntN(len(parts)+1), q.Text)
		}
		out.Queries[i] = Query{ID: q.ID, Text: strings.Join(parts, " ")}
	}
	return &out, nil
}

// unrelatedSentence returns a random sentence of a random corpus
// document that is not judged relevant to query qid.
func unrelatedSentence(rng *rand.Rand, b *BEIR, qid string) string {
	for {
		d := b.Corpus[rng.IntN(len(b.Corpus))]
		if b.Qrels[qid][strings.TrimPrefix(d.ID, BEIRPrefix)] > 0 {
			continue
		}
		if s := Sentences(d.Body); len(s) > 0 {
			return s[rng.IntN(len(s))]
		}
	}
}

// Sentences splits prose into sentences: a sentence ends at '.', '!' or
// '?' followed by white space and an upper-case letter or a digit.
// Surrounding white space is trimmed; empty sentences are dropped.
func Sentences(text string) []string {
	var out []string
	rs := []rune(text)
	start := 0
	for i := 0; i < len(rs); i++ {
		if rs[i] != '.' && rs[i] != '!' && rs[i] != '?' {
			continue
		}
		j := i + 1
		for j < len(rs) && unicode.IsSpace(rs[j]) {
			j++
		}
		if j == i+1 || j == len(rs) || !(unicode.IsUpper(rs[j]) || unicode.IsDigit(rs[j])) {
			continue
		}
		if s := strings.TrimSpace(string(rs[start : i+1])); s != "" {
			out = append(out, s)
		}
		start = j
	}
	if s := strings.TrimSpace(string(rs[start:])); s != "" {
		out = append(out, s)
	}
	return out
}

// WithLongQueries returns b followed by its long-query sets, in LongKinds
// order, built with seed.
func WithLongQueries(b *BEIR, seed uint64) ([]*BEIR, error) {
	sets := []*BEIR{b}
	for _, kind := range LongKinds {
		l, err := LongQueries(b, kind, seed)
		if err != nil {
			return nil, err
		}
		sets = append(sets, l)
	}
	return sets, nil
}
