package answer

import (
	"context"
	"errors"
	"flag"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/search"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata")

// fakeSearcher is a Retriever returning fixed hits; it records the last
// request.
type fakeSearcher struct {
	hits  []docent.Hit
	err   error
	calls int
	last  search.Request
}

func (f *fakeSearcher) Retrieve(_ context.Context, q search.Request) (search.Result, error) {
	f.calls++
	f.last = q
	return search.Result{Hits: slices.Clone(f.hits)}, f.err
}

// pipeline builds a Pipeline over s with the given generator (nil for
// Extractive), gate options and pipeline options.
func pipeline(t *testing.T, s Retriever, gen Generator, log *slog.Logger, g GateOptions, opts Options) *Pipeline {
	t.Helper()
	p, err := New(Stages{Retriever: s, Generator: gen, Gate: NewRelevance(g, log)}, log, opts)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// fakeGenerator returns fixed text and records the request.
type fakeGenerator struct {
	text string
	err  error
	req  GenerateRequest
}

func (f *fakeGenerator) Generate(_ context.Context, req GenerateRequest) (GenerateResult, error) {
	f.req = req
	return GenerateResult{Text: f.text}, f.err
}

// tickClock advances one millisecond on every call.
func tickClock() func() time.Time {
	t := time.Date(2026, 4, 1, 9, 0, 0, 0, time.UTC)
	return func() time.Time {
		t = t.Add(time.Millisecond)
		return t
	}
}

func day(s string) time.Time {
	t, err := time.Parse("2006-01-02", s)
	if err != nil {
		panic(err)
	}
	return t
}

// Chunks of a small handbook, as the chunker would produce them.
var (
	chPTO = docent.Chunk{
		ID: "c-pto", DocID: "people/time-off.md", Title: "Time off", Section: []string{"Vacation"},
		URL: "https://handbook.example/people/time-off#vacation", UpdatedAt: day("2026-01-05"),
		Text: "Time off > Vacation\n\nFull-time employees get 25 vacation days per year. " +
			"Unused days carry over into the next year, up to 5 days. Request leave in Workday at least two weeks ahead.",
	}
	chSick = docent.Chunk{
		ID: "c-sick", DocID: "people/sick-leave.md", Title: "Sick leave", Section: []string{"Paid sick days"},
		URL: "https://handbook.example/people/sick-leave", UpdatedAt: day("2025-11-20"),
		Text: "Sick leave > Paid sick days\n\nYou have 10 paid sick days per year. They do not carry over and are separate from vacation days.",
	}
	chVPN = docent.Chunk{
		ID: "c-vpn", DocID: "it/vpn.md", Title: "Corporate VPN", Section: []string{"Resetting your token"},
		URL: "https://handbook.example/it/vpn#resetting-your-token", UpdatedAt: day("2026-01-20"),
		Text: "Corporate VPN > Resetting your token\n\nKestrelConnect stores a device token after enrollment.\n\n" +
			"1. Quit KestrelConnect completely.\n2. Run the reset command in a terminal:\n\n```bash\nkestrelconnect reset-token\n```\n\n" +
			"Token resets are limited to 3 per day per device.",
	}
	chWifi = docent.Chunk{
		ID: "c-wifi", DocID: "it/guest-wifi.md", Title: "Guest Wi-Fi", Section: []string{"Offices"},
		URL: "https://handbook.example/it/guest-wifi", UpdatedAt: day("2025-09-01"),
		Text: "Guest Wi-Fi > Offices\n\nVisitors to the office use the Kestrel-Guest network. The password rotates every Monday and is posted at reception.",
	}
	chHotelNew = docent.Chunk{
		ID: "c-hotel-new", DocID: "travel/expenses.md", Title: "Expense policy", Section: []string{"Hotels"},
		URL: "https://handbook.example/travel/expenses#hotels", UpdatedAt: day("2026-03-01"),
		Text: "Expense policy > Hotels\n\nHotel stays are reimbursed up to $250 per night. Book through Navan so the receipt is attached.\n\n" +
			"| City | Nightly limit |\n|---|---|\n| New York | $350 |",
	}
	chHotelOld = docent.Chunk{
		ID: "c-hotel-old", DocID: "archive/expenses-2021.md", Title: "Expense policy (2021)", Section: []string{"Hotels"},
		URL: "https://handbook.example/archive/expenses-2021#hotels", UpdatedAt: day("2021-06-01"),
		Text: "Expense policy (2021) > Hotels\n\nHotel stays are reimbursed up to $180 per night. Book through the travel desk.",
	}
	chPwd = docent.Chunk{
		ID: "c-pwd", DocID: "it/password-reset.md", Title: "Password reset", Section: []string{"Self-service"},
		URL: "https://handbook.example/it/password-reset", UpdatedAt: day("2026-02-01"),
		Text: "Password reset > Self-service\n\nReset your password at id.example.com with your phone. It takes two minutes.",
	}
	chHotelSame = docent.Chunk{
		ID: "c-hotel-same", DocID: "archive/expenses-2024.md", Title: "Expense policy (2024)", Section: []string{"Hotels"},
		URL: "https://handbook.example/archive/expenses-2024#hotels", UpdatedAt: day("2024-02-01"),
		Text: "Expense policy (2024) > Hotels\n\nHotel stays are reimbursed up to $250 per night.",
	}
)

// idfOf returns a GateOptions.IDF over fixed weights.
func idfOf(w map[string]float64) func(string) (float64, bool) {
	return func(t string) (float64, bool) {
		v, ok := w[t]
		return v, ok
	}
}

// checkUncertain asserts the shape of an uncertain reply: the closest
// page cited once as [1], and nothing stated outside the template but a
// quoted excerpt of that page.
func checkUncertain(t *testing.T, a docent.Answer) {
	t.Helper()
	if len(a.Citations) != 1 || a.Citations[0].N != 1 || a.Citations[0].URL == "" {
		t.Fatalf("uncertain reply citations = %+v, want the closest page as [1] with its link", a.Citations)
	}
	if !strings.HasPrefix(a.Text, strings.TrimSuffix(UncertainLead, ".")) || !strings.HasSuffix(a.Text, HandoffOffer) {
		t.Errorf("uncertain reply %q does not open with %q and close with %q", a.Text, UncertainLead, HandoffOffer)
	}
	for _, m := range markRE.FindAllString(a.Text, -1) {
		if m != "[1]" {
			t.Errorf("uncertain reply cites %s: %q", m, a.Text)
		}
	}
	// Outside the quoted excerpt the text is the template: no fact.
	outside := regexp.MustCompile(`"[^"]*"`).ReplaceAllString(a.Text, `"…"`)
	if strings.Count(outside, "[1]") != 1 || strings.Count(outside, ". ") > 3 {
		t.Errorf("uncertain reply states more than the template: %q", a.Text)
	}
}

func hit(c docent.Chunk, score float64, kwRank, vecRank int, cos float64) docent.Hit {
	h := docent.Hit{Chunk: c, Score: score, KeywordRank: kwRank, VectorRank: vecRank, VectorScore: cos}
	if kwRank > 0 {
		h.KeywordScore = 10 / float64(kwRank)
	}
	return h
}

var markRE = regexp.MustCompile(`\[(\d+)\]`)

// checkCitations asserts that the markers in the text are exactly 1..len(cites),
// first used in increasing order, and that the citations are numbered 1..n.
func checkCitations(t *testing.T, a docent.Answer) {
	t.Helper()
	next := 1
	used := map[int]bool{}
	for _, m := range markRE.FindAllStringSubmatch(a.Text, -1) {
		n, _ := strconv.Atoi(m[1])
		if n < 1 || n > len(a.Citations) {
			t.Errorf("marker [%d] names no citation (have %d) in %q", n, len(a.Citations), a.Text)
		}
		if !used[n] {
			if n != next {
				t.Errorf("marker [%d] first used before [%d] in %q", n, next, a.Text)
			}
			used[n] = true
			next++
		}
	}
	for i, c := range a.Citations {
		if c.N != i+1 {
			t.Errorf("citation %d has N=%d", i, c.N)
		}
		if !used[c.N] {
			t.Errorf("citation [%d] %s is not used in %q", c.N, c.ChunkID, a.Text)
		}
	}
	if len(a.Trace.Used) != len(a.Citations) {
		t.Errorf("Trace.Used = %v, want one per citation (%d)", a.Trace.Used, len(a.Citations))
	}
	for i, id := range a.Trace.Used {
		if i < len(a.Citations) && a.Citations[i].ChunkID != id {
			t.Errorf("Trace.Used[%d] = %s, citation has %s", i, id, a.Citations[i].ChunkID)
		}
	}
}

func TestAnswer(t *testing.T) {
	tests := []struct {
		name       string
		question   string
		hits       []docent.Hit
		opts       GateOptions
		wantStatus docent.Status
		wantCites  []string // chunk IDs in citation order
		wantText   []string // substrings, in this order
		notText    []string
		conflict   string // substring of Trace.Conflict; "" means none
	}{
		{
			name:     "answered from the best source",
			question: "How many vacation days do I get per year?",
			hits: []docent.Hit{
				hit(chPTO, 1, 1, 1, 0.71),
				hit(chSick, 0.6, 2, 2, 0.52),
				hit(chWifi, 0.1, 0, 3, 0.12),
			},
			wantStatus: docent.StatusAnswered,
			// The sick-leave source was retrieved with a much lower score: its
			// partly matching sentence is not quoted.
			wantCites: []string{"c-pto"},
			wantText:  []string{"Full-time employees get 25 vacation days per year [1]."},
			notText:   []string{"Kestrel-Guest", "Time off > Vacation", "sick days", "[2]"},
		},
		{
			name:     "list item and code block quoted from a step",
			question: "How do I reset my VPN token?",
			hits: []docent.Hit{
				hit(chVPN, 1, 1, 1, 0.66),
				hit(chWifi, 0.2, 0, 2, 0.2),
			},
			wantStatus: docent.StatusAnswered,
			wantCites:  []string{"c-vpn"},
			wantText:   []string{"token", "[1]."},
			notText:    []string{"[2]", "Kestrel-Guest"},
		},
		{
			name:     "not found when the topic word is nowhere",
			question: "Can I bring my dog to the office?",
			hits: []docent.Hit{
				hit(chWifi, 1, 1, 1, 0.31),
				hit(chPTO, 0.4, 0, 2, 0.22),
				hit(chSick, 0.2, 0, 3, 0.18),
			},
			wantStatus: docent.StatusNotFound,
			wantText:   []string{"I couldn't find this in the docs.", "bring in a person"},
		},
		{
			// "forgot" is in no candidate; the unit that covers the rest
			// of the question answers it.
			name:     "paraphrase covered by one unit is answered",
			question: "I forgot my password, how do I reset it?",
			hits: []docent.Hit{
				hit(chPwd, 1, 1, 1, 0.3),
				hit(chWifi, 0.3, 2, 2, 0.2),
			},
			opts:       GateOptions{IDF: idfOf(map[string]float64{"password": 3, "reset": 3, "forgot": 4})},
			wantStatus: docent.StatusAnswered,
			wantCites:  []string{"c-pwd"},
			wantText:   []string{"Reset your password at id.example.com", "[1]."},
			notText:    []string{"Kestrel-Guest"},
		},
		{
			// The page is about the question, but it names no
			// Chromebook: the closest page is linked and no fact asserted.
			name:     "a detail the page lacks makes the answer uncertain",
			question: "How do I reset my password on a Chromebook?",
			hits: []docent.Hit{
				hit(chPwd, 1, 1, 1, 0.6),
				hit(chWifi, 0.3, 2, 2, 0.2),
			},
			opts:       GateOptions{IDF: idfOf(map[string]float64{"password": 3, "reset": 3, "chromebook": 5})},
			wantStatus: docent.StatusUncertain,
			wantCites:  []string{"c-pwd"},
			wantText:   []string{UncertainLead[:len(UncertainLead)-1] + ": they don't mention Chromebook.", "The closest page is [1] Password reset › Self-service", HandoffOffer},
			notText:    []string{"[2]"},
		},
		{
			name:       "not found when nothing is retrieved",
			question:   "What is the parental leave policy?",
			wantStatus: docent.StatusNotFound,
			wantText:   []string{NotFoundText},
		},
		{
			name:       "uncertain under a strict threshold",
			question:   "How many vacation days do I get per year as a trainee?",
			hits:       []docent.Hit{hit(chPTO, 1, 1, 1, 0.71)},
			opts:       GateOptions{MinScore: 0.99, IDF: idfOf(map[string]float64{"vacat": 3, "day": 1, "year": 1, "traine": 1})},
			wantStatus: docent.StatusUncertain,
			wantCites:  []string{"c-pto"},
			wantText:   []string{UncertainLead, "The closest page is [1] Time off › Vacation", HandoffOffer},
		},
		{
			name:     "conflict prefers the newer source",
			question: "What is the hotel limit per night?",
			hits: []docent.Hit{
				hit(chHotelOld, 1, 1, 1, 0.74),
				hit(chHotelNew, 0.9, 2, 2, 0.7),
				hit(chWifi, 0.1, 0, 3, 0.1),
			},
			wantStatus: docent.StatusAnswered,
			wantCites:  []string{"c-hotel-new", "c-hotel-old"},
			wantText: []string{
				"Note: these sources differ; the most recent (Expense policy, updated 2026-03-01) says",
				"$250 per night", "[1]",
				"an older version (Expense policy (2021), updated 2021-06-01) says", "$180 per night", "[2].",
			},
			conflict: "newer travel/expenses.md (updated 2026-03-01) says $250 per night; older archive/expenses-2021.md (updated 2021-06-01) says $180 per night",
		},
		{
			name:     "conflicting near-duplicate brought in beyond MaxSources",
			question: "What is the hotel limit per night?",
			hits: []docent.Hit{
				hit(chHotelNew, 1, 1, 1, 0.74),
				hit(chWifi, 0.5, 2, 2, 0.1),
				hit(chHotelOld, 0.3, 3, 3, 0.7),
			},
			opts:       GateOptions{MaxSources: 1},
			wantStatus: docent.StatusAnswered,
			wantCites:  []string{"c-hotel-new", "c-hotel-old"},
			wantText:   []string{"the most recent (Expense policy, updated 2026-03-01)", "$250", "$180"},
			conflict:   "newer travel/expenses.md",
		},
		{
			name:     "same numbers under similar headings are no conflict",
			question: "What is the hotel limit per night?",
			hits: []docent.Hit{
				hit(chHotelNew, 1, 1, 1, 0.74),
				hit(chHotelSame, 0.9, 2, 2, 0.7),
			},
			wantStatus: docent.StatusAnswered,
			wantCites:  []string{"c-hotel-new"},
			wantText:   []string{"Hotel stays are reimbursed up to $250 per night [1].", "New York: $350 [1]."},
			notText:    []string{"Note:", "$180"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &fakeSearcher{hits: tt.hits}
			p := pipeline(t, s, nil, nil, tt.opts, Options{Now: tickClock()})
			a, err := p.Answer(context.Background(), docent.Question{Text: tt.question})
			if err != nil {
				t.Fatalf("Answer: %v", err)
			}
			if a.Status != tt.wantStatus {
				t.Fatalf("Status = %s, want %s (top %.3f, threshold %.3f, text %q)",
					a.Status, tt.wantStatus, a.Trace.TopScore, a.Trace.Threshold, a.Text)
			}
			var ids []string
			for _, c := range a.Citations {
				ids = append(ids, c.ChunkID)
			}
			if strings.Join(ids, ",") != strings.Join(tt.wantCites, ",") {
				t.Errorf("citations = %v, want %v\ntext: %s", ids, tt.wantCites, a.Text)
			}
			rest := a.Text
			for _, w := range tt.wantText {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Errorf("text lacks %q (in order)\ntext: %s", w, a.Text)
					continue
				}
				rest = rest[i+len(w):]
			}
			for _, w := range tt.notText {
				if strings.Contains(a.Text, w) {
					t.Errorf("text contains %q\ntext: %s", w, a.Text)
				}
			}
			if tt.conflict == "" && a.Trace.Conflict != "" {
				t.Errorf("Trace.Conflict = %q, want none", a.Trace.Conflict)
			}
			if tt.conflict != "" && !strings.Contains(a.Trace.Conflict, tt.conflict) {
				t.Errorf("Trace.Conflict = %q, want it to contain %q", a.Trace.Conflict, tt.conflict)
			}
			switch a.Status {
			case docent.StatusAnswered:
				checkCitations(t, a)
			case docent.StatusUncertain:
				checkUncertain(t, a)
			case docent.StatusNotFound:
				if a.Text != NotFoundText || len(a.Citations) != 0 || len(a.Trace.Used) != 0 {
					t.Errorf("not found answer = %q, %d citations, used %v", a.Text, len(a.Citations), a.Trace.Used)
				}
				if len(tt.hits) > 0 && a.Trace.TopScore >= a.Trace.Threshold {
					t.Errorf("not found with TopScore %.3f at or above Threshold %.3f", a.Trace.TopScore, a.Trace.Threshold)
				}
			}
		})
	}
}

