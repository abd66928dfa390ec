package offline

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/answer"
	"github.com/docent-hq/docent/search"
)

// earlyModel scores every passage of a chunk alike, by the chunk's
// position in its page: σ(bias + w/(1+Ord)). Setting Ord sets the
// passage probability of a candidate, which is what the gate's choices
// of closest page and sources read.
func earlyModel(bias, w float64) PassageModel {
	return PassageModel{Bias: bias, Weights: map[string]float64{"early": w}}
}

func sigmoid(z float64) float64 { return 1 / (1 + math.Exp(-z)) }

// kilnChunk returns a chunk of a kiln page: doc names the page, ord its
// position in the page (the knob of earlyModel).
func kilnChunk(id, doc, title string, ord int, updated string) docent.Chunk {
	return wikiPage(id, doc, title, []string{"Firing"}, updated, ord, "The kiln fires glazed pieces on Fridays. Entry "+id+".")
}

func TestGateClosestPage(t *testing.T) {
	a := kilnChunk("a", "a.md", "Kiln A", 1, "")
	b := kilnChunk("b", "b.md", "Kiln B", 0, "")
	x := kilnChunk("x", "x.md", "Kiln X", 1, "")
	y := kilnChunk("y", "y.md", "Kiln Y", 1, "")
	cases := []struct {
		name    string
		w       float64
		order   []docent.Chunk
		closest string
	}{
		// pA = σ(w/2), pB = σ(w): 0.55 and 0.60 differ by less than
		// overtake, 0.73 and 0.88 by more.
		{"a slightly better second page does not go first", 0.4, []docent.Chunk{a, b, x}, "a"},
		{"a clearly better second page goes first", 2, []docent.Chunk{a, b, x}, "b"},
		{"a clearly better third page goes first", 2, []docent.Chunk{a, x, b}, "b"},
		{"a fourth page is not weighed against the first", 2, []docent.Chunk{a, x, y, b}, "a"},
	}
	corp := wikiCorpus(a, b, x, y)
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			g := NewGate(GateOptions{Corpus: corp, Passage: earlyModel(0, tt.w)}, nil)
			ev := mustGate(t, g, "when does the kiln fire glazed pieces", ranked(tt.order...))
			if got := ev.Sources[0].Hit.Chunk.ID; got != tt.closest {
				t.Fatalf("closest %s, want %s (sources %s)", got, tt.closest, sourceIDs(ev.Sources))
			}
			if ev.Pages[0].Hit.Chunk.ID != tt.closest {
				t.Errorf("first page %s, want %s", ev.Pages[0].Hit.Chunk.ID, tt.closest)
			}
			pClosest, pOther := sigmoid(tt.w/2), sigmoid(tt.w)
			if tt.closest == "b" {
				pClosest, pOther = pOther, pClosest
			}
			if math.Abs(ev.Features.Passage-pClosest) > 1e-9 || math.Abs(ev.Features.Runner-pOther) > 1e-9 {
				t.Errorf("passage %v runner %v, want %v %v", ev.Features.Passage, ev.Features.Runner, pClosest, pOther)
			}
		})
	}
}

