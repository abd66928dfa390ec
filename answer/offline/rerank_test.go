package offline

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/answer"
)

func TestPageOrder(t *testing.T) {
	c := func(id, doc, title, updated string) docent.Chunk {
		return docent.Chunk{ID: id, DocID: doc, Title: title, UpdatedAt: day(updated)}
	}
	h := func(ch docent.Chunk, score float64) docent.Hit { return docent.Hit{Chunk: ch, Score: score} }
	sec := func(ch docent.Chunk, path ...string) docent.Chunk { ch.Section = path; return ch }
	later := func(ch docent.Chunk, d time.Duration) docent.Chunk { ch.UpdatedAt = ch.UpdatedAt.Add(d); return ch }
	tests := []struct {
		name string
		hits []docent.Hit
		want string
	}{
		{"a page with several strong chunks goes first", []docent.Hit{
			h(c("lathe", "lathe.md", "Lathe", "2025-01-01"), 1.0),
			h(sec(c("kiln1", "kiln.md", "Kiln", "2025-01-01"), "Loading"), 0.9),
			h(sec(c("kiln2", "kiln.md", "Kiln", "2025-01-01"), "Firing"), 0.8),
			h(sec(c("kiln3", "kiln.md", "Kiln", "2025-01-01"), "Cooling"), 0.7),
		}, "kiln1,kiln2,kiln3,lathe"},
		{"one chunk per page keeps the fused order", []docent.Hit{
			h(c("lathe", "lathe.md", "Lathe", "2025-01-01"), 1.0),
			h(c("kiln1", "kiln.md", "Kiln", "2025-01-01"), 0.9),
		}, "lathe,kiln1"},
		{"a page's weak second chunk is not enough", []docent.Hit{
			h(c("lathe", "lathe.md", "Lathe", "2025-01-01"), 1.0),
			h(c("kiln1", "kiln.md", "Kiln", "2025-01-01"), 0.9),
			h(c("kiln2", "kiln.md", "Kiln", "2025-01-01"), 0.3),
		}, "lathe,kiln1,kiln2"},
		{"chunks under one heading count once for their page", []docent.Hit{
			h(c("lathe", "lathe.md", "Lathe", "2025-01-01"), 1.0),
			h(sec(c("kiln1", "kiln.md", "Kiln", "2025-01-01"), "Electric kilns", "Venting"), 0.9),
			h(sec(c("kiln2", "kiln.md", "Kiln", "2025-01-01"), "Gas kilns", "Venting"), 0.8),
			h(sec(c("kiln3", "kiln.md", "Kiln", "2025-01-01"), "Wood kilns", "venting "), 0.7),
		}, "lathe,kiln1,kiln2,kiln3"},
		{"the parts of one long section count once", []docent.Hit{
			h(c("lathe", "lathe.md", "Lathe", "2025-01-01"), 1.0),
			h(sec(c("kiln1", "kiln.md", "Kiln", "2025-01-01"), "Loading"), 0.9),
			h(sec(c("kiln2", "kiln.md", "Kiln", "2025-01-01"), "Loading"), 0.8),
			h(sec(c("kiln3", "kiln.md", "Kiln", "2025-01-01"), "Loading"), 0.7),
		}, "lathe,kiln1,kiln2,kiln3"},
		{"distinct headings of a page still add up", []docent.Hit{
			h(c("lathe", "lathe.md", "Lathe", "2025-01-01"), 1.0),
			h(sec(c("kiln1", "kiln.md", "Kiln", "2025-01-01"), "Loading"), 0.95),
			h(sec(c("kiln2", "kiln.md", "Kiln", "2025-01-01"), "Venting"), 0.9),
			h(sec(c("kiln3", "kiln.md", "Kiln", "2025-01-01"), "Loading"), 0.7),
		}, "kiln1,kiln2,lathe,kiln3"},
		{"the newer version of a page goes before the older", []docent.Hit{
			h(c("dues-old", "dues-2022.md", "Membership dues (2022)", "2022-02-01"), 1.0),
			h(c("lathe", "lathe.md", "Lathe", "2025-01-01"), 0.95),
			h(c("dues", "dues.md", "Membership dues", "2025-09-01"), 0.9),
		}, "lathe,dues,dues-old"},
		{"every chunk of the older version follows the newer's first", []docent.Hit{
			h(c("old1", "dues-2022.md", "Membership dues (2022)", "2022-02-01"), 1.0),
			h(c("old2", "dues-2022.md", "Membership dues (2022)", "2022-02-01"), 0.99),
			h(c("new1", "dues.md", "Membership dues", "2025-09-01"), 0.5),
			h(c("new2", "dues.md", "Membership dues", "2025-09-01"), 0.4),
		}, "new1,old1,old2,new2"},
		{"versions chain: oldest after older after newest", []docent.Hit{
			h(c("v1", "dues-2019.md", "Membership dues (2019)", "2019-01-01"), 1.0),
			h(c("v2", "dues-2022.md", "Membership dues (2022)", "2022-02-01"), 0.9),
			h(c("v3", "dues.md", "Membership dues", "2025-09-01"), 0.1),
		}, "v3,v2,v1"},
		{"chunks without a document are pages of their own", []docent.Hit{
			h(docent.Chunk{ID: "lone1", Title: "Kiln"}, 1.0),
			h(docent.Chunk{ID: "lone2", Title: "Kiln"}, 0.9),
			h(docent.Chunk{ID: "lone3", Title: "Kiln"}, 0.8),
			h(sec(c("kiln1", "kiln.md", "Kiln", "2025-01-01"), "Loading"), 0.85),
			h(sec(c("kiln2", "kiln.md", "Kiln", "2025-01-01"), "Firing"), 0.85),
		}, "kiln1,kiln2,lone1,lone2,lone3"},
		{"a newer version repeats a section of the older", []docent.Hit{
			h(sec(c("old", "kiln-2022.md", "Kiln (2022)", "2022-01-01"), "Loading"), 1.0),
			h(c("lathe", "lathe.md", "Lathe", "2025-01-01"), 0.95),
			h(sec(c("new", "kiln.md", "Kiln", "2025-01-01"), "Loading"), 0.9),
		}, "lathe,new,old"},
		{"pages that share a title and no section keep their order", []docent.Hit{
			h(sec(c("setup", "kiln/setup.md", "Kiln", "2022-01-01"), "Loading"), 1.0),
			h(c("lathe", "lathe.md", "Lathe", "2025-01-01"), 0.95),
			h(sec(c("venting", "kiln/venting.md", "Kiln", "2025-01-01"), "Venting"), 0.9),
		}, "setup,lathe,venting"},
		{"alike pages written the same day are not versions", []docent.Hit{
			h(sec(c("gas", "kilns/gas.md", "Kiln", "2025-01-01"), "Loading"), 1.0),
			h(c("lathe", "lathe.md", "Lathe", "2025-01-01"), 0.95),
			h(sec(later(c("electric", "kilns/electric.md", "Kiln", "2025-01-01"), time.Microsecond), "Loading"), 0.9),
		}, "gas,lathe,electric"},
		{"pages with unlike titles keep their order", []docent.Hit{
			h(c("old", "guests.md", "Guest policy", "2019-01-01"), 1.0),
			h(c("new", "dues.md", "Membership dues", "2025-09-01"), 0.9),
		}, "old,new"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rr, err := PageOrder{}.Rerank(context.Background(), answer.RerankRequest{Hits: tt.hits})
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, h := range rr.Hits {
				ids = append(ids, h.Chunk.ID)
			}
			if got := strings.Join(ids, ","); got != tt.want {
				t.Errorf("order %s, want %s", got, tt.want)
			}
		})
	}
}