func TestAnswerEmptyQuestion(t *testing.T) {
	for _, q := range []string{"", "   ", "\n\t "} {
		t.Run(strconv.Quote(q), func(t *testing.T) {
			s := &fakeSearcher{hits: []docent.Hit{hit(chPTO, 1, 1, 1, 0.9)}}
			p := pipeline(t, s, nil, nil, GateOptions{}, Options{})
			_, err := p.Answer(context.Background(), docent.Question{Text: q})
			if !errors.Is(err, docent.ErrEmptyQuestion) {
				t.Fatalf("err = %v, want ErrEmptyQuestion", err)
			}
			if !strings.HasPrefix(err.Error(), "answer: ") {
				t.Errorf("err = %q, want the answer: prefix", err)
			}
			if s.calls != 0 {
				t.Errorf("searcher called %d times for an empty question", s.calls)
			}
		})
	}
}

func TestAnswerTrace(t *testing.T) {
	hits := []docent.Hit{
		hit(chPTO, 1, 1, 2, 0.71),
		hit(chSick, 0.62, 0, 1, 0.74),
		hit(chWifi, 0.1, 2, 0, 0),
	}
	s := &fakeSearcher{hits: hits}
	filter := docent.Filter{Sources: []string{"handbook"}}
	p := pipeline(t, s, nil, nil, GateOptions{}, Options{Candidates: 7, Now: tickClock()})
	a, err := p.Answer(context.Background(), docent.Question{Text: "  How many vacation days do I get? ", Filter: filter})
	if err != nil {
		t.Fatal(err)
	}
	// The query sent to the index.
	if s.last.Text != "How many vacation days do I get?" || s.last.K != 7 || s.last.Mode != search.ModeDefault {
		t.Errorf("query = %+v", s.last)
	}
	if s.last.Vector != nil || len(s.last.Filter.Sources) != 1 {
		t.Errorf("query vector %v (the retriever embeds), filter %+v", s.last.Vector, s.last.Filter)
	}
	tr := a.Trace
	if tr.Query != "How many vacation days do I get?" {
		t.Errorf("Trace.Query = %q", tr.Query)
	}
	if tr.Threshold != DefaultMinScore {
		t.Errorf("Trace.Threshold = %v, want %v", tr.Threshold, DefaultMinScore)
	}
	if tr.TopScore <= tr.Threshold || tr.TopScore > 1 {
		t.Errorf("Trace.TopScore = %v", tr.TopScore)
	}
	if len(tr.Candidates) != 3 {
		t.Fatalf("%d candidates, want 3", len(tr.Candidates))
	}
	for i, want := range hits {
		got := tr.Candidates[i]
		if got.Chunk.ID != want.Chunk.ID || got.KeywordRank != want.KeywordRank ||
			got.VectorRank != want.VectorRank || got.Score != want.Score {
			t.Errorf("candidate %d = %s kw %d vec %d score %v, want %s kw %d vec %d score %v", i,
				got.Chunk.ID, got.KeywordRank, got.VectorRank, got.Score,
				want.Chunk.ID, want.KeywordRank, want.VectorRank, want.Score)
		}
	}
	var names []string
	for _, st := range tr.Stages {
		names = append(names, st.Name)
		// The clock ticks 1ms per reading; each stage reads it twice.
		if st.Duration != time.Millisecond {
			t.Errorf("stage %s took %v, want 1ms", st.Name, st.Duration)
		}
	}
	if strings.Join(names, ",") != "rewrite,retrieve,rerank,gate,generate,verify" {
		t.Errorf("stages = %v", names)
	}
	if len(tr.Used) == 0 || tr.Used[0] != "c-pto" {
		t.Errorf("Trace.Used = %v, want c-pto first", tr.Used)
	}
	// Every candidate carries its relevance, the best one the answering
	// chunk's, and the off-topic Wi-Fi chunk scores lowest.
	for _, c := range tr.Candidates {
		if c.Relevance <= 0 || c.Relevance > 1 {
			t.Errorf("candidate %s relevance = %v, want in (0, 1]", c.Chunk.ID, c.Relevance)
		}
	}
	if r := tr.Candidates[2].Relevance; r >= tr.Candidates[0].Relevance || r >= DefaultChunkRelevance {
		t.Errorf("off-topic candidate relevance = %v, want below %v and %v", r, tr.Candidates[0].Relevance, DefaultChunkRelevance)
	}
	for _, st := range tr.Stages {
		if st.Name == StageGate && !strings.HasPrefix(st.Detail, "answer: evidence") {
			t.Errorf("gate detail = %q", st.Detail)
		}
	}
}

