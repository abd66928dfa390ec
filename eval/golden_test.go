package eval

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/docent-hq/docent"
)

func TestLoadGolden(t *testing.T) {
	g, err := LoadGolden("testdata/golden.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := []docent.GoldenQuestion{
		{ID: "it-vpn-reset", Question: "How do I reset my VPN token?", Kind: docent.KindParaphrase,
			Expect: []docent.GoldenExpect{{Doc: "it/vpn.md", Section: "Resetting your token"}}, Line: 3},
		{ID: "hr-leave-code", Question: "What is leave code LV-204?", Kind: docent.KindExact,
			Expect: []docent.GoldenExpect{{Doc: "hr/leave.md"}}, Line: 10},
		{ID: "onboarding-laptop-and-vpn", Question: "What do I need on day one: laptop and VPN?", Kind: docent.KindMulti,
			Expect: []docent.GoldenExpect{{Doc: "it/laptop.md"}, {Doc: "it/vpn.md"}}, Line: 16},
		{ID: "cafeteria-menu", Question: "What is on the cafeteria menu tomorrow?", Kind: docent.KindUnanswerable, Line: 23},
	}
	if !reflect.DeepEqual(g.Questions, want) {
		t.Errorf("Questions =\n%+v\nwant\n%+v", g.Questions, want)
	}
	if err := g.Validate(); err != nil {
		t.Errorf("Validate on a loaded set: %v", err)
	}
}

