package offline_test

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/answer"
	"github.com/docent-hq/docent/answer/offline"
	"github.com/docent-hq/docent/search"
)

// The pipeline tests run the whole offline answerer (answer.New over
// offline.NewStages) on a made-up makerspace wiki with a retriever that
// ranks chunks by the question words they hold, and a decision rule
// written for the tests: answered, uncertain and not found are decided
// by it, not by offline.DefaultDecision (whose fitted values move when
// the rule is re-fitted).

func chunk(id, doc, title, section, updated string, ord int, body string) docent.Chunk {
	t, err := time.Parse("2006-01-02", updated)
	if err != nil {
		panic(err)
	}
	return docent.Chunk{ID: id, DocID: doc, Ord: ord, Source: "wiki", Title: title, Section: []string{section},
		URL: "https://wiki.makers.example/" + doc, UpdatedAt: t, Text: title + " > " + section + "\n\n" + body}
}

var makerWiki = []docent.Chunk{
	chunk("locker", "space/lockers.md", "Lockers", "Renting a locker", "2024-11-20", 0,
		"Lockers are on the second floor next to the wood shop. A locker costs $10 per month."),
	chunk("locker-keys", "space/lockers.md", "Lockers", "Keys", "2024-11-20", 1,
		"Lost locker keys are replaced at the front desk for $15."),
	chunk("laser", "shop/laser.md", "Laser cutter", "Booking the laser", "2025-06-10", 0,
		"Book the laser cutter in Skedda up to 7 days ahead. A session lasts at most 2 hours."),
	chunk("induction", "shop/inductions.md", "Safety inductions", "Who runs them", "2025-03-02", 0,
		"Inductions take place every Tuesday at 6pm in the wood shop. Priya Natarajan, the shop steward, runs every induction."),
	chunk("dues", "members/dues.md", "Membership dues", "Monthly rates", "2025-09-01", 0,
		"| Plan | Monthly dues |\n|---|---|\n| Hobbyist | $45 |\n| Studio | $90 |\n"),
	chunk("dues-2022", "members/dues-2022.md", "Membership dues (2022)", "Monthly rates", "2022-02-01", 0,
		"| Plan | Monthly dues |\n|---|---|\n| Hobbyist | $35 |\n| Studio | $80 |\n"),
	chunk("guests", "members/guests.md", "Guest policy", "Bringing a guest", "2025-01-15", 0,
		"Members may bring one guest per visit. Sign your guest in on the front desk tablet."),
	chunk("paint", "space/paint.md", "Paint booth", "Before you spray", "2024-01-01", 0,
		"The paint booth needs a respirator. Open the vents first."),
	chunk("kiln", "shop/kiln.md", "Ceramics kiln", "Firing", "2024-01-01", 0,
		"Firing schedules are posted on the kiln room door."),
	chunk("wood", "shop/wood.md", "Wood shop", "Table saw", "2024-01-01", 0,
		"The table saw needs a second induction. Push sticks hang on the wall."),
	chunk("board", "members/board.md", "The board", "Meetings", "2024-01-01", 0,
		"The board meets monthly and publishes minutes."),
}

// wordRetriever ranks the chunks holding any word of the query by how
// many they hold: a keyword ranking, with fused and vector scores that
// follow it.
type wordRetriever struct {
	chunks []docent.Chunk
	mu     sync.Mutex
	asked  []string
}

func (r *wordRetriever) Retrieve(_ context.Context, req search.Request) (search.Result, error) {
	r.mu.Lock()
	r.asked = append(r.asked, req.Text)
	r.mu.Unlock()
	q := map[string]bool{}
	for _, t := range search.Analyze(req.Text) {
		q[t] = true
	}
	type scored struct {
		c docent.Chunk
		n int
	}
	var found []scored
	for _, c := range r.chunks {
		n := 0
		seen := map[string]bool{}
		for _, t := range search.Analyze(c.Text) {
			if q[t] && !seen[t] {
				seen[t] = true
				n++
			}
		}
		if n > 0 {
			found = append(found, scored{c, n})
		}
	}
	slices.SortStableFunc(found, func(a, b scored) int { return b.n - a.n })
	var res search.Result
	for i, f := range found {
		if req.K > 0 && i == req.K {
			break
		}
		share := float64(f.n) / float64(max(1, len(q)))
		res.Hits = append(res.Hits, docent.Hit{Chunk: f.c, Score: share, KeywordRank: i + 1, KeywordScore: float64(f.n),
			VectorRank: i + 1, VectorScore: 0.3 + 0.5*share})
	}
	return res, nil
}

// testRule is the decision rule of these tests: an answer needs a
// passage that covers the question and holds the kind of answer asked
// for; a missing detail weighs heavily against it. (A Logistic rule
// weighs the passage's probability on the log-odds scale, in [-1, 1].)
var testRule = answer.Logistic{
	Bias:       -3,
	Weights:    map[string]float64{"coverage": 5, "kind": 1.5, "passage": 2, "missing": -8},
	AnswerAt:   0.5,
	NotFoundAt: 0.15,
}

