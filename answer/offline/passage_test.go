package offline

import (
	"math"
	"strings"
	"testing"

	"github.com/docent-hq/docent"
)

// features returns passageFeatures by name.
func features(q *question, c candidateInfo, u unit, want answerType, sim float64) map[string]float64 {
	x := passageFeatures(q, c, u, want, sim)
	m := make(map[string]float64, len(x))
	for i, v := range x {
		m[PassageFeatureNames[i]] = v
	}
	return m
}

// unitOf returns the unit of c whose text is text.
func unitOf(t testing.TB, c docent.Chunk, text string) unit {
	t.Helper()
	for _, u := range unitsOf(c) {
		if u.Text == text {
			return u
		}
	}
	t.Fatalf("no unit %q in %q", text, unitTexts(unitsOf(c)))
	return unit{}
}

// info describes c as candidate rank of the given hits.
func info(q *question, hits []docent.Hit, rank int) candidateInfo {
	sets := make([]map[string]bool, len(hits))
	for i, h := range hits {
		sets[i] = termsOf(h.Chunk)
	}
	ps := &passages{q: q, hits: hits, sets: sets}
	for _, h := range hits {
		ps.top = max(ps.top, h.Score)
	}
	ps.pageRank, ps.pageCov = pageStats(q, hits, sets)
	return ps.info(rank)
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestPassageFeatureNames(t *testing.T) {
	q := newQuestion("where are the lockers", nil, []map[string]bool{{}})
	hits := ranked(wkLockers)
	if got := len(passageFeatures(q, info(q, hits, 0), unitsOf(wkLockers)[0], anyType, 0)); got != len(PassageFeatureNames) {
		t.Fatalf("%d features, %d names", got, len(PassageFeatureNames))
	}
	for name := range DefaultPassage.Weights {
		found := false
		for _, n := range PassageFeatureNames {
			found = found || n == name
		}
		if !found {
			t.Errorf("DefaultPassage weighs an unknown feature %q", name)
		}
	}
	m := PassageModel{Bias: -1, Weights: map[string]float64{"own": 2, "lead": 1}}
	x := make([]float64, len(PassageFeatureNames))
	x[0], x[15], x[1] = 0.5, 1, 7 // own, lead, and an unweighed cover
	if got := m.score(x); !near(got, sigmoid(-1+2*0.5+1)) {
		t.Errorf("score %v, want σ(bias + Σ w·x)", got)
	}
}

func TestPassageFeatures(t *testing.T) {
	corp := wikiCorpus(wiki...)
	c, _ := corp.Get(t.Context())
	idf := c.IDF
	// The laser page's booking chunk as the second candidate, behind
	// the dues page, with a keyword rank and a cosine.
	booking := wkLaserBooking
	booking.Ord = 3
	hits := []docent.Hit{candidate(wkDues, 2, 1, 0.7), candidate(booking, 1, 4, 0.5), candidate(wkLaserErrors, 0.5, 0, 0.2)}
	q := newQuestion("how do I book the laser for a session", c, nil)
	ci := info(q, hits, 1)
	u := unitOf(t, booking, "A session lasts at most 2 hours.")
	f := features(q, ci, u, procedureType, 0.3)
	total := idf("book") + idf("laser") + idf("session")
	const chunk = 1.0 // the chunk holds every term
	tests := []struct {
		name string
		want float64
	}{
		{"own", idf("session") / total},
		{"cover", (idf("session") + titleWeight*idf("laser") + sectionWeight*idf("book")) / total},
		{"heading", idf("book") / total}, // the section's words, title left out
		{"chunk", chunk},
		{"rank", chunk / 2},
		{"fused", chunk * 0.5},
		{"keyword", chunk / 4},
		{"cosine", chunk * 0.5},
		{"kind", 0}, // a procedure is asked; the sentence gives none
		{"lacks", 1},
		{"entry", 0},
		{"keyed", 0},
		{"codes", 0},
		{"meta", 0},
		{"early", 1.0 / 4}, // the chunk's position in its page
		{"lead", 1.0 / 2},  // the passage's in its chunk
		{"length", float64(len(u.Text)) / 300},
		{"page", 1}, // its page's candidates together
		{"pagerank", 1.0 / 2},
		{"listed", 0},
		{"steps", 0},
		{"sim", 0.3},
		{"score", passageScore(q, booking, u, procedureType) / 2},
		{"pairs", q.pairShare(pairsOf(u.display()))},
		{"chunkpairs", q.pairShare(chunkPairs(booking))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !near(f[tt.name], tt.want) {
				t.Errorf("%s = %v, want %v", tt.name, f[tt.name], tt.want)
			}
		})
	}
}