func TestLoadGoldenErrors(t *testing.T) {
	const ok = "  - id: a\n    question: q\n    kind: exact\n    expect:\n      - doc: x.md\n"
	tests := []struct {
		name string
		yaml string
		want []string
	}{
		{name: "unknown top-level key", yaml: "title: t\nquestions:\n" + ok,
			want: []string{"g.yaml:1:1: unknown field \"title\""}},
		{name: "unknown question key", yaml: "questions:\n  - id: a\n    question: q\n    answer: z\n",
			want: []string{"g.yaml:4:5: unknown field \"answer\""}},
		{name: "unknown expect key", yaml: "questions:\n" + ok + "        sectoin: s\n",
			want: []string{"g.yaml:7:9: unknown field \"sectoin\""}},
		{name: "syntax error", yaml: "questions:\n  - id: a\n   question: [\n",
			want: []string{"g.yaml:3:"}},
		{name: "wrong type", yaml: "questions: 5\n", want: []string{"g.yaml:1:12:", "sequence"}},
		{name: "duplicate key", yaml: "questions:\n  - id: a\n    id: b\n", want: []string{"g.yaml:3:5:", "already defined"}},
		{name: "empty file", yaml: "# nothing\n", want: []string{"g.yaml: empty file"}},
		{name: "no questions", yaml: "questions: []\n", want: []string{"g.yaml: no questions"}},
		{name: "two documents", yaml: "questions:\n" + ok + "---\nquestions:\n" + ok, want: []string{"more than one YAML document"}},
		{name: "duplicate id", yaml: "questions:\n" + ok + ok,
			want: []string{"g.yaml:7: question \"a\": duplicate id (first at question 1)"}},
		{name: "missing id", yaml: "questions:\n  - question: q\n    kind: unanswerable\n",
			want: []string{"g.yaml:2: question 1: missing id"}},
		{name: "missing question text", yaml: "questions:\n  - id: a\n    kind: unanswerable\n",
			want: []string{"g.yaml:2: question \"a\": missing question text"}},
		{name: "unknown kind", yaml: "questions:\n  - id: a\n    question: q\n    kind: fuzzy\n    expect:\n      - doc: x\n",
			want: []string{"g.yaml:2: question \"a\": unknown kind \"fuzzy\" (want paraphrase, exact, casual, pasted, multi, unanswerable)"}},
		{name: "missing kind", yaml: "questions:\n  - id: a\n    question: q\n",
			want: []string{"question \"a\": missing kind"}},
		{name: "unanswerable with expect", yaml: "questions:\n  - id: a\n    question: q\n    kind: unanswerable\n    expect:\n      - doc: x\n",
			want: []string{"g.yaml:2: question \"a\": unanswerable question must not list expected documents"}},
		{name: "answerable without expect", yaml: "questions:\n  - id: a\n    question: q\n    kind: paraphrase\n",
			want: []string{"g.yaml:2: question \"a\": paraphrase question must list at least one expected document"}},
		{name: "expect without doc", yaml: "questions:\n  - id: a\n    question: q\n    kind: exact\n    expect:\n      - section: s\n",
			want: []string{"g.yaml:2: question \"a\": expect 1: missing doc"}},
		{name: "all problems reported", yaml: "questions:\n  - id: a\n    kind: fuzzy\n    question: q\n  - id: b\n    kind: multi\n",
			want: []string{"g.yaml:2: question \"a\": unknown kind", "g.yaml:5: question \"b\": missing question text",
				"g.yaml:5: question \"b\": multi question must list"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseGolden("g.yaml", []byte(tt.yaml))
			if err == nil {
				t.Fatal("ParseGolden succeeded, want an error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if !strings.HasPrefix(err.Error(), "eval: golden: ") {
				t.Errorf("error %q lacks the package prefix", err)
			}
		})
	}
	t.Run("missing file", func(t *testing.T) {
		_, err := LoadGolden(filepath.Join(t.TempDir(), "nope.yaml"))
		if !errors.Is(err, os.ErrNotExist) {
			t.Errorf("err = %v, want not exist", err)
		}
	})
	t.Run("validate built in code", func(t *testing.T) {
		g := &Golden{Questions: []docent.GoldenQuestion{{ID: "x", Question: "q", Kind: docent.KindExact}}}
		err := g.Validate()
		if err == nil || !strings.Contains(err.Error(), "golden set: question \"x\": exact question must list") {
			t.Errorf("Validate = %v", err)
		}
	})
}

// fakeAnswerer is a function-field fake of the answer pipeline.
type fakeAnswerer struct {
	AnswerFn func(ctx context.Context, q docent.Question) (docent.Answer, error)
	asked    []docent.Question
}

func (f *fakeAnswerer) Answer(ctx context.Context, q docent.Question) (docent.Answer, error) {
	f.asked = append(f.asked, q)
	return f.AnswerFn(ctx, q)
}

func chunk(docID string, section ...string) docent.Hit {
	return docent.Hit{Chunk: docent.Chunk{ID: docID + "/" + strings.Join(section, "/"), DocID: docID, Section: section}}
}

func cite(docIDs ...string) []docent.Citation {
	var cs []docent.Citation
	for i, id := range docIDs {
		cs = append(cs, docent.Citation{N: i + 1, DocID: id})
	}
	return cs
}

// TestSectionRank: a chunk is in the expected section when its path holds
// the heading, or when the heading is the page's title and the chunk is
// the page's opening one; never on another page.
func TestSectionRank(t *testing.T) {
	expect := []docent.GoldenExpect{{Doc: "ops/ping.md", Section: "Ping"}}
	hit := func(doc, title string, ord int, section ...string) docent.Hit {
		return docent.Hit{Chunk: docent.Chunk{DocID: "src:" + doc, Title: title, Ord: ord, Section: section}}
	}
	for _, tc := range []struct {
		name  string
		cands []docent.Hit
		want  int
	}{
		{"heading in the path", []docent.Hit{hit("a.md", "A", 0), hit("ops/ping.md", "Ops", 3, "Health", "ping")}, 2},
		{"the title's opening chunk", []docent.Hit{hit("ops/ping.md", "Ping", 0, "Configuration")}, 1},
		{"the title's intro", []docent.Hit{hit("ops/ping.md", "Ping", 2)}, 1},
		{"a later chunk of the titled page", []docent.Hit{hit("ops/ping.md", "Ping", 2, "Configuration")}, 0},
		{"the heading on another page", []docent.Hit{hit("other.md", "Ping", 0, "Ping")}, 0},
		{"a small section merged into the chunk", []docent.Hit{{Chunk: docent.Chunk{DocID: "src:ops/ping.md", Title: "Ops",
			Section: []string{"Health", "status"}, Text: "Ops > Health > status\n\n### ping\n\nAnswers 200.\n\n### status\n\nText."}}}, 1},
	} {
		if got := SectionRank(expect, tc.cands); got != tc.want {
			t.Errorf("%s: SectionRank = %d, want %d", tc.name, got, tc.want)
		}
	}
}

func TestRunGolden(t *testing.T) {
	g := &Golden{Questions: []docent.GoldenQuestion{
		{ID: "q1", Question: "reset vpn token", Kind: docent.KindParaphrase,
			Expect: []docent.GoldenExpect{{Doc: "it/vpn.md", Section: "Resetting your token"}}},
		{ID: "q2", Question: "leave code", Kind: docent.KindExact,
			Expect: []docent.GoldenExpect{{Doc: "hr/leave.md", Section: "Leave codes"}}},
		// One expectation names the full DocID: it matches too.
		{ID: "q3", Question: "day one", Kind: docent.KindMulti,
			Expect: []docent.GoldenExpect{{Doc: "it/laptop.md"}, {Doc: "git:it/vpn.md"}}},
		{ID: "q4", Question: "cafeteria", Kind: docent.KindUnanswerable},
		{ID: "q5", Question: "parking", Kind: docent.KindUnanswerable},
		{ID: "q6", Question: "broken", Kind: docent.KindExact, Expect: []docent.GoldenExpect{{Doc: "x.md"}}},
		{ID: "q7", Question: "baby weeks", Kind: docent.KindCasual, Expect: []docent.GoldenExpect{{Doc: "hr/leave.md"}}},
		{ID: "q8", Question: "tokyo per diem", Kind: docent.KindUnanswerable, Covered: "US, UK, Germany"},
		{ID: "q9", Question: "pager pay", Kind: docent.KindPasted, Expect: []docent.GoldenExpect{{Doc: "eng/oncall.md"}},
			Facts: []string{"$500 | 500 dollars", "per week"}},
		{ID: "q10", Question: "meal money", Kind: docent.KindParaphrase, Expect: []docent.GoldenExpect{{Doc: "travel/meals.md"}},
			Facts: []string{"$75 | 75 USD"}},
	}}
	answers := map[string]docent.Answer{
		// Doc ranking [laptop, vpn]: expected vpn at rank 2; its second
		// chunk carries the expected section (matched case-insensitively).
		"reset vpn token": {Status: docent.StatusAnswered,
			Citations: cite("git:it/vpn.md", "git:it/laptop.md"),
			Trace: docent.Trace{Candidates: []docent.Hit{
				chunk("git:it/laptop.md", "Laptop"), chunk("git:it/vpn.md", "VPN"),
				chunk("git:it/vpn.md", "VPN", "resetting your token "),
			}}},
		// Expected doc at document rank 6; a wrong doc in the top 5 has
		// the expected section heading, which must not count.
		"leave code": {Status: docent.StatusNotFound,
			Trace: docent.Trace{Candidates: []docent.Hit{
				chunk("git:hr/holidays.md", "Leave codes"), chunk("git:a.md"), chunk("git:b.md"),
				chunk("git:a.md"), chunk("git:c.md"), chunk("git:d.md"), chunk("git:hr/leave.md", "Leave codes"),
			}}},
		// Doc ranking [laptop, other, vpn]: both expected docs in the top 5.
		"day one": {Status: docent.StatusAnswered,
			Citations: cite("git:it/laptop.md", "git:it/vpn.md", "git:wiki/other.md"),
			Trace: docent.Trace{Candidates: []docent.Hit{
				chunk("git:it/laptop.md"), chunk("git:it/laptop.md"), chunk("git:wiki/other.md"), chunk("git:it/vpn.md"),
			}}},
		"cafeteria": {Status: docent.StatusNotFound},
		"baby weeks": {Status: docent.StatusUncertain, Citations: cite("git:hr/leave.md"),
			Trace: docent.Trace{Candidates: []docent.Hit{chunk("git:hr/leave.md")}}},
		"tokyo per diem": {Status: docent.StatusUncertain, Citations: cite("git:travel/meals.md")},
		"pager pay": {Status: docent.StatusAnswered, Text: "On-call pays 500 dollars [1].", Citations: cite("git:eng/oncall.md"),
			Trace: docent.Trace{Candidates: []docent.Hit{chunk("git:eng/oncall.md")}}},
		"meal money": {Status: docent.StatusAnswered, Text: "The meal per diem is  $75\nin the US [1].", Citations: cite("git:travel/meals.md"),
			Trace: docent.Trace{Candidates: []docent.Hit{chunk("git:travel/meals.md")}}},
		"parking": {Status: docent.StatusAnswered, Citations: cite("git:it/vpn.md")},
	}
	a := &fakeAnswerer{AnswerFn: func(_ context.Context, q docent.Question) (docent.Answer, error) {
		if q.Text == "broken" {
			return docent.Answer{}, errors.New("generator down")
		}
		return answers[q.Text], nil
	}}
	rep, err := RunGolden(context.Background(), g, a)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.asked) != 10 || !reflect.DeepEqual(a.asked[0], docent.Question{Text: "reset vpn token", Platform: "eval"}) {
		t.Errorf("asked %+v", a.asked)
	}

	wantRows := []GoldenRow{
		{ID: "q1", Kind: docent.KindParaphrase, Status: docent.StatusAnswered, FirstRank: 2, Expected: 1, Found5: 1,
			SectionHit: true, SectionRank: 3, Citations: 2, CitationsCorrect: 1, FirstCitedOK: true, FactsOK: true, LinkedOK: true, Pass: true},
		{ID: "q2", Kind: docent.KindExact, Status: docent.StatusNotFound, FirstRank: 6, Expected: 1, FactsOK: true, SectionRank: 7},
		{ID: "q3", Kind: docent.KindMulti, Status: docent.StatusAnswered, FirstRank: 1, Expected: 2, Found5: 2,
			Citations: 3, CitationsCorrect: 2, FirstCitedOK: true, FactsOK: true, LinkedOK: true, Pass: true},
		{ID: "q4", Kind: docent.KindUnanswerable, Status: docent.StatusNotFound, Pass: true},
		{ID: "q5", Kind: docent.KindUnanswerable, Status: docent.StatusAnswered},
		{ID: "q6", Kind: docent.KindExact, Status: docent.StatusError, Expected: 1, FactsOK: true, Error: "generator down"},
		// Uncertain with the right page: linked, not correct.
		{ID: "q7", Kind: docent.KindCasual, Status: docent.StatusUncertain, FirstRank: 1, Expected: 1, Found5: 1,
			Citations: 1, CitationsCorrect: 1, FirstCitedOK: true, FactsOK: true, LinkedOK: true},
		// Uncertain on an unanswerable question: declined.
		{ID: "q8", Kind: docent.KindUnanswerable, Status: docent.StatusUncertain, Pass: true},
		// One fact of two stated: not correct.
		{ID: "q9", Kind: docent.KindPasted, Status: docent.StatusAnswered, FirstRank: 1, Expected: 1, Found5: 1,
			Citations: 1, CitationsCorrect: 1, FirstCitedOK: true, MissingFacts: []string{"per week"}, Facts: 2, LinkedOK: true},
		// A fact found across folded whitespace.
		{ID: "q10", Kind: docent.KindParaphrase, Status: docent.StatusAnswered, FirstRank: 1, Expected: 1, Found5: 1,
			Citations: 1, CitationsCorrect: 1, FirstCitedOK: true, FactsOK: true, Facts: 1, LinkedOK: true, Pass: true},
	}
	if len(rep.Rows) != len(wantRows) {
		t.Fatalf("%d rows, want %d", len(rep.Rows), len(wantRows))
	}
	for i, want := range wantRows {
		got := rep.Rows[i]
		if got.Latency <= 0 {
			t.Errorf("row %s: latency %v", got.ID, got.Latency)
		}
		got.Latency = 0
		if !reflect.DeepEqual(got, want) {
			t.Errorf("row %d =\n%+v\nwant\n%+v", i, got, want)
		}
	}

	// Answerable: q1, q2, q3, q6, q7, q9, q10 (7).
	//   hit@1: q3, q7, q9, q10 -> 4/7; hit@3 and hit@5: + q1 -> 5/7.
	//   MRR@10: (1/2 + 1/6 + 1 + 0 + 1 + 1 + 1) / 7.
	//   doc recall@5: (1 + 0 + 1 + 0 + 1 + 1 + 1) / 7 = 5/7.
	//   section: q1 at chunk rank 3, q2 at 7 (outside the top 5) -> hit@5
	//   1/2, hit@3 1/2, hit@1 0, MRR@10 (1/3 + 1/7)/2 over 2 questions.
	//   answered: q1, q3, q9, q10 -> 4/7; uncertain: q7 -> 1/7; false not-found: q2 -> 1/7.
	//   linked (answered or uncertain, right page first): q1, q3, q7, q9, q10 -> 5/7.
	//   correct: q1, q3, q10 -> 3/7.
	//   citations: q1 1/2, q3 2/3, q7 1/1, q9 1/1, q10 1/1 -> 6/8.
	// Unanswerable: q4 not_found, q5 answered, q8 uncertain -> not-found
	// accuracy 1/3, declined 2/3.
	// Passed: q1, q3, q10, q4, q8 -> 5/10.
	checks := []struct {
		name      string
		got, want float64
	}{
		{"HitAt1", rep.HitAt1, 4.0 / 7}, {"HitAt3", rep.HitAt3, 5.0 / 7}, {"HitAt5", rep.HitAt5, 5.0 / 7},
		{"MRR10", rep.MRR10, (0.5 + 1.0/6 + 4) / 7}, {"DocRecall5", rep.DocRecall5, 5.0 / 7},
		{"SectionHitAt5", rep.SectionHitAt5, 0.5}, {"SectionHitAt1", rep.SectionHitAt1, 0}, {"SectionHitAt3", rep.SectionHitAt3, 0.5},
		{"SectionMRR10", rep.SectionMRR10, (1.0/3 + 1.0/7) / 2}, {"AnsweredRate", rep.AnsweredRate, 4.0 / 7},
		{"UncertainRate", rep.UncertainRate, 1.0 / 7}, {"FalseNotFoundRate", rep.FalseNotFoundRate, 1.0 / 7},
		{"LinkedFirstRate", rep.LinkedFirstRate, 5.0 / 7}, {"CorrectRate", rep.CorrectRate, 3.0 / 7},
		{"CitationPrecision", rep.CitationPrecision, 0.75},
		{"NotFoundAccuracy", rep.NotFoundAccuracy, 1.0 / 3}, {"DeclinedRate", rep.DeclinedRate, 2.0 / 3},
		{"PassRate", rep.PassRate, 0.5},
	}
	for _, c := range checks {
		if !approx(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	counts := []int{rep.Questions, rep.Answerable, rep.Unanswerable, rep.Passed, rep.Errors,
		rep.SectionQuestions, rep.Citations, rep.CitationsCorrect}
	if want := []int{10, 7, 3, 5, 1, 2, 8, 6}; !reflect.DeepEqual(counts, want) {
		t.Errorf("counts (questions, answerable, unanswerable, passed, errors, section qs, citations, correct) = %v, want %v", counts, want)
	}
	if rep.LatencyP50 <= 0 || rep.LatencyP95 < rep.LatencyP50 {
		t.Errorf("latency p50 %v p95 %v", rep.LatencyP50, rep.LatencyP95)
	}

	wantKinds := []KindStats{
		{Kind: docent.KindParaphrase, Questions: 2, Passed: 2, PassRate: 1, HitAt5: 1, MRR10: 0.75, AnsweredRate: 1, CorrectRate: 1},
		// q2 (not_found, MRR 1/6) and q6 (error): MRR (1/6 + 0)/2.
		{Kind: docent.KindExact, Questions: 2, HitAt5: 0, MRR10: 1.0 / 12, NotFoundRate: 0.5},
		{Kind: docent.KindCasual, Questions: 1, HitAt5: 1, MRR10: 1, UncertainRate: 1},
		{Kind: docent.KindPasted, Questions: 1, HitAt5: 1, MRR10: 1, AnsweredRate: 1},
		{Kind: docent.KindMulti, Questions: 1, Passed: 1, PassRate: 1, HitAt5: 1, MRR10: 1, AnsweredRate: 1, CorrectRate: 1},
		{Kind: docent.KindUnanswerable, Questions: 3, Passed: 2, PassRate: 2.0 / 3, AnsweredRate: 1.0 / 3,
			UncertainRate: 1.0 / 3, NotFoundRate: 1.0 / 3},
	}
	if len(rep.ByKind) != len(wantKinds) {
		t.Fatalf("ByKind = %+v", rep.ByKind)
	}
	for i, want := range wantKinds {
		got := rep.ByKind[i]
		if got.Kind != want.Kind || got.Questions != want.Questions || got.Passed != want.Passed ||
			!approx(got.PassRate, want.PassRate) || !approx(got.HitAt5, want.HitAt5) ||
			!approx(got.MRR10, want.MRR10) || !approx(got.AnsweredRate, want.AnsweredRate) ||
			!approx(got.NotFoundRate, want.NotFoundRate) || !approx(got.UncertainRate, want.UncertainRate) ||
			!approx(got.CorrectRate, want.CorrectRate) {
			t.Errorf("ByKind[%d] = %+v, want %+v", i, got, want)
		}
	}
}

func TestRunGoldenCancelled(t *testing.T) {
	g := &Golden{Questions: []docent.GoldenQuestion{
		{ID: "a", Question: "one", Kind: docent.KindUnanswerable},
		{ID: "b", Question: "two", Kind: docent.KindUnanswerable},
	}}
	ctx, cancel := context.WithCancel(context.Background())
	a := &fakeAnswerer{AnswerFn: func(ctx context.Context, _ docent.Question) (docent.Answer, error) {
		cancel()
		return docent.Answer{}, ctx.Err()
	}}
	_, err := RunGolden(ctx, g, a)
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "question a") {
		t.Errorf("err = %v, want context.Canceled naming question a", err)
	}
	if len(a.asked) != 1 {
		t.Errorf("asked %d questions after cancel, want 1", len(a.asked))
	}
}

func TestAnswererFunc(t *testing.T) {
	var got docent.Question
	a := AnswererFunc(func(_ context.Context, q docent.Question) (docent.Answer, error) {
		got = q
		return docent.Answer{Status: docent.StatusNotFound}, nil
	})
	g := &Golden{Questions: []docent.GoldenQuestion{{ID: "a", Question: "one", Kind: docent.KindUnanswerable}}}
	rep, err := RunGolden(context.Background(), g, a)
	if err != nil {
		t.Fatal(err)
	}
	if got.Text != "one" || rep.Passed != 1 || rep.NotFoundAccuracy != 1 {
		t.Errorf("question %+v, report passed %d accuracy %v", got, rep.Passed, rep.NotFoundAccuracy)
	}
}

func TestGoldenHalf(t *testing.T) {
	g := &Golden{}
	for _, id := range []string{"a", "b", "c", "d", "e"} {
		g.Questions = append(g.Questions, docent.GoldenQuestion{ID: id})
	}
	ids := func(h *Golden) (out []string) {
		for _, q := range h.Questions {
			out = append(out, q.ID)
		}
		return out
	}
	for _, tc := range []struct {
		half string
		want []string
	}{
		{"odd", []string{"a", "c", "e"}},
		{"even", []string{"b", "d"}},
	} {
		h, err := g.Half(tc.half)
		if err != nil {
			t.Fatalf("Half(%q): %v", tc.half, err)
		}
		if got := ids(h); !slices.Equal(got, tc.want) {
			t.Errorf("Half(%q) = %v, want %v", tc.half, got, tc.want)
		}
	}
	if _, err := g.Half("first"); err == nil {
		t.Error("Half(first): want an error")
	}
}
