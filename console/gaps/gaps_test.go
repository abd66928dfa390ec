package gaps

import (
	"context"
	"hash/fnv"
	"slices"
	"sort"
	"testing"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/search"
)

// bagEmbedder is a hashed bag of stemmed words: questions sharing words
// are close, as with the offline embedder, without its training.
type bagEmbedder struct{}

func (bagEmbedder) EmbedQuery(_ context.Context, text string) ([]float32, error) {
	v := make([]float32, 64)
	search.AnalyzeFunc(text, func(t string) {
		h := fnv.New32a()
		h.Write([]byte(t))
		v[h.Sum32()%64]++
	})
	return normalize(v), nil
}

// pageIndex ranks a few chunks by cosine to the query vector.
type pageIndex []docent.Chunk

func (p pageIndex) VectorSearch(ctx context.Context, q search.VectorQuery) ([]docent.Hit, error) {
	var hits []docent.Hit
	for _, c := range p {
		v, _ := bagEmbedder{}.EmbedQuery(ctx, c.Title+" "+c.Text)
		hits = append(hits, docent.Hit{Chunk: c, VectorScore: cosine(normalize(q.Vector), v)})
	}
	sort.Slice(hits, func(i, j int) bool { return hits[i].VectorScore > hits[j].VectorScore })
	if len(hits) > q.K {
		hits = hits[:q.K]
	}
	for i := range hits { // as a backend returns them: IDs and scores
		hits[i].Chunk = docent.Chunk{ID: hits[i].Chunk.ID}
	}
	return hits, nil
}

func (p pageIndex) Chunks(_ context.Context, ids []string) ([]docent.Chunk, error) {
	var out []docent.Chunk
	for _, c := range p {
		if slices.Contains(ids, c.ID) {
			out = append(out, c)
		}
	}
	return out, nil
}

var pages = pageIndex{
	{ID: "p1", DocID: "hb:parking.md", Title: "Office parking", Text: "Parking permits for the office garage are issued by facilities. Park in level 2."},
	{ID: "b1", DocID: "hb:benefits.md", Title: "Benefits", Text: "Health insurance covers doctors and hospitals. Dental insurance is offered through the benefits portal."},
	{ID: "e1", DocID: "hb:expenses.md", Title: "Expense policy", Text: "Meals are reimbursed up to $25 per day when travelling."},
}

func TestGroup(t *testing.T) {
	misses := []Miss{
		{TurnID: 1, Question: "How do I get a parking permit?", Status: docent.StatusNotFound},
		{TurnID: 2, Question: "Where can I park my car at the office?", Status: docent.StatusUncertain},
		{TurnID: 3, Question: "Is there parking for visitors?", Status: docent.StatusNotFound},
		{TurnID: 4, Question: "Does dental insurance cover braces?", Status: docent.StatusAnswered, NotHelpful: true},
		{TurnID: 5, Question: "dental insurance for my kids", Status: docent.StatusAnswered, NotHelpful: true},
		{TurnID: 6, Question: "What is the quantum roadmap for Mars?", Status: docent.StatusNotFound},
	}
	gaps, err := Group(context.Background(), misses, bagEmbedder{}, pages, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ids := func(g Gap) []int64 {
		var out []int64
		for _, m := range g.Misses {
			out = append(out, m.TurnID)
		}
		return out
	}
	if len(gaps) != 3 {
		for _, g := range gaps {
			t.Logf("gap %v %v %v", g.Terms, ids(g), g.Pages)
		}
		t.Fatalf("%d gaps, want parking, dental and the lone question", len(gaps))
	}
	tests := []struct {
		name      string
		gap       Gap
		wantIDs   []int64
		wantTerm  string
		wantPage  string
		wantPlan  Action
		wantPages int
	}{
		{"parking", gaps[0], []int64{1, 2, 3}, "parking", "hb:parking.md", ActionGolden, 3},
		{"dental, rated not helpful", gaps[1], []int64{4, 5}, "dental", "hb:benefits.md", ActionFix, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !slices.Equal(ids(tt.gap), tt.wantIDs) {
				t.Errorf("misses %v, want %v", ids(tt.gap), tt.wantIDs)
			}
			if !slices.Contains(tt.gap.Terms, tt.wantTerm) {
				t.Errorf("terms %v, want %q among them", tt.gap.Terms, tt.wantTerm)
			}
			if len(tt.gap.Pages) != tt.wantPages || tt.gap.Pages[0].DocID != tt.wantPage || tt.gap.Pages[0].Title == "" {
				t.Errorf("pages %+v, want %s first of %d", tt.gap.Pages, tt.wantPage, tt.wantPages)
			}
			if tt.gap.Action != tt.wantPlan || tt.gap.Advice == "" {
				t.Errorf("action %q (%s), want %q", tt.gap.Action, tt.gap.Advice, tt.wantPlan)
			}
		})
	}
	if lone := gaps[2]; lone.Size() != 1 || lone.Action != ActionWrite {
		t.Errorf("lone question: %d misses, action %q; want 1, write a page", lone.Size(), lone.Action)
	}
}