func TestAnswerLogsNotFoundAtDebug(t *testing.T) {
	var buf strings.Builder
	hits := []docent.Hit{hit(chWifi, 1, 1, 1, 0.2)}
	for _, tt := range []struct {
		level slog.Level
		want  bool
	}{{slog.LevelInfo, false}, {slog.LevelDebug, true}} {
		buf.Reset()
		log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: tt.level}))
		p := pipeline(t, &fakeSearcher{hits: hits}, nil, log, GateOptions{}, Options{})
		a, err := p.Answer(context.Background(), docent.Question{Text: "Can I bring my dog to work?"})
		if err != nil || a.Status != docent.StatusNotFound {
			t.Fatalf("status %s, err %v; want not found", a.Status, err)
		}
		if got := strings.Contains(buf.String(), `msg="not found"`); got != tt.want {
			t.Errorf("level %v: logged not found = %v, want %v (log %q)", tt.level, got, tt.want, buf.String())
		}
	}
}

func TestAnswerStagesWhenNotFound(t *testing.T) {
	p := pipeline(t, &fakeSearcher{}, nil, nil, GateOptions{}, Options{Now: tickClock()})
	a, err := p.Answer(context.Background(), docent.Question{Text: "Where is the moon base?"})
	if err != nil {
		t.Fatal(err)
	}
	ms := time.Millisecond
	want := []docent.Stage{
		{Name: "rewrite", Duration: ms, Detail: "query unchanged"},
		{Name: "retrieve", Duration: ms, Detail: "0 candidates (default)"},
		{Name: "rerank", Duration: ms, Detail: "0 kept"},
		{Name: "gate", Duration: ms, Detail: "no candidates"},
		{Name: "generate", Detail: "skipped"},
		{Name: "verify", Detail: "skipped"},
	}
	if !slices.Equal(a.Trace.Stages, want) {
		t.Errorf("stages = %+v\nwant %+v", a.Trace.Stages, want)
	}
}