func TestPassageFeatureRules(t *testing.T) {
	corp := wikiCorpus(wiki...)
	c, _ := corp.Get(t.Context())
	meta := wikiPage("meta", "shop/laser-intro.md", "Laser cutter", nil, "", 0,
		"This page describes the laser cutter rules. Book the laser cutter ahead.")
	longText := wikiPage("long", "shop/long.md", "Laser cutter", nil, "", 0,
		"The laser cutter "+strings.Repeat("really ", 60)+"cuts.")
	tests := []struct {
		name     string
		question string
		chunk    docent.Chunk
		unit     string
		feature  string
		want     float64
	}{
		{"kind: a procedure asked, an instruction given", "how do I book the laser cutter", wkLaserBooking,
			"Book the laser cutter in Skedda up to 7 days ahead.", "kind", 1},
		{"steps: the same", "how do I book the laser cutter", wkLaserBooking,
			"Book the laser cutter in Skedda up to 7 days ahead.", "steps", 1},
		{"steps: only for a procedure", "when can I book the laser cutter", wkLaserBooking,
			"Book the laser cutter in Skedda up to 7 days ahead.", "steps", 0},
		{"kind: money asked, a sum of money given", "how much do studio dues cost", wkDues,
			"Studio — Monthly dues: $90; Door hours: all day", "kind", 1},
		{"lacks: money asked, another quantity given", "how much does a laser session cost", wkLaserBooking,
			"A session lasts at most 2 hours.", "lacks", 1},
		{"kind: an amount asked, a quantity given", "how long is a laser session", wkLaserBooking,
			"A session lasts at most 2 hours.", "kind", 1},
		{"no kind asked: neither kind nor lacks", "laser session", wkLaserBooking,
			"A session lasts at most 2 hours.", "lacks", 0},
		{"entry: a row", "studio dues", wkDues, "Studio — Monthly dues: $90; Door hours: all day", "entry", 1},
		{"entry: a sentence is none", "studio dues", wkDues, "Dues are charged on the first day of each month.", "entry", 0},
		{"keyed: a row keyed by the code asked", "what is LZ-30", wkLaserErrors,
			"LZ-30 — Meaning: Coolant too warm; What to do: Wait 20 minutes before the next job.", "keyed", 1},
		{"codes: the code asked is elsewhere", "what is LZ-30", wkLaserErrors,
			"LZ-12 — Meaning: Lid open; What to do: Close the lid firmly.", "codes", 1},
		{"codes: the row holding it", "what is LZ-30", wkLaserErrors,
			"LZ-30 — Meaning: Coolant too warm; What to do: Wait 20 minutes before the next job.", "codes", 0},
		{"listed: a list asked, an item given", "what are the laser safety rules", wkLaserSafety,
			"Never cut PVC: it releases chlorine gas.", "listed", 1},
		{"listed: a sentence is none", "what are the laser safety rules", wkLaserSafety,
			"Stay with the cutter for the whole job.", "listed", 0},
		{"meta: a sentence about the page", "laser cutter rules", meta,
			"This page describes the laser cutter rules.", "meta", 1},
		{"length: at most 1", "laser cutter", longText, unitsOf(longText)[0].Text, "length", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := newQuestion(tt.question, c, nil)
			hits := ranked(tt.chunk)
			f := features(q, info(q, hits, 0), unitOf(t, tt.chunk, tt.unit), expectedType(q.text), 0)
			if !near(f[tt.feature], tt.want) {
				t.Errorf("%s = %v, want %v", tt.feature, f[tt.feature], tt.want)
			}
		})
	}
	t.Run("sim is clamped to [0, 1]", func(t *testing.T) {
		q := newQuestion("laser cutter", c, nil)
		u := unitsOf(wkLaserBooking)[0]
		if f := features(q, info(q, ranked(wkLaserBooking), 0), u, anyType, -0.4); f["sim"] != 0 {
			t.Errorf("sim %v", f["sim"])
		}
		if f := features(q, info(q, ranked(wkLaserBooking), 0), u, anyType, 1.7); f["sim"] != 1 {
			t.Errorf("sim %v", f["sim"])
		}
	})
	t.Run("retrieval signals scale with the chunk's coverage", func(t *testing.T) {
		q := newQuestion("studio dues and laser sessions", c, nil)
		hits := ranked(wkDues, wkLaserBooking)
		f := features(q, info(q, hits, 0), unitsOf(wkDues)[0], anyType, 0)
		if f["chunk"] >= 1 || !near(f["rank"], f["chunk"]) || !near(f["fused"], f["chunk"]) || !near(f["keyword"], f["chunk"]) {
			t.Errorf("chunk %v rank %v fused %v keyword %v, want the first candidate's signals times its coverage",
				f["chunk"], f["rank"], f["fused"], f["keyword"])
		}
	})
}

