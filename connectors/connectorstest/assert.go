package connectorstest

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/connectors"
	"github.com/docent-hq/docent/search"
)

// AssertConverged checks that the index and the registry hold exactly the
// documents want of source, as ch chunks them today, with vectors made by
// emb: the registry's live documents are want; each one's chunk IDs in the
// registry equal the chunker's and the index's; the index holds no other
// document of source and its chunk texts are current; the index names emb
// as its embedder; and every chunk's stored vector is emb's vector of its
// text (a vector query for the text finds the chunk with similarity 1).
func AssertConverged(tb testing.TB, idx search.Index, reg connectors.Registry, ch connectors.Chunker,
	emb search.Embedder, source string, want []docent.Document) {
	tb.Helper()
	ctx := context.Background()
	recs, err := reg.Documents(ctx, source)
	if err != nil {
		tb.Fatalf("registry: %v", err)
	}
	indexed, err := idx.ChunkIDs(ctx, source)
	if err != nil {
		tb.Fatalf("index: %v", err)
	}
	texts := map[string]string{}
	if err := idx.Scan(ctx, func(c docent.Chunk) error {
		texts[c.ID] = c.Text
		return nil
	}); err != nil {
		tb.Fatalf("index scan: %v", err)
	}

	wantIDs := map[string]bool{}
	for _, d := range want {
		wantIDs[d.ID] = true
		chunks, err := ch.Chunk(d)
		if err != nil {
			tb.Fatalf("chunk %s: %v", d.ID, err)
		}
		var ids []string
		for _, c := range chunks {
			ids = append(ids, c.ID)
			if texts[c.ID] != c.Text {
				tb.Errorf("index chunk %s of %s has text %q, want %q", c.ID, d.ID, texts[c.ID], c.Text)
			}
		}
		rec, ok := recs[d.ID]
		if !ok {
			tb.Errorf("registry lacks live document %s", d.ID)
			continue
		}
		if rec.Title != d.Title || rec.URL != d.URL || !rec.UpdatedAt.Equal(d.UpdatedAt) {
			tb.Errorf("registry record of %s is stale: %+v", d.ID, rec)
		}
		if !slices.Equal(rec.ChunkIDs, ids) {
			tb.Errorf("registry chunk IDs of %s = %v, want %v", d.ID, rec.ChunkIDs, ids)
		}
		got := slices.Clone(indexed[d.ID])
		slices.Sort(got)
		sorted := slices.Clone(ids)
		slices.Sort(sorted)
		if !slices.Equal(got, sorted) {
			tb.Errorf("index chunk IDs of %s = %v, want %v", d.ID, got, sorted)
		}
	}
	for id := range recs {
		if !wantIDs[id] {
			tb.Errorf("registry has live document %s, which the source does not", id)
		}
	}
	for id := range indexed {
		if strings.HasPrefix(id, source+":") && !wantIDs[id] {
			tb.Errorf("index has document %s, which the source does not", id)
		}
	}

	name, err := idx.EmbedderName(ctx)
	if err != nil {
		tb.Fatalf("index: %v", err)
	}
	if name != emb.Name() {
		tb.Errorf("index embedder name = %q, want %q", name, emb.Name())
	}
	for id, text := range texts {
		vecs, err := emb.EmbedDocuments(ctx, []string{text})
		if err != nil {
			tb.Fatalf("embed: %v", err)
		}
		hits, err := idx.VectorSearch(ctx, search.VectorQuery{Vector: vecs[0], K: len(texts)})
		if err != nil {
			tb.Fatalf("search: %v", err)
		}
		score := -1.0
		for _, h := range hits {
			if h.Chunk.ID == id {
				score = h.VectorScore
			}
		}
		if score < 0.9999 {
			tb.Errorf("chunk %s: stored vector is not the embedder's vector of its text (similarity %.4f)", id, score)
		}
	}
}
