package answer

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/search"
)

// Fixture pages for the gate: a travel page with a table of cities, two
// versions of an expense page, and a benefits page.
var (
	chHotelCaps = docent.Chunk{
		ID: "c-caps", DocID: "travel/booking.md", Title: "Booking business travel", Section: []string{"Hotel rules"},
		URL: "https://handbook.example/travel/booking#hotel-rules", UpdatedAt: day("2025-12-09"), Ord: 3,
		Text: "Booking business travel > Hotel rules\n\nBook hotels in Navan. Navan shows a nightly cap for each city.\n\n" +
			"| City | Nightly cap |\n|---|---|\n| San Francisco | $325 |\n| Boston | $275 |\n| New York City | $350 |\n| Munich | €220 |\n",
	}
	chFlights = docent.Chunk{
		ID: "c-flights", DocID: "travel/booking.md", Title: "Booking business travel", Section: []string{"Flight rules"},
		URL: "https://handbook.example/travel/booking#flight-rules", UpdatedAt: day("2025-12-09"), Ord: 2,
		Text: "Booking business travel > Flight rules\n\nBook economy class for flights under 6 hours. Business class needs VP approval.",
	}
	chMealsNew = docent.Chunk{
		ID: "c-meals-new", DocID: "travel/expense-policy.md", Title: "Expense policy", Section: []string{"Meals"},
		URL: "https://handbook.example/travel/expense-policy#meals", UpdatedAt: day("2026-01-15"), Ord: 1,
		Text: "Expense policy > Meals\n\nThe daily meal per diem is $75. Alcohol is not reimbursed.\n\n" +
			"Laundry is reimbursed after 5 nights away.",
	}
	chMealsOld = docent.Chunk{
		ID: "c-meals-old", DocID: "travel/expense-policy-2021.md", Title: "Expense policy (2021)", Section: []string{"Meals"},
		URL: "https://handbook.example/travel/expense-policy-2021#meals", UpdatedAt: day("2021-03-01"), Ord: 1,
		Text: "Expense policy (2021) > Meals\n\nThe daily meal per diem is $75. Alcohol is not reimbursed.\n\n" +
			"Laundry is reimbursed after 7 nights away.",
	}
	chBenefits = docent.Chunk{
		ID: "c-benefits", DocID: "people/benefits.md", Title: "Benefits", Section: []string{"Dental"},
		URL: "https://handbook.example/people/benefits#dental", UpdatedAt: day("2025-10-06"), Ord: 2,
		Text: "Benefits > Dental\n\nThe dental plan covers two cleanings a year and 50% of orthodontics.",
	}
)

// corpusOf returns statistics over the fixture chunks plus filler chunks,
// so that IDF behaves as on a real corpus.
func corpusOf(chunks ...docent.Chunk) *CorpusStats {
	all := append([]docent.Chunk(nil), chunks...)
	for i, text := range []string{
		"Security incidents are reported in Slack within one hour.",
		"Deploys run every weekday morning through the pipeline.",
		"The office opens at nine and closes at six.",
		"Password resets take two minutes in Okta.",
		"Taxis to the airport are reimbursed with a receipt.",
		"Mileage is reimbursed at the standard rate.",
		"Team meals are approved by a director.",
	} {
		all = append(all, docent.Chunk{ID: "filler-" + string(rune('a'+i)), DocID: "filler.md", Title: "Misc", Text: text})
	}
	return FixedCorpus(NewCorpus(all))
}

func gateWith(corp *CorpusStats) *Relevance { return NewRelevance(GateOptions{Corpus: corp}, nil) }

