package offline

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/answer"
)

// The fixtures are pages of a made-up wiki, the one of Tinkerwell, a
// community makerspace: membership dues (a current page and its 2022
// version), the laser cutter (booking, error codes, safety), safety
// inductions, lockers, guests and the door. Every page and every question
// the tests ask is written for these tests; none comes from the bundled
// handbook or an eval set (TestRuleInputsAreNotEvalQuestions checks the
// questions).

// day parses a date of the fixtures.
func day(s string) time.Time {
	t, err := time.Parse("2006-01-02", s)
	if err != nil {
		panic(err)
	}
	return t
}

// wikiPage returns a chunk of the wiki: its text is "Title > Section" and
// then body, as the chunker writes it.
func wikiPage(id, doc, title string, section []string, updated string, ord int, body string) docent.Chunk {
	head := title
	if len(section) > 0 {
		head += " > " + strings.Join(section, " > ")
	}
	c := docent.Chunk{ID: id, DocID: doc, Ord: ord, Source: "wiki", Title: title, Section: section,
		URL: "https://wiki.tinkerwell.example/" + strings.TrimSuffix(doc, ".md"), Text: head + "\n\n" + body}
	if updated != "" {
		c.UpdatedAt = day(updated)
	}
	return c
}

var (
	wkDues = wikiPage("dues-rates", "members/dues.md", "Membership dues", []string{"Monthly rates"}, "2025-09-01", 0,
		"Dues are charged on the first day of each month.\n\n"+
			"| Plan | Monthly dues | Door hours |\n|---|---|---|\n"+
			"| Hobbyist | $45 | 7am to 11pm |\n| Studio | $90 | all day |\n| Student | $25 | 9am to 9pm |\n")
	wkDuesOld = wikiPage("dues-rates-2022", "members/dues-2022.md", "Membership dues (2022)", []string{"Monthly rates"}, "2022-02-01", 0,
		"Dues are charged on the first day of each month.\n\n"+
			"| Plan | Monthly dues | Door hours |\n|---|---|---|\n"+
			"| Hobbyist | $35 | 7am to 11pm |\n| Studio | $80 | all day |\n| Student | $25 | 9am to 9pm |\n")
	wkLaserBooking = wikiPage("laser-booking", "shop/laser.md", "Laser cutter", []string{"Booking the laser"}, "2025-06-10", 0,
		"Book the laser cutter in Skedda up to 7 days ahead. A session lasts at most 2 hours.\n\n"+
			"Cancel a booking you cannot use so that someone else can take the slot.")
	wkLaserErrors = wikiPage("laser-errors", "shop/laser.md", "Laser cutter", []string{"Error codes"}, "2025-06-10", 1,
		"The panel shows a code when the cutter stops.\n\n"+
			"| Code | Meaning | What to do |\n|---|---|---|\n"+
			"| LZ-12 | Lid open | Close the lid firmly. |\n"+
			"| LZ-30 | Coolant too warm | Wait 20 minutes before the next job. |\n"+
			"| LZ-41 | Lens dirty | Ask a shop steward to clean the lens. |\n")
	wkLaserSafety = wikiPage("laser-safety", "shop/laser.md", "Laser cutter", []string{"Safety"}, "2025-06-10", 2,
		"Stay with the cutter for the whole job.\n\n"+
			"- Keep the extraction fan on while cutting.\n"+
			"- Never cut PVC: it releases chlorine gas.\n"+
			"- If a flame lasts more than a few seconds, close the lid and press the red stop button.\n")
	wkInductions = wikiPage("inductions", "shop/inductions.md", "Safety inductions", []string{"Who runs them"}, "2025-03-02", 0,
		"Inductions take place every Tuesday at 6pm in the wood shop. "+
			"Priya Natarajan, the shop steward, runs every induction.")
	wkLockers = wikiPage("lockers", "space/lockers.md", "Lockers", []string{"Renting a locker"}, "2024-11-20", 0,
		"Lockers are on the second floor next to the wood shop. A locker costs $10 per month.")
	wkGuests = wikiPage("guests", "members/guests.md", "Guest policy", []string{"Bringing a guest"}, "2025-01-15", 0,
		"Members may bring one guest per visit. Sign your guest in on the front desk tablet.")
	wkDoor = wikiPage("door", "space/door.md", "Door access", []string{"Fob prompts"}, "2025-04-01", 0,
		"If the door app asks you to approve a sign-in you did not start, deny it and tell the board. "+
			"Approve the prompt on your phone when you badge in yourself. Share your fob with nobody.")
)