func TestAnswerPassesModeToRetriever(t *testing.T) {
	s := &fakeSearcher{hits: []docent.Hit{hit(chPTO, 1, 1, 0, 0)}}
	p := pipeline(t, s, nil, nil, GateOptions{}, Options{Mode: search.ModeKeyword})
	a, err := p.Answer(context.Background(), docent.Question{Text: "How many vacation days per year?"})
	if err != nil {
		t.Fatal(err)
	}
	if s.last.Vector != nil || s.last.Mode != search.ModeKeyword {
		t.Errorf("query = %+v, want keyword mode without vector", s.last)
	}
	// coverage 1 and BM25 presence reach the threshold without a cosine.
	if a.Status != docent.StatusAnswered {
		t.Errorf("Status = %s (top %v)", a.Status, a.Trace.TopScore)
	}
}

// stageFuncs implement stage contracts with functions, for tests.
type stageFuncs struct {
	rewrite func(RewriteRequest) (Rewrite, error)
	rerank  func(RerankRequest) (Reranked, error)
	gate    func(GateRequest) (Decision, error)
	verify  func(VerifyRequest) (Verified, error)
}

func (f stageFuncs) Rewrite(_ context.Context, r RewriteRequest) (Rewrite, error) {
	return f.rewrite(r)
}
func (f stageFuncs) Rerank(_ context.Context, r RerankRequest) (Reranked, error) { return f.rerank(r) }
func (f stageFuncs) Gate(_ context.Context, r GateRequest) (Decision, error)     { return f.gate(r) }
func (f stageFuncs) Verify(_ context.Context, r VerifyRequest) (Verified, error) { return f.verify(r) }