func TestGateNamesAMissingCity(t *testing.T) {
	corp := corpusOf(chHotelCaps, chFlights, chMealsNew, chBenefits)
	hits := []docent.Hit{hit(chHotelCaps, 1, 1, 1, 0.7), hit(chFlights, 0.5, 2, 2, 0.4)}
	tests := []struct {
		question string
		missing  string
	}{
		{"What's the hotel cap in London?", "London"},
		// Written in lower case, a place the table does not list is still
		// a missing detail: no chunk holds it and the answer is a row.
		{"whats the hotel cap in london", "london"},
	}
	for _, tt := range tests {
		t.Run(tt.question, func(t *testing.T) {
			d, err := gateWith(corp).Gate(context.Background(), GateRequest{Question: tt.question, Hits: hits})
			if err != nil {
				t.Fatal(err)
			}
			if d.Status != docent.StatusUncertain {
				t.Fatalf("status %s (%s), want uncertain", d.Status, d.Detail)
			}
			if strings.Join(d.Missing, ",") != tt.missing {
				t.Errorf("Missing = %v, want [%s]", d.Missing, tt.missing)
			}
			if d.Covered != "San Francisco, Boston, New York City and Munich" {
				t.Errorf("Covered = %q, want the cities of the table", d.Covered)
			}
			if len(d.Sources) != 1 || d.Sources[0].Hit.Chunk.ID != "c-caps" {
				t.Errorf("sources = %v, want the hotel rules", d.Sources)
			}
		})
	}
	// A listed city is answered.
	d, _ := gateWith(corp).Gate(context.Background(), GateRequest{Question: "What's the hotel cap in Boston?", Hits: hits})
	if d.Status != docent.StatusAnswered || len(d.Missing) > 0 {
		t.Errorf("Boston: status %s missing %v (%s), want answered", d.Status, d.Missing, d.Detail)
	}
}

func TestGateNamesAMissingProperty(t *testing.T) {
	// "acupuncture" is in no chunk: the plan covers things, but not that.
	corp := corpusOf(chBenefits, chHotelCaps, chMealsNew)
	hits := []docent.Hit{hit(chBenefits, 1, 1, 1, 0.6)}
	d, err := gateWith(corp).Gate(context.Background(), GateRequest{Question: "does the dental plan cover Acupuncture?", Hits: hits})
	if err != nil {
		t.Fatal(err)
	}
	if d.Status != docent.StatusUncertain || strings.Join(d.Missing, ",") != "Acupuncture" {
		t.Errorf("status %s missing %v (%s), want uncertain naming Acupuncture", d.Status, d.Missing, d.Detail)
	}
}

func TestGateCitesTheRankFirstPageThatAnswers(t *testing.T) {
	// The meals page ranks first and answers; the benefits page shares a
	// word ("plan") but is not the answer: the meals page is cited first.
	corp := corpusOf(chMealsNew, chBenefits, chHotelCaps)
	hits := []docent.Hit{hit(chMealsNew, 1, 1, 1, 0.6), hit(chBenefits, 0.9, 2, 2, 0.5)}
	d, _ := gateWith(corp).Gate(context.Background(), GateRequest{Question: "How much is the daily meal per diem?", Hits: hits})
	if d.Status != docent.StatusAnswered || d.Sources[0].Hit.Chunk.ID != "c-meals-new" {
		t.Fatalf("status %s sources %v, want answered from the meals page", d.Status, d.Sources)
	}
	// When the first page holds no answer and a lower one clearly does,
	// the lower one is cited.
	hits = []docent.Hit{hit(chBenefits, 1, 1, 1, 0.6), hit(chMealsNew, 0.9, 2, 2, 0.5)}
	d, _ = gateWith(corp).Gate(context.Background(), GateRequest{Question: "How much is the daily meal per diem?", Hits: hits})
	if d.Status != docent.StatusAnswered || d.Sources[0].Hit.Chunk.ID != "c-meals-new" {
		t.Errorf("status %s sources %v, want the answering page first", d.Status, d.Sources)
	}
}

func TestNoConflictFromUnrelatedAmounts(t *testing.T) {
	// The two versions differ only in an amount the question does not ask
	// about (laundry nights): no "sources differ" note.
	corp := corpusOf(chMealsNew, chMealsOld, chBenefits)
	hits := []docent.Hit{hit(chMealsNew, 1, 1, 1, 0.7), hit(chMealsOld, 0.9, 2, 2, 0.7)}
	p := pipeline(t, &fakeSearcher{hits: hits}, nil, nil, GateOptions{Corpus: corp}, Options{})
	a, err := p.Answer(context.Background(), docent.Question{Text: "Is alcohol reimbursed with meals?"})
	if err != nil {
		t.Fatal(err)
	}
	if a.Status != docent.StatusAnswered || a.Trace.Conflict != "" || strings.Contains(a.Text, "differ") {
		t.Errorf("status %s conflict %q text %q, want an answer without a conflict note", a.Status, a.Trace.Conflict, a.Text)
	}
	// Asked about the amount that differs, the note is there.
	a, _ = p.Answer(context.Background(), docent.Question{Text: "After how many nights is laundry reimbursed?"})
	if !strings.Contains(a.Text, "these sources differ") || !strings.Contains(a.Text, "5 nights") || !strings.Contains(a.Text, "7 nights") {
		t.Errorf("laundry: text %q, want the conflict quoted", a.Text)
	}
}

