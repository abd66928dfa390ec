package offline

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
	"unicode"

	"github.com/kljensen/snowball/english"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/search"
)

// Corpus holds the statistics of the indexed chunks that the offline
// stages use: how many chunks hold each term (for IDF, and to tell a word
// the docs never use from one the chosen sources lack), the joined forms
// of hyphenated words ("wifi" for "Wi-Fi"), and the phrases of headings
// whose initials spell an acronym ("PTO" for "Paid Time Off"). A Corpus is
// immutable once built and safe for concurrent use.
type Corpus struct {
	n  int
	df map[string]int
	// joined maps the stem of a hyphenated word written without its
	// hyphens ("wifi") to the word as the docs write it ("wi-fi").
	joined map[string]string
	// acronyms maps lower-case initials to the heading phrase they spell
	// most often, with the number of headings that spell it.
	acronyms map[string]counted
	// clipped maps the start of a word ("perf", "info") to the word the
	// docs write that starts so ("performance", "information"), when
	// the words that do all share one stem.
	clipped map[string]string
}

// counted is a string with a count.
type counted struct {
	s string
	n int
}

// NewCorpus returns the statistics of chunks.
func NewCorpus(chunks []docent.Chunk) *Corpus {
	b := newCorpusBuilder()
	for _, c := range chunks {
		b.add(c)
	}
	return b.build()
}

// corpusBuilder accumulates a Corpus chunk by chunk.
type corpusBuilder struct {
	c        *Corpus
	joined   map[string]map[string]int
	phrases  map[string]map[string]int
	headings map[string]bool
	words    map[string]int // lower-case words of letters only, by count
}

func newCorpusBuilder() *corpusBuilder {
	return &corpusBuilder{
		c:        &Corpus{df: map[string]int{}, joined: map[string]string{}, acronyms: map[string]counted{}, clipped: map[string]string{}},
		joined:   map[string]map[string]int{},
		phrases:  map[string]map[string]int{},
		headings: map[string]bool{},
		words:    map[string]int{},
	}
}

func (b *corpusBuilder) add(c docent.Chunk) {
	b.c.n++
	seen := map[string]bool{}
	search.AnalyzeFunc(c.Text, func(t string) {
		if !seen[t] {
			seen[t] = true
			b.c.df[t]++
		}
	})
	for _, w := range strings.FieldsFunc(strings.ToLower(c.Text), func(r rune) bool { return r < 'a' || r > 'z' }) {
		if len(w) >= minClipped+minClippedOff {
			b.words[w]++
		}
	}
	for _, w := range search.Compounds(c.Text) {
		key := english.Stem(search.JoinCompound(w), true)
		if b.joined[key] == nil {
			b.joined[key] = map[string]int{}
		}
		b.joined[key][w]++
	}
	for _, h := range append([]string{c.Title}, c.Section...) {
		if h == "" || b.headings[c.DocID+"\x00"+h] {
			continue
		}
		b.headings[c.DocID+"\x00"+h] = true
		for ini, phrase := range headingAcronyms(h) {
			if b.phrases[ini] == nil {
				b.phrases[ini] = map[string]int{}
			}
			b.phrases[ini][phrase]++
		}
	}
}

func (b *corpusBuilder) build() *Corpus {
	for key, forms := range b.joined {
		b.c.joined[key] = mostFrequent(forms).s
	}
	for ini, phrases := range b.phrases {
		b.c.acronyms[ini] = mostFrequent(phrases)
	}
	b.buildClipped()
	return b.c
}

// A clipped word ("perf") has at least minClipped letters and leaves at
// least minClippedOff letters of the word off.
const (
	minClipped    = 3
	minClippedOff = 2
)