func TestAnswerErrors(t *testing.T) {
	boom := errors.New("boom")
	good := []docent.Hit{hit(chPTO, 1, 1, 1, 0.8)}
	fails := stageFuncs{
		rewrite: func(RewriteRequest) (Rewrite, error) { return Rewrite{}, boom },
		rerank:  func(RerankRequest) (Reranked, error) { return Reranked{}, boom },
		gate:    func(GateRequest) (Decision, error) { return Decision{}, boom },
		verify:  func(VerifyRequest) (Verified, error) { return Verified{}, boom },
	}
	tests := []struct {
		name   string
		stages Stages
		stage  string
		ran    int // stages with a non-zero duration, the failed one included
	}{
		{"rewrite fails", Stages{Retriever: &fakeSearcher{hits: good}, Rewriter: fails}, "rewrite", 1},
		{"retrieve fails", Stages{Retriever: &fakeSearcher{err: boom}}, "retrieve", 2},
		{"rerank fails", Stages{Retriever: &fakeSearcher{hits: good}, Reranker: fails}, "rerank", 3},
		{"gate fails", Stages{Retriever: &fakeSearcher{hits: good}, Gate: fails}, "gate", 4},
		{"generate fails", Stages{Retriever: &fakeSearcher{hits: good}, Generator: &fakeGenerator{err: boom}}, "generate", 5},
		{"verify fails", Stages{Retriever: &fakeSearcher{hits: good}, Verifier: fails}, "verify", 6},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := New(tt.stages, nil, Options{Now: tickClock()})
			if err != nil {
				t.Fatal(err)
			}
			a, err := p.Answer(context.Background(), docent.Question{Text: "How many vacation days per year?"})
			var se *StageError
			if !errors.Is(err, boom) || !errors.As(err, &se) || se.Stage != tt.stage {
				t.Fatalf("err = %v, want a %s StageError wrapping boom", err, tt.stage)
			}
			if want := "answer: " + tt.stage + ": boom"; err.Error() != want || a.Trace.Error != want {
				t.Errorf("error %q, trace error %q; want %q", err, a.Trace.Error, want)
			}
			if a.Status != docent.StatusError {
				t.Errorf("Status = %s, want error", a.Status)
			}
			ran := 0
			for _, st := range a.Trace.Stages {
				if st.Duration > 0 {
					ran++
				}
				if st.Name == tt.stage && st.Detail != "failed" {
					t.Errorf("failed stage detail = %q", st.Detail)
				}
			}
			if len(a.Trace.Stages) != 6 || ran != tt.ran {
				t.Errorf("stages = %v, want 6 with %d timed", a.Trace.Stages, tt.ran)
			}
		})
	}
	if _, err := New(Stages{}, nil, Options{}); err == nil {
		t.Error("New without a retriever succeeded")
	}
}

