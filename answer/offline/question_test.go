package offline

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/search"
)

func TestIsSalient(t *testing.T) {
	tests := []struct {
		name  string
		word  string
		start bool
		want  bool
	}{
		{"capital inside a sentence is a name", "Lisbon", false, true},
		{"capital opening a sentence is not", "Lisbon", true, false},
		{"letters and digits are a code", "lz30", true, true},
		{"letters and digits with a hyphen", "LZ-30", false, true},
		{"two capitals are an acronym", "CNC", true, true},
		{"one capital letter opening a sentence", "A", true, false},
		{"the pronoun I", "I", false, false},
		{"a contraction of I", "I'm", false, false},
		{"lower case word", "lisbon", false, false},
		{"digits only", "2025", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := isSalient(tt.word, tt.start); got != tt.want {
				t.Errorf("isSalient(%q, %v) = %v, want %v", tt.word, tt.start, got, tt.want)
			}
		})
	}
}

func TestQuestionWords(t *testing.T) {
	words, salient, share := questionWords("Can a Studio member use the CNC? Lockers in Lisbon, and the wi-fi (guest)")
	tests := []struct {
		term, word string
		salient    bool
		share      int
	}{
		{"studio", "Studio", true, 1}, // capital inside the sentence
		{"member", "member", false, 1},
		{"cnc", "CNC", true, 1},
		{"locker", "Lockers", false, 1}, // opens the sentence after "?"
		{"lisbon", "Lisbon", true, 1},
		{"wi", "wi-fi", false, 2}, // one written word, two terms
		{"fi", "wi-fi", false, 2},
		{"guest", "guest", false, 1}, // brackets split words
	}
	for _, tt := range tests {
		t.Run(tt.term, func(t *testing.T) {
			if words[tt.term] != tt.word || salient[tt.term] != tt.salient || share[tt.term] != tt.share {
				t.Errorf("term %q: word %q salient %v share %d; want %q %v %d",
					tt.term, words[tt.term], salient[tt.term], share[tt.term], tt.word, tt.salient, tt.share)
			}
		})
	}
	if _, ok := words["can"]; ok {
		t.Errorf("filler %q has a word: %v", "can", words)
	}
}

func TestQuestionWordsSentenceStarts(t *testing.T) {
	// Each line opens a sentence (a pasted log, a list), and so do the
	// word after an ellipsis and a log field's value: a capital there
	// marks no name.
	_, salient, _ := questionWords("the kiln in Lisbon stopped\nNothing happens after the beep ... Bonus question: does the Oslo kiln too\n" +
		`level=error msg="Unable to reach the controller" zone=Bergen`)
	for term, want := range map[string]bool{"lisbon": true, "noth": false, "bonus": false, "oslo": true, "unabl": false, "bergen": false, "control": false} {
		if salient[term] != want {
			t.Errorf("term %q salient %v, want %v (%v)", term, salient[term], want, salient)
		}
	}
}

func TestNewQuestionWeights(t *testing.T) {
	corp := NewCorpus(append([]docent.Chunk{wkLockers, wkGuests}, filler...))
	t.Run("corpus IDF, parts of one word share it", func(t *testing.T) {
		q := newQuestion("Is the wi-fi in the lockers free?", corp, nil)
		byTerm := map[string]qterm{}
		for _, qt := range q.terms {
			byTerm[qt.Term] = qt
		}
		locker := byTerm["locker"]
		if locker.DF != 1 || math.Abs(locker.IDF-corp.IDF("locker")) > 1e-12 || locker.Share != 1 {
			t.Errorf("locker: %+v, want DF 1, IDF %v, share 1", locker, corp.IDF("locker"))
		}
		wi := byTerm["wi"]
		if wi.Share != 2 || math.Abs(wi.IDF-corp.IDF("wi")/2) > 1e-12 || wi.Word != "wi-fi" {
			t.Errorf("wi: %+v, want half of IDF %v from the word wi-fi", wi, corp.IDF("wi"))
		}
		total := 0.0
		for _, qt := range q.terms {
			total += qt.IDF
		}
		if math.Abs(q.total-total) > 1e-12 {
			t.Errorf("total %v, want Σ IDF %v", q.total, total)
		}
		// A term no chunk holds weighs the most; maxIDF is that weight.
		if want := corp.IDF("nosuchterm"); math.Abs(q.maxIDF-want) > 1e-12 {
			t.Errorf("maxIDF %v, want %v", q.maxIDF, want)
		}
	})
	t.Run("without a corpus IDF comes from the candidates", func(t *testing.T) {
		sets := []map[string]bool{{"locker": true}, {"locker": true, "free": true}, {}, {}}
		q := newQuestion("are lockers free", nil, sets)
		idf := func(df float64) float64 { return math.Log(1 + (4-df+0.5)/(df+0.5)) }
		got := q.weights()
		if math.Abs(got["locker"]-idf(2)) > 1e-12 || math.Abs(got["free"]-idf(1)) > 1e-12 {
			t.Errorf("weights %v, want locker %v free %v", got, idf(2), idf(1))
		}
		for _, qt := range q.terms {
			if qt.DF != -1 {
				t.Errorf("%s: DF %d without corpus, want -1", qt.Term, qt.DF)
			}
		}
	})
	t.Run("opaque identifiers are no terms", func(t *testing.T) {
		q := newQuestion("locker 3 says error at 2025-03-04T10:22:01Z for req_8Fk2Lq9Z", corp, nil)
		for _, qt := range q.terms {
			if strings.Contains(qt.Term, "8fk2") || qt.Term == "10" || qt.Term == "22" {
				t.Errorf("term %q of an opaque identifier", qt.Term)
			}
		}
		if strings.Contains(q.text, "req_") || strings.Contains(q.text, "2025-03-04") {
			t.Errorf("text %q keeps the identifiers", q.text)
		}
	})
}