func TestGateSources(t *testing.T) {
	// σ(-1 + 4/(1+Ord)): Ord 0 0.95, Ord 1 0.73, Ord 2 0.58, Ord 3 0.5;
	// sourceShare of 0.95 is 0.57.
	p0 := kilnChunk("p0", "p.md", "Kiln P", 0, "2025-01-01")
	p1 := kilnChunk("p1", "p.md", "Kiln P", 1, "2025-01-01")
	p2 := kilnChunk("p2", "p.md", "Kiln P", 2, "2025-01-01")
	p3 := kilnChunk("p3", "p.md", "Kiln P", 3, "2025-01-01")
	q1 := kilnChunk("q1", "q.md", "Glaze schedule", 1, "2025-05-01")
	qOld := kilnChunk("q-old", "q-2023.md", "Glaze schedule (2023)", 0, "2023-05-01")
	r3 := kilnChunk("r3", "r.md", "Kiln R", 3, "2025-01-01")
	s0 := kilnChunk("s0", "s.md", "Kiln S", 0, "2025-01-01")
	u0 := kilnChunk("u0", "u.md", "Kiln U", 0, "2025-01-01")
	// A newer page under the same title that holds other sections is
	// another page, not a version of s.md.
	sOther := wikiPage("s-other", "glazes/s.md", "Kiln S", []string{"Glaze recipes"}, "2025-06-01", 0,
		"The kiln fires glazed pieces on Fridays. Entry s-other.")
	corp := wikiCorpus(p0, p1, p2, p3, q1, qOld, r3, s0, u0, sOther)
	tests := []struct {
		name string
		max  int
		hits []docent.Chunk
		want string
	}{
		{"the closest page's best chunk first, then its chunks that score as well",
			4, []docent.Chunk{p1, p0, p3}, "p0,p1"},
		{"only the closest page's first chunks are read",
			4, []docent.Chunk{p0, p3, p1, p2}, "p0,p1"},
		{"then one chunk of every further page that scores as well, in rank order",
			4, []docent.Chunk{p0, r3, q1, s0}, "p0,q1,s0"},
		{"at most MaxSources",
			3, []docent.Chunk{p0, p1, q1, s0, u0}, "p0,p1,q1"},
		{"a page with a newer version among the candidates is left out",
			4, []docent.Chunk{p0, qOld, q1}, "p0,q1"},
		{"a newer page with the same title and other sections is no newer version",
			4, []docent.Chunk{p0, s0, sOther}, "p0,s0,s-other"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewGate(GateOptions{Corpus: corp, Passage: earlyModel(-1, 4), MaxSources: tt.max}, nil)
			ev := mustGate(t, g, "when does the kiln fire glazed pieces", ranked(tt.hits...))
			if got := sourceIDs(ev.Sources); got != tt.want {
				t.Errorf("sources %s, want %s", got, tt.want)
			}
			for i, s := range ev.Sources {
				if s.N != i+1 {
					t.Errorf("source %d numbered %d", i, s.N)
				}
			}
		})
	}
}

func TestGateAddsAConflictingVersion(t *testing.T) {
	corp := wikiCorpus(wiki...)
	ev := mustGate(t, testGate(corp), "how much are the studio dues", ranked(wkDues, wkLockers, wkGuests, wkLaserBooking, wkInductions, wkDuesOld))
	if ev.Sources[0].Hit.Chunk.ID != "dues-rates" {
		t.Fatalf("sources %s, want the current dues first", sourceIDs(ev.Sources))
	}
	last := ev.Sources[len(ev.Sources)-1]
	if last.Hit.Chunk.ID != "dues-rates-2022" {
		t.Fatalf("sources %s, want the 2022 version added", sourceIDs(ev.Sources))
	}
	if ev.Conflict == nil || ev.Conflict.Newer != 1 || ev.Conflict.Older != last.N {
		t.Fatalf("conflict %+v, want newer 1 older %d", ev.Conflict, last.N)
	}
	if !slices.Contains(ev.Conflict.Terms, "due") {
		t.Errorf("conflict terms %v, want the shared heading words", ev.Conflict.Terms)
	}
	for _, w := range []string{"newer members/dues.md (updated 2025-09-01)", "$90", "older members/dues-2022.md (updated 2022-02-01)", "$80"} {
		if !strings.Contains(ev.ConflictNote, w) {
			t.Errorf("conflict note %q lacks %q", ev.ConflictNote, w)
		}
	}
	t.Run("a version below the scored candidates is scored for the answer", func(t *testing.T) {
		hits := ranked(wkDues)
		for i := range passageDepth {
			c := wkLockers
			c.ID, c.DocID = fmt.Sprintf("locker-%d", i), fmt.Sprintf("space/lockers-%d.md", i)
			hits = append(hits, candidate(c, 0.5, i+2, 0.3))
		}
		hits = append(hits, candidate(wkDuesOld, 0.4, 0, 0.3))
		text, ev := answerFrom(t, testGate(corp), "how much are the studio dues", hits)
		if ev.Conflict == nil || !strings.Contains(text, "$90") || !strings.Contains(text, "Studio — Monthly dues: $80") {
			t.Errorf("conflict %+v answer %q", ev.Conflict, text)
		}
	})
	// The old version is no page of its own: the newer one stands for it.
	if strings.Contains(pageIDs(ev.Pages), "dues-rates-2022") {
		t.Errorf("pages %s link the superseded version", pageIDs(ev.Pages))
	}
}