func TestAnswerRenumbersGeneratorCitations(t *testing.T) {
	hits := []docent.Hit{
		hit(chPTO, 1, 1, 1, 0.8),
		hit(chSick, 0.8, 2, 2, 0.7),
		hit(chWifi, 0.5, 3, 3, 0.6),
	}
	tests := []struct {
		name      string
		text      string
		wantText  string
		wantCites []string
		status    docent.Status
	}{
		{"renumbered by first use", "Sick days first [2]. Vacation second [1]. Sick again [2].",
			"Sick days first [1]. Vacation second [2]. Sick again [1].", []string{"c-sick", "c-pto"}, docent.StatusAnswered},
		{"markers naming no source dropped", "Vacation [1] [9]. Nothing [0].",
			"Vacation [1]. Nothing.", []string{"c-pto"}, docent.StatusAnswered},
		{"no valid citation is not found", "I think it is 30 days [7].", NotFoundText, nil, docent.StatusNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gen := &fakeGenerator{text: tt.text}
			p := pipeline(t, &fakeSearcher{hits: hits}, gen, nil, GateOptions{}, Options{})
			a, err := p.Answer(context.Background(), docent.Question{Text: "How many vacation and sick days do I get?"})
			if err != nil {
				t.Fatal(err)
			}
			if len(gen.req.Sources) < 2 || gen.req.Sources[0].N != 1 || gen.req.Sources[0].Hit.Chunk.ID != "c-pto" ||
				gen.req.Sources[1].Hit.Chunk.ID != "c-sick" {
				t.Errorf("sources given = %+v", gen.req.Sources)
			}
			if a.Status != tt.status || a.Text != tt.wantText {
				t.Errorf("got %s %q, want %s %q", a.Status, a.Text, tt.status, tt.wantText)
			}
			var ids []string
			for _, c := range a.Citations {
				ids = append(ids, c.ChunkID)
			}
			if strings.Join(ids, ",") != strings.Join(tt.wantCites, ",") {
				t.Errorf("citations = %v, want %v", ids, tt.wantCites)
			}
			if a.Status == docent.StatusAnswered {
				checkCitations(t, a)
			}
		})
	}
}