func TestExpectedType(t *testing.T) {
	tests := []struct {
		question string
		want     answerType
	}{
		{"How do I reserve the laser cutter?", procedureType},
		{"how can we rent a second locker", procedureType},
		{"When is the next induction?", timeType},
		{"when should the lens be cleaned", conditionType},
		{"When do I need to renew my fob", conditionType},
		{"how many guests may come to open evening", amountType},
		{"how long is one laser session", amountType},
		{"what's the locker fee", amountType},
		{"what is the maximum kiln temperature", amountType},
		{"who runs the wood shop induction", whoType},
		{"whom should I hand a lost fob to", whoType},
		{"where is the spare filament kept", whereType},
		{"can I bring a dog to the space", anyType},
		{"the kiln is free, and when does it open", timeType},
		{"I lost my fob, who should I tell", whoType},
		{"nowhere to leave my bike", anyType},
	}
	for _, tt := range tests {
		t.Run(tt.question, func(t *testing.T) {
			if got := expectedType(tt.question); got != tt.want {
				t.Errorf("expectedType(%q) = %d, want %d", tt.question, got, tt.want)
			}
		})
	}
}

// sentence returns a sentence unit of text, as splitUnits makes it.
func sentence(text string) unit {
	return unit{Text: text, Kind: kindSentence, Terms: search.TermSet(text), Context: map[string]bool{}, Title: map[string]bool{}}
}

// row returns a table row unit of text keyed by key.
func row(text, key string) unit {
	u := sentence(text)
	u.Kind, u.Group, u.Key = kindRow, 1, key
	return u
}

func TestAnswerTypeHolds(t *testing.T) {
	withCode := sentence("Update the firmware with:")
	withCode.Code = []string{"lzctl update"}
	tests := []struct {
		name string
		t    answerType
		u    unit
		want bool
	}{
		{"time: a weekday", timeType, sentence("Inductions run every Tuesday."), true},
		{"time: a duration", timeType, sentence("Refunds arrive within 3 business days."), true},
		{"time: a clock time", timeType, sentence("The doors lock at 23:30."), true},
		{"time: a date", timeType, sentence("The new rates start on 2025-10-01."), true},
		{"time: a frequency", timeType, sentence("The board meets twice a month."), true},
		{"time: none", timeType, sentence("Close the lid firmly."), false},
		{"time: a loose word is no time", timeType, sentence("Sweep before you leave."), false},
		{"condition: a loose time word", conditionType, sentence("Sweep before you leave."), true},
		{"condition: if", conditionType, sentence("Press stop if the flame grows."), true},
		{"condition: none", conditionType, sentence("Filament is sold at cost."), false},
		{"amount: money", amountType, sentence("A locker costs $10 per month."), true},
		{"amount: a count of things", amountType, sentence("Bring 2 pairs of goggles."), true},
		{"amount: a number word", amountType, sentence("Members may bring one guest."), true},
		{"amount: unlimited", amountType, sentence("Studio members get unlimited laser time."), true},
		{"amount: a bare number in a row", amountType, row("Studio: 90", "Studio"), true},
		{"amount: the same number in a sentence", amountType, sentence("Studio: 90"), false},
		{"amount: none", amountType, sentence("Ask at the desk."), false},
		{"who: a full name", whoType, sentence("Priya Natarajan runs it."), true},
		{"who: a role", whoType, sentence("The board director signs it."), true},
		{"who: a channel", whoType, sentence("Post in #front-desk."), true},
		{"who: none", whoType, sentence("Filament is sold at cost."), false},
		{"where: a link", whereType, sentence("Book at https://book.example/laser."), true},
		{"where: a place word", whereType, sentence("Lockers are on the second floor."), true},
		{"procedure: an instruction", procedureType, sentence("Book the laser cutter ahead."), true},
		{"procedure: you can", procedureType, sentence("Later you can cancel it."), true},
		{"procedure: a command", procedureType, withCode, true},
		{"procedure: none", procedureType, sentence("The panel shows a code."), false},
		{"any type holds everywhere", anyType, sentence("The panel shows a code."), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.t.holds(tt.u); got != tt.want {
				t.Errorf("holds(%q) = %v, want %v", tt.u.display(), got, tt.want)
			}
			// The cached kinds say the same as the text.
			u := tt.u
			u.kinds = unitKinds(u)
			if got := tt.t.holds(u); got != tt.want {
				t.Errorf("holds with cached kinds(%q) = %v, want %v", u.display(), got, tt.want)
			}
		})
	}
}