func TestGateUncertainPages(t *testing.T) {
	corp := wikiCorpus(wiki...)
	t.Run("the closest page and the next distinct pages, each with its passage", func(t *testing.T) {
		hits := ranked(wkLaserBooking, wkLaserErrors, wkDuesOld, wkDues, wkInductions, wkLockers)
		ev := mustGate(t, testGate(corp), "can I book the laser cutter for a whole day", hits)
		if got := pageIDs(ev.Pages); got != "laser-booking,dues-rates,inductions" {
			t.Errorf("pages %s, want the laser page, then one chunk of each further page, the 2022 dues left out", got)
		}
		if len(ev.Pages) != answer.MaxPages {
			t.Errorf("%d pages, want %d", len(ev.Pages), answer.MaxPages)
		}
		for _, p := range ev.Pages {
			if p.Passage == "" || !strings.Contains(p.Hit.Chunk.Text, p.Passage) {
				t.Errorf("page %s passage %q is not a passage of it", p.Hit.Chunk.ID, p.Passage)
			}
		}
		if ev.Pages[0].Passage != "Book the laser cutter in Skedda up to 7 days ahead." {
			t.Errorf("closest passage %q", ev.Pages[0].Passage)
		}
	})
	t.Run("pages below the first candidates the passages are read from are not linked", func(t *testing.T) {
		var hits []docent.Hit
		for i := range passageDepth {
			c := wkLaserBooking
			c.ID = fmt.Sprintf("laser-%d", i)
			hits = append(hits, candidate(c, 1, i+1, 0.5))
		}
		hits = append(hits, candidate(wkLockers, 0.9, 0, 0.5))
		ev := mustGate(t, testGate(corp), "can I book the laser cutter for a whole day", hits)
		if got := pageIDs(ev.Pages); got != "laser-0" {
			t.Errorf("pages %s, want only the laser page", got)
		}
	})
	t.Run("a passage that leads in to a list shows the list's first items", func(t *testing.T) {
		c := wikiPage("kiln-kit", "shop/kit.md", "Kiln kit", []string{"Before a firing"}, "", 0,
			"Before a kiln firing, check you have:\n\n- heat gloves\n- goggles\n- a steward nearby\n- a timer\n\nSign the log after.")
		ev := mustGate(t, testGate(wikiCorpus(c)), "what do I need to have before a kiln firing", ranked(c))
		if got := ev.Pages[0].Passage; got != "Before a kiln firing, check you have: heat gloves; goggles; a steward nearby" {
			t.Errorf("passage %q, want the lead-in and the first %d items", got, maxLeadItems)
		}
	})
	t.Run("source markers of a passage are plain numbers", func(t *testing.T) {
		c := wikiPage("cite", "cite.md", "Kiln history", nil, "", 0, "The kiln was donated in 2019 [2].")
		ev := mustGate(t, testGate(wikiCorpus(c)), "who donated the kiln", ranked(c))
		if got := ev.Pages[0].Passage; got != "The kiln was donated in 2019 (2)." {
			t.Errorf("passage %q", got)
		}
	})
}