// testPassage is the passage model of these tests (see coverModel in
// the package's own tests).
var testPassage = offline.PassageModel{Bias: -3, Weights: map[string]float64{"cover": 4, "own": 1, "kind": 1, "lacks": -1, "pairs": 0.5}}

// recordingGate hands the offline gate's evidence back to the test.
type recordingGate struct {
	inner answer.Gate
	mu    sync.Mutex
	ev    answer.Evidence
}

func (g *recordingGate) Gate(ctx context.Context, req answer.GateRequest) (answer.Evidence, error) {
	ev, err := g.inner.Gate(ctx, req)
	g.mu.Lock()
	g.ev = ev
	g.mu.Unlock()
	return ev, err
}

func (g *recordingGate) last() answer.Evidence {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.ev
}

func newPipeline(t *testing.T) (*answer.Pipeline, *recordingGate) {
	t.Helper()
	st := offline.NewStages(&wordRetriever{chunks: makerWiki}, offline.Options{
		Corpus:   offline.FixedCorpus(offline.NewCorpus(makerWiki)),
		Decision: testRule,
		Passage:  testPassage,
	})
	rg := &recordingGate{inner: st.Gate}
	st.Gate = rg
	p, err := answer.New(st, nil, answer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return p, rg
}

func ask(t *testing.T, p *answer.Pipeline, q string) docent.Answer {
	t.Helper()
	a, err := p.Answer(context.Background(), docent.Question{Text: q})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// markersRE finds the answer's citation markers.
var markersRE = regexp.MustCompile(`\[(\d+)\]`)

// markers returns the numbers of text's markers in order of first use.
func markers(text string) []int {
	var out []int
	for _, m := range markersRE.FindAllStringSubmatch(text, -1) {
		n, _ := strconv.Atoi(m[1])
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

func TestPipelineAnswered(t *testing.T) {
	p, rg := newPipeline(t)
	a := ask(t, p, "where are the lockers and who runs the inductions")
	if a.Status != docent.StatusAnswered {
		t.Fatalf("status %s: %q (%s)", a.Status, a.Text, a.Trace.Decision.Reason)
	}
	assertContains(t, a.Text, "Lockers are on the second floor next to the wood shop [1].",
		"Priya Natarajan, the shop steward, runs every induction [2].")
	// The lockers chunk was the gate's source 2; cited first, it is [1].
	ev := rg.last()
	n := map[string]int{}
	for _, s := range ev.Sources {
		n[s.Hit.Chunk.ID] = s.N
	}
	if n["locker"] != 2 || n["induction"] != 1 {
		t.Fatalf("gate sources %v, want the inductions first: the test checks renumbering", n)
	}
	if got := markers(a.Text); !slices.Equal(got, []int{1, 2}) {
		t.Errorf("markers %v, want 1 and 2 in order of use", got)
	}
	if len(a.Citations) != 2 || a.Citations[0].ChunkID != "locker" || a.Citations[1].ChunkID != "induction" ||
		a.Citations[0].N != 1 || a.Citations[1].N != 2 {
		t.Errorf("citations %+v, want the lockers as 1 and the inductions as 2", a.Citations)
	}
	if !slices.Equal(a.Trace.Used, []string{"locker", "induction"}) {
		t.Errorf("used %v", a.Trace.Used)
	}
	if a.Trace.Decision == nil || a.Trace.Decision.Rule != "logistic" || a.Trace.Decision.NotAsked != "" {
		t.Errorf("decision %+v", a.Trace.Decision)
	}
}

func TestPipelineUncertain(t *testing.T) {
	p, rg := newPipeline(t)
	a := ask(t, p, "can a guest use the laser cutter or a locker")
	if a.Status != docent.StatusUncertain {
		t.Fatalf("status %s: %q (%s)", a.Status, a.Text, a.Trace.Decision.Reason)
	}
	if len(a.Citations) != answer.MaxPages {
		t.Fatalf("%d pages linked, want %d", len(a.Citations), answer.MaxPages)
	}
	docs := map[string]bool{}
	for i, c := range a.Citations {
		if docs[c.DocID] || c.N != i+1 {
			t.Errorf("citation %+v: pages must be distinct and numbered in order", c)
		}
		docs[c.DocID] = true
	}
	ev := rg.last()
	for i, pg := range ev.Pages {
		if pg.Passage == "" {
			t.Errorf("page %d has no passage", i+1)
		}
		want := fmt.Sprintf("[%d] %s › %s: \"%s\"", i+1, pg.Hit.Chunk.Title, pg.Hit.Chunk.Section[0], strings.TrimSuffix(pg.Passage, "."))
		if !strings.Contains(a.Text, want) {
			t.Errorf("reply %q lacks %q", a.Text, want)
		}
	}
	if !strings.HasPrefix(a.Text, strings.TrimSuffix(answer.UncertainLead, ".")) || !strings.HasSuffix(a.Text, answer.HandoffOffer) {
		t.Errorf("reply %q", a.Text)
	}
	if a.Trace.Decision.NotAsked == "" {
		t.Error("no reason for not answering in the trace")
	}
}

func TestPipelineNotFound(t *testing.T) {
	p, _ := newPipeline(t)
	for _, q := range []string{"what are the opening hours of the sauna", "zither tuning lessons"} {
		t.Run(q, func(t *testing.T) {
			a := ask(t, p, q)
			if a.Status != docent.StatusNotFound || a.Text != answer.NotFoundText || len(a.Citations) != 0 || len(a.Trace.Used) != 0 {
				t.Errorf("status %s %q citations %v", a.Status, a.Text, a.Citations)
			}
		})
	}
}

func TestPipelineConflict(t *testing.T) {
	p, _ := newPipeline(t)
	a := ask(t, p, "how much are the studio dues")
	if a.Status != docent.StatusAnswered {
		t.Fatalf("status %s: %q", a.Status, a.Text)
	}
	want := `Note: these sources differ; the most recent (Membership dues, updated 2025-09-01) says "Studio: $90" [1]; ` +
		`an older version (Membership dues (2022), updated 2022-02-01) says "Studio: $80" [2].`
	if a.Text != want {
		t.Errorf("answer\n%q\nwant\n%q", a.Text, want)
	}
	if len(a.Citations) != 2 || a.Citations[0].ChunkID != "dues" || a.Citations[1].ChunkID != "dues-2022" {
		t.Errorf("citations %+v, want the newer first", a.Citations)
	}
	if !strings.Contains(a.Trace.Conflict, "newer members/dues.md") {
		t.Errorf("trace conflict %q", a.Trace.Conflict)
	}
}

func TestPipelineMultiPart(t *testing.T) {
	p, _ := newPipeline(t)
	a := ask(t, p, "how much does a locker cost, and is there a Sauna?")
	if a.Status != docent.StatusAnswered || len(a.Trace.SubQueries) != 2 {
		t.Fatalf("status %s parts %q: %q", a.Status, a.Trace.SubQueries, a.Text)
	}
	assertContains(t, a.Text, "A locker costs $10 per month [1].", `I couldn't find "is there a Sauna" in the docs.`)
	if len(a.Citations) != 1 || a.Citations[0].ChunkID != "locker" {
		t.Errorf("citations %+v", a.Citations)
	}
}

func TestPipelineOpensWithTheDecidedPassage(t *testing.T) {
	p, rg := newPipeline(t)
	for _, q := range []string{"where are the lockers", "who runs the safety inductions", "can guests book the laser cutter and a locker"} {
		t.Run(q, func(t *testing.T) {
			a := ask(t, p, q)
			ev := rg.last()
			if a.Status != docent.StatusAnswered || ev.Basis == nil || len(ev.Pages) == 0 {
				t.Fatalf("status %s basis %v: %q", a.Status, ev.Basis, a.Text)
			}
			if lead := strings.TrimSuffix(ev.Pages[0].Passage, "."); !strings.HasPrefix(a.Text, lead+" [1]") {
				t.Errorf("answer %q does not open with the decided passage %q", a.Text, lead)
			}
			if a.Citations[0].ChunkID != ev.Sources[0].Hit.Chunk.ID {
				t.Errorf("first citation %s, the passage's chunk %s", a.Citations[0].ChunkID, ev.Sources[0].Hit.Chunk.ID)
			}
		})
	}
}

func TestPipelineFollowUp(t *testing.T) {
	p, _ := newPipeline(t)
	a, err := p.Answer(context.Background(), docent.Question{Text: "and the hobbyist plan?",
		History: []docent.Exchange{{Question: "what are the monthly dues of the Studio plan", Answer: "Studio: $90 [1]."}}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(a.Trace.Query, "Studio plan") || !strings.Contains(a.Text, "Hobbyist") {
		t.Errorf("query %q answer %q", a.Trace.Query, a.Text)
	}
}

func TestNewStages(t *testing.T) {
	r := &wordRetriever{chunks: makerWiki}
	st := offline.NewStages(r, offline.Options{Decision: testRule})
	if rule, ok := st.Rule.(answer.Logistic); !ok || rule.Bias != testRule.Bias || rule.AnswerAt != testRule.AnswerAt {
		t.Errorf("rule %+v, want the one given", st.Rule)
	}
	st = offline.NewStages(r, offline.Options{})
	if rule, ok := st.Rule.(answer.Logistic); !ok || rule.Bias != offline.DefaultDecision.Bias {
		t.Errorf("rule %+v, want DefaultDecision", st.Rule)
	}
	if _, ok := st.Rewriter.(offline.Standalone); !ok {
		t.Errorf("rewriter %T", st.Rewriter)
	}
	if _, ok := st.Reranker.(offline.PageOrder); !ok {
		t.Errorf("reranker %T", st.Reranker)
	}
	if _, ok := st.Gate.(*offline.Gate); !ok {
		t.Errorf("gate %T", st.Gate)
	}
	if _, ok := st.Generator.(*offline.Extractive); !ok {
		t.Errorf("generator %T", st.Generator)
	}
	if st.Retriever != r {
		t.Error("retriever not the one given")
	}
}

func assertContains(t *testing.T, text string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("answer %q lacks %q", text, w)
		}
	}
}
