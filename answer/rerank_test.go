package answer

import (
	"context"
	"strings"
	"testing"

	"github.com/docent-hq/docent"
)

func TestPageOrder(t *testing.T) {
	c := func(id, doc, title, updated string) docent.Chunk {
		return docent.Chunk{ID: id, DocID: doc, Title: title, UpdatedAt: day(updated)}
	}
	tests := []struct {
		name string
		hits []docent.Hit
		want string
	}{
		{
			name: "a page with several strong chunks goes first",
			hits: []docent.Hit{
				{Chunk: c("a1", "a.md", "Alpha", "2025-01-01"), Score: 1.0},
				{Chunk: c("b1", "b.md", "Beta", "2025-01-01"), Score: 0.9},
				{Chunk: c("b2", "b.md", "Beta", "2025-01-01"), Score: 0.8},
				{Chunk: c("b3", "b.md", "Beta", "2025-01-01"), Score: 0.7},
			},
			want: "b1,b2,b3,a1",
		},
		{
			name: "one chunk per page keeps the fused order",
			hits: []docent.Hit{
				{Chunk: c("a1", "a.md", "Alpha", "2025-01-01"), Score: 1.0},
				{Chunk: c("b1", "b.md", "Beta", "2025-01-01"), Score: 0.9},
			},
			want: "a1,b1",
		},
		{
			name: "the newer version of a page goes before the older",
			hits: []docent.Hit{
				{Chunk: c("old", "expense-policy-2021.md", "Expense policy (2021)", "2021-03-01"), Score: 1.0},
				{Chunk: c("x", "x.md", "Other", "2025-01-01"), Score: 0.95},
				{Chunk: c("new", "expense-policy.md", "Expense policy", "2026-01-15"), Score: 0.9},
			},
			want: "x,new,old",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rr, err := PageOrder{}.Rerank(context.Background(), RerankRequest{Hits: tt.hits})
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, h := range rr.Hits {
				ids = append(ids, h.Chunk.ID)
				if h.RerankScore == 0 {
					t.Errorf("%s has no RerankScore", h.Chunk.ID)
				}
			}
			if got := strings.Join(ids, ","); got != tt.want {
				t.Errorf("order %s, want %s", got, tt.want)
			}
		})
	}
}
