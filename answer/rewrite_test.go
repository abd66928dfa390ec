package answer

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docent-hq/docent"
)

// handbookChunks is a small corpus with the spellings the Corpus learns:
// hyphenated words, a bracketed word and acronym-able headings.
var handbookChunks = []docent.Chunk{
	{ID: "w1", DocID: "it/wifi.md", Title: "Office Wi-Fi", Section: []string{"Guest network"},
		Text: "Office Wi-Fi > Guest network\n\nGuests join the Wi-Fi network Kestrel-Guest. The on-call engineer can reset it."},
	{ID: "p1", DocID: "people/pto.md", Title: "Paid Time Off and Leave", Section: []string{"Vacation"},
		Text: "Paid Time Off and Leave > Vacation\n\nYou get 25 vacation days per year."},
	{ID: "p2", DocID: "people/pto.md", Title: "Paid Time Off and Leave", Section: []string{"Carry-over"},
		Text: "Paid Time Off and Leave > Carry-over\n\nUp to 5 days carry over."},
	{ID: "c1", DocID: "eng/code-review.md", Title: "Code review", Section: []string{"Rules for every pull request"},
		Text: "Code review > Rules for every pull request\n\nEvery pull request needs one approval."},
	{ID: "c2", DocID: "eng/code-review.md", Title: "Code review", Section: []string{"Writing a good pull request"},
		Text: "Code review > Writing a good pull request\n\nKeep it under 400 lines."},
	{ID: "b1", DocID: "people/benefits.md", Title: "Benefits", Section: []string{"Retirement"},
		Text: "Benefits > Retirement\n\nThe 401(k) plan matches 4%."},
}

func TestCorpusVariant(t *testing.T) {
	c := NewCorpus(handbookChunks)
	tests := []struct {
		word, want string
	}{
		{"wifi", "wi-fi"},        // joined spelling of a hyphenated word
		{"oncall", "on-call"},    // the same
		{"401k", "401(k)"},       // a bracketed part
		{"PTO", "paid time off"}, // an acronym of heading words
		{"pto", "paid time off"}, // lower case, three letters or more
		{"PR", "pull request"},   // capitals, two letters
		{"pr", ""},               // two lower-case letters: too ambiguous
		{"vacation", ""},         // the docs use it: no variant
		{"vac", "vacation"},      // a word cut short
		{"VAC", ""},              // in capitals: an acronym, not a cut
		{"netw", "network"},      // the same
		{"zebra", ""},            // nothing like it
	}
	for _, tt := range tests {
		got, ok := c.Variant(tt.word)
		if got != tt.want || ok != (tt.want != "") {
			t.Errorf("Variant(%q) = %q, %v; want %q", tt.word, got, ok, tt.want)
		}
	}
	if got := respell("vac days for #vac", c); got != "vacation days for #vac" {
		t.Errorf("respell = %q, want the channel name kept", got)
	}
	if c.N() != len(handbookChunks) || c.DF("vacat") != 1 || c.DF("pull") != 2 || c.DF("wifi") != 0 {
		t.Errorf("N %d, df(vacat) %d, df(pull) %d, df(wifi) %d", c.N(), c.DF("vacat"), c.DF("pull"), c.DF("wifi"))
	}
	if c.IDF("zebra") <= c.IDF("pull") {
		t.Errorf("IDF of an unknown term %v not above a known one's %v", c.IDF("zebra"), c.IDF("pull"))
	}
}

// scanner is a Loader over a slice that counts its scans.
type scanner struct {
	chunks []docent.Chunk
	scans  atomic.Int32
	err    error
}

func (s *scanner) Scan(_ context.Context, fn func(docent.Chunk) error) error {
	s.scans.Add(1)
	if s.err != nil {
		return s.err
	}
	for _, c := range s.chunks {
		if err := fn(c); err != nil {
			return err
		}
	}
	return nil
}