func TestTableRowQuotedAsText(t *testing.T) {
	corp := corpusOf(chHotelCaps, chFlights, chMealsNew)
	p := pipeline(t, &fakeSearcher{hits: []docent.Hit{hit(chHotelCaps, 1, 1, 1, 0.7)}}, nil, nil, GateOptions{Corpus: corp}, Options{})
	a, err := p.Answer(context.Background(), docent.Question{Text: "What is the nightly hotel cap in Boston?"})
	if err != nil {
		t.Fatal(err)
	}
	if a.Status != docent.StatusAnswered || !strings.Contains(a.Text, "Boston: $275 [1].") {
		t.Fatalf("status %s text %q, want the Boston row as text", a.Status, a.Text)
	}
	if regexp.MustCompile("[|`#*]|---").MatchString(a.Text) {
		t.Errorf("answer quotes markdown: %q", a.Text)
	}
}

func TestCodeQuotedOnlyForCommands(t *testing.T) {
	tests := []struct {
		question string
		code     bool
	}{
		{"How do I reset my VPN token?", true},
		{"Is there a limit on VPN token resets?", false},
	}
	for _, tt := range tests {
		t.Run(tt.question, func(t *testing.T) {
			res, err := NewExtractive().Generate(context.Background(), GenerateRequest{Question: tt.question,
				Sources: []Source{{N: 1, Hit: docent.Hit{Chunk: chVPN, Score: 1}}}})
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Contains(res.Text, "`kestrelconnect reset-token`"); got != tt.code {
				t.Errorf("answer %q: quotes the command = %v, want %v", res.Text, got, tt.code)
			}
			if !tt.code && strings.Contains(res.Text, "`") {
				t.Errorf("answer %q quotes code", res.Text)
			}
		})
	}
}

// partsSearcher returns, for each query, the hits of the first key it
// contains.
type partsSearcher struct {
	byWord map[string][]docent.Hit
	order  []string
}

func (s *partsSearcher) Retrieve(_ context.Context, q search.Request) (search.Result, error) {
	var hits []docent.Hit
	seen := map[string]bool{}
	for _, w := range s.order {
		if strings.Contains(strings.ToLower(q.Text), w) {
			for _, h := range s.byWord[w] {
				if !seen[h.Chunk.ID] {
					seen[h.Chunk.ID] = true
					hits = append(hits, h)
				}
			}
		}
	}
	return search.Result{Hits: hits}, nil
}

func TestTwoPartQuestionCitesBothPages(t *testing.T) {
	corp := corpusOf(chHotelCaps, chFlights, chMealsNew, chBenefits)
	s := &partsSearcher{order: []string{"hotel", "per diem"}, byWord: map[string][]docent.Hit{
		"hotel":    {hit(chHotelCaps, 1, 1, 1, 0.7), hit(chFlights, 0.4, 2, 2, 0.3)},
		"per diem": {hit(chMealsNew, 1, 1, 1, 0.7), hit(chBenefits, 0.3, 2, 2, 0.2)},
	}}
	p, err := New(Stages{Retriever: s, Gate: NewRelevance(GateOptions{Corpus: corp}, nil)}, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	a, err := p.Answer(context.Background(), docent.Question{Text: "What's the hotel cap in Boston, and how much is the meal per diem?"})
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Trace.SubQueries) != 2 {
		t.Fatalf("sub-queries %q, want two parts", a.Trace.SubQueries)
	}
	var docs []string
	for _, c := range a.Citations {
		docs = append(docs, c.DocID)
	}
	if a.Status != docent.StatusAnswered || len(docs) < 2 || docs[0] != "travel/booking.md" || docs[1] != "travel/expense-policy.md" {
		t.Fatalf("status %s citations %v text %q, want the booking page then the expense page", a.Status, docs, a.Text)
	}
	if !strings.Contains(a.Text, "$275 [1]") || !strings.Contains(a.Text, "$75 [2]") {
		t.Errorf("text %q, want each part answered with its own citation", a.Text)
	}
	checkCitations(t, a)

	// A part the docs do not cover is named.
	a, _ = p.Answer(context.Background(), docent.Question{Text: "What's the hotel cap in Boston, and can I bring my dog to the hotel?"})
	if a.Status != docent.StatusAnswered || !strings.Contains(a.Text, "$275 [1]") ||
		!regexp.MustCompile(`I couldn't (find|confirm) "can I bring my dog to the hotel"`).MatchString(a.Text) {
		t.Errorf("text %q, want the Boston cap and the dog part named as not covered", a.Text)
	}
}

