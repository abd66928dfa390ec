package offline_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/answer"
	"github.com/docent-hq/docent/answer/offline"
	"github.com/docent-hq/docent/connectors/connectorstest"
	"github.com/docent-hq/docent/search"
	"github.com/docent-hq/docent/search/searchtest"
)

// TestDecisionSaysWhyNotSent: the trace of an answer says, for every
// candidate the gate read and did not give the generator, why: the copy
// of a source's text on another page is a duplicate (and not sent: it
// would take a source's place and say nothing more), the unrelated pages
// are below the gate's floor.
func TestDecisionSaysWhyNotSent(t *testing.T) {
	ctx := context.Background()
	emb := connectorstest.NewEmbedder("v1")
	ix := searchtest.NewMemory()
	// The copy is on another page: its "Title > Section" line differs.
	vacation := "Full-time employees get 25 vacation days per year, booked in Workday."
	docs := []struct{ id, text string }{
		{"pto", "pto\n\n" + vacation},
		{"pto-copy", "pto-copy\n\n" + vacation},
		{"sick", "Sick leave\n\nYou have 10 paid sick days per year; tell your manager."},
		{"wifi", "Guest Wi-Fi\n\nVisitors use the Kestrel-Guest network; the password is at the desk."},
		{"vpn", "VPN\n\nReset your VPN token with kestrelconnect reset-token."},
		{"hotel", "Expenses > Hotels\n\nHotels are reimbursed up to $250 per night in the year."},
	}
	var chunks []docent.Chunk
	for _, d := range docs {
		vs, err := emb.EmbedDocuments(ctx, []string{d.text})
		if err != nil {
			t.Fatal(err)
		}
		chunks = append(chunks, docent.Chunk{ID: d.id + "#0", DocID: "hb:" + d.id, Source: "hb", Title: d.id, Text: d.text, Vector: vs[0]})
	}
	if err := ix.Upsert(ctx, chunks); err != nil {
		t.Fatal(err)
	}
	r, err := search.NewRetriever(ix, emb, search.RetrieverOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := answer.New(offline.NewStages(r, offline.Options{}), nil, answer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	a, err := p.Answer(ctx, docent.Question{Text: "How many vacation days do full-time employees get per year?"})
	if err != nil {
		t.Fatal(err)
	}
	d := a.Trace.Decision
	if a.Status != docent.StatusAnswered || d == nil || len(d.Sources) == 0 {
		t.Fatalf("answer %s, decision %+v: want answered with sources", a.Status, d)
	}
	for _, h := range a.Trace.Candidates {
		id := h.Chunk.ID
		why, omitted := d.NotSent[id]
		if slices.Contains(d.Sources, id) {
			if omitted {
				t.Errorf("%s was sent and has a reason not to be: %q", id, why)
			}
			continue
		}
		if !omitted || why == "" {
			t.Errorf("%s was not sent and the decision says not why (not sent: %v)", id, d.NotSent)
		}
	}
	copyID := "pto-copy#0"
	if slices.Contains(d.Sources, copyID) {
		copyID = "pto#0" // whichever ranked second is the duplicate
	}
	// Retrieval may already fold the copy into the hit it copies
	// (Hit.Duplicates); otherwise the gate says it is a duplicate.
	folded := false
	for _, h := range a.Trace.Candidates {
		for _, dup := range h.Duplicates {
			folded = folded || dup.ID == copyID
		}
	}
	if why := d.NotSent[copyID]; !folded && !strings.Contains(why, "duplicate of source [") {
		t.Errorf("the copy of the vacation page: %q, want a duplicate of a source", why)
	}
	if why := d.NotSent["wifi#0"]; why != "" && !strings.Contains(why, "floor") && !strings.Contains(why, "passage") {
		t.Errorf("the Wi-Fi page: %q, want below the gate's floor", why)
	}
}

// TestPlausibleSaysWhyNotSent: the model answerers' gate gives at most
// PerPage chunks of a page and MaxSources in all, and says so of the rest.
func TestPlausibleSaysWhyNotSent(t *testing.T) {
	var hits []docent.Hit
	for i, doc := range []string{"a", "a", "a", "b", "c", "d"} {
		hits = append(hits, docent.Hit{Chunk: docent.Chunk{ID: doc + string(rune('0'+i)), DocID: doc}, KeywordRank: i + 1})
	}
	ev, err := answer.Plausible{MaxSources: 4, PerPage: 2}.Gate(context.Background(), answer.GateRequest{Hits: hits})
	if err != nil {
		t.Fatal(err)
	}
	var sent []string
	for _, s := range ev.Sources {
		sent = append(sent, s.Hit.Chunk.ID)
	}
	if want := []string{"a0", "a1", "b3", "c4"}; !slices.Equal(sent, want) {
		t.Fatalf("sources %v, want %v", sent, want)
	}
	if why := ev.Omitted["a2"]; !strings.Contains(why, "2 chunks of its page") {
		t.Errorf("a2: %q, want the page limit", why)
	}
	if why := ev.Omitted["d5"]; !strings.Contains(why, "source limit (4") {
		t.Errorf("d5: %q, want the source limit", why)
	}
}