func TestCorpusStatsRebuildAfterInvalidate(t *testing.T) {
	ctx := context.Background()
	src := &scanner{chunks: handbookChunks[:2]}
	stats := NewCorpusStats(src)
	c, err := stats.Get(ctx)
	if err != nil || c.N() != 2 {
		t.Fatalf("first Get: %v, N %d", err, c.N())
	}
	if c2, _ := stats.Get(ctx); c2 != c || src.scans.Load() != 1 {
		t.Errorf("second Get scanned again (%d scans)", src.scans.Load())
	}
	// After a sync changes the index, the next Get rebuilds in the
	// background and serves the old statistics meanwhile.
	src.chunks = handbookChunks
	stats.Invalidate()
	if c3, _ := stats.Get(ctx); c3.N() != 2 {
		t.Errorf("Get during the rebuild = N %d, want the previous statistics", c3.N())
	}
	for i := 0; i < 1000; i++ {
		if c4, _ := stats.Get(ctx); c4.N() == len(handbookChunks) {
			return
		}
		waitABit()
	}
	t.Errorf("statistics were not rebuilt after Invalidate")
}

func TestCorpusStatsFirstBuildError(t *testing.T) {
	stats := NewCorpusStats(&scanner{err: errors.New("disk gone")})
	if _, err := stats.Get(context.Background()); err == nil || !strings.HasPrefix(err.Error(), "answer: corpus statistics:") {
		t.Errorf("Get error = %v", err)
	}
	var none *CorpusStats
	if c, err := none.Get(context.Background()); c != nil || err != nil {
		t.Errorf("nil stats Get = %v, %v", c, err)
	}
	none.Invalidate() // no panic
}

func TestStandaloneRewrite(t *testing.T) {
	r := Standalone{Corpus: FixedCorpus(NewCorpus(handbookChunks))}
	tests := []struct {
		name     string
		question string
		history  []docent.Exchange
		query    string
		parts    []string
		asks     []string
	}{
		{name: "words respelled as the docs write them",
			question: "whats the wifi password? is PTO paid",
			query:    "whats the wi-fi password? is paid time off paid",
			parts:    []string{"whats the wi-fi password", "is paid time off paid"},
			asks:     []string{"whats the wi-fi password", "is paid time off paid"}},
		{name: "single ask",
			question: "how many vacation days do we get per year",
			query:    "how many vacation days do we get per year"},
		{name: "two asks after a comma, the second refers back",
			question: "how many vacation days do we get, and who approves them?",
			query:    "how many vacation days do we get, and who approves them?",
			parts:    []string{"how many vacation days do we get", "who approves them vacation days"},
			asks:     []string{"how many vacation days do we get", "who approves them"}},
		{name: "leading context goes with every ask",
			question: "lost my phone - how do i get back into okta and do i have to report it?",
			query:    "lost my phone - how do i get back into okta and do i have to report it?",
			parts:    []string{"lost my phone how do i get back into okta", "lost my phone do i have to report it back okta"},
			asks:     []string{"how do i get back into okta", "do i have to report it"}},
		{name: "alternatives and quotes are not split",
			question: `can i book through expedia, or do we use navan? error "quota, exceeded" - what now`,
			query:    `can i book through expedia, or do we use navan? error "quota, exceeded" - what now`},
		{name: "follow-up folded into the previous question",
			question: "and for contractors?",
			history:  []docent.Exchange{{Question: "how many vacation days do we get", Answer: "25 [1]."}},
			query:    "how many vacation days do we get and for contractors?"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rw, err := r.Rewrite(context.Background(), RewriteRequest{Question: tt.question, History: tt.history})
			if err != nil {
				t.Fatal(err)
			}
			if rw.Query != tt.query {
				t.Errorf("Query = %q, want %q", rw.Query, tt.query)
			}
			if strings.Join(rw.SubQueries, "|") != strings.Join(tt.parts, "|") {
				t.Errorf("SubQueries = %q, want %q", rw.SubQueries, tt.parts)
			}
			if strings.Join(rw.Asks, "|") != strings.Join(tt.asks, "|") {
				t.Errorf("Asks = %q, want %q", rw.Asks, tt.asks)
			}
		})
	}
}