func TestSourcesClosestPageFirst(t *testing.T) {
	other := chPTO
	other.ID = "c-pto-2"
	other.Ord = 1
	other.Section = []string{"Carry-over"}
	other.Text = "Time off > Carry-over\n\nUnused vacation days carry over into the next year, up to 5 days per year."
	hits := []docent.Hit{
		hit(chWifi, 1, 1, 1, 0.2), // ranked first but irrelevant
		hit(chPTO, 0.9, 2, 2, 0.7),
		hit(other, 0.8, 3, 3, 0.7), // same document as c-pto
		hit(chSick, 0.7, 4, 4, 0.6),
	}
	gen := &fakeGenerator{text: "x [1]."}
	p := pipeline(t, &fakeSearcher{hits: hits}, gen, nil, GateOptions{}, Options{})
	if _, err := p.Answer(context.Background(), docent.Question{Text: "How many vacation days per year?"}); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i, s := range gen.req.Sources {
		ids = append(ids, s.Hit.Chunk.ID)
		if s.N != i+1 {
			t.Errorf("source %d numbered %d", i, s.N)
		}
	}
	// The closest page first (the Wi-Fi page ranked first holds no
	// answer and is left out), a second section of it that answers as
	// well, then the other page whose best unit answers nearly as well.
	if got := strings.Join(ids, ","); got != "c-pto,c-pto-2,c-sick" {
		t.Errorf("sources = %s, want c-pto,c-pto-2,c-sick", got)
	}
}