func TestPassageScore(t *testing.T) {
	// Questions whose every term the unit holds (coverage 1), on a chunk
	// without section words beyond the title and at position 0: the
	// score is coverage × the rules' factors + earlyPrior.
	chunk := func(text string) docent.Chunk {
		return docent.Chunk{ID: "ps-" + text, DocID: "ps.md", Title: "Bench", Text: text}
	}
	tests := []struct {
		name, question, text string
		item                 bool
		want                 float64
	}{
		{"any type", "benches shared", "Benches are shared.", false, 1 + earlyPrior},
		{"an amount asked and stated", "how much benches cost", "Benches cost $5 a day.", false, quantityBoost + earlyPrior},
		{"an amount asked and not stated", "how much benches cost", "Benches cost little.", false, typeMissPenalty + earlyPrior},
		{"a time asked and not given", "when are benches cleaned", "Benches are cleaned.", false, typeMissPenalty + earlyPrior},
		{"who asked, nobody named", "who cleans benches", "Benches are cleaned.", false, typeMissPenalty + earlyPrior},
		{"who asked, someone named", "who cleans benches", "Dana Whitfield cleans benches.", false, 1 + earlyPrior},
		{"how do I, opening with the verb", "how do I reserve benches", "Reserve benches at the desk.", false, 1 + earlyPrior},
		{"how do I, no instruction", "how do I reserve benches", "Benches are reserved weekly.", false, typeMissPenalty + earlyPrior},
		{"a list asked, an item given", "what are the bench rules", "Bench rules are posted.", true, listBoost + earlyPrior},
		{"a sentence about the page", "bench rules", "This page describes bench rules.", false, metaPenalty + earlyPrior},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := chunk(tt.text)
			if tt.item {
				c.Text = "- " + tt.text
			}
			q := newQuestion(tt.question, nil, []map[string]bool{termsOf(c), {}})
			u := unitsOf(c)[0]
			if cov := q.unitCoverage(u); !near(cov, 1) {
				t.Fatalf("coverage %v, want 1", cov)
			}
			got := passageScore(q, c, u, expectedType(q.text))
			if !near(got, tt.want) {
				t.Errorf("passageScore = %v, want %v", got, tt.want)
			}
			// Each rule moves the score off the plain coverage, the way
			// its name says.
			base := 1.0 + earlyPrior
			switch {
			case strings.Contains(tt.name, "and not") || strings.Contains(tt.name, "nobody") ||
				strings.Contains(tt.name, "no instruction") || strings.Contains(tt.name, "about the page"):
				if got >= base {
					t.Errorf("score %v not lowered below %v", got, base)
				}
			case strings.Contains(tt.name, "stated") || strings.Contains(tt.name, "item given"):
				if got <= base {
					t.Errorf("score %v not raised above %v", got, base)
				}
			}
		})
	}
	t.Run("section coverage and the chunk's position add", func(t *testing.T) {
		c := docent.Chunk{ID: "ps-sec", DocID: "ps.md", Title: "Bench", Section: []string{"Glue"}, Ord: 3, Text: "Benches are shared."}
		q := newQuestion("bench glue", nil, []map[string]bool{termsOf(c), {}})
		u := unitsOf(c)[0]
		want := q.unitCoverage(u) + q.coverage(map[string]bool{"glue": true}) + earlyPrior/4
		got := passageScore(q, c, u, anyType)
		if !near(got, want) {
			t.Errorf("passageScore = %v, want %v", got, want)
		}
		first := c
		first.Ord = 0
		if early := passageScore(q, first, u, anyType); early <= got {
			t.Errorf("a chunk first on its page scores %v, not above %v further down", early, got)
		}
	})
}

func TestPairs(t *testing.T) {
	q := newQuestion("price of the laser session ticket, laser laser", nil, []map[string]bool{{}})
	got := q.pairs()
	w := q.weights()
	want := map[pair]float64{
		{"price", "laser"}:    w["price"] + w["laser"], // stopwords between are left out
		{"laser", "session"}:  w["laser"] + w["session"],
		{"session", "ticket"}: w["session"] + w["ticket"],
		{"ticket", "laser"}:   w["ticket"] + w["laser"],
	}
	if len(got) != len(want) {
		t.Errorf("pairs %v, want %v (a term repeated is no pair)", got, want)
	}
	for p, v := range want {
		if !near(got[p], v) {
			t.Errorf("pair %v weighs %v, want %v", p, got[p], v)
		}
	}
	all := 0.0
	for _, v := range want {
		all += v
	}
	set := pairsOf("The laser session ticket is sold out.")
	if share := q.pairShare(set); !near(share, (want[pair{"laser", "session"}]+want[pair{"session", "ticket"}])/all) {
		t.Errorf("pairShare %v", share)
	}
	if share := newQuestion("laser", nil, []map[string]bool{{}}).pairShare(set); share != 0 {
		t.Errorf("one-term question pairShare %v", share)
	}
}
