package offline

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/answer"
	"github.com/docent-hq/docent/internal/wordnet"
)

// rewriteChunks are the pages the rewriter's spellings come from: the
// wiki, a page with hyphenated words and acronym-able headings, and a
// page that says "disable".
var rewriteChunks = append(append([]docent.Chunk(nil), wiki...),
	wikiPage("rw-wifi", "space/wifi.md", "Guest Wi-Fi", []string{"Member Lounge Access"}, "", 0,
		"Join the Wi-Fi in the lounge. Read the performance notes before you start."),
	wikiPage("rw-fan", "shop/fan.md", "Extraction fan", nil, "", 0, "Never disable the extraction fan while cutting."),
	wikiPage("rw-grand", "members/family.md", "Family members", nil, "", 0, "A grandparent of a member may visit with them."),
)

// related is a stand-in for WordNet: the general English words related
// to a word as a part of speech, best first; it records what it was
// asked.
type related struct {
	mu    sync.Mutex
	words map[string][]string // "word/pos"
	asked []string
}

func (r *related) fn(word, pos string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.asked = append(r.asked, strings.ToLower(word)+"/"+pos)
	return r.words[strings.ToLower(word)+"/"+pos]
}

func newRelated() *related {
	return &related{words: map[string][]string{
		"cubbyhole/n":   {"cubby", "compartment", "locker"},
		"grandma/n":     {"grandmother", "grandparent"},
		"switch off/v":  {"turn off", "disable"},
		"shut down/v":   {"power down", "halt"}, // neither held as one word
		"shut/n":        {"lid"},
		"lid/n":         {"shut"},      // relates back: a synonym
		"locker/n":      {"cubbyhole"}, // relates back: a synonym
		"grandparent/n": {"ancestor"},  // the general kind: grandma not among its words
		"lisbon/n":      {"locker"},    // a name: never asked
		"performance/n": {"lounge"},    // a word the docs hold: never asked
	}}
}