func TestQuestionWords(t *testing.T) {
	words, salient, named, share := questionWords("Is the on-call stipend paid in the UK? And in Germany, for GK-410 in france")
	for term, want := range map[string]bool{"uk": true, "germani": true, "gk": true, "410": true, "stipend": false, "franc": false} {
		if salient[term] != want {
			t.Errorf("salient[%q] = %v, want %v", term, salient[term], want)
		}
	}
	for term, want := range map[string]bool{"uk": true, "franc": true, "germani": true, "stipend": false} {
		if named[term] != want {
			t.Errorf("named[%q] = %v, want %v", term, named[term], want)
		}
	}
	if words["uk"] != "UK" || words["franc"] != "france" || share["gk"] != 2 || share["stipend"] != 1 {
		t.Errorf("words %v share %v", words, share)
	}
	// A question's own first word is not a name.
	if _, sal, _, _ := questionWords("Vacation days in Spain?"); sal["vacat"] || !sal["spain"] {
		t.Errorf("salient = %v", sal)
	}
}

func TestExpectedType(t *testing.T) {
	tests := map[string]answerType{
		"How do I install the VPN?":                  procedureType,
		"when is the postmortem due":                 timeType,
		"when should I escalate?":                    conditionType,
		"how long does a Gatekeeper request take":    amountType,
		"what's the hotel cap in Boston":             amountType,
		"who approves my trip":                       whoType,
		"where is customer data stored":              whereType,
		"can I expense alcohol":                      anyType,
		"do we have EU hosting, and when is it live": timeType,
	}
	for q, want := range tests {
		if got := expectedType(q); got != want {
			t.Errorf("expectedType(%q) = %d, want %d", q, got, want)
		}
	}
}

// waitABit yields to the background rebuild.
func waitABit() { time.Sleep(time.Millisecond) }

func TestRespellLexicon(t *testing.T) {
	c := NewCorpus([]docent.Chunk{
		{ID: "m", DocID: "it/mfa.md", Title: "MFA", Text: "MFA\n\nUse Okta Verify for MFA. SMS is for recovery only."},
		{ID: "a", DocID: "product/faq.md", Title: "FAQ", Text: "FAQ\n\nWe commit to 99.9% availability. Coverage starts on your first day."},
		{ID: "l", DocID: "it/laptop.md", Title: "Laptop", Text: "Laptop\n\nA new laptop every three years."},
	})
	tests := []struct{ in, want string }{
		{"can i use sms for 2fa", "can i use sms for mfa"},       // an abbreviation the docs spell otherwise
		{"what's our uptime sla", "what's our availability sla"}, // a synonym the docs use
		{"when does it kick in", "when does it start"},           // a phrase
		{"is mfa required", "is mfa required"},                   // the docs' own word stays
		{"can i get a new macbook", "can i get a new laptop"},    // the kind of thing
		{"what about downtime", "what about downtime"},           // no meaning the docs hold
	}
	for _, tt := range tests {
		if got := respell(tt.in, c); got != tt.want {
			t.Errorf("respell(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestRespellAddsMeaning(t *testing.T) {
	c := NewCorpus([]docent.Chunk{
		{ID: "p", DocID: "people/pto.md", Title: "PTO", Text: "PTO\n\nIn the United States you get 20 days; 1.67 days a month in the US. Bereavement leave is 5 days for family."},
		{ID: "s", DocID: "security/phishing.md", Title: "Phishing", Text: "Phishing\n\nReport phishing in the tool."},
	})
	tests := []struct{ in, want string }{
		{"how many days in the US", "how many days in the US United States"}, // kept, meaning added
		{"how many days do we get", "how many days do we get"},               // "us" the pronoun is no country
		{"my grandmother passed away", "my family passed away bereavement"},  // kind of person, and the phrase's meaning
		{"i got a weird email", "i got a weird email phishing"},              // a suspicious message
		{"wat label", "wat label"},                                           // a filler spells nothing
	}
	for _, tt := range tests {
		if got := respell(tt.in, c); got != tt.want {
			t.Errorf("respell(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