// buildClipped fills Corpus.clipped: for every start of a word of the
// docs, the most frequent word that starts so, kept only when all the
// words that start so share its stem ("perf" gives "performance", which
// "performed" shares; "temp" for "temporary" and "template" gives
// nothing).
func (b *corpusBuilder) buildClipped() {
	type cand struct {
		best  counted
		stem  string
		mixed bool
	}
	starts := map[string]*cand{}
	for w, n := range b.words {
		st := english.Stem(w, true)
		for l := minClipped; l <= len(w)-minClippedOff; l++ {
			p := w[:l]
			c := starts[p]
			if c == nil {
				starts[p] = &cand{best: counted{w, n}, stem: st}
				continue
			}
			if c.stem != st {
				c.mixed = true
			}
			if n > c.best.n || (n == c.best.n && w < c.best.s) {
				c.best = counted{w, n}
			}
		}
	}
	for p, c := range starts {
		if !c.mixed {
			b.c.clipped[p] = c.best.s
		}
	}
}

// mostFrequent returns the most frequent key of counts with its count,
// ties broken in lexical order.
func mostFrequent(counts map[string]int) counted {
	var best counted
	for k, n := range counts {
		if n > best.n || (n == best.n && k < best.s) {
			best = counted{k, n}
		}
	}
	return best
}

// headingAcronyms returns, for every run of two to five consecutive words
// of a heading, the run's initials with the run as written in lower case:
// "Paid Time Off and Leave" gives "pto" for "paid time off" among others.
// Runs start with a word that is not a stopword and hold at least two
// such words; a variant skipping the
// stopwords inside a run is added ("Out of Office" gives "ooo" and "oo").
func headingAcronyms(h string) map[string]string {
	words := strings.FieldsFunc(strings.ToLower(h), func(r rune) bool { return !unicode.IsLetter(r) })
	out := map[string]string{}
	for i := range words {
		if english.IsStopWord(words[i]) {
			continue
		}
		for j := i + 2; j <= len(words) && j <= i+5; j++ {
			run := words[i:j]
			var all, content strings.Builder
			for _, w := range run {
				all.WriteByte(w[0])
				if !english.IsStopWord(w) {
					content.WriteByte(w[0])
				}
			}
			if content.Len() < 2 {
				continue
			}
			phrase := strings.Join(run, " ")
			out[all.String()] = phrase
			if content.String() != all.String() {
				if _, ok := out[content.String()]; !ok {
					out[content.String()] = phrase
				}
			}
		}
	}
	return out
}

// N is the number of chunks.
func (c *Corpus) N() int { return c.n }

// DF is the number of chunks that hold term (search.Analyze form, as the
// index sees them: a compound's joined spelling is not counted).
func (c *Corpus) DF(term string) int { return c.df[term] }

// IDF is the BM25 inverse document frequency of term,
// ln(1 + (N − df + 0.5)/(df + 0.5)); a term no chunk holds gets the
// largest value.
func (c *Corpus) IDF(term string) float64 {
	n, df := float64(c.n), float64(c.df[term])
	return math.Log(1 + (n-df+0.5)/(df+0.5))
}

// Variant returns how the docs write a word the question spells another
// way, when the word itself (analyzed) is in no chunk: a hyphenated word
// written without hyphens or brackets ("wifi" gives "wi-fi", "401k"
// gives "401(k)"), a word cut short, not written in capitals ("perf"
// gives "performance", "ack" gives "acknowledge"), or an acronym of
// heading words ("PTO" gives "paid time off"; "PR" gives "pull
// request"). word is one word as written in the question. An acronym has
// two to five letters; written in lower case, at least three.
func (c *Corpus) Variant(word string) (string, bool) {
	terms := search.Analyze(word)
	// A filler ("wat", "lol") spells nothing of the docs.
	if len(terms) != 1 || c.df[terms[0]] > 0 || fillers[terms[0]] {
		return "", false
	}
	if v, ok := c.joined[terms[0]]; ok {
		return v, true
	}
	lw := strings.ToLower(word)
	if v, ok := c.clipped[lw]; ok && word != strings.ToUpper(word) {
		return v, true
	}
	if len(lw) < 2 || len(lw) > 5 || strings.ContainsFunc(lw, func(r rune) bool { return r < 'a' || r > 'z' }) {
		return "", false
	}
	p, ok := c.acronyms[lw]
	if !ok || (word != strings.ToUpper(word) && len(lw) < 3) {
		return "", false
	}
	return p.s, true
}

