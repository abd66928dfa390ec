package offline

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/answer"
	"github.com/docent-hq/docent/search"
)

// answerFrom runs the gate and the Extractive generator on a question, as
// the pipeline does when the rule answers.
func answerFrom(t testing.TB, g *Gate, question string, hits []docent.Hit) (string, answer.Evidence) {
	t.Helper()
	ev := mustGate(t, g, question, hits)
	return generate(t, question, ev), ev
}

// withDefaultPassage makes m the default passage model for one test: the
// generator scores with it when no gate analysis comes with the request.
func withDefaultPassage(t *testing.T, m PassageModel) {
	old := DefaultPassage
	DefaultPassage = m
	t.Cleanup(func() { DefaultPassage = old })
}

func assertQuotes(t *testing.T, text string, want, not []string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("answer %q lacks %q", text, w)
		}
	}
	for _, n := range not {
		if strings.Contains(text, n) {
			t.Errorf("answer %q quotes %q", text, n)
		}
	}
}

func TestExtractiveOpensWithTheDecidedPassage(t *testing.T) {
	// The closest page stays first by retrieval (its passage scores 0.42);
	// a page further down scores 0.95 but was not weighed against it.
	// The answer quotes the passage the decision was made on first.
	primary := wikiPage("k-primary", "shop/kiln.md", "Ceramics kiln", []string{"Firing days"}, "", 5,
		"The kiln fires glazed pieces on Fridays.")
	other := func(id, doc string, ord int, text string) docent.Chunk {
		return wikiPage(id, doc, "Studio notes "+id, nil, "", ord, text)
	}
	x1 := other("k-x1", "x1.md", 5, "Glazed pieces need a shelf label.")
	x2 := other("k-x2", "x2.md", 5, "Label each glazed piece with your name.")
	far := other("k-far", "far.md", 0, "Glazed pieces cool in the kiln overnight.")
	corp := wikiCorpus(primary, x1, x2, far)
	g := NewGate(GateOptions{Corpus: corp, Passage: earlyModel(-1, 4)}, nil)
	text, ev := answerFrom(t, g, "when does the kiln fire glazed pieces", ranked(primary, x1, x2, far))
	if sourceIDs(ev.Sources) != "k-primary,k-x1,k-x2,k-far" {
		t.Fatalf("sources %s", sourceIDs(ev.Sources))
	}
	if !strings.HasPrefix(text, "The kiln fires glazed pieces on Fridays [1].") {
		t.Errorf("answer %q does not open with the closest page's passage", text)
	}
	if ev.Pages[0].Passage != "The kiln fires glazed pieces on Fridays." {
		t.Errorf("closest passage %q", ev.Pages[0].Passage)
	}
}

// TestExtractiveLeadFirst: the passage the decision was made on opens
// the answer even when the sentences quoted around it come before it on
// the page.
func TestExtractiveLeadFirst(t *testing.T) {
	c := wikiPage("lead-first", "shop/inductions.md", "Safety inductions", []string{"Who runs them"}, "", 0,
		"Inductions take place every Tuesday in the wood shop. Priya Natarajan, the shop steward, runs every induction.")
	text, ev := answerFrom(t, testGate(wikiCorpus(c)), "who runs the safety inductions", ranked(c))
	if ev.Pages[0].Passage != "Priya Natarajan, the shop steward, runs every induction." {
		t.Fatalf("decided passage %q", ev.Pages[0].Passage)
	}
	want := "Priya Natarajan, the shop steward, runs every induction [1]. Inductions take place every Tuesday in the wood shop [1]."
	if text != want {
		t.Errorf("answer %q, want %q", text, want)
	}
}