func TestGateMissing(t *testing.T) {
	corp := wikiCorpus(wiki...)
	g := testGate(corp)
	tests := []struct {
		name, question string
		hits           []docent.Chunk
		missing        []string
		covered        string
	}{
		{"a name the closest page lacks, and the names its table lists",
			"what are the monthly dues of the Founder plan", []docent.Chunk{wkDues, wkLockers},
			[]string{"Founder"}, "Hobbyist, Studio and Student"},
		{"a code the closest page lacks",
			"what does LZ-77 mean on the laser panel", []docent.Chunk{wkLaserErrors, wkLaserSafety},
			[]string{"LZ-77"}, "LZ-12, LZ-30 and LZ-41"},
		{"a listed name is no gap",
			"what are the monthly dues of the Studio plan", []docent.Chunk{wkDues, wkLockers}, nil, ""},
		{"an unknown word in lower case is no detail",
			"what are the monthly dues of the founder plan", []docent.Chunk{wkDues, wkLockers}, nil, ""},
		{"an opaque identifier is no detail",
			"laser job 01HZX3K9QW stopped with LZ-30, what do I do", []docent.Chunk{wkLaserErrors}, nil, ""},
		{"a gap outside a keyed table lists nothing",
			"can I bring a guest from Lisbon", []docent.Chunk{wkGuests}, []string{"Lisbon"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := mustGate(t, g, tt.question, ranked(tt.hits...))
			if !slices.Equal(ev.Missing, tt.missing) || ev.Covered != tt.covered {
				t.Errorf("missing %q covered %q, want %q %q", ev.Missing, ev.Covered, tt.missing, tt.covered)
			}
			if (ev.Features.Missing > 0) != (len(tt.missing) > 0) {
				t.Errorf("Features.Missing %v with missing %q", ev.Features.Missing, ev.Missing)
			}
		})
	}
	t.Run("a detail another candidate holds weighs but is not named", func(t *testing.T) {
		founders := wikiPage("founders", "members/founders.md", "Founding members", nil, "2025-01-01", 0,
			"The Founder plan closed to new members in 2019.")
		g := testGate(wikiCorpus(append(slices.Clone(wiki), founders)...))
		ev := mustGate(t, g, "what are the monthly dues of the Founder plan", ranked(wkDues, founders))
		if len(ev.Missing) != 0 || ev.Features.Missing == 0 {
			t.Errorf("missing %q, Features.Missing %v: want no detail named (a candidate mentions it) and the closest page's gap weighed",
				ev.Missing, ev.Features.Missing)
		}
	})
	t.Run("long lists end in others", func(t *testing.T) {
		var b strings.Builder
		b.WriteString("| Bench | Owner |\n|---|---|\n")
		for i := range maxCovered + 2 {
			fmt.Fprintf(&b, "| B%d | member %d |\n", i+1, i+1)
		}
		c := wikiPage("benches", "benches.md", "Bench owners", nil, "", 0, b.String())
		ev := mustGate(t, testGate(wikiCorpus(c)), "who owns bench Q7", ranked(c))
		if !slices.Equal(ev.Missing, []string{"Q7"}) || ev.Covered != "B1, B2, B3, B4, B5, B6, B7, B8 and others" {
			t.Errorf("missing %q covered %q", ev.Missing, ev.Covered)
		}
	})
}

