package eval

import (
	"slices"
	"strings"
	"testing"

	"github.com/docent-hq/docent"
)

func TestSentences(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []string
	}{
		{"empty", "  ", nil},
		{"one", "A single sentence.", []string{"A single sentence."}},
		{"several", "First one. Second one! Third? 4 is a number.", []string{"First one.", "Second one!", "Third?", "4 is a number."}},
		{"abbreviations and decimals stay", "Levels rose 2.5 fold (p < 0.05, e.g. in mice). Then fell", []string{"Levels rose 2.5 fold (p < 0.05, e.g. in mice).", "Then fell"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Sentences(tc.in); !slices.Equal(got, tc.want) {
				t.Errorf("Sentences(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func longFixture() *BEIR {
	doc := func(id, body string) docent.Document {
		return docent.Document{ID: BEIRPrefix + id, Source: BEIRSource, Path: id, Body: body}
	}
	return &BEIR{
		Name: "fixture", Split: "test",
		Corpus: []docent.Document{
			doc("d1", "Relevant one. Relevant two. Relevant three. Relevant four. Relevant five."),
			doc("d2", "Other alpha. Other beta."),
			doc("d3", "Third doc sentence."),
			doc("d4", "Fourth doc sentence. Fourth again."),
			doc("d0", "Judged but graded zero."),
		},
		Queries: []Query{{ID: "q1", Text: "Is the claim true?"}, {ID: "q2", Text: "Second claim."}},
		Qrels: map[string]map[string]int{
			"q1": {"d1": 1, "d0": 0},
			"q2": {"d4": 2, "d3": 1},
		},
	}
}

func TestLongQueries(t *testing.T) {
	b := longFixture()
	t.Run("context", func(t *testing.T) {
		l, err := LongQueries(b, LongContext, 1)
		if err != nil {
			t.Fatal(err)
		}
		if l.Split != "test/long-context" || len(l.Queries) != 2 || l.Corpus[0].ID != b.Corpus[0].ID {
			t.Fatalf("split %q, %d queries", l.Split, len(l.Queries))
		}
		q1 := l.Queries[0].Text
		if !strings.HasSuffix(q1, " Is the claim true?") || strings.Count(q1, "Relevant") != 1 || len(Sentences(q1)) != 4 {
			t.Errorf("q1 = %q, want one sentence of d1, two others, then the query", q1)
		}
		// d3 is the smallest judged-relevant ID of q2; d4 is relevant too
		// and must not be among the unrelated sentences.
		q2 := l.Queries[1].Text
		if !strings.Contains(q2, "Third doc sentence.") || strings.Contains(q2, "Fourth") || !strings.HasSuffix(q2, " Second claim.") {
			t.Errorf("q2 = %q, want d3's sentence, none of d4, the query last", q2)
		}
		if b.Queries[0].Text != "Is the claim true?" || b.Split != "test" {
			t.Error("LongQueries changed its input")
		}
	})
	t.Run("noise", func(t *testing.T) {
		l, err := LongQueries(b, LongNoise, 1)
		if err != nil {
			t.Fatal(err)
		}
		for i, q := range l.Queries {
			if !strings.Contains(q.Text, b.Queries[i].Text) {
				t.Errorf("%s = %q lost the query", q.ID, q.Text)
			}
			if got := len(Sentences(q.Text)); got != 4 {
				t.Errorf("%s = %q: %d sentences, want 4", q.ID, q.Text, got)
			}
		}
		if strings.Contains(l.Queries[0].Text, "Relevant") {
			t.Errorf("q1 noise %q holds its relevant document", l.Queries[0].Text)
		}
		if q2 := l.Queries[1].Text; strings.Contains(q2, "Fourth") || strings.Contains(q2, "Third") {
			t.Errorf("q2 noise %q holds a relevant document", q2)
		}
	})
	t.Run("deterministic per seed", func(t *testing.T) {
		a, _ := LongQueries(b, LongNoise, 7)
		c, _ := LongQueries(b, LongNoise, 7)
		if !slices.Equal(a.Queries, c.Queries) {
			t.Error("same seed, different queries")
		}
	})
	t.Run("with long queries", func(t *testing.T) {
		sets, err := WithLongQueries(b, 1)
		if err != nil || len(sets) != 3 || sets[0] != b || sets[1].Split != "test/long-context" || sets[2].Split != "test/long-noise" {
			t.Errorf("WithLongQueries = %d sets, %v", len(sets), err)
		}
	})
	t.Run("unknown kind", func(t *testing.T) {
		if _, err := LongQueries(b, "long-lorem", 1); err == nil {
			t.Error("unknown kind accepted")
		}
	})
}