// Loader is what a CorpusStats reads chunks from: search.Index implements it.
type Loader interface {
	// Scan calls fn for every stored chunk.
	Scan(ctx context.Context, fn func(docent.Chunk) error) error
}

// CorpusStats keeps the Corpus of an index current: the sync engine's
// corpus pass rebuilds it when a run changed the index (BeginPass); it is
// also built on first use when no pass ran first, and rebuilt in the
// background after Invalidate (an index another process changed). Until
// a rebuild finishes, the previous statistics are served.
type CorpusStats struct {
	src Loader

	mu      sync.Mutex
	cur     *Corpus
	stale   bool
	loading bool
}

// NewCorpusStats returns statistics over src, built on first use.
func NewCorpusStats(src Loader) *CorpusStats { return &CorpusStats{src: src} }

// FixedCorpus returns statistics that never change (for tests and for
// callers that build a Corpus themselves).
func FixedCorpus(c *Corpus) *CorpusStats { return &CorpusStats{cur: c} }

var _ search.Deriver = (*CorpusStats)(nil)

// BeginPass implements search.Deriver: the sync engine's corpus pass
// builds the next statistics, which replace the served ones when the
// pass completes. Wired so, the answer path never scans the index (Get
// builds on first use only when no pass has run yet).
func (s *CorpusStats) BeginPass() (func(docent.Chunk), func(error)) {
	b := newCorpusBuilder()
	return b.add, func(err error) {
		if err != nil {
			return
		}
		c := b.build()
		s.mu.Lock()
		s.cur, s.stale = c, false
		s.mu.Unlock()
	}
}

// Invalidate marks the statistics out of date; the next Get starts a
// rebuild (for an index another process changed).
func (s *CorpusStats) Invalidate() {
	if s == nil {
		return
	}
	s.mu.Lock()
	s.stale = true
	s.mu.Unlock()
}

// Get returns the current statistics, building them on first use. It
// returns an error only when the first build fails; a failed rebuild
// keeps the previous statistics.
func (s *CorpusStats) Get(ctx context.Context) (*Corpus, error) {
	if s == nil {
		return nil, nil
	}
	s.mu.Lock()
	cur, stale, loading := s.cur, s.stale, s.loading
	if cur != nil && stale && !loading && s.src != nil {
		s.loading, s.stale = true, false
		go func() {
			c, err := s.load(context.WithoutCancel(ctx))
			s.mu.Lock()
			if err == nil {
				s.cur = c
			} else {
				s.stale = true
			}
			s.loading = false
			s.mu.Unlock()
		}()
	}
	s.mu.Unlock()
	if cur != nil || s.src == nil {
		return cur, nil
	}
	c, err := s.load(ctx)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	if s.cur == nil {
		s.cur, s.stale = c, false
	}
	cur = s.cur
	s.mu.Unlock()
	return cur, nil
}

func (s *CorpusStats) load(ctx context.Context) (*Corpus, error) {
	b := newCorpusBuilder()
	if err := s.src.Scan(ctx, func(c docent.Chunk) error {
		b.add(c)
		return nil
	}); err != nil {
		return nil, fmt.Errorf("answer: corpus statistics: %w", err)
	}
	return b.build(), nil
}

// holdsAll reports whether every analyzed term of s is in some chunk.
func (c *Corpus) holdsAll(s string) bool {
	terms := search.Analyze(s)
	if len(terms) == 0 {
		return false
	}
	for _, t := range terms {
		if c.df[t] == 0 {
			return false
		}
	}
	return true
}

// firstHeld returns the first of phrases whose every term some chunk
// holds.
func (c *Corpus) firstHeld(phrases []string) (string, bool) {
	for _, p := range phrases {
		if c.holdsAll(p) {
			return p, true
		}
	}
	return "", false
}