func TestUncertainReplyLinksTheClosestPageAndStatesNoFact(t *testing.T) {
	corp := corpusOf(chHotelCaps, chFlights, chMealsNew, chBenefits)
	p := pipeline(t, &fakeSearcher{hits: []docent.Hit{hit(chHotelCaps, 1, 1, 1, 0.7), hit(chFlights, 0.5, 2, 2, 0.4)}},
		nil, nil, GateOptions{Corpus: corp}, Options{})
	a, err := p.Answer(context.Background(), docent.Question{Text: "What's the hotel cap in Tokyo?"})
	if err != nil {
		t.Fatal(err)
	}
	if a.Status != docent.StatusUncertain {
		t.Fatalf("status %s, want uncertain (%q)", a.Status, a.Text)
	}
	checkUncertain(t, a)
	if a.Citations[0].URL != chHotelCaps.URL || a.Citations[0].Section != "Hotel rules" {
		t.Errorf("citation %+v, want the hotel rules with their link", a.Citations[0])
	}
	if !strings.Contains(a.Text, "they don't mention Tokyo (they list San Francisco, Boston, New York City and Munich)") {
		t.Errorf("text %q, want Tokyo named as missing with the cities listed", a.Text)
	}
	// No amount is stated: the reply quotes no row as if it answered.
	if regexp.MustCompile(`[$€]\d`).MatchString(a.Text) {
		t.Errorf("uncertain reply states an amount: %q", a.Text)
	}
	if len(a.Trace.Used) != 1 || a.Trace.Used[0] != "c-caps" {
		t.Errorf("Trace.Used = %v", a.Trace.Used)
	}
}

func TestGateNotFoundWhenNothingIsAbout(t *testing.T) {
	corp := corpusOf(chHotelCaps, chFlights, chMealsNew, chBenefits)
	d, _ := gateWith(corp).Gate(context.Background(), GateRequest{Question: "What is on the cafeteria menu on Fridays?",
		Hits: []docent.Hit{hit(chFlights, 1, 1, 1, 0.2), hit(chBenefits, 0.5, 2, 2, 0.1)}})
	if d.Status != docent.StatusNotFound || len(d.Sources) != 0 {
		t.Errorf("status %s sources %d (%s), want not found", d.Status, len(d.Sources), d.Detail)
	}
}

