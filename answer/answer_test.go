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
// a quoting fake), a fake gate whose evidence is every hit, and rule
// (nil answers everything).
func pipeline(t *testing.T, s Retriever, gen Generator, log *slog.Logger, rule Rule, opts Options) *Pipeline {
	t.Helper()
	if gen == nil {
		gen = quoteFirst{}
	}
	if rule == nil {
		rule = Always{}
	}
	p, err := New(Stages{Retriever: s, Generator: gen, Gate: fakeGate{}, Rule: rule}, log, opts)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// fakeGate measures nothing: its evidence is every hit as a source (at
// most 4), the distinct pages in rank order, and the features set on the
// request's first hit's Relevance as Coverage.
type fakeGate struct{}

func (fakeGate) Gate(_ context.Context, req GateRequest) (Evidence, error) {
	var ev Evidence
	seen := map[string]bool{}
	for i, h := range req.Hits {
		if i < 4 {
			ev.Sources = append(ev.Sources, Source{N: i + 1, Hit: h})
		}
		if !seen[h.Chunk.DocID] && len(ev.Pages) < MaxPages {
			seen[h.Chunk.DocID] = true
			ev.Pages = append(ev.Pages, Page{Hit: h, Passage: "passage of " + h.Chunk.ID})
		}
	}
	if len(req.Hits) > 0 {
		ev.Features.Coverage = req.Hits[0].VectorScore
		ev.Detail = "fake evidence"
	} else {
		ev.Detail = "no candidates"
	}
	return ev, nil
}

// fixedRule decides one status.
type fixedRule docent.Status

func (r fixedRule) Decide(f Features) Verdict {
	return Verdict{Status: docent.Status(r), Score: f.Coverage, Threshold: 0.5, Reason: "fixed " + string(r)}
}

// quoteFirst quotes the first sentence of the first source.
type quoteFirst struct{}

func (quoteFirst) Generate(_ context.Context, req GenerateRequest) (GenerateResult, error) {
	if len(req.Sources) == 0 {
		return GenerateResult{}, nil
	}
	text := req.Sources[0].Hit.Chunk.Text
	if _, body, ok := strings.Cut(text, "\n\n"); ok {
		text = body
	}
	first, _, _ := strings.Cut(text, ". ")
	return GenerateResult{Text: strings.TrimSuffix(first, ".") + " [1]."}, nil
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

// checkUncertain asserts the shape of an uncertain reply: the closest
// pages cited [1], [2], … with their links, and nothing stated outside
// the template but quoted passages of those pages.
func checkUncertain(t *testing.T, a docent.Answer) {
	t.Helper()
	if len(a.Citations) == 0 || len(a.Citations) > MaxPages {
		t.Fatalf("uncertain reply citations = %+v, want 1 to %d closest pages", a.Citations, MaxPages)
	}
	for i, c := range a.Citations {
		if c.N != i+1 || c.URL == "" {
			t.Errorf("citation %d = %+v, want [%d] with its link", i, c, i+1)
		}
	}
	if !strings.HasPrefix(a.Text, strings.TrimSuffix(UncertainLead, ".")) || !strings.HasSuffix(a.Text, HandoffOffer) {
		t.Errorf("uncertain reply %q does not open with %q and close with %q", a.Text, UncertainLead, HandoffOffer)
	}
	outside := regexp.MustCompile(`"[^"]*"`).ReplaceAllString(a.Text, `"…"`)
	if strings.Count(outside, ". ") > 3 {
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

func TestAnswerEmptyQuestion(t *testing.T) {
	for _, q := range []string{"", "   ", "\n\t "} {
		t.Run(strconv.Quote(q), func(t *testing.T) {
			s := &fakeSearcher{hits: []docent.Hit{hit(chPTO, 1, 1, 1, 0.9)}}
			p := pipeline(t, s, nil, nil, nil, Options{})
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
	p := pipeline(t, s, nil, nil, fixedRule(docent.StatusAnswered), Options{Candidates: 7, Now: tickClock()})
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
	if tr.Threshold != 0.5 || tr.TopScore != 0.71 {
		t.Errorf("Trace threshold %v, top score %v; want the rule's 0.5 and 0.71", tr.Threshold, tr.TopScore)
	}
	d := tr.Decision
	if d == nil || d.Rule != "answer.fixedRule" || d.Reason != "fixed answered" || d.Features["coverage"] != 0.71 ||
		strings.Join(d.Sources, ",") != "c-pto,c-sick,c-wifi" || d.ModelAsked {
		t.Errorf("Trace.Decision = %+v, want the rule, its reason, the features, the sources given and no model", d)
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
	for _, st := range tr.Stages {
		if st.Name == StageGate && st.Detail != "fake evidence; fixed answered" {
			t.Errorf("gate detail = %q, want the evidence's detail and the rule's reason", st.Detail)
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
		p := pipeline(t, &fakeSearcher{hits: hits}, nil, log, fixedRule(docent.StatusNotFound), Options{})
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
	p := pipeline(t, &fakeSearcher{}, nil, nil, fixedRule(docent.StatusNotFound), Options{Now: tickClock()})
	a, err := p.Answer(context.Background(), docent.Question{Text: "Where is the moon base?"})
	if err != nil {
		t.Fatal(err)
	}
	ms := time.Millisecond
	want := []docent.Stage{
		{Name: "rewrite", Duration: ms, Detail: "query unchanged"},
		{Name: "retrieve", Duration: ms, Detail: "0 candidates (default)"},
		{Name: "rerank", Duration: ms, Detail: "0 kept"},
		{Name: "gate", Duration: ms, Detail: "no candidates; fixed not_found"},
		{Name: "generate", Detail: "skipped"},
		{Name: "verify", Detail: "skipped"},
	}
	if !slices.Equal(a.Trace.Stages, want) {
		t.Errorf("stages = %+v\nwant %+v", a.Trace.Stages, want)
	}
}

func TestAnswerPassesModeToRetriever(t *testing.T) {
	s := &fakeSearcher{hits: []docent.Hit{hit(chPTO, 1, 1, 0, 0)}}
	p := pipeline(t, s, nil, nil, nil, Options{Mode: search.ModeKeyword})
	a, err := p.Answer(context.Background(), docent.Question{Text: "How many vacation days per year?"})
	if err != nil {
		t.Fatal(err)
	}
	if s.last.Vector != nil || s.last.Mode != search.ModeKeyword {
		t.Errorf("query = %+v, want keyword mode without vector", s.last)
	}
	if a.Status != docent.StatusAnswered {
		t.Errorf("Status = %s (top %v)", a.Status, a.Trace.TopScore)
	}
}

// stageFuncs implement stage contracts with functions, for tests.
type stageFuncs struct {
	rewrite func(RewriteRequest) (Rewrite, error)
	rerank  func(RerankRequest) (Reranked, error)
	gate    func(GateRequest) (Evidence, error)
	verify  func(VerifyRequest) (Verified, error)
}

func (f stageFuncs) Rewrite(_ context.Context, r RewriteRequest) (Rewrite, error) {
	return f.rewrite(r)
}
func (f stageFuncs) Rerank(_ context.Context, r RerankRequest) (Reranked, error) { return f.rerank(r) }
func (f stageFuncs) Gate(_ context.Context, r GateRequest) (Evidence, error)     { return f.gate(r) }
func (f stageFuncs) Verify(_ context.Context, r VerifyRequest) (Verified, error) { return f.verify(r) }

func TestAnswerErrors(t *testing.T) {
	boom := errors.New("boom")
	good := []docent.Hit{hit(chPTO, 1, 1, 1, 0.8)}
	fails := stageFuncs{
		rewrite: func(RewriteRequest) (Rewrite, error) { return Rewrite{}, boom },
		rerank:  func(RerankRequest) (Reranked, error) { return Reranked{}, boom },
		gate:    func(GateRequest) (Evidence, error) { return Evidence{}, boom },
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
	// The stages a test does not set work.
	complete := func(st Stages) Stages {
		if st.Gate == nil {
			st.Gate = fakeGate{}
		}
		if st.Rule == nil {
			st.Rule = Always{}
		}
		if st.Generator == nil {
			st.Generator = quoteFirst{}
		}
		return st
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := New(complete(tt.stages), nil, Options{Now: tickClock()})
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
	for _, st := range []Stages{
		{},
		{Retriever: &fakeSearcher{}, Rule: Always{}, Generator: quoteFirst{}},
		{Retriever: &fakeSearcher{}, Gate: fakeGate{}, Generator: quoteFirst{}},
		{Retriever: &fakeSearcher{}, Gate: fakeGate{}, Rule: Always{}},
	} {
		if _, err := New(st, nil, Options{}); err == nil {
			t.Errorf("New(%+v) without a required stage succeeded", st)
		}
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
			p := pipeline(t, &fakeSearcher{hits: hits}, gen, nil, nil, Options{})
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

func TestFormat(t *testing.T) {
	answered := func() docent.Answer {
		return docent.Answer{
			Status: docent.StatusAnswered,
			Text: "Note: these sources differ; the most recent (Expense policy, updated 2026-03-01) says \"Hotel stays are " +
				"reimbursed up to $250 per night\" [1]; an older version (Expense policy (2021), updated 2021-06-01) says " +
				"\"Hotel stays are reimbursed up to $180 per night\" [2].",
			Citations: []docent.Citation{citation(1, chHotelNew), citation(2, chHotelOld)},
		}
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

// TestInputsKeepTheMarginOfSureProbabilities: a Logistic rule weighs the
// passage and runner-up probabilities as clipped log-odds, so that two
// passages the passage model is sure of to different degrees still
// differ, none and certain are the ends, and the other features pass
// through as they are.
func TestInputsKeepTheMarginOfSureProbabilities(t *testing.T) {
	sure := Features{Passage: 0.999, Coverage: 0.5}.Inputs()
	surer := Features{Passage: 0.99999, Coverage: 0.5}.Inputs()
	if !(surer[0] > sure[0]+0.3) {
		t.Errorf("inputs %.3f and %.3f for 0.999 and 0.99999: want the margin kept", sure[0], surer[0])
	}
	if half := (Features{Passage: 0.5}).Inputs(); half[0] != 0 {
		t.Errorf("even odds give %v, want 0", half[0])
	}
	ends := Features{Passage: 1, Runner: 0}.Inputs()
	if ends[0] != 1 || ends[1] != -1 {
		t.Errorf("certain and none give %v and %v, want 1 and -1", ends[0], ends[1])
	}
	if sure[2] != 0.5 {
		t.Errorf("coverage input %v, want 0.5 as measured", sure[2])
	}
	round := FeaturesFromMap(Features{Passage: 0.99999}.Map())
	if round.Passage != 0.99999 {
		t.Errorf("the trace keeps passage %v, want its six digits", round.Passage)
	}
}