func TestFormat(t *testing.T) {
	answered := func() docent.Answer {
		p := pipeline(t, &fakeSearcher{hits: []docent.Hit{
			hit(chHotelOld, 1, 1, 1, 0.74),
			hit(chHotelNew, 0.9, 2, 2, 0.7),
		}}, nil, nil, GateOptions{}, Options{})
		a, err := p.Answer(context.Background(), docent.Question{Text: "What is the hotel limit per night?"})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	tests := []struct {
		name   string
		answer docent.Answer
	}{
		{"conflict", answered()},
		{"answered", docent.Answer{
			Status: docent.StatusAnswered,
			Text:   "Full-time employees get 25 vacation days per year [1]. You have 10 paid sick days per year [2].",
			Citations: []docent.Citation{
				citation(1, chPTO),
				citation(2, docent.Chunk{ID: "c-x", DocID: "d", Title: "Sick leave", URL: "https://handbook.example/people/sick-leave"}),
			},
		}},
		{"not_found", docent.Answer{Status: docent.StatusNotFound, Text: NotFoundText}},
		{"not_found_empty_text", docent.Answer{Status: docent.StatusNotFound}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Format(tt.answer)
			path := filepath.Join("testdata", "format_"+tt.name+".golden")
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("Format mismatch\ngot:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}
