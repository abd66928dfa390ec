package searchtest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/search"
)

// sectionChunk is a chunk of doc at ord with a title, a section path and
// a body, its Text as the chunker writes it.
func sectionChunk(doc, source string, ord int, title string, section []string, body string, v []float32) docent.Chunk {
	c := chunk(doc, ord, "", v)
	c.Source, c.Title, c.Section = source, title, section
	c.Text = docent.ChunkHeading(title, section) + "\n\n" + body
	return c
}

// testFieldAware: keyword scoring weighs where a word is: a section whose
// heading names the query's word outranks a section that mentions it in
// passing in a body of the same length.
func (s *suite) testFieldAware(t *testing.T) {
	ix := s.openNamed(t, s.name(t))
	mustUpsert(t, ix,
		sectionChunk("ratelimit", "wiki", 0, "Rate limit", []string{"Options", "burst"},
			"The largest number of requests allowed through at once, in an arbitrarily small period of time.", Vec(0, 1, 0)),
		sectionChunk("ratelimit", "wiki", 1, "Rate limit", []string{"Options", "average"},
			"The number of requests allowed per period; a request over the burst waits until the period ends.", Vec(1, 2, 0)),
		sectionChunk("headers", "wiki", 0, "Headers", []string{"Options", "custom"},
			"Headers added to every request and every response, such as a server name or a frame policy.", Vec(2, 3, 0)),
	)
	hits := mustKeyword(t, ix, search.KeywordQuery{Text: "burst", K: 5})
	if len(hits) < 2 || hits[0].Chunk.ID != "ratelimit#0" || hits[1].Chunk.ID != "ratelimit#1" {
		t.Errorf("burst ranks %v, want the section named burst before the one that mentions it", ids(hits))
	}
}

// testDuplicates: the Retriever keeps one of the chunks whose text is the
// same on several pages and lists the others on it; a filtered search
// keeps the copy the filter lets through.
func (s *suite) testDuplicates(t *testing.T) {
	ix := s.openNamed(t, s.name(t))
	shared := "Changes to the static configuration take effect after a restart; the dynamic configuration reloads on the fly."
	mustUpsert(t, ix,
		sectionChunk("mount", "cli", 0, "mount", []string{"Options"}, shared, Vec(0, 1, 0.1)),
		sectionChunk("serve", "cli", 0, "serve", []string{"Options"}, shared, Vec(0, 1, 0.2)),
		sectionChunk("guide", "guides", 0, "Guide", []string{"Reloading"}, shared, Vec(0, 1, 0.3)),
		sectionChunk("other", "guides", 0, "Other", []string{"Restart policy"}, "A restart of the static configuration policy is planned for every release.", Vec(0, 2, 0.3)),
	)
	hits := retrieve(t, ix, search.Request{Text: "static configuration restart", Vector: Vec(0, 1, 0.1), K: 10})
	var copies []docent.Hit
	for _, h := range hits {
		if h.Chunk.Body() == shared {
			copies = append(copies, h)
		}
	}
	if len(copies) != 1 || len(copies[0].Duplicates) != 2 {
		t.Fatalf("hits %v: want one of the three copies, listing the other two (got %d, %v)", ids(hits), len(copies), copies)
	}
	docs := map[string]bool{copies[0].Chunk.DocID: true}
	for _, d := range copies[0].Duplicates {
		docs[d.DocID] = true
		if d.ID == "" || d.Title == "" || d.URL == "" || len(d.Section) == 0 {
			t.Errorf("duplicate %+v: want id, title, section and URL to cite it", d)
		}
	}
	if len(docs) != 3 {
		t.Errorf("the copies name %v, want mount, serve and guide", docs)
	}
	if !slices.ContainsFunc(hits, func(h docent.Hit) bool { return h.Chunk.ID == "other#0" }) {
		t.Errorf("hits %v lack the unrelated chunk", ids(hits))
	}

	hits = retrieve(t, ix, search.Request{Text: "static configuration restart", Vector: Vec(0, 1, 0.1), K: 10,
		Filter: docent.Filter{Sources: []string{"guides"}}})
	i := slices.IndexFunc(hits, func(h docent.Hit) bool { return h.Chunk.ID == "guide#0" })
	if i < 0 || len(hits[i].Duplicates) != 0 || len(hits) != 2 {
		t.Errorf("filtered to guides: %v, want guide's copy, with no copy of another source", ids(hits))
	}
}