func TestListQuestionQuotesTheList(t *testing.T) {
	levels := docent.Chunk{ID: "c-levels", DocID: "security/data.md", Title: "Data classification", Section: []string{"Classification levels"}, Ord: 1,
		Text: "Data classification > Classification levels\n\n| Level | Description |\n|---|---|\n" +
			"| Public | Approved for anyone |\n| Internal | For employees |\n| Confidential | Need-to-know |\n| Restricted | Named people only |\n"}
	intro := docent.Chunk{ID: "c-intro", DocID: "security/data.md", Title: "Data classification", Ord: 0,
		Text: "Data classification\n\nEvery piece of information has a classification level. The level decides where data may be stored."}
	corp := corpusOf(levels, intro, chBenefits, chFlights)
	p := pipeline(t, &fakeSearcher{hits: []docent.Hit{hit(intro, 1, 1, 1, 0.7), hit(levels, 0.9, 2, 2, 0.6)}}, nil, nil, GateOptions{Corpus: corp}, Options{})
	a, err := p.Answer(context.Background(), docent.Question{Text: "what are the data classification levels"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Public: Approved for anyone", "Internal: For employees", "Confidential: Need-to-know", "Restricted: Named people only"} {
		if !strings.Contains(a.Text, want) {
			t.Errorf("answer %q lacks %q", a.Text, want)
		}
	}
	if a.Citations[0].ChunkID != "c-levels" {
		t.Errorf("first citation %s, want the levels table", a.Citations[0].ChunkID)
	}
}

func TestGateDetailGapsThatMatter(t *testing.T) {
	chStipend := docent.Chunk{
		ID: "c-stipend", DocID: "people/remote.md", Title: "Remote work", Section: []string{"Stipend"}, Ord: 1,
		Text: "Remote work > Stipend\n\nEmployees get a monthly remote work stipend of $75 for internet.",
	}
	chHardware := docent.Chunk{
		ID: "c-hardware", DocID: "people/remote.md", Title: "Remote work", Section: []string{"Hardware"}, Ord: 2,
		Text: "Remote work > Hardware\n\nLaptops are provided as well.",
	}
	chWifi := docent.Chunk{
		ID: "c-wifi", DocID: "it/wifi.md", Title: "Office Wi-Fi", Section: []string{"Networks"}, Ord: 1,
		Text: "Office Wi-Fi > Networks\n\nThe Oakland office has two wifi networks: Corp for laptops and Guest for visitors.",
	}
	corp := corpusOf(chFlights, chHotelCaps, chStipend, chHardware, chBenefits, chWifi)
	tests := []struct {
		name     string
		question string
		hits     []docent.Hit
		status   docent.Status
		missing  string
	}{
		{
			name:     "a place named in passing in a yes/no question",
			question: "can I book business class for a flight to Tokyo?",
			hits:     []docent.Hit{hit(chFlights, 1, 1, 1, 0.6)},
			status:   docent.StatusAnswered,
		},
		{
			name:     "a place the asked amount depends on",
			question: "How much is the hotel cap in Tokyo?",
			hits:     []docent.Hit{hit(chHotelCaps, 1, 1, 1, 0.6)},
			status:   docent.StatusUncertain,
			missing:  "Tokyo",
		},
		{
			name:     "the asker's own circumstances",
			question: "What's the hotel cap in Boston when I travel with my kids?",
			hits:     []docent.Hit{hit(chHotelCaps, 1, 1, 1, 0.6)},
			status:   docent.StatusAnswered,
		},
		{
			name:     "a place the page names another of",
			question: "is there wifi at the Munich office?",
			hits:     []docent.Hit{hit(chWifi, 1, 1, 1, 0.6)},
			status:   docent.StatusUncertain,
			missing:  "Munich",
		},
		{
			name:     "another kind of the thing asked for",
			question: "is there a wellness stipend",
			hits:     []docent.Hit{hit(chStipend, 1, 1, 1, 0.6), hit(chHardware, 0.5, 2, 2, 0.3)},
			status:   docent.StatusUncertain,
			missing:  "wellness",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := gateWith(corp).Gate(context.Background(), GateRequest{Question: tt.question, Hits: tt.hits})
			if err != nil {
				t.Fatal(err)
			}
			if d.Status != tt.status || strings.Join(d.Missing, ",") != tt.missing {
				t.Errorf("status %s missing %v (%s), want %s missing [%s]", d.Status, d.Missing, d.Detail, tt.status, tt.missing)
			}
		})
	}
}

func TestNoConflictBetweenFurtherSources(t *testing.T) {
	// The meals pages differ on laundry, but the question is answered by
	// the benefits page: the two further sources make no note.
	corp := corpusOf(chMealsNew, chMealsOld, chBenefits)
	srcs := []Source{
		{N: 1, Hit: hit(chBenefits, 1, 1, 1, 0.7)},
		{N: 2, Hit: hit(chMealsNew, 0.9, 2, 2, 0.7)},
		{N: 3, Hit: hit(chMealsOld, 0.8, 3, 3, 0.7)},
	}
	q := newQuestion("after how many nights is laundry reimbursed with the dental plan", corp.cur, nil, nil)
	if c, _ := detectConflict(srcs, q.scorer(DefaultWeights), map[int]bool{1: true}); c != nil {
		t.Errorf("conflict %+v between two further sources", c)
	}
	if c, _ := detectConflict(srcs, q.scorer(DefaultWeights), map[int]bool{2: true}); c == nil {
		t.Errorf("no conflict when the newer meals page leads")
	}
}