func mustSynonyms(t testing.TB, text string) *Synonyms {
	t.Helper()
	s, err := ParseSynonyms("test", strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestStandaloneRespell(t *testing.T) {
	corp := wikiCorpus(rewriteChunks...)
	syn := mustSynonyms(t, "cubby => locker\nguest, visitor\ndoor code => fob\ndoor => access\nsnack bar => kitchen cafe\n")
	tests := []struct {
		name, question, query string
		detail                string
	}{
		{"a phrase the docs never use is replaced by its meaning",
			"how much is a cubby", "how much is a locker", "respelled cubby → locker"},
		{"a phrase the docs use is extended by its meaning",
			"can I bring a guest", "can I bring a guest visitor", "respelled guest → guest visitor"},
		{"equivalent entries work both ways",
			"can a visitor come", "can a visitor guest come", "respelled visitor → visitor guest"},
		{"the longest phrase first",
			"what is the door code", "what is the door code fob", "respelled door code → door code fob"},
		{"matched without regard to case",
			"where is my Cubby", "where is my locker", "respelled Cubby → locker"},
		{"a meaning the docs do not hold is no meaning",
			"is there a snack bar", "is there a snack bar", ""},
		{"the docs' spelling of a word they write otherwise",
			"is the wifi free", "is the wi-fi free", "respelled wifi → wi-fi"},
		{"a word cut short",
			"where are the perf notes", "where are the performance notes", "respelled perf → performance"},
		{"an acronym of heading words in lower case",
			"who can use mla", "who can use member lounge access", "respelled mla → member lounge access"},
		{"a channel, a handle or a path is a name",
			"ask in #perf or @wifi or /cubby", "ask in #perf or @wifi or /cubby", ""},
		{"a name the docs lack is a detail",
			"are there lockers in Lisbon", "are there lockers in Lisbon", ""},
		{"general English for a noun the docs never use: a synonym replaces it",
			"how much is a cubbyhole", "how much is a locker", "respelled cubbyhole → locker"},
		{"the first related word the docs hold; a broader word is added and the word kept (a detail the docs lack)",
			"can my grandma visit", "can my grandma grandparent visit", "respelled grandma → grandma grandparent"},
		{"a phrasal verb is extended by a one-word verb the docs hold",
			"can I switch off the fan", "can I switch off disable the fan", "respelled switch off → switch off disable"},
		{"a phrasal verb without a held meaning falls back to its noun",
			"should I shut down the laser", "should I lid down the laser", "respelled shut → lid"},
		{"a filler spells nothing",
			"wat is a fob lol", "wat is a fob lol", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rel := newRelated()
			r := Standalone{Corpus: corp, Synonyms: syn, Related: rel.fn}
			rw, err := r.Rewrite(context.Background(), answer.RewriteRequest{Question: tt.question})
			if err != nil {
				t.Fatal(err)
			}
			if rw.Query != tt.query || rw.Detail != tt.detail {
				t.Errorf("Query %q detail %q, want %q, %q", rw.Query, rw.Detail, tt.query, tt.detail)
			}
			for _, a := range rel.asked {
				if a == "lisbon/n" || a == "performance/n" || a == "lol/n" || a == "wat/n" {
					t.Errorf("asked WordNet about %s", a)
				}
			}
		})
	}
}

// TestRespellAcronymsAndCodes: an acronym or a code written in a way
// no chunk holds is respelled as the docs write it (Corpus.Variant), like
// any other word; a capitalised name the docs lack is not, even when the
// initials of a heading spell it.
func TestRespellAcronymsAndCodes(t *testing.T) {
	corp := FixedCorpus(NewCorpus([]docent.Chunk{
		{ID: "a", DocID: "lounge.md", Title: "Member Lounge Access", Text: "Member Lounge Access\n\nThe lounge opens at 9."},
		{ID: "b", DocID: "laser.md", Title: "Laser codes", Text: "Laser codes\n\nLZ-30 means the coolant is too warm."},
		{ID: "c", DocID: "net.md", Title: "Data and Network Access", Text: "Data and Network Access\n\nAsk the board for a login."},
	}))
	tests := []struct{ question, query string }{
		{"who can use MLA", "who can use member lounge access"},
		{"what does LZ30 mean", "what does lz-30 mean"},
		{"can I ask Dana for a login", "can I ask Dana for a login"},
	}
	for _, tt := range tests {
		t.Run(tt.question, func(t *testing.T) {
			rw, err := Standalone{Corpus: corp}.Rewrite(context.Background(), answer.RewriteRequest{Question: tt.question})
			if err != nil {
				t.Fatal(err)
			}
			if rw.Query != tt.query {
				t.Errorf("Query %q, want %q", rw.Query, tt.query)
			}
		})
	}
}

func TestStandaloneWithoutData(t *testing.T) {
	// No corpus: words stay as written; no synonyms or WordNet: only the
	// docs' spellings.
	rw, err := Standalone{}.Rewrite(context.Background(), answer.RewriteRequest{Question: "is the wifi free"})
	if err != nil || rw.Query != "is the wifi free" {
		t.Errorf("without corpus: %q, %v", rw.Query, err)
	}
	rw, err = Standalone{Corpus: wikiCorpus(rewriteChunks...)}.Rewrite(context.Background(),
		answer.RewriteRequest{Question: "is the wifi free for my grandma"})
	if err != nil || rw.Query != "is the wi-fi free for my grandma" {
		t.Errorf("without WordNet: %q, %v", rw.Query, err)
	}
	src := &loader{}
	src.set(nil, errors.New("index closed"), nil)
	if _, err := (Standalone{Corpus: NewCorpusStats(src)}).Rewrite(context.Background(), answer.RewriteRequest{Question: "x"}); err == nil {
		t.Error("no error when the corpus statistics fail")
	}
}

func TestStandaloneFollowUp(t *testing.T) {
	history := []docent.Exchange{{Question: "How much are the studio dues?", Answer: "$90 [1]."}}
	tests := []struct {
		name     string
		question string
		history  []docent.Exchange
		query    string
	}{
		{"a continuation word", "and for students?", history, "How much are the studio dues? and for students?"},
		{"what about", "what about the hobbyist plan", history, "How much are the studio dues? what about the hobbyist plan"},
		{"fewer than two content terms", "students?", history, "How much are the studio dues? students?"},
		{"a question of its own", "where are the lockers kept", history, "where are the lockers kept"},
		{"no history, nothing to continue", "and for students?", nil, "and for students?"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rw, err := Standalone{}.Rewrite(context.Background(), answer.RewriteRequest{Question: tt.question, History: tt.history})
			if err != nil {
				t.Fatal(err)
			}
			if rw.Query != tt.query {
				t.Errorf("Query %q, want %q", rw.Query, tt.query)
			}
		})
	}
}