func TestExtractiveParagraph(t *testing.T) {
	short := wikiPage("fire-short", "shop/kiln.md", "Ceramics kiln", []string{"Firing fees"}, "", 0,
		"Firings are booked on the sign-up sheet. Each firing costs $8. This page describes the kiln. The sheet hangs by the kiln room door.\n\n"+
			"Glaze is sold at the front desk.")
	long := wikiPage("fire-long", "shop/kiln.md", "Ceramics kiln", []string{"Firing fees"}, "", 0,
		"Firings are booked on the sign-up sheet. Each firing costs $8. The sheet hangs by the door. "+
			"Stewards check it weekly. Loads go in on Thursday. Pieces come out on Monday.")
	corp := wikiCorpus(short, long)
	tests := []struct {
		name      string
		chunk     docent.Chunk
		want, not []string
	}{
		{"a short paragraph comes whole, without its sentence about the page", short,
			[]string{"Each firing costs $8 [1].", "Firings are booked on the sign-up sheet [1].", "The sheet hangs by the kiln room door [1]."},
			[]string{"This page describes", "Glaze is sold"}},
		{"a long paragraph gives its best sentence", long,
			[]string{"Each firing costs $8 [1]."}, []string{"Stewards check it weekly", "Pieces come out on Monday"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text, _ := answerFrom(t, testGate(corp), "how much does a kiln firing cost", ranked(tt.chunk))
			assertQuotes(t, text, tt.want, tt.not)
		})
	}
}

func TestExtractiveTables(t *testing.T) {
	corp := wikiCorpus(wkDues, wkLockers)
	tests := []struct {
		name, question string
		want, not      []string
	}{
		{"a table keyed by name answers for every entry when none is named",
			"what are the monthly dues",
			[]string{"Hobbyist — Monthly dues: $45", "Studio — Monthly dues: $90", "Student — Monthly dues: $25"}, nil},
		{"the same for a question that asks for no list",
			"how much are the monthly dues",
			[]string{"Hobbyist — Monthly dues: $45", "Studio — Monthly dues: $90", "Student — Monthly dues: $25"}, nil},
		{"naming an entry keeps the answer to its row",
			"what are the monthly dues of the Studio plan",
			[]string{"Studio — Monthly dues: $90"}, []string{"Hobbyist", "Student"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text, _ := answerFrom(t, testGate(corp), tt.question, ranked(wkDues, wkLockers))
			assertQuotes(t, text, tt.want, tt.not)
		})
	}
}

func TestExtractiveLists(t *testing.T) {
	check := wikiPage("check", "shop/kiln-check.md", "Kiln checks", []string{"Before a firing"}, "", 0,
		"Before a firing, check the kiln:\n\n- the shelves are level\n- the vents are open\n- the cones are in place\n\n"+
			"Firing logs go in the red binder.")
	longCheck := wikiPage("check-long", "shop/kiln-check.md", "Kiln checks", []string{"Before a firing"}, "", 0,
		"Before a firing, check the kiln:\n\n- shelves\n- vents\n- cones\n- posts\n- wires\n- lid\n- plug\n")
	nested := wikiPage("nested", "shop/kiln-unload.md", "Kiln unloading", nil, "", 0,
		"- Wear gloves.\n- Unload the kiln in this order:\n  - the top shelf\n  - the middle shelf\n  - the bottom shelf\n- Sweep the floor.\n")
	corp := wikiCorpus(check, longCheck, nested, wkLaserSafety)
	tests := []struct {
		name, question string
		chunk          docent.Chunk
		want, not      []string
	}{
		{"a sentence that introduces a list brings it", "what should I check before a kiln firing", check,
			[]string{"check the kiln [1].", "the shelves are level [1].", "the vents are open [1].", "the cones are in place [1]."},
			[]string{"red binder"}},
		{"a list longer than maxList is not brought", "what should I check before a kiln firing", longCheck,
			[]string{"check the kiln [1]."}, []string{"plug"}},
		{"an item that introduces nested items brings them", "in what order do I unload the kiln", nested,
			[]string{"Unload the kiln in this order [1].", "the top shelf [1].", "the bottom shelf [1]."}, nil},
		{"a list question quotes the items alike to the best", "what are the laser safety rules", wkLaserSafety,
			[]string{"Keep the extraction fan on while cutting [1].", "Never cut PVC: it releases chlorine gas [1]."}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text, _ := answerFrom(t, testGate(corp), tt.question, ranked(tt.chunk))
			assertQuotes(t, text, tt.want, tt.not)
		})
	}
}