// testNearCopies: of two near-identical sections (the same text written
// for TCP and for UDP), the Retriever keeps one among the first five hits
// and moves the other after them; with the rule off both stay on top.
func (s *suite) testNearCopies(t *testing.T) {
	ix := s.openNamed(t, s.name(t))
	wrr := "The weighted round robin load balances the requests between several services based on their weights, " +
		"and is only available between services, not between the servers of one service, for %s."
	mustUpsert(t, ix,
		sectionChunk("services", "wiki", 0, "Services", []string{"TCP", "Weighted Round Robin"}, fmt.Sprintf(wrr, "TCP"), Vec(0, 1, 0)),
		sectionChunk("services", "wiki", 1, "Services", []string{"UDP", "Weighted Round Robin"}, fmt.Sprintf(wrr, "UDP"), Vec(0, 1, 0.05)),
		sectionChunk("mirror", "wiki", 0, "Mirroring", []string{"Options"}, "Mirroring sends a copy of the requests to other services, each with a percentage.", Vec(0, 1, 0.1)),
		sectionChunk("failover", "wiki", 0, "Failover", []string{"Options"}, "A failover service forwards requests to a fallback when the main service is down.", Vec(0, 1, 0.2)),
		sectionChunk("sticky", "wiki", 0, "Sticky sessions", []string{"Cookie"}, "Sticky sessions send the requests of one client to the same server, by cookie.", Vec(0, 1, 0.3)),
		sectionChunk("health", "wiki", 0, "Health check", []string{"Interval"}, "The health check polls each server of a service and drops the failing ones.", Vec(0, 1, 0.4)),
		sectionChunk("servers", "wiki", 0, "Servers", []string{"Load balancer"}, "The servers load balancer spreads requests across the servers of one service.", Vec(0, 1, 0.5)),
	)
	req := search.Request{Text: "weighted round robin between services weights requests", Vector: Vec(0, 1, 0), K: 10}
	twins := func(hits []docent.Hit) (top, later int) {
		for i, h := range hits {
			if h.Chunk.DocID == "services" {
				if i < 5 {
					top++
				} else {
					later++
				}
			}
		}
		return top, later
	}
	hits := retrieve(t, ix, req)
	if top, later := twins(hits); len(hits) < 7 || top != 1 || later != 1 || hits[0].Chunk.DocID != "services" {
		t.Errorf("hits %v: want one of the TCP and UDP twins first and the other after the first five", ids(hits))
	}
	r, err := search.NewRetriever(ix, nil, search.RetrieverOptions{NearCopyJaccard: -1})
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Retrieve(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if top, _ := twins(res.Hits); top != 2 {
		t.Errorf("rule off: hits %v, want both twins among the first five (the case proves nothing otherwise)", ids(res.Hits))
	}
}

// testSectionOrder: of the chunks of one page, the one whose own section
// states the query's words goes before the one that matches only the
// page's topic (its title), even when the vector prefers the latter.
func (s *suite) testSectionOrder(t *testing.T) {
	ix := s.openNamed(t, s.name(t))
	mustUpsert(t, ix,
		sectionChunk("ratelimit", "wiki", 0, "Rate limit", []string{"Overview"},
			"This middleware keeps a service from being flooded with more traffic than it can take at a time.", Vec(0, 1, 0)),
		sectionChunk("ratelimit", "wiki", 1, "Rate limit", []string{"Options", "burst"},
			"The largest number of requests allowed through at once, in an arbitrarily small period of time.", Vec(0, 1, 0.9)),
		sectionChunk("headers", "wiki", 0, "Headers", []string{"Options"},
			"Headers added to every request and every response, such as a server name or a frame policy.", Vec(3, 4, 0)),
	)
	for _, mode := range []search.Mode{search.ModeHybrid, search.ModeDefault} {
		hits := retrieve(t, ix, search.Request{Text: "rate limit burst", Vector: Vec(0, 1, 0), K: 3, Mode: mode})
		if len(hits) < 2 || hits[0].Chunk.ID != "ratelimit#1" || hits[1].Chunk.ID != "ratelimit#0" {
			t.Errorf("%s: %v, want the burst section before the overview", mode, ids(hits))
		}
		if len(hits) >= 2 && hits[0].Score < hits[1].Score {
			t.Errorf("%s: scores %v then %v: Score must still order the hits", mode, hits[0].Score, hits[1].Score)
		}
	}
}

// testTermStats: an index that keeps keyword statistics counts the chunks
// holding each analyzed term.
func (s *suite) testTermStats(t *testing.T) {
	ix := s.openNamed(t, s.name(t))
	ts, ok := ix.Index.(search.TermStats)
	if !ok {
		t.Fatal("the backend promises TermStats but does not implement it")
	}
	mustUpsert(t, ix,
		chunk("a", 0, "reset the VPN token", Vec(0, 1, 0)),
		chunk("b", 0, "VPN outage notes", Vec(1, 2, 0)),
		chunk("c", 0, "lunch menu", Vec(2, 3, 0)),
	)
	var terms []string
	search.AnalyzeKeywords("vpn token lunch absent", func(t string) { terms = append(terms, t) })
	df, n, err := ts.DocFreq(context.Background(), terms)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"vpn": 2, "token": 1, "lunch": 1}
	if n != 3 || len(df) != len(want) {
		t.Errorf("DocFreq = %v, %d; want %v, 3", df, n, want)
	}
	for term, w := range want {
		if df[term] != w {
			t.Errorf("df[%q] = %d, want %d (%s)", term, df[term], w, strings.Join(terms, " "))
		}
	}
}