func TestGateFeatures(t *testing.T) {
	corp := wikiCorpus(wiki...)
	// The lockers page in two chunks: the question's words are split
	// between them.
	lockA := wikiPage("lock-a", "space/storage.md", "Storage", nil, "", 0, "Padlocks are sold at the desk.")
	lockB := wikiPage("lock-b", "space/storage.md", "Storage", nil, "", 1, "Lockers are on the second floor.")
	corp = wikiCorpus(append(wiki, lockA, lockB)...)
	g := NewGate(GateOptions{Corpus: corp, Passage: coverModel}, nil)
	c, _ := corp.Get(context.Background())
	q := "where are the lockers and padlocks"
	t.Run("coverage of the passage, its chunk and its page", func(t *testing.T) {
		hits := []docent.Hit{candidate(lockA, 1, 3, 1.3), candidate(wkDues, 0.9, 1, 0.4), candidate(lockB, 0.8, 0, 0.3)}
		ev := mustGate(t, g, q, hits)
		f := ev.Features
		locker, padlock := c.IDF("locker"), c.IDF("padlock")
		total := locker + padlock
		// The best passage holds the rarer word, its page both.
		if math.Abs(f.Coverage-padlock/total) > 1e-9 || math.Abs(f.Chunk-padlock/total) > 1e-9 || math.Abs(f.Page-1) > 1e-9 {
			t.Errorf("coverage %v chunk %v page %v, want %v %v 1", f.Coverage, f.Chunk, f.Page, padlock/total, padlock/total)
		}
		if f.Cosine != 1 || f.Keyword != 1.0/3 {
			t.Errorf("cosine %v keyword %v, want 1 (clamped) and 1/3", f.Cosine, f.Keyword)
		}
		if math.Abs(f.Agreement-2.0/3) > 1e-9 {
			t.Errorf("agreement %v, want 2 of 3 candidates on the closest page", f.Agreement)
		}
		if f.Asks != 1 || f.Kind != 1 {
			t.Errorf("asks %v kind %v, want a where-question answered by a floor", f.Asks, f.Kind)
		}
		if f.Missing != 0 || f.Unknown != 0 || f.Gap != 0 {
			t.Errorf("missing %v unknown %v gap %v, want none: the page holds every term", f.Missing, f.Unknown, f.Gap)
		}
		if want := 2.0 / lengthScale; math.Abs(f.Length-want) > 1e-9 {
			t.Errorf("length %v, want %v", f.Length, want)
		}
		// Precision reads the passage's side: of its own terms, the share
		// the question holds (padlock, of padlock, sold, desk).
		terms := search.TermSet("Padlocks are sold at the desk.")
		if want := 1 / float64(len(terms)); len(terms) < 2 || math.Abs(f.Precision-want) > 1e-9 {
			t.Errorf("precision %v, want %v (terms %v)", f.Precision, want, terms)
		}
	})
	t.Run("no keyword rank, a negative cosine", func(t *testing.T) {
		ev := mustGate(t, g, q, []docent.Hit{candidate(lockA, 1, 0, -0.2)})
		if ev.Features.Keyword != 0 || ev.Features.Cosine != 0 || ev.Features.Agreement != 1 {
			t.Errorf("keyword %v cosine %v agreement %v", ev.Features.Keyword, ev.Features.Cosine, ev.Features.Agreement)
		}
	})
	t.Run("agreement counts the first five candidates", func(t *testing.T) {
		hits := ranked(lockA, wkDues, wkGuests, wkInductions, wkDoor, lockB)
		ev := mustGate(t, g, q, hits)
		if ev.Features.Agreement != 0.2 {
			t.Errorf("agreement %v, want 1 of 5", ev.Features.Agreement)
		}
	})
	t.Run("a kind of answer the passage lacks", func(t *testing.T) {
		ev := mustGate(t, g, "when do padlocks go on sale", []docent.Hit{candidate(lockB, 1, 1, 0.5)})
		if ev.Features.Asks != 1 || ev.Features.Kind != 0 {
			t.Errorf("asks %v kind %v, want a time asked and none given", ev.Features.Asks, ev.Features.Kind)
		}
	})
	t.Run("no kind asked", func(t *testing.T) {
		ev := mustGate(t, g, "padlocks at the desk", []docent.Hit{candidate(lockB, 1, 1, 0.5)})
		if ev.Features.Asks != 0 || ev.Features.Kind != 0 {
			t.Errorf("asks %v kind %v", ev.Features.Asks, ev.Features.Kind)
		}
	})
	t.Run("unknown words and missing details", func(t *testing.T) {
		ev := mustGate(t, g, "are padlocks sold in Oslo", []docent.Hit{candidate(lockB, 1, 1, 0.5)})
		terms := analyzedQuestion(t, "are padlocks sold in Oslo", corp)
		oslo := c.IDF("oslo") / terms.total
		if math.Abs(ev.Features.Missing-oslo) > 1e-9 || math.Abs(ev.Features.Unknown-oslo) > 1e-9 {
			t.Errorf("missing %v unknown %v, want %v", ev.Features.Missing, ev.Features.Unknown, oslo)
		}
		// The gap is the weightiest term the page lacks: Oslo, in no chunk,
		// over padlocks, which another chunk holds.
		if !near(ev.Features.Gap, oslo) || c.IDF("padlock") >= c.IDF("oslo") {
			t.Errorf("gap %v, want %v", ev.Features.Gap, oslo)
		}
		// A word written in parts weighs as one word.
		ev = mustGate(t, g, "are zither-harps on the floor", []docent.Hit{candidate(lockB, 1, 1, 0.5)})
		zq := analyzedQuestion(t, "are zither-harps on the floor", corp)
		if want := c.IDF("zither") / zq.total; !near(ev.Features.Gap, want) {
			t.Errorf("gap %v, want %v", ev.Features.Gap, want)
		}
		ev = mustGate(t, g, "are padlocks sold with zithers", []docent.Hit{candidate(lockB, 1, 1, 0.5)})
		if ev.Features.Missing != 0 || ev.Features.Unknown == 0 {
			t.Errorf("lower-case unknown: missing %v unknown %v, want 0 and more", ev.Features.Missing, ev.Features.Unknown)
		}
	})
	t.Run("a long question", func(t *testing.T) {
		var words []string
		for i := range int(lengthScale) + 1 {
			words = append(words, "padlock"+strings.Repeat("x", i+1))
		}
		long := strings.Join(words, " ")
		ev := mustGate(t, g, long, []docent.Hit{candidate(lockB, 1, 1, 0.5)})
		if ev.Features.Length != 1 {
			t.Errorf("length %v, want 1", ev.Features.Length)
		}
	})
}