// wiki is every fixture chunk, and filler the pages that give IDF the
// scale of a real corpus.
var (
	filler = []docent.Chunk{
		wikiPage("f-paint", "space/paint.md", "Paint booth", nil, "2024-01-01", 0, "The paint booth needs a respirator. Open the vents first."),
		wikiPage("f-kiln", "shop/kiln.md", "Ceramics kiln", nil, "2024-01-01", 0, "Firing schedules are posted on the kiln room door."),
		wikiPage("f-wood", "shop/wood.md", "Wood shop", nil, "2024-01-01", 0, "The table saw needs a second induction. Push sticks hang on the wall."),
		wikiPage("f-events", "events/open.md", "Open evenings", nil, "2024-01-01", 0, "Open evenings welcome visitors on the last Friday."),
		wikiPage("f-clean", "space/cleaning.md", "Cleaning rota", nil, "2024-01-01", 0, "Sweep your bench before you leave. The rota hangs in the kitchen."),
		wikiPage("f-board", "members/board.md", "The board", nil, "2024-01-01", 0, "The board meets monthly and publishes minutes."),
		wikiPage("f-3d", "shop/printers.md", "3D printers", nil, "2024-01-01", 0, "Filament is sold at cost. Print jobs longer than a day need a note."),
		wikiPage("f-elec", "shop/electronics.md", "Electronics bench", nil, "2024-01-01", 0, "Soldering irons go back in their stands. The fume extractor stays on."),
	}
	wiki = []docent.Chunk{wkDues, wkDuesOld, wkLaserBooking, wkLaserErrors, wkLaserSafety, wkInductions, wkLockers, wkGuests, wkDoor}
)

// wikiCorpus returns the corpus statistics of chunks plus the filler.
func wikiCorpus(chunks ...docent.Chunk) *CorpusStats {
	return FixedCorpus(NewCorpus(append(append([]docent.Chunk(nil), chunks...), filler...)))
}

// candidate returns a hit for c with a fused score, its keyword rank (0:
// keyword search missed it) and its cosine.
func candidate(c docent.Chunk, score float64, keywordRank int, cosine float64) docent.Hit {
	return docent.Hit{Chunk: c, Score: score, KeywordRank: keywordRank, VectorRank: 1, VectorScore: cosine}
}

// ranked returns hits for chunks in order, scores falling from 1.
func ranked(chunks ...docent.Chunk) []docent.Hit {
	hits := make([]docent.Hit, len(chunks))
	for i, c := range chunks {
		hits[i] = candidate(c, 1-0.05*float64(i), i+1, 0.6-0.02*float64(i))
	}
	return hits
}

// coverModel is the passage model of the gate and generator tests: a
// passage is as probable as it covers the question (with its headings)
// and holds the kind of answer asked for. It is written for the tests
// so that they do not move when DefaultPassage is re-fitted.
var coverModel = PassageModel{Bias: -3, Weights: map[string]float64{"cover": 4, "own": 1, "kind": 1, "lacks": -1, "pairs": 0.5}}

// testGate returns a gate over corp with coverModel.
func testGate(corp *CorpusStats) *Gate {
	return NewGate(GateOptions{Corpus: corp, Passage: coverModel}, nil)
}

// mustGate runs g on a question and its hits.
func mustGate(t testing.TB, g *Gate, question string, hits []docent.Hit) answer.Evidence {
	t.Helper()
	ev, err := g.Gate(context.Background(), answer.GateRequest{Question: question, Query: question, Hits: hits})
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

// generate runs the Extractive generator on the evidence, as the
// pipeline does after an answered decision.
func generate(t testing.TB, question string, ev answer.Evidence) string {
	t.Helper()
	res, err := NewExtractive().Generate(context.Background(), answer.GenerateRequest{
		Question: question, Query: question, Sources: ev.Sources, Conflict: ev.Conflict, Terms: ev.Terms, Basis: ev.Basis})
	if err != nil {
		t.Fatal(err)
	}
	return res.Text
}

// sourceIDs returns the chunk IDs of sources, in order.
func sourceIDs(srcs []answer.Source) string {
	ids := make([]string, len(srcs))
	for i, s := range srcs {
		ids[i] = s.Hit.Chunk.ID
	}
	return strings.Join(ids, ",")
}

// pageIDs returns the chunk IDs of pages, in order.
func pageIDs(pages []answer.Page) string {
	ids := make([]string, len(pages))
	for i, p := range pages {
		ids[i] = p.Hit.Chunk.ID
	}
	return strings.Join(ids, ",")
}

// unitTexts returns the display texts of units.
func unitTexts(us []unit) []string {
	out := make([]string, len(us))
	for i, u := range us {
		out[i] = u.display()
	}
	return out
}

// analyzedQuestion returns the question analysed over corp.
func analyzedQuestion(t testing.TB, text string, corp *CorpusStats) *question {
	t.Helper()
	c, err := corp.Get(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return newQuestion(text, c, nil)
}