func TestProcedureAnsweredByItsVerb(t *testing.T) {
	// "Swap shifts ..." is the instruction for "how do I swap shifts"
	// although "swap" is not a verb the gate knows as an instruction.
	chSwap := docent.Chunk{
		ID: "c-swap", DocID: "eng/on-call.md", Title: "On-call rotation", Section: []string{"Swapping shifts"}, Ord: 1,
		Text: "On-call rotation > Swapping shifts\n\nSwap shifts directly in PagerDuty with an override.",
	}
	corp := corpusOf(chSwap, chFlights, chBenefits)
	d, err := gateWith(corp).Gate(context.Background(), GateRequest{Question: "how do I swap on-call shifts?", Hits: []docent.Hit{hit(chSwap, 1, 1, 1, 0.6)}})
	if err != nil {
		t.Fatal(err)
	}
	if d.Status != docent.StatusAnswered {
		t.Errorf("status %s (%s), want answered", d.Status, d.Detail)
	}
}

func TestGateLinksAFocusedPageInsteadOfNotFound(t *testing.T) {
	// Every candidate is a VPN page chunk but the question is in the
	// asker's words: the page is linked as the closest, not "not found".
	vpn := func(id, section, text string, ord int) docent.Chunk {
		return docent.Chunk{ID: id, DocID: "it/vpn.md", Title: "Corporate VPN", Section: []string{section}, Ord: ord,
			Text: "Corporate VPN > " + section + "\n\n" + text}
	}
	chunks := []docent.Chunk{
		vpn("v1", "Installing the client", "Install the client from Self Service on a managed laptop.", 1),
		vpn("v2", "Connecting", "Choose a gateway and sign in with Okta.", 2),
		vpn("v3", "Error codes", "Error E09 means the certificate expired.", 3),
		vpn("v4", "Travel", "The VPN works from most countries.", 4),
		vpn("v5", "Logs", "Collect logs for the help desk.", 5),
	}
	all := append([]docent.Chunk(nil), chunks...)
	all = append(all, chFlights, chBenefits, docent.Chunk{ID: "mac", DocID: "it/laptop.md", Title: "Laptops", Text: "Engineers get a Mac."})
	for i := range 10 {
		all = append(all, docent.Chunk{ID: fmt.Sprint("more-", i), DocID: "more.md", Title: "More", Text: fmt.Sprint("Unrelated note number ", i, ".")})
	}
	corp := corpusOf(all...)
	var hits []docent.Hit
	for i, c := range chunks {
		hits = append(hits, hit(c, 1-0.1*float64(i), i+1, i+1, 0.3))
	}
	d, err := gateWith(corp).Gate(context.Background(), GateRequest{Question: "how do i get the vpn thing on my mac??", Hits: hits})
	if err != nil {
		t.Fatal(err)
	}
	if d.Status == docent.StatusNotFound || len(d.Sources) == 0 || d.Sources[0].Hit.Chunk.DocID != "it/vpn.md" {
		t.Errorf("status %s sources %v (%s), want the VPN page linked", d.Status, d.Sources, d.Detail)
	}
	// A question whose main words the docs never use stays not found.
	d, _ = gateWith(corp).Gate(context.Background(), GateRequest{Question: "can my dog ride the vpn shuttle bus", Hits: hits})
	if d.Status != docent.StatusNotFound {
		t.Errorf("dog: status %s (%s), want not found", d.Status, d.Detail)
	}
}

func TestWhenIsNeedsADate(t *testing.T) {
	// "immediately" places something in time but says no date: "when is
	// v1 shut off" is not answered by it; "when should I rotate" is.
	chV1 := docent.Chunk{
		ID: "c-v1", DocID: "product/v1.md", Title: "Fleet API v1", Section: []string{"Passwords"}, Ord: 1,
		Text: "Fleet API v1 > Passwords\n\nRegenerating the v1 password immediately shuts off the old one.",
	}
	corp := corpusOf(chV1, chFlights, chBenefits)
	hits := []docent.Hit{hit(chV1, 1, 1, 1, 0.6)}
	d, _ := gateWith(corp).Gate(context.Background(), GateRequest{Question: "when is the fleet api v1 shut off?", Hits: hits})
	if d.Status != docent.StatusUncertain {
		t.Errorf("when is: status %s (%s), want uncertain", d.Status, d.Detail)
	}
	d, _ = gateWith(corp).Gate(context.Background(), GateRequest{Question: "when should the v1 password be regenerated?", Hits: hits})
	if d.Status != docent.StatusAnswered {
		t.Errorf("when should: status %s (%s), want answered", d.Status, d.Detail)
	}
}