func TestGateWithoutEvidence(t *testing.T) {
	g := testGate(wikiCorpus(wiki...))
	ev := mustGate(t, g, "where are the lockers", nil)
	if ev.Detail != "no candidates" || len(ev.Sources) != 0 || len(ev.Pages) != 0 || ev.Basis != nil || ev.Terms["locker"] == 0 {
		t.Errorf("no hits: %+v", ev)
	}
	ev = mustGate(t, g, "is it?", ranked(wkLockers))
	if ev.Detail != "no content terms" || len(ev.Sources) != 0 || ev.Features != (answer.Features{}) {
		t.Errorf("no content terms: %+v", ev)
	}
	src := &loader{}
	src.set(nil, errors.New("index closed"), nil)
	_, err := NewGate(GateOptions{Corpus: NewCorpusStats(src)}, nil).Gate(context.Background(), answer.GateRequest{Question: "x", Hits: ranked(wkLockers)})
	if err == nil {
		t.Error("no error when the corpus statistics fail")
	}
}

func TestGateSetsRelevance(t *testing.T) {
	corp := wikiCorpus(wiki...)
	hits := ranked(wkLockers, wkGuests)
	mustGate(t, testGate(corp), "where are the lockers for guests", hits)
	c, _ := corp.Get(context.Background())
	locker, guest := c.IDF("locker"), c.IDF("guest")
	if want := round4(locker / (locker + guest)); hits[0].Relevance != want {
		t.Errorf("lockers relevance %v, want %v", hits[0].Relevance, want)
	}
	if want := round4(guest / (locker + guest)); hits[1].Relevance != want {
		t.Errorf("guests relevance %v, want %v", hits[1].Relevance, want)
	}
}