func TestExtractiveSensitiveInstructions(t *testing.T) {
	corp := wikiCorpus(wiki...)
	tests := []struct {
		name, question string
		want, not      []string
	}{
		{"an instruction to approve is no context around the answer",
			"the door app showed a sign-in I did not start, what now",
			[]string{"deny it and tell the board [1]."}, []string{"Approve the prompt", "Share your fob"}},
		{"it is quoted as the answering passage",
			"when do I approve the prompt on my phone",
			[]string{"Approve the prompt on your phone when you badge in yourself [1]."}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text, _ := answerFrom(t, testGate(corp), tt.question, ranked(wkDoor))
			assertQuotes(t, text, tt.want, tt.not)
		})
	}
}

func TestExtractiveCommands(t *testing.T) {
	fw := wikiPage("fw", "shop/laser-fw.md", "Laser firmware", nil, "", 0,
		"Update the cutter firmware with:\n\n```\nlzctl update --all\n```\n\nThe cutter runs firmware 4.2.")
	corp := wikiCorpus(fw)
	tests := []struct {
		name, question string
		want, not      []string
	}{
		{"a command is quoted for a how-to question", "how do I update the cutter firmware",
			[]string{"`lzctl update --all`"}, nil},
		{"not for another question", "can members update the cutter firmware themselves",
			[]string{"Update the cutter firmware with [1]."}, []string{"`", "lzctl"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text, _ := answerFrom(t, testGate(corp), tt.question, ranked(fw))
			assertQuotes(t, text, tt.want, tt.not)
		})
	}
}

func TestExtractiveCodes(t *testing.T) {
	corp := wikiCorpus(wiki...)
	text, _ := answerFrom(t, testGate(corp), "what does LZ-41 mean on the laser panel", ranked(wkLaserErrors))
	assertQuotes(t, text, []string{"LZ-41 — Meaning: Lens dirty"}, []string{"LZ-12", "LZ-30", "panel shows a code"})
	// A code no unit holds leaves the units as they are.
	text, _ = answerFrom(t, testGate(corp), "what does LZ-99 mean on the laser panel", ranked(wkLaserErrors))
	if !strings.Contains(text, "[1]") {
		t.Errorf("answer %q cites nothing", text)
	}
	// Scored by the generator itself, the row of another code covers
	// more of the question's words; the code asked for decides.
	withDefaultPassage(t, PassageModel{Weights: map[string]float64{"cover": 4}})
	res, err := (&Extractive{MaxUnits: 1}).Generate(context.Background(), answer.GenerateRequest{
		Question: "what does LZ-41 mean when the lid is open", Sources: []answer.Source{{N: 1, Hit: candidate(wkLaserErrors, 1, 1, 0.5)}}})
	if err != nil {
		t.Fatal(err)
	}
	assertQuotes(t, res.Text, []string{"LZ-41"}, []string{"LZ-12"})
	us := []scoredUnit{{unit: row("LZ-12: lid", "LZ-12")}, {unit: row("LZ-30: coolant", "LZ-30")}}
	if got := matchCodes(us, questionCodes("is LZ-30 bad")); len(got) != 1 || got[0].Key != "LZ-30" {
		t.Errorf("matchCodes kept %v", got)
	}
	if got := matchCodes(us, nil); len(got) != 2 {
		t.Errorf("matchCodes without codes kept %d", len(got))
	}
}

func TestQuestionCodes(t *testing.T) {
	tests := []struct{ question, want string }{
		{"what does LZ-41 mean", "lz 41"},
		{"is firmware v4 newer than 3D printer fw2.1?", "v4|3d|fw2 1"},
		{"how many benches for 20 members in 2026", ""},
		{"when is KILN_MODE set", ""},
	}
	for _, tt := range tests {
		t.Run(tt.question, func(t *testing.T) {
			var got []string
			for _, c := range questionCodes(tt.question) {
				got = append(got, strings.Join(c, " "))
			}
			if g := strings.Join(got, "|"); g != tt.want {
				t.Errorf("questionCodes = %q, want %q", g, tt.want)
			}
		})
	}
}

func TestExtractiveConflict(t *testing.T) {
	corp := wikiCorpus(wiki...)
	text, ev := answerFrom(t, testGate(corp), "how much are the studio dues", ranked(wkDues, wkDuesOld))
	if ev.Conflict == nil {
		t.Fatalf("no conflict found: %s", ev.Detail)
	}
	want := `Note: these sources differ; the most recent (Membership dues, updated 2025-09-01) says "Studio — Monthly dues: $90; Door hours: all day" [1]; ` +
		`an older version (Membership dues (2022), updated 2022-02-01) says "Studio — Monthly dues: $80; Door hours: all day" [2].`
	if text != want {
		t.Errorf("answer\n%q\nwant\n%q", text, want)
	}
}

