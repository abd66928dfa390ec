package offline_test

import (
	"context"
	"testing"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/answer"
	"github.com/docent-hq/docent/answer/offline"
	"github.com/docent-hq/docent/connectors/connectorstest"
	"github.com/docent-hq/docent/search"
	"github.com/docent-hq/docent/search/searchtest"
)

// TestAnswerEmbedsQuestionOnce runs the real pipeline over the real
// Retriever and the reference index with a counting embedder: one ask
// embeds the question once and no document text (vector feedback reads
// the stored vectors).
func TestAnswerEmbedsQuestionOnce(t *testing.T) {
	ctx := context.Background()
	emb := connectorstest.NewEmbedder("v1")
	ix := searchtest.NewMemory()
	texts := map[string]string{
		"pto":   "Time off > Vacation\n\nFull-time employees get 25 vacation days per year.",
		"sick":  "Sick leave\n\nYou have 10 paid sick days per year.",
		"wifi":  "Guest Wi-Fi\n\nVisitors use the Kestrel-Guest network.",
		"vpn":   "VPN\n\nReset your VPN token with kestrelconnect reset-token.",
		"hotel": "Expenses > Hotels\n\nHotels are reimbursed up to $250 per night.",
		"train": "Expenses > Trains\n\nBook trains in second class.",
	}
	var chunks []docent.Chunk
	for id, text := range texts {
		vs, err := emb.EmbedDocuments(ctx, []string{text})
		if err != nil {
			t.Fatal(err)
		}
		chunks = append(chunks, docent.Chunk{ID: id + "#0", DocID: id, Source: "hb", Title: id, Text: text, Vector: vs[0]})
	}
	if err := ix.Upsert(ctx, chunks); err != nil {
		t.Fatal(err)
	}
	calls, _ := emb.Calls()

	r, err := search.NewRetriever(ix, emb, search.RetrieverOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := answer.New(offline.NewStages(r, offline.Options{}), nil, answer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	a, err := p.Answer(ctx, docent.Question{Text: "How many vacation days do employees get per year?"})
	if err != nil {
		t.Fatal(err)
	}
	if a.Status != docent.StatusAnswered || len(a.Citations) == 0 || a.Citations[0].DocID != "pto" {
		t.Fatalf("answer %s %q %+v, want the vacation page cited", a.Status, a.Text, a.Citations)
	}
	if q := emb.Queries(); q != 1 {
		t.Errorf("question embedded %d times, want once", q)
	}
	if after, _ := emb.Calls(); after != calls {
		t.Errorf("%d document embedding calls during the ask, want 0 (feedback reads stored vectors)", after-calls)
	}
}