func TestGateWithoutCorpus(t *testing.T) {
	// IDF is estimated over the candidates: a term in every candidate
	// weighs least.
	g := NewGate(GateOptions{Passage: coverModel}, nil)
	ev := mustGate(t, g, "where are the lockers on the second floor", ranked(wkLockers, wkGuests, wkDues))
	if ev.Terms["locker"] == 0 || ev.Features.Unknown != 0 || ev.Sources[0].Hit.Chunk.ID != "lockers" {
		t.Errorf("terms %v unknown %v sources %s", ev.Terms, ev.Features.Unknown, sourceIDs(ev.Sources))
	}
}

func TestGateParts(t *testing.T) {
	corp := wikiCorpus(wiki...)
	g := testGate(corp)
	req := answer.GateRequest{
		Question:   "where are the lockers and who runs the inductions and is there a sauna",
		Query:      "where are the lockers and who runs the inductions and is there a sauna",
		SubQueries: []string{"where are the lockers", "who runs the inductions", "is there a Sauna"},
		Asks:       []string{"where are the lockers", "who runs the inductions", "is there a Sauna"},
		Hits:       ranked(wkLockers, wkGuests),
		PartHits: [][]docent.Hit{
			ranked(wkGuests, wkLockers),
			ranked(wkInductions, wkLockers),
			ranked(wkDoor),
		},
	}
	ev, err := g.Gate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(ev.Parts) != 3 {
		t.Fatalf("%d parts, want 3", len(ev.Parts))
	}
	byN := map[int]string{}
	for _, s := range ev.Sources {
		if _, dup := byN[s.N]; dup {
			t.Errorf("source number %d twice", s.N)
		}
		byN[s.N] = s.Hit.Chunk.ID
	}
	idsOf := func(ns []int) string {
		var ids []string
		for _, n := range ns {
			ids = append(ids, byN[n])
		}
		return strings.Join(ids, ",")
	}
	tests := []struct {
		ask, first string
		missing    []string
	}{
		// The lockers part is measured on the whole question's candidates
		// too, the inductions part on its own.
		{"where are the lockers", "lockers", nil},
		{"who runs the inductions", "inductions", nil},
		{"is there a Sauna", "", []string{"Sauna"}}, // from whichever candidates measure better
	}
	for i, tt := range tests {
		p := ev.Parts[i]
		t.Run(tt.ask, func(t *testing.T) {
			if p.Ask != tt.ask || !slices.Equal(p.Missing, tt.missing) || p.Terms == nil {
				t.Errorf("part %+v", p)
			}
			if len(p.Sources) == 0 || len(p.Sources) > sourcesPerPart || (tt.first != "" && byN[p.Sources[0]] != tt.first) {
				t.Errorf("part sources %s, want %s first, at most %d", idsOf(p.Sources), tt.first, sourcesPerPart)
			}
		})
	}
	if ev.Parts[0].Features.Passage < ev.Parts[2].Features.Passage {
		t.Errorf("an answered part scores %v under a missing one %v", ev.Parts[0].Features.Passage, ev.Parts[2].Features.Passage)
	}
	t.Run("parts as the sub-queries when the asks do not match", func(t *testing.T) {
		r := req
		r.Asks = []string{"only one"}
		ev, err := g.Gate(context.Background(), r)
		if err != nil {
			t.Fatal(err)
		}
		if len(ev.Parts) != 3 || ev.Parts[1].Ask != "who runs the inductions" {
			t.Errorf("parts %+v", ev.Parts)
		}
	})
	t.Run("no parts without their candidates", func(t *testing.T) {
		r := req
		r.PartHits = r.PartHits[:2]
		ev, err := g.Gate(context.Background(), r)
		if err != nil {
			t.Fatal(err)
		}
		if len(ev.Parts) != 0 {
			t.Errorf("%d parts", len(ev.Parts))
		}
	})
}

