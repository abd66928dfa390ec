package search

import (
	"math"
	"testing"

	"github.com/docent-hq/docent"
)

func kw(id string, s float64) docent.Hit {
	return docent.Hit{Chunk: docent.Chunk{ID: id}, KeywordScore: s}
}

func vec(id string, s float64) docent.Hit {
	return docent.Hit{Chunk: docent.Chunk{ID: id}, VectorScore: s}
}

type want struct {
	id           string
	score        float64
	kRank, vRank int
	kScore       float64
	vScore       float64
}

func TestFuse(t *testing.T) {
	keyword := []docent.Hit{kw("a", 10), kw("b", 6), kw("c", 2)}
	vector := []docent.Hit{vec("b", 0.9), vec("d", 0.5), vec("a", 0.1)}
	tests := []struct {
		name    string
		f       Fusion
		keyword []docent.Hit
		vector  []docent.Hit
		want    []want
	}{
		{
			// normalized keyword: a=1 b=0.5 c=0; vector: b=1 d=0.5 a=0.
			name: "score default weights", f: DefaultFusion(), keyword: keyword, vector: vector,
			want: []want{
				{"a", 1.0, 1, 3, 10, 0.1},
				{"b", 0.5 + 0.4, 2, 1, 6, 0.9},
				{"d", 0.4 * 0.5, 0, 2, 0, 0.5},
				{"c", 0, 3, 0, 2, 0},
			},
		},
		{
			name: "score zero value means score method", f: Fusion{KeywordWeight: 0.5, VectorWeight: 1}, keyword: keyword, vector: vector,
			want: []want{
				{"b", 0.25 + 1, 2, 1, 6, 0.9},
				{"a", 0.5, 1, 3, 10, 0.1},
				{"d", 0.5, 0, 2, 0, 0.5},
				{"c", 0, 3, 0, 2, 0},
			},
		},
		{
			name: "rrf k60 equal weights", f: Fusion{Method: FusionRRF, K: 60, KeywordWeight: 1, VectorWeight: 1}, keyword: keyword, vector: vector,
			want: []want{
				{"b", 1.0/62 + 1.0/61, 2, 1, 6, 0.9},
				{"a", 1.0/61 + 1.0/63, 1, 3, 10, 0.1},
				{"d", 1.0 / 62, 0, 2, 0, 0.5},
				{"c", 1.0 / 63, 3, 0, 2, 0},
			},
		},
		{
			name: "rrf default k and weights", f: Fusion{Method: FusionRRF, KeywordWeight: 2, VectorWeight: 1}, keyword: keyword, vector: vector,
			want: []want{
				{"a", 2.0/61 + 1.0/63, 1, 3, 10, 0.1},
				{"b", 2.0/62 + 1.0/61, 2, 1, 6, 0.9},
				{"c", 2.0 / 63, 3, 0, 2, 0},
				{"d", 1.0 / 62, 0, 2, 0, 0.5},
			},
		},
		{
			name: "single candidate normalizes to one", f: DefaultFusion(),
			keyword: []docent.Hit{kw("x", 3.2)}, vector: []docent.Hit{vec("y", 0.7)},
			want: []want{{"x", 1, 1, 0, 3.2, 0}, {"y", 0.4, 0, 1, 0, 0.7}},
		},
		{
			name: "ties broken by chunk id", f: Fusion{Method: FusionRRF, KeywordWeight: 1, VectorWeight: 1},
			keyword: []docent.Hit{kw("y", 1)}, vector: []docent.Hit{vec("x", 1)},
			want: []want{{"x", 1.0 / 61, 0, 1, 0, 1}, {"y", 1.0 / 61, 1, 0, 1, 0}},
		},
		{
			name: "keyword only", f: DefaultFusion(), keyword: []docent.Hit{kw("p", 4), kw("q", 2)},
			want: []want{{"p", 1, 1, 0, 4, 0}, {"q", 0, 2, 0, 2, 0}},
		},
		{name: "empty", f: DefaultFusion()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.f.Fuse(tt.keyword, tt.vector)
			if len(got) != len(tt.want) {
				t.Fatalf("got %d hits, want %d: %+v", len(got), len(tt.want), got)
			}
			for i, w := range tt.want {
				g := got[i]
				if g.Chunk.ID != w.id || math.Abs(g.Score-w.score) > 1e-12 ||
					g.KeywordRank != w.kRank || g.VectorRank != w.vRank ||
					g.KeywordScore != w.kScore || g.VectorScore != w.vScore {
					t.Errorf("hit %d = {%s score=%v kr=%d vr=%d ks=%v vs=%v}, want %+v",
						i, g.Chunk.ID, g.Score, g.KeywordRank, g.VectorRank, g.KeywordScore, g.VectorScore, w)
				}
			}
		})
	}
}

func TestFuseKeepsChunkFields(t *testing.T) {
	k := docent.Hit{Chunk: docent.Chunk{ID: "a", Title: "Vacation policy", DocID: "d1"}, KeywordScore: 2}
	v := docent.Hit{Chunk: docent.Chunk{ID: "a"}, VectorScore: 0.8}
	got := DefaultFusion().Fuse([]docent.Hit{k}, []docent.Hit{v})
	if len(got) != 1 || got[0].Chunk.Title != "Vacation policy" || got[0].Chunk.DocID != "d1" {
		t.Fatalf("got %+v, want one hit with the keyword hit's chunk fields", got)
	}
}

func TestFusionValidate(t *testing.T) {
	tests := []struct {
		name    string
		f       Fusion
		wantErr bool
	}{
		{"default", DefaultFusion(), false},
		{"zero", Fusion{}, false},
		{"rrf", Fusion{Method: FusionRRF, KeywordWeight: 1}, false},
		{"unknown method", Fusion{Method: "RRF"}, true},
		{"negative weight", Fusion{KeywordWeight: -1}, true},
		{"nan weight", Fusion{VectorWeight: math.NaN()}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.f.Validate(); (err != nil) != tt.wantErr {
				t.Errorf("Validate() = %v, want error %v", err, tt.wantErr)
			}
		})
	}
}