// TestWhereNeedsAName: "in", "on" or "at" say where when a name
// follows ("in Skedda"), not before any word ("at most 2 hours"); the
// pattern is case-insensitive, so the capital is asked for explicitly.
func TestWhereNeedsAName(t *testing.T) {
	tests := []struct {
		text string
		want bool
	}{
		{"Book it in Skedda.", true},
		{"Pick it up at the Hub.", true},
		{"A session lasts at most 2 hours.", false},
		{"Sessions end on time.", false},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			if got := whereType.holds(unit{Text: tt.text}); got != tt.want {
				t.Errorf("where holds = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestProcedureVerb(t *testing.T) {
	tests := []struct {
		question, verb string
		opens          string // a unit that opens with the verb
		other          string // one that does not
	}{
		{"How do I renew my locker?", "renew", "Renew it at the desk.", "Lockers are renewed yearly."},
		{"how can we swap bench slots", "swap", "Swap slots with another member.", "Slots cannot be swapped."},
		{"what is a fob", "", "", "Fobs open the door."},
	}
	for _, tt := range tests {
		t.Run(tt.question, func(t *testing.T) {
			if got := procedureVerb(tt.question); got != tt.verb {
				t.Fatalf("procedureVerb = %q, want %q", got, tt.verb)
			}
			if tt.opens != "" && !opensWith(sentence(tt.opens), tt.verb) {
				t.Errorf("opensWith(%q, %q) = false", tt.opens, tt.verb)
			}
			if opensWith(sentence(tt.other), tt.verb) {
				t.Errorf("opensWith(%q, %q) = true", tt.other, tt.verb)
			}
		})
	}
	// A unit that names no instruction verb still tells how to swap when
	// it opens with the verb asked about.
	q := newQuestion("how can we swap bench slots", nil, []map[string]bool{{}})
	u := sentence("Swap slots with another member.")
	if procedureType.holds(u) || !q.answers(u, procedureType) {
		t.Errorf("holds %v answers %v, want false, true", procedureType.holds(u), q.answers(u, procedureType))
	}
}

func TestNamesSomeone(t *testing.T) {
	q := newQuestion("Who is the board director?", nil, []map[string]bool{{}})
	tests := []struct {
		text string
		want bool
	}{
		{"Board director approval is needed.", false}, // the role asked about
		{"Ask Dana Whitfield, the board director.", true},
		{"Post in #front-desk.", true},
		{"Filament is sold at cost.", false},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			u := sentence(tt.text)
			if got := q.namesSomeone(u); got != tt.want {
				t.Errorf("namesSomeone = %v, want %v", got, tt.want)
			}
			if got := q.answers(u, whoType); got != tt.want {
				t.Errorf("answers(who) = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestDropOpaque(t *testing.T) {
	tests := []struct {
		name, in string
		gone     []string
		kept     []string
	}{
		{"uuid", "fob 5f0c9a1e-3b2d-4c8e-9f10-2a7b6c5d4e3f rejected", []string{"5f0c9a1e"}, []string{"fob", "rejected"}},
		{"timestamp", "at 2025-03-04T10:22:01Z the kiln stopped", []string{"2025", "10:22"}, []string{"kiln"}},
		{"clock with seconds", "log says 10:22:01 lid open", []string{"10:22:01"}, []string{"lid"}},
		{"underscored id", "job req_8Fk2Lq9Z failed", []string{"req_8Fk2Lq9Z"}, []string{"job", "failed"}},
		{"generated id", "print 01HZX3K9QW stuck", []string{"01HZX3K9QW"}, []string{"print", "stuck"}},
		{"codes the docs may list", "LZ-30 on the v3 panel of the 3D printer, bench b12", nil, []string{"LZ-30", "v3", "3D", "b12"}},
		{"a word of letters then digits", "room abc123", nil, []string{"abc123"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := dropOpaque(tt.in)
			for _, g := range tt.gone {
				if strings.Contains(got, g) {
					t.Errorf("dropOpaque(%q) = %q keeps %q", tt.in, got, g)
				}
			}
			for _, k := range tt.kept {
				if !strings.Contains(got, k) {
					t.Errorf("dropOpaque(%q) = %q drops %q", tt.in, got, k)
				}
			}
		})
	}
}

func TestQueryTerms(t *testing.T) {
	tests := []struct {
		name, in string
		want     []string
	}{
		{"fillers and chat shorthand go", "hey whats the locker fee lol", []string{"locker", "fee"}},
		{"the adverb of how long is no topic", "how long is a laser session", []string{"laser", "session"}},
		{"a later long stays", "how long before the long bench is free", []string{"long", "bench", "free"}},
		{"clock time and light verbs go", "can I use the kiln at 3pm tomorrow", []string{"kiln"}},
		{"a clock time with minutes", "is the kiln on at 10:30 pm", []string{"kiln"}},
		{"terms once, in order", "kiln glaze kiln", []string{"kiln", "glaze"}},
		{"prepositions the stopwords lack", "bring tools onto the roof via the hatch", []string{"bring", "tool", "roof", "hatch"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := queryTerms(tt.in); !slices.Equal(got, tt.want) {
				t.Errorf("queryTerms(%q) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}

func TestTermSetJoinsCompounds(t *testing.T) {
	tests := []struct {
		text string
		want string
		has  bool
	}{
		{"Use the break-glass key.", "breakglass", true},
		{"The 401(k) match.", "401k", true},
		{"Break glass in an emergency.", "breakglass", false},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			if got := search.TermSet(tt.text)[tt.want]; got != tt.has {
				t.Errorf("search.TermSet(%q)[%q] = %v, want %v", tt.text, tt.want, got, tt.has)
			}
		})
	}
}

func TestScorer(t *testing.T) {
	s := &scorer{terms: []string{"kiln", "glaze", "fire"}, idf: map[string]float64{"kiln": 2, "glaze": 1, "fire": 1}, total: 4}
	t.Run("coverage counts heading terms at their weight", func(t *testing.T) {
		got := s.coverage(map[string]bool{"kiln": true}, map[string]bool{"glaze": true}, 0.5)
		if want := (2 + 0.5) / 4; math.Abs(got-want) > 1e-12 {
			t.Errorf("coverage %v, want %v", got, want)
		}
	})
	t.Run("gain counts only what is not covered yet", func(t *testing.T) {
		got := s.gain(map[string]bool{"kiln": true, "glaze": true}, map[string]bool{"kiln": true})
		if want := 1.0 / 4; math.Abs(got-want) > 1e-12 {
			t.Errorf("gain %v, want %v", got, want)
		}
	})
	t.Run("no terms cover nothing", func(t *testing.T) {
		empty := &scorer{}
		if empty.coverage(map[string]bool{"kiln": true}, nil, 0) != 0 || empty.gain(map[string]bool{"kiln": true}, nil) != 0 ||
			empty.unitCoverage(sentence("kiln")) != 0 {
			t.Error("a question without terms covers something")
		}
	})
	t.Run("unit coverage weighs text, title and headings", func(t *testing.T) {
		u := sentence("The kiln cools overnight.")
		u.Title = map[string]bool{"glaze": true}
		u.Context = map[string]bool{"fire": true}
		if want := (2 + titleWeight*1 + sectionWeight*1) / 4; math.Abs(s.unitCoverage(u)-want) > 1e-12 {
			t.Errorf("sentence coverage %v, want %v", s.unitCoverage(u), want)
		}
		u.Kind = kindItem
		if want := (2 + titleWeight*1 + structWeight*1) / 4; math.Abs(s.unitCoverage(u)-want) > 1e-12 {
			t.Errorf("item coverage %v, want %v", s.unitCoverage(u), want)
		}
	})
}

func TestUnitWeight(t *testing.T) {
	u := sentence("kiln")
	u.Title = map[string]bool{"glaze": true, "both": true}
	u.Context = map[string]bool{"fire": true, "both": true}
	item := u
	item.Kind = kindItem
	tests := []struct {
		name string
		u    unit
		term string
		want float64
	}{
		{"own word", u, "kiln", 1},
		{"title word", u, "glaze", titleWeight},
		{"heading and title counts as title", u, "both", titleWeight},
		{"heading word of a sentence", u, "fire", sectionWeight},
		{"heading word of an item", item, "fire", structWeight},
		{"absent", u, "lid", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := unitWeight(tt.u, tt.term); got != tt.want {
				t.Errorf("unitWeight(%q) = %v, want %v", tt.term, got, tt.want)
			}
		})
	}
}
