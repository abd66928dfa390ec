package answer

import (
	"math"
	"sort"
	"strings"
	"testing"

	"github.com/docent-hq/docent"
)

func TestSplitUnits(t *testing.T) {
	c := docent.Chunk{
		Title:   "Corporate VPN",
		Section: []string{"Errors"},
		Text: "Corporate VPN > Errors\n\n## Error codes\n\nSee the **table** below, or [the FAQ](faq.md).\n\n" +
			"| Code | Meaning | Fix |\n|---|---|---|\n| VPN-E03 | Gateway unreachable | Try another gateway. |\n\n" +
			"- First item\n  continues here.\n- Second item\n\nInstall it:\n\n```bash\nsudo apt install kc\n```\n\n" +
			"```\na\nb\nc\nd\n```\n",
	}
	units := splitUnits(c)
	var texts []string
	for _, u := range units {
		texts = append(texts, u.display())
	}
	want := []string{
		"See the table below, or the FAQ.",
		"VPN-E03 — Meaning: Gateway unreachable; Fix: Try another gateway.",
		"First item continues here.",
		"Second item",
		"Install it: `sudo apt install kc`",
	}
	if strings.Join(texts, "\n") != strings.Join(want, "\n") {
		t.Fatalf("units:\n%s\nwant:\n%s", strings.Join(texts, "\n"), strings.Join(want, "\n"))
	}
	kinds := []unitKind{kindSentence, kindRow, kindItem, kindItem, kindSentence}
	groups := []int{0, 1, 2, 2, 0}
	keys := []string{"", "VPN-E03", "", "", ""}
	for i, u := range units {
		if u.Kind != kinds[i] || u.Ord != i || u.Group != groups[i] || u.Key != keys[i] {
			t.Errorf("unit %d kind %d ord %d group %d key %q, want kind %d group %d key %q",
				i, u.Kind, u.Ord, u.Group, u.Key, kinds[i], groups[i], keys[i])
		}
	}
	// A code block is kept apart from the sentence that introduces it,
	// so that it is quoted only when a command is asked for.
	if units[4].Text != "Install it:" || len(units[4].Code) != 1 {
		t.Errorf("code unit text %q code %q", units[4].Text, units[4].Code)
	}
	// Heading words are context, title words title, not text; code words
	// join the unit's terms.
	if !units[0].Context["error"] || !units[0].Title["vpn"] || units[0].Terms["error"] {
		t.Errorf("context %v title %v terms %v", units[0].Context, units[0].Title, units[0].Terms)
	}
	if !units[1].Context["meaning"] && !units[1].Context["mean"] {
		t.Errorf("row context lacks the table header: %v", units[1].Context)
	}
	if !units[4].Terms["apt"] {
		t.Errorf("code terms missing from %v", units[4].Terms)
	}
}

func TestAmounts(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"Hotels up to $250 per night; meals 1,200 EUR.", []string{"$250 per night", "1200"}},
		{"Carry over 5 days, or 15% of it, within 2 weeks.", []string{"15%", "2 week", "5 day"}},
		{"Error VPN-E12 since 2021-03-04, in 2024.", nil},
		{"Sessions last 12 hours.", []string{"12 hour"}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			var got []string
			for a := range amounts(tt.in) {
				got = append(got, a)
			}
			sort.Strings(got)
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestSimilarHeadings(t *testing.T) {
	tests := []struct {
		a, b docent.Chunk
		want bool
	}{
		{chHotelNew, chHotelOld, true},
		{chHotelNew, chHotelNew, false}, // same document
		{chHotelNew, chPTO, false},
		{chVPN, docent.Chunk{DocID: "it/sso.md", Title: "SSO and MFA", Section: []string{"Resetting your token"}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.a.DocID+"~"+tt.b.DocID, func(t *testing.T) {
			if got := similarHeadings(tt.a, tt.b); got != tt.want {
				t.Errorf("similarHeadings = %v, want %v (%v vs %v)", got, tt.want, headingTerms(tt.a), headingTerms(tt.b))
			}
		})
	}
}

func TestRelevance(t *testing.T) {
	terms := queryTerms("How much can I spend on a hotel per night?")
	if strings.Join(terms, ",") != "spend,hotel,per,night" {
		t.Fatalf("queryTerms = %v", terms)
	}
	// Four candidates: hotel+night in two, per in all, spend in none.
	sets := []map[string]bool{
		{"hotel": true, "night": true, "per": true},
		{"hotel": true, "night": true, "per": true},
		{"per": true},
		{"per": true},
	}
	sc := newScorer(terms, sets, nil, DefaultWeights)
	idf := func(df float64) float64 { return math.Log(1 + (4-df+0.5)/(df+0.5)) }
	wantCov := (2*idf(2) + idf(4)) / (idf(0) + 2*idf(2) + idf(4))
	tests := []struct {
		name string
		hit  docent.Hit
		set  map[string]bool
		want relevance
	}{
		{"keyword and vector", docent.Hit{KeywordRank: 1, VectorScore: 0.5}, sets[0],
			relevance{Coverage: wantCov, Vector: 0.5, Keyword: 1, Score: 0.6*wantCov + 0.3*0.5 + 0.1}},
		{"vector only, cosine clamped", docent.Hit{VectorRank: 1, VectorScore: 1.2}, sets[2],
			relevance{Coverage: idf(4) / (idf(0) + 2*idf(2) + idf(4)), Vector: 1, Score: 0.6*idf(4)/(idf(0)+2*idf(2)+idf(4)) + 0.3}},
		{"negative cosine counts 0", docent.Hit{VectorScore: -0.3}, map[string]bool{}, relevance{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := sc.score(tt.hit, tt.set)
			for _, p := range [][2]float64{{got.Coverage, tt.want.Coverage}, {got.Vector, tt.want.Vector},
				{got.Keyword, tt.want.Keyword}, {got.Score, tt.want.Score}} {
				if math.Abs(p[0]-p[1]) > 1e-9 {
					t.Errorf("got %+v, want %+v", got, tt.want)
					break
				}
			}
		})
	}
	// A known corpus IDF replaces the candidate estimate.
	known := newScorer([]string{"hotel", "dog"}, sets, func(t string) (float64, bool) { return 7, t == "dog" }, DefaultWeights)
	if known.idf["dog"] != 7 || known.idf["hotel"] != idf(2) {
		t.Errorf("idf = %v", known.idf)
	}
	if got := newScorer(queryTerms("What is it?"), sets, nil, DefaultWeights).coverage(sets[0], nil, 0); got != 0 {
		t.Errorf("coverage of a question without content terms = %v, want 0", got)
	}
}