func TestGroupFlaggedPageIsRefreshed(t *testing.T) {
	misses := []Miss{
		{TurnID: 1, Question: "meal allowance when travelling", Status: docent.StatusUncertain},
		{TurnID: 2, Question: "travelling meal reimbursed per day?", Status: docent.StatusNotFound},
	}
	flags := func(_ context.Context, ids []string) (map[string]string, error) {
		return map[string]string{"hb:expenses.md": "conflicts with a newer page"}, nil
	}
	gaps, err := Group(context.Background(), misses, bagEmbedder{}, pages, Options{Flags: flags})
	if err != nil {
		t.Fatal(err)
	}
	if len(gaps) != 1 || gaps[0].Pages[0].DocID != "hb:expenses.md" || gaps[0].Action != ActionRefresh {
		t.Fatalf("gaps = %+v, want one, refresh the flagged expense policy", gaps)
	}
}

func TestGroupEmpty(t *testing.T) {
	gaps, err := Group(context.Background(), nil, bagEmbedder{}, pages, Options{})
	if err != nil || gaps != nil {
		t.Fatalf("Group(nil) = %v, %v", gaps, err)
	}
}

// TestSuggest: the action follows from the closest page and the misses.
func TestSuggest(t *testing.T) {
	near := func(p Page) Page { p.Similarity = 0.8; return p }
	tests := []struct {
		name string
		gap  Gap
		want Action
	}{
		{"no page", Gap{Terms: []string{"mars"}}, ActionWrite},
		{"far page", Gap{Pages: []Page{{Title: "X", Similarity: 0.1}}}, ActionWrite},
		{"flagged page", Gap{Pages: []Page{near(Page{Title: "X", Flagged: "too old"})}}, ActionRefresh},
		{"answers rated not helpful", Gap{Misses: []Miss{{NotHelpful: true, Status: docent.StatusAnswered}}, Pages: []Page{near(Page{Title: "X"})}}, ActionFix},
		{"no answer, rated not helpful", Gap{Misses: []Miss{{NotHelpful: true, Status: docent.StatusUncertain}}, Pages: []Page{near(Page{Title: "X"})}}, ActionGolden},
		{"close-ish page lacking the words", Gap{Terms: []string{"parking"}, Misses: []Miss{{}},
			Pages: []Page{{Title: "Benefits", Similarity: 0.4, Missing: []string{"parking"}}}}, ActionWrite},
		{"other words", Gap{Terms: []string{"pto"}, Misses: []Miss{{}}, Pages: []Page{near(Page{Title: "Leave", Missing: []string{"pto"}})}}, ActionSynonym},
		{"same words", Gap{Terms: []string{"leave"}, Misses: []Miss{{}}, Pages: []Page{near(Page{Title: "Leave"})}}, ActionGolden},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, advice := suggest(tt.gap, Options{}.withDefaults())
			if got != tt.want || advice == "" {
				t.Errorf("suggest = %q (%q), want %q", got, advice, tt.want)
			}
		})
	}
}