func TestSplitAsks(t *testing.T) {
	tests := []struct {
		name, question string
		parts, asks    []string // nil: a single ask
	}{
		{name: "one ask", question: "how many guests can I bring to an open evening"},
		{name: "after a question mark, a part that refers back gets the words before",
			question: "Where is the kiln? When does it fire?",
			parts:    []string{"Where is the kiln", "When does it fire kiln"},
			asks:     []string{"Where is the kiln", "When does it fire"}},
		{name: "a part that refers back gets the words before however many it has",
			question: "Where is the kiln? When does it fire glazed pieces?",
			parts:    []string{"Where is the kiln", "When does it fire glazed pieces kiln"},
			asks:     []string{"Where is the kiln", "When does it fire glazed pieces"}},
		{name: "a part of its own does not",
			question: "Where is the kiln? When do glazed pieces come out?",
			parts:    []string{"Where is the kiln", "When do glazed pieces come out"},
			asks:     []string{"Where is the kiln", "When do glazed pieces come out"}},
		{name: "a leading and is trimmed",
			question: "Where is the kiln? And who fires it?",
			parts:    []string{"Where is the kiln", "who fires it kiln"},
			asks:     []string{"Where is the kiln", "who fires it"}},
		{name: "after a comma only an auxiliary with a pronoun opens an ask",
			question: "can I bring a guest, a friend or a child"},
		{name: "after a semicolon, an auxiliary and a pronoun",
			question: "what does the studio plan cost; do we get a locker with it",
			parts:    []string{"what does the studio plan cost", "do we get a locker with it studio plan cost"},
			asks:     []string{"what does the studio plan cost", "do we get a locker with it"}},
		{name: "and between two things is no new ask",
			question: "can I bring wood and acrylic"},
		{name: "a leading clause that asks nothing is context of every part",
			question: "lost my fob - how do I open the door and who do I notify",
			parts:    []string{"lost my fob how do I open the door", "lost my fob who do I notify open door"},
			asks:     []string{"how do I open the door", "who do I notify"}},
		{name: "a break inside quotes is none",
			question: `why does the panel say "Lid open, is it shut?" when it is shut`},
		{name: "after a colon and a full stop",
			question: "kiln rules: what temperature. how long to cool",
			parts:    []string{"kiln rules what temperature", "kiln rules how long to cool temperature"},
			asks:     []string{"what temperature", "how long to cool"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parts, asks := splitAsks(tt.question)
			wantParts, wantAsks := tt.parts, tt.asks
			if wantParts == nil {
				wantParts, wantAsks = []string{tt.question}, []string{tt.question}
			}
			if !slices.Equal(parts, wantParts) || !slices.Equal(asks, wantAsks) {
				t.Errorf("parts %q asks %q\nwant  %q asks %q", parts, asks, wantParts, wantAsks)
			}
			rw, err := Standalone{}.Rewrite(context.Background(), answer.RewriteRequest{Question: tt.question})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(rw.SubQueries, tt.parts) || !slices.Equal(rw.Asks, tt.asks) {
				t.Errorf("Rewrite SubQueries %q Asks %q, want %q %q", rw.SubQueries, rw.Asks, tt.parts, tt.asks)
			}
		})
	}
}

func TestStandaloneWithWordNet(t *testing.T) {
	// The real table: a noun the docs never use becomes the first word
	// WordNet relates to it that they do.
	kids := wikiPage("kids", "members/kids.md", "Open evenings", nil, "", 0, "A child under 12 comes with an adult.")
	r := Standalone{Corpus: wikiCorpus(append(rewriteChunks, kids)...), Related: wordnet.Related}
	rw, err := r.Rewrite(context.Background(), answer.RewriteRequest{Question: "can my kids come to open evenings"})
	if err != nil {
		t.Fatal(err)
	}
	if rw.Query != "can my child come to open evenings" {
		t.Errorf("Query %q", rw.Query)
	}
}