func TestProcedureCitesThePageItRefersTo(t *testing.T) {
	// The checklist answers "how do I set up my laptop" by pointing at
	// the laptop page: that page, a candidate too, is cited first.
	chChecklist := docent.Chunk{
		ID: "c-check", DocID: "people/onboarding.md", Title: "Onboarding checklist", Section: []string{"Day one"}, Ord: 1,
		Text: "Onboarding checklist > Day one\n\n- Set up your laptop following Laptop Setup Guide.\n- Meet your manager.",
	}
	chLaptop := docent.Chunk{
		ID: "c-laptop", DocID: "it/laptop.md", Title: "Laptop Setup Guide", Section: []string{"First boot"}, Ord: 1,
		Text: "Laptop Setup Guide > First boot\n\nOn day one, sign in with Okta on the new laptop and enroll it in Jamf.",
	}
	corp := corpusOf(chChecklist, chLaptop, chFlights, chBenefits)
	hits := []docent.Hit{hit(chChecklist, 1, 1, 1, 0.7), hit(chLaptop, 0.8, 2, 2, 0.5)}
	d, err := gateWith(corp).Gate(context.Background(), GateRequest{Question: "how do I set up my laptop on day one?", Hits: hits})
	if err != nil {
		t.Fatal(err)
	}
	if d.Status != docent.StatusAnswered || len(d.Sources) < 2 || d.Sources[0].Hit.Chunk.ID != "c-laptop" || d.Sources[1].Hit.Chunk.ID != "c-check" {
		t.Errorf("status %s sources %v (%s), want the laptop page, then the checklist", d.Status, d.Sources, d.Detail)
	}
}

func TestWhoApprovesNamesATeam(t *testing.T) {
	q := newQuestion("Who approves a discount over 30%?", nil, nil, nil)
	u := unit{Text: "Over 30%: CEO, and must be reviewed by the Deal Desk", Terms: termSet("Over 30%: CEO, and must be reviewed by the Deal Desk")}
	u.kinds = unitKinds(u)
	if !q.answers(u, whoType) {
		t.Error("a who question that is not about a role's holder is answered by a role or team")
	}
	for text, want := range map[string]string{
		"Who is the CEO of Kestrel?":        "ceo",
		"who's our head of security":        "head",
		"Who is the security lead?":         "",
		"Who is the engineering director?":  "engineering director",
		"who approves access requests":      "",
		"who is my onboarding buddy":        "",
		"Who are the owners of billing-api": "",
	} {
		if got := askedRole(text); got != want {
			t.Errorf("askedRole(%q) = %q, want %q", text, got, want)
		}
	}
}

func TestWhoNeedsSomeoneElse(t *testing.T) {
	q := newQuestion("Who is the CEO of Kestrel?", nil, nil, nil)
	tests := []struct {
		text string
		want bool
	}{
		{"Business class needs CEO approval.", false},
		{"Flights are booked in the travel tool.", false},
		{"Maria Lopez is the CEO.", true},
		// "Who is the CEO" asks who holds the role: a name, a handle or
		// "the CEO is ...", not another team.
		{"The board appoints the chief executive; ask the People team.", false},
		{"Over 30%: CEO, and must be reviewed by the Deal Desk", false},
		{"Our CEO is Maria Lopez.", true},
		{"Questions for the CEO go to @maria.", true},
	}
	for _, tt := range tests {
		u := unit{Text: tt.text, Terms: termSet(tt.text)}
		u.kinds = unitKinds(u)
		if got := q.answers(u, whoType); got != tt.want {
			t.Errorf("answers(%q) = %v, want %v", tt.text, got, tt.want)
		}
	}
}

// TestDropOpaque: pasted request IDs, UUIDs and log timestamps are no
// question words; codes the docs may list stay.
func TestDropOpaque(t *testing.T) {
	in := "error GK-412 request-id: rq_01JB7Q2M9X site site_4kq9 req_7Rt2Lp " +
		"3f2b8c1e-9d4a-4b7e-8f00-1a2b3c4d5e6f 01JB7Q2M9XK3V8W2 at 2026-11-30T15:04:05Z on v1 401k"
	got := strings.Fields(dropOpaque(in))
	want := []string{"error", "GK-412", "request-id:", "site", "at", "on", "v1", "401k"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("dropOpaque(%q) = %q, want %q", in, got, want)
	}
}