func TestGateObserveAndSetPassage(t *testing.T) {
	corp := wikiCorpus(wiki...)
	g := testGate(corp)
	var got []PassageObservation
	g.Observe(func(obs []PassageObservation) { got = append(got, obs...) })
	hits := ranked(wkLockers, wkGuests)
	ev := mustGate(t, g, "where are the lockers", hits)
	if want := len(unitsOf(wkLockers)) + len(unitsOf(wkGuests)); len(got) != want {
		t.Fatalf("%d observations, want one per passage (%d)", len(got), want)
	}
	for _, o := range got {
		if o.Question != "where are the lockers" || len(o.Features) != len(PassageFeatureNames) || o.DocID == "" || o.Text == "" {
			t.Errorf("observation %+v", o)
		}
	}
	if math.Abs(coverModel.score(got[0].Features)-ev.Features.Passage) > 1e-9 {
		t.Errorf("observed features score %v, gate measured %v", coverModel.score(got[0].Features), ev.Features.Passage)
	}
	g.Observe(nil)
	mustGate(t, g, "where are the lockers", hits)
	if want := len(unitsOf(wkLockers)) + len(unitsOf(wkGuests)); len(got) != want {
		t.Errorf("observed after Observe(nil)")
	}
	flat := PassageModel{Bias: 2, Weights: map[string]float64{}}
	g.SetPassage(flat)
	if g.Passage().Bias != 2 {
		t.Errorf("Passage() = %+v", g.Passage())
	}
	if ev := mustGate(t, g, "where are the lockers", hits); math.Abs(ev.Features.Passage-sigmoid(2)) > 1e-9 {
		t.Errorf("passage %v after SetPassage, want %v", ev.Features.Passage, sigmoid(2))
	}
	if NewGate(GateOptions{}, nil).Passage().Weights["cover"] != DefaultPassage.Weights["cover"] {
		t.Error("a zero passage model does not take DefaultPassage")
	}
}

// embedder embeds by counting the words of a fixed vocabulary; it fails
// when err is set.
type embedder struct {
	vocab []string
	err   error
	calls int
}

func (e *embedder) EmbedDocuments(_ context.Context, texts []string) ([][]float32, error) {
	e.calls++
	if e.err != nil {
		return nil, e.err
	}
	out := make([][]float32, len(texts))
	for i, text := range texts {
		v := make([]float32, len(e.vocab))
		for k, w := range e.vocab {
			v[k] = float32(strings.Count(strings.ToLower(text), w))
		}
		out[i] = v
	}
	return out, nil
}

func TestGateEmbedder(t *testing.T) {
	corp := wikiCorpus(wiki...)
	simModel := PassageModel{Weights: map[string]float64{"sim": 4}}
	q := "where on the floor can my bag go"
	hits := ranked(wkLockers)
	t.Run("the passage most like the question", func(t *testing.T) {
		emb := &embedder{vocab: []string{"where", "floor", "cost"}}
		g := NewGate(GateOptions{Corpus: corp, Passage: simModel, Embedder: emb}, nil)
		ev := mustGate(t, g, q, hits)
		if ev.Pages[0].Passage != "Lockers are on the second floor next to the wood shop." || emb.calls != 1 {
			t.Errorf("passage %q after %d calls", ev.Pages[0].Passage, emb.calls)
		}
		if math.Abs(ev.Features.Passage-sigmoid(4*1/math.Sqrt(2))) > 1e-6 {
			t.Errorf("passage p %v, want σ(4·cos 45°)", ev.Features.Passage)
		}
	})
	t.Run("a failed embedding weighs nothing", func(t *testing.T) {
		emb := &embedder{vocab: []string{"where"}, err: errors.New("model gone")}
		g := NewGate(GateOptions{Corpus: corp, Passage: simModel, Embedder: emb}, nil)
		ev := mustGate(t, g, q, hits)
		if ev.Features.Passage != 0.5 {
			t.Errorf("passage p %v, want σ(0)", ev.Features.Passage)
		}
	})
}