func TestPageOrderScores(t *testing.T) {
	var hits []docent.Hit
	for i := range pageDepth + 2 {
		hits = append(hits, docent.Hit{Chunk: docent.Chunk{ID: fmt.Sprintf("k%d", i), DocID: "kiln.md", Title: "Kiln",
			Section: []string{fmt.Sprintf("Firing %d", i)}}, Score: 1})
	}
	hits = append(hits, docent.Hit{Chunk: docent.Chunk{ID: "neg", DocID: "kiln.md", Title: "Kiln", Section: []string{"Glazes"}}, Score: -1})
	in := append([]docent.Hit(nil), hits...)
	rr, err := PageOrder{}.Rerank(context.Background(), answer.RerankRequest{Hits: hits})
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]float64{}
	for _, h := range rr.Hits {
		byID[h.Chunk.ID] = h.RerankScore
	}
	// A chunk among the first pageDepth adds the other pageDepth−1; one
	// below adds them all; a negative score adds nothing.
	sum := float64(pageDepth)
	if want := round4(1 + pageWeight*(sum-1)); byID["k0"] != want {
		t.Errorf("k0 %v, want %v", byID["k0"], want)
	}
	if want := round4(1 + pageWeight*sum); byID[fmt.Sprintf("k%d", pageDepth)] != want {
		t.Errorf("k%d %v, want %v", pageDepth, byID[fmt.Sprintf("k%d", pageDepth)], want)
	}
	if want := round4(-1 + pageWeight*sum); byID["neg"] != want {
		t.Errorf("neg %v, want %v", byID["neg"], want)
	}
	for i := range hits {
		if hits[i].RerankScore != 0 || hits[i].Chunk.ID != in[i].Chunk.ID {
			t.Fatal("Rerank changed the request's hits")
		}
	}
}

func TestTitleTermsAndJaccard(t *testing.T) {
	if got := titleTerms("Membership dues (2022)"); len(got) != 2 || !got["membership"] || !got["due"] {
		t.Errorf("titleTerms = %v", got)
	}
	a, b := map[string]bool{"x": true, "y": true}, map[string]bool{"y": true, "z": true}
	if jaccard(a, b) != 1.0/3 || jaccard(a, nil) != 0 || jaccard(a, a) != 1 {
		t.Errorf("jaccard %v %v %v", jaccard(a, b), jaccard(a, nil), jaccard(a, a))
	}
}