// scored returns the units of c as scored units of source src, best
// first in document order.
func scored(c docent.Chunk, src int) []scoredUnit {
	var out []scoredUnit
	for i, u := range unitsOf(c) {
		out = append(out, scoredUnit{unit: u, src: src, score: 1 - 0.01*float64(i)})
	}
	return out
}

func TestAlikePair(t *testing.T) {
	newer := wikiPage("al-new", "n.md", "Plans", nil, "", 0,
		"| Plan | Dues | Includes |\n|---|---|---|\n| Studio (all hours) | $90 | a locker and a shelf |\n| Hobbyist | $45 | a shelf |\n")
	older := wikiPage("al-old", "o.md", "Plans", nil, "", 0,
		"| Plan | Dues |\n|---|---|\n| Hobbyist | $45 |\n| Studio | $80 |\n")
	t.Run("rows are alike when their keys are", func(t *testing.T) {
		n, o, ok := alikePair(scored(newer, 0), scored(older, 1))
		if !ok || n.Key != "Studio (all hours)" || o.Key != "Studio" {
			t.Errorf("pair %q / %q, %v", n.Text, o.Text, ok)
		}
	})
	t.Run("no pair without differing amounts", func(t *testing.T) {
		same := wikiPage("al-same", "s.md", "Plans", nil, "", 0, "| Plan | Dues |\n|---|---|\n| Hobbyist | $45 |\n")
		if _, _, ok := alikePair(scored(same, 0), scored(older, 1)); ok {
			t.Error("a pair of units stating the same amount")
		}
	})
	t.Run("differing: the unit stating what the other source does not", func(t *testing.T) {
		us := scored(older, 1)
		if got := differing(us, newer.Text, nil); got.Key != "Studio" {
			t.Errorf("differing = %q", got.Text)
		}
		// Given the other side's quoted terms, the unit sharing most.
		a := wikiPage("df-a", "a.md", "Fees", nil, "", 0, "Kiln firings cost $8. Lathe hire costs $12.")
		b := wikiPage("df-b", "b.md", "Fees", nil, "", 0, "Kiln firings cost $6. Lathe hire costs $10.")
		lathe := search.TermSet("Lathe hire costs $10.")
		if got := differing(scored(a, 0), b.Text, lathe); got.Text != "Lathe hire costs $12." {
			t.Errorf("differing like the other side = %q", got.Text)
		}
		// Without a differing unit, the best.
		if got := differing(scored(a, 0), a.Text, nil); got.Text != "Kiln firings cost $8." {
			t.Errorf("differing without a difference = %q", got.Text)
		}
	})
	// The generator quotes a differing pair when no pair is alike; two
	// pages of one day that differ are not called the more recent and an
	// older version.
	for _, tt := range []struct {
		name, olderDate string
		dated           bool
		want            string
	}{
		{"years apart", "2020-01-01", true,
			`Note: these sources differ; the most recent (Fees, updated 2025-01-01) says "Kiln firings cost $8 per load" [1]; ` +
				`an older version (Fees, updated 2020-01-01) says "Each load in the kiln was charged at $6 back then" [2].`},
		{"one day", "2025-01-01", false,
			`Note: these sources differ, and neither is more recent than the other: one (Fees, updated 2025-01-01) says "Kiln firings cost $8 per load" [1]; ` +
				`another (Fees, updated 2025-01-01) says "Each load in the kiln was charged at $6 back then" [2].`},
	} {
		t.Run("the generator quotes a differing pair: "+tt.name, func(t *testing.T) {
			a := wikiPage("cf-a", "fees.md", "Fees", nil, "2025-01-01", 0, "Kiln firings cost $8 per load.")
			b := wikiPage("cf-b", "fees-old.md", "Fees", nil, tt.olderDate, 0, "Each load in the kiln was charged at $6 back then.")
			res, err := NewExtractive().Generate(context.Background(), answer.GenerateRequest{
				Question: "what does a kiln load cost",
				Sources:  []answer.Source{{N: 1, Hit: docent.Hit{Chunk: a, Score: 1}}, {N: 2, Hit: docent.Hit{Chunk: b, Score: 1}}},
				Conflict: &answer.Conflict{Newer: 1, Older: 2, Dated: tt.dated},
			})
			if err != nil {
				t.Fatal(err)
			}
			if res.Text != tt.want {
				t.Errorf("answer\n%q\nwant\n%q", res.Text, tt.want)
			}
		})
	}
}

func TestCite(t *testing.T) {
	tests := []struct {
		text string
		n    int
		want string
	}{
		{"Firings cost $8.", 2, "Firings cost $8 [2]."},
		{"Is the kiln free?", 1, "Is the kiln free [1]."},
		{"Fees rose in 2024 [3].", 1, "Fees rose in 2024 (3) [1]."},
		{"See notes [1, 2] and [4-5]", 3, "See notes (1, 2) and (4-5) [3]."},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			if got := cite(tt.text, tt.n); got != tt.want {
				t.Errorf("cite = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestExtractiveParts(t *testing.T) {
	corp := wikiCorpus(wiki...)
	c, _ := corp.Get(t.Context())
	terms := func(q string) map[string]float64 { return newQuestion(q, c, nil).weights() }
	srcs := []answer.Source{
		{N: 1, Hit: candidate(wkLockers, 1, 1, 0.5)},
		{N: 2, Hit: candidate(wkInductions, 0.9, 2, 0.5)},
		{N: 3, Hit: candidate(wkGuests, 0.8, 3, 0.5)},
	}
	res, err := NewExtractive().Generate(context.Background(), answer.GenerateRequest{
		Question: "where are the lockers, who runs inductions, is there a sauna, and can I bring a guest",
		Sources:  srcs,
		Parts: []answer.Part{
			{Ask: "where are the lockers", Status: docent.StatusAnswered, Sources: []int{1}, Terms: terms("where are the lockers")},
			{Ask: "who runs inductions?", Status: docent.StatusUncertain, Sources: []int{2}, Terms: terms("who runs inductions")},
			{Ask: `is there a "sauna"?`, Status: docent.StatusNotFound},
			{Ask: "where do the lockers stand", Status: docent.StatusAnswered, Sources: []int{1}, Terms: terms("where do the lockers stand")},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := `Lockers are on the second floor next to the wood shop [1]. A locker costs $10 per month [1]. ` +
		`I couldn't confirm "who runs inductions" in the docs; the closest page is [2]. ` +
		`I couldn't find "is there a 'sauna'" in the docs.`
	if res.Text != want {
		t.Errorf("answer\n%q\nwant\n%q (a sentence quoted for one part is not quoted again)", res.Text, want)
	}
}

func TestByScore(t *testing.T) {
	us := []scoredUnit{
		{unit: unit{Text: "c", Ord: 2}, src: 0, score: 0.700},
		{unit: unit{Text: "b", Ord: 1}, src: 0, score: 0.703}, // within scoreTie of c
		{unit: unit{Text: "a", Ord: 0}, src: 1, score: 0.704},
		{unit: unit{Text: "top", Ord: 5}, src: 1, score: 0.9},
	}
	byScore(us)
	var got []string
	for _, u := range us {
		got = append(got, u.Text)
	}
	if strings.Join(got, ",") != "top,b,c,a" {
		t.Errorf("order %v, want top, then the tie in source and document order", got)
	}
}

func TestExtractiveSourcesAndTerms(t *testing.T) {
	srcs := []answer.Source{
		{N: 1, Hit: candidate(wkLockers, 1, 1, 0.5)},
		{N: 2, Hit: candidate(wkGuests, 0.9, 2, 0.5)},
	}
	q := "where are the lockers and can guests come"
	t.Run("at most MaxSources sources are quoted", func(t *testing.T) {
		res, err := (&Extractive{MaxSources: 1}).Generate(context.Background(), answer.GenerateRequest{Question: q, Sources: srcs})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(res.Text, "[1]") || strings.Contains(res.Text, "[2]") {
			t.Errorf("answer %q", res.Text)
		}
	})
	t.Run("at most MaxUnits units", func(t *testing.T) {
		c := wikiPage("lk", "space/lockers.md", "Lockers", nil, "", 0, "Lockers are on the second floor.\n\nLockers have a shelf for guests.")
		one := []answer.Source{{N: 1, Hit: candidate(c, 1, 1, 0.5)}}
		res, _ := (&Extractive{MaxUnits: 1}).Generate(context.Background(), answer.GenerateRequest{Question: q, Sources: one})
		if strings.Count(res.Text, "[1]") != 1 {
			t.Errorf("answer %q", res.Text)
		}
	})
	t.Run("the request's terms stand for the question's", func(t *testing.T) {
		res, _ := NewExtractive().Generate(context.Background(), answer.GenerateRequest{Question: q, Sources: srcs,
			Terms: map[string]float64{"zither": 1}})
		if res.Text != "" {
			t.Errorf("answer %q from terms no source holds", res.Text)
		}
	})
	t.Run("nothing shared, nothing said", func(t *testing.T) {
		res, _ := NewExtractive().Generate(context.Background(), answer.GenerateRequest{Question: "zither tuning", Sources: srcs})
		if res.Text != "" {
			t.Errorf("answer %q", res.Text)
		}
	})
}

func TestExtractiveAsksForAnAmount(t *testing.T) {
	// Without the gate's analysis the generator scores passages itself:
	// with a model that prefers the kind of answer asked for, a question
	// about money, a quantity or conflicting sources is answered by a
	// passage that states an amount.
	withDefaultPassage(t, PassageModel{Weights: map[string]float64{"kind": 3, "cover": 1}})
	session := wikiPage("sess", "shop/laser-sessions.md", "Laser sessions", nil, "2025-01-01", 0,
		"Laser sessions are booked ahead.\n\nA laser session costs $6.")
	// A conflict whose older side shares no word with the question is
	// not quoted as one; its amounts still say what is asked.
	unrelated := wikiPage("sess-other", "space/paint-fees.md", "Paint booth fees", nil, "2020-01-01", 0, "Respirator filters cost $4.")
	gen := func(q string, conflict bool) string {
		req := answer.GenerateRequest{Question: q, Sources: []answer.Source{{N: 1, Hit: candidate(session, 1, 1, 0.5)}}}
		if conflict {
			req.Sources = append(req.Sources, answer.Source{N: 2, Hit: candidate(unrelated, 1, 2, 0.5)})
			req.Conflict = &answer.Conflict{Newer: 1, Older: 2, Dated: true}
		}
		res, err := (&Extractive{MaxUnits: 1, MaxSources: 1}).Generate(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		return res.Text
	}
	tests := []struct {
		question string
		conflict bool
		want     string
	}{
		{"what is the laser session price", false, "A laser session costs $6 [1]."},
		{"how much is a laser session", false, "A laser session costs $6 [1]."},
		{"tell me about laser sessions", true, "A laser session costs $6 [1]."},
		{"tell me about laser sessions", false, "Laser sessions are booked ahead [1]."},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s (conflict %v)", tt.question, tt.conflict), func(t *testing.T) {
			if got := gen(tt.question, tt.conflict); got != tt.want {
				t.Errorf("answer %q, want %q", got, tt.want)
			}
		})
	}
	if !asksQuantity("how many benches") || asksQuantity("who cleans benches") || !asksList("which plans are there") ||
		asksList("is the kiln on") || !asksCommand("how to restart the kiln") || asksCommand("is the kiln on") {
		t.Error("asksQuantity, asksList or asksCommand misreads")
	}
	if !moneyAskRE.MatchString("what does it cost") || moneyAskRE.MatchString("how long does it take") ||
		!moneyRE.MatchString("costs $6") || moneyRE.MatchString("lasts 6 hours") {
		t.Error("moneyAskRE or moneyRE misreads")
	}
}

func TestJoinAndQuote(t *testing.T) {
	if joinAnd(nil) != "" || joinAnd([]string{"a"}) != "a" || joinAnd([]string{"a", "b"}) != "a and b" || joinAnd([]string{"a", "b", "c"}) != "a, b and c" {
		t.Error("joinAnd")
	}
	if got := quote(`is the "kiln" on?`); got != `"is the 'kiln' on"` {
		t.Errorf("quote = %s", got)
	}
	if got := splitCited("One [1]. Two (3) [2]. tail"); strings.Join(got, "|") != "One [1].|Two (3) [2]." {
		t.Errorf("splitCited = %q", got)
	}
}

func TestExtractiveGain(t *testing.T) {
	// The best passage answers one part; a passage that adds the other
	// part's words is quoted, one that only repeats covered words is not.
	c := wikiPage("gain", "space/storage.md", "Storage", nil, "", 0,
		"Padlocks are sold at the front desk.\n\nLockers are on the second floor.\n\nPadlocks are checked monthly.")
	text, _ := answerFrom(t, testGate(wikiCorpus(c)), "where are the lockers and where do I buy padlocks", ranked(c))
	assertQuotes(t, text, []string{"Lockers are on the second floor [1].", "Padlocks are sold at the front desk [1]."},
		[]string{"checked monthly"})
}

func TestExtractiveMinGain(t *testing.T) {
	// Scored by the generator with the request's weights: a passage that
	// adds only a light word (under minGain of the question) is left out.
	withDefaultPassage(t, PassageModel{Weights: map[string]float64{"cover": 1}})
	c := wikiPage("mingain", "space/storage.md", "Storage", nil, "", 0,
		"Padlocks are sold at the desk.\n\nLockers are by the stairs.\n\nThe floor is swept nightly.")
	res, err := NewExtractive().Generate(context.Background(), answer.GenerateRequest{
		Question: "padlocks and lockers on the floor", Sources: []answer.Source{{N: 1, Hit: candidate(c, 1, 1, 0.5)}},
		Terms: map[string]float64{"padlock": 5, "locker": 5, "floor": 1}})
	if err != nil {
		t.Fatal(err)
	}
	assertQuotes(t, res.Text, []string{"Padlocks are sold at the desk [1].", "Lockers are by the stairs [1]."}, []string{"swept"})
}

func TestExtractiveListSiblings(t *testing.T) {
	rules := wikiPage("rules", "shop/rules.md", "Shop rules", nil, "", 0,
		"Follow the shop rules.\n\n- Wear goggles at the lathe.\n- Wear goggles at the grinder.\n- Tie back long hair.\n")
	pair := wikiPage("pair", "shop/glue.md", "Glue station", nil, "", 0,
		"- Epoxy cures in a day.\n- Wood glue cures in an hour.\n- Clean the nozzle.\n- Close the cap.\n")
	corp := wikiCorpus(rules, pair)
	t.Run("items of one list that score as well go together", func(t *testing.T) {
		text, _ := answerFrom(t, testGate(corp), "do I need goggles", ranked(rules))
		assertQuotes(t, text, []string{"Wear goggles at the lathe [1].", "Wear goggles at the grinder [1]."}, nil)
	})
	t.Run("two items of a short list bring the rest", func(t *testing.T) {
		text, _ := answerFrom(t, testGate(corp), "how long do epoxy and wood glue take to cure", ranked(pair))
		assertQuotes(t, text, []string{"Epoxy cures in a day [1].", "Wood glue cures in an hour [1].", "Clean the nozzle [1].", "Close the cap [1]."}, nil)
	})
	t.Run("one item alone does not", func(t *testing.T) {
		text, _ := answerFrom(t, testGate(corp), "how long does epoxy take to cure", ranked(pair))
		assertQuotes(t, text, []string{"Epoxy cures in a day [1]."}, []string{"Close the cap"})
	})
}

func TestExtractiveDefaultLimits(t *testing.T) {
	withDefaultPassage(t, PassageModel{Weights: map[string]float64{"cover": 1}})
	var body []string
	words := []string{"kiln", "lathe", "router", "drill", "sander"}
	for _, w := range words {
		body = append(body, "The "+w+" is shared.")
	}
	c := wikiPage("limits", "shop/tools.md", "Tools", nil, "", 0, strings.Join(body, "\n\n"))
	res, err := (&Extractive{}).Generate(context.Background(), answer.GenerateRequest{
		Question: strings.Join(words, ", ") + "?",
		Sources:  []answer.Source{{N: 1, Hit: candidate(c, 1, 1, 0.5)}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(res.Text, "[1]"); n != 4 {
		t.Errorf("%d units quoted by a zero Extractive, want the default 4: %q", n, res.Text)
	}
	if e := NewExtractive(); e.MaxUnits != 6 || e.MaxSources != 3 {
		t.Errorf("NewExtractive = %+v", e)
	}
}

func TestRefersBack(t *testing.T) {
	for _, tt := range []struct {
		text string
		want bool
	}{
		{"It defaults to 10 pieces.", true},
		{"These are kept for a year.", true},
		{"The default value for this option is -1.", true},
		{"Their shelves are cleaned on Mondays.", true},
		{"Therefore, glaze goes on the bisque ware.", true},
		{"In this case the kiln stays shut.", true},
		{"The kiln fires glazed pieces on Fridays.", false},
		{"Items left on the shelf for a week are recycled, and this is announced.", false},
		{"Itself a kiln, the oven is smaller.", false},
	} {
		if got := refersBack(tt.text); got != tt.want {
			t.Errorf("refersBack(%q) = %v, want %v", tt.text, got, tt.want)
		}
	}
}

func TestExtractiveBackReferenceNeedsItsReferent(t *testing.T) {
	// A further page's "this option" is about that page's own option: it
	// is no answer beside another page's passage.
	shelf := wikiPage("kiln-shelf", "shop/kiln.md", "Kiln", []string{"Shelf height"}, "2025-01-01", 0,
		"The shelf height sets the tallest piece a kiln firing takes.")
	other := wikiPage("lathe-guard", "shop/lathe.md", "Lathe", []string{"Guard height"}, "2025-01-01", 0,
		"The default value for this option is 40 cm, the tallest piece height most firings take.")
	corp := wikiCorpus(shelf, other)
	text, _ := answerFrom(t, testGate(corp), "what is the default shelf height for a kiln firing", ranked(shelf, other))
	assertQuotes(t, text, []string{"The shelf height sets the tallest piece"}, []string{"this option"})
}

func TestPickUnitsQuotesTheAskedKind(t *testing.T) {
	// A question that asks how many gets the unit of the opening
	// passage's source that states a number when no better-scored unit
	// does, however little it scores (here under keepRatio of the best).
	q := analyzedQuestion(t, "how many pieces does a kiln firing take by default", wikiCorpus(wiki...))
	mk := func(src, ord int, text string, score float64) scoredUnit {
		u := unit{Text: text, Kind: kindSentence, Ord: ord, Terms: search.TermSet(text), Para: ord + 1}
		return scoredUnit{unit: u, src: src, score: score, cov: q.unitCoverage(u)}
	}
	best := mk(0, 0, "Pieces of a kiln firing are loaded loosely by default.", 0.9)
	count := mk(0, 2, "The shelf takes 12 pieces.", 0.2)
	other := mk(1, 0, "A glaze firing takes 30 pieces.", 0.3)
	all := []scoredUnit{best, other, count}
	got := pickUnits(all, all, q, amountType, 4, 3)
	if !slices.ContainsFunc(got, func(u scoredUnit) bool { return u.Text == count.Text }) ||
		slices.ContainsFunc(got, func(u scoredUnit) bool { return u.Text == other.Text }) {
		t.Errorf("picked %q: want the opening source's count, not another source's", unitTextsOf(got))
	}
	if got := pickUnits(all, all, q, anyType, 4, 3); slices.ContainsFunc(got, func(u scoredUnit) bool { return u.Text == count.Text }) {
		t.Errorf("picked %q for a question that asks for no kind", unitTextsOf(got))
	}
}

func unitTextsOf(us []scoredUnit) []string {
	out := make([]string, len(us))
	for i, u := range us {
		out[i] = u.Text
	}
	return out
}

func TestExtractiveBackReferenceBringsItsReferent(t *testing.T) {
	// An opening sentence that rests on the one before it is quoted with
	// it.
	page := wikiPage("kiln-swarm", "shop/kiln.md", "Kiln", []string{"Shared kilns"}, "2025-01-01", 0,
		"Shared kilns read their schedule from the studio calendar.\n\nTherefore, a glaze firing booked on the kiln itself is ignored.")
	corp := wikiCorpus(page)
	text, _ := answerFrom(t, testGate(corp), "why is my glaze firing booked on the kiln ignored", ranked(page))
	assertQuotes(t, text, []string{"Shared kilns read their schedule from the studio calendar", "Therefore, a glaze firing"}, nil)
}
