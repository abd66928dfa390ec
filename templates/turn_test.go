package templates

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/docent-hq/docent"
)

var update = flag.Bool("update", false, "rewrite the golden HTML files")

// fixedTurn is a turn with a full trace: a rewrite, a filter, candidates
// from both retrievers with fused, rerank and relevance scores, the
// chunks sent, a prompt, tokens and every stage.
func fixedTurn() docent.Turn {
	day := func(s string) time.Time { t, _ := time.Parse("2006-01-02", s); return t }
	vpn := docent.Chunk{ID: "c-vpn", DocID: "handbook:it/vpn.md", Source: "handbook", Title: "VPN",
		Section: []string{"Resetting your token"}, URL: "http://localhost:8080/docs/handbook/it/vpn.md#resetting-your-token",
		UpdatedAt: day("2026-01-20"), Text: "VPN > Resetting your token\n\nOpen the Kestrel VPN client and choose Reset token."}
	sso := docent.Chunk{ID: "c-sso", DocID: "handbook:it/sso-mfa.md", Source: "handbook", Title: "SSO & MFA",
		Section: []string{"Lost device"}, URL: "http://localhost:8080/docs/handbook/it/sso-mfa.md#lost-device", UpdatedAt: day("2025-08-26")}
	wifi := docent.Chunk{ID: "c-wifi", DocID: "handbook:it/guest-wifi.md", Source: "handbook", Title: "Guest Wi-Fi",
		URL: "http://localhost:8080/docs/handbook/it/guest-wifi.md", UpdatedAt: day("2020-02-11")}
	return docent.Turn{
		ID:        42,
		CreatedAt: time.Date(2026, 11, 30, 9, 15, 0, 0, time.UTC),
		Question: docent.Question{Text: "vpn token reset??", Platform: "slack", Channel: "C-help", User: "U123",
			Filter: docent.Filter{Sources: []string{"handbook"}, Labels: []string{"it"}}},
		Answer: docent.Answer{
			Text:   "Open the Kestrel VPN client and choose Reset token [1]. If your phone is lost, re-enrol MFA first [2].",
			Status: docent.StatusAnswered,
			Citations: []docent.Citation{
				{N: 1, DocID: vpn.DocID, ChunkID: vpn.ID, Title: vpn.Title, Section: "Resetting your token", URL: vpn.URL, UpdatedAt: vpn.UpdatedAt},
				{N: 2, DocID: sso.DocID, ChunkID: sso.ID, Title: sso.Title, Section: "Lost device", URL: sso.URL, UpdatedAt: sso.UpdatedAt},
			},
			Trace: docent.Trace{
				Query:      "How do I reset my VPN token?",
				SubQueries: []string{"reset VPN token", "lost MFA device"},
				Candidates: []docent.Hit{
					{Chunk: vpn, Score: 0.9312, KeywordRank: 1, KeywordScore: 12.5, VectorRank: 2, VectorScore: 0.81, RerankScore: 0.97, Relevance: 0.88},
					{Chunk: sso, Score: 0.6120, KeywordRank: 3, KeywordScore: 7.25, VectorRank: 1, VectorScore: 0.84, RerankScore: 0.71, Relevance: 0.62},
					{Chunk: wifi, Score: 0.2001, VectorRank: 5, VectorScore: 0.41, Relevance: 0.12},
				},
				Used: []string{"c-vpn", "c-sso"},
				Decision: &docent.Decision{Rule: "plausible", Reason: "the model reads the sources and decides",
					Features: map[string]float64{"cosine": 0.84, "keyword": 1}, Sources: []string{"c-vpn", "c-sso"},
					NotSent: map[string]string{"c-wifi": "cut by the source limit (2 sources)"}, ModelAsked: true},
				Threshold: 0.5,
				TopScore:  0.88,
				Model:     "gemini-flash-latest",
				Prompt:    "Answer from the numbered sources only.\n[1] VPN › Resetting your token\n…",
				TokensIn:  812, TokensOut: 64,
				CitationsRemoved: 1, Uncited: 2,
				Stages: []docent.Stage{
					{Name: "rewrite", Duration: 120 * time.Millisecond, Detail: "standalone query, 2 parts"},
					{Name: "retrieve", Duration: 35 * time.Millisecond, Detail: "20 candidates"},
					{Name: "rerank", Duration: 410 * time.Millisecond, Detail: "model kept 2"},
					{Name: "gate", Duration: time.Millisecond, Detail: "top 0.88 >= 0.50"},
					{Name: "generate", Duration: 950 * time.Millisecond, Detail: "2 citations"},
					{Name: "verify", Duration: 0, Detail: "skipped"},
				},
			},
		},
	}
}

func renderTurnDetail(t *testing.T) string {
	t.Helper()
	turn := fixedTurn()
	p := TurnDetail{
		Meta:    Meta{Title: "Turn 42", Nav: "turns", User: "alice", CSRF: "csrf-token"},
		Turn:    turn,
		Summary: docent.TurnSummary{ID: 42, Helpful: 1, Handoff: docent.HandoffResolved, Assignee: "bob"},
		Feedback: []docent.Feedback{{ID: 1, TurnID: 42, Rating: docent.RatingHelpful, User: "U9",
			CreatedAt: time.Date(2026, 11, 30, 9, 20, 0, 0, time.UTC)}},
		Handoffs: []docent.Handoff{{ID: 3, TurnID: 42, Platform: "slack", Channel: "C-help", Thread: "1.0",
			State: docent.HandoffResolved, RequestedBy: "U123", ClaimedBy: "U7", ResolvedBy: "U7",
			RequestedAt: time.Date(2026, 11, 30, 9, 16, 0, 0, time.UTC), ClaimedAt: time.Date(2026, 11, 30, 9, 30, 0, 0, time.UTC),
			ResolvedAt: time.Date(2026, 11, 30, 10, 5, 0, 0, time.UTC)}},
		Knowledge: []docent.KnowledgeCandidate{{ID: 5, HandoffID: 3, TurnID: 42, Question: "vpn token reset??",
			Answer: "Reset it in the Kestrel client; if that fails, IT can reissue it.", Author: "U7",
			CreatedAt: time.Date(2026, 11, 30, 10, 5, 0, 0, time.UTC)}},
		WhyNot: &WhyNot{Doc: docent.DocRecord{ID: "handbook:it/guest-wifi.md", Title: "Guest Wi-Fi"}, Depth: 120,
			Filter: "sources: handbook; labels: it", Excluded: "it has none of the labels it",
			Chunks: []WhyNotChunk{{ID: "c-wifi", Section: "Guest Wi-Fi", VectorUnfiltered: 5, KeywordUnfiltered: 9,
				Candidate: 3, Excluded: "it has none of the labels it"}}},
		Golden: GoldenForm{ID: "vpn-token-reset", Question: turn.Question.Text, Kind: "paraphrase", FromTurn: 42,
			Candidates: []DocChoice{{Path: "it/vpn.md", Title: "VPN", Section: "Resetting your token", Rank: 1}}},
	}
	p.Golden.Meta = p.Meta
	p.Flagged = map[string]string{"handbook:it/sso-mfa.md": "older than its source's policy"}
	var b bytes.Buffer
	if err := TurnDetailPage(p).Render(WithCSRF(context.Background(), "csrf-token"), &b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestTurnDetailGolden renders the turn-detail page of a fixed trace and
// compares it with testdata/turn_detail.html (go test -update rewrites it).
func TestTurnDetailGolden(t *testing.T) {
	got := renderTurnDetail(t)
	path := filepath.Join("testdata", "turn_detail.html")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("turn detail HTML differs from %s (go test ./templates -run TestTurnDetailGolden -update)\n%s", path, firstDiff(string(want), got))
	}
}

// TestTurnDetailContent checks what the golden file must hold, so an
// -update that loses it fails.
func TestTurnDetailContent(t *testing.T) {
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(renderTurnDetail(t)))
	if err != nil {
		t.Fatal(err)
	}
	for sel, want := range map[string]string{
		`[data-testid=turn-question]`: "vpn token reset??",
		`[data-testid=rewrite]`:       "How do I reset my VPN token?",
		`[data-testid=filter]`:        "sources: handbook; labels: it",
		`[data-testid=candidate]:nth-of-type(2) [data-testid=keyword-rank]`: "1",
		`[data-testid=handoff-state]`:                                       "resolved",
		`[data-testid=handoff-requested]`:                                   "requested by U123 2026-11-30 09:16 in Slack #C-help",
		`[data-testid=handoff-claimed]`:                                     "claimed by U7 2026-11-30 09:30",
		`[data-testid=handoff-resolved]`:                                    "resolved by U7 2026-11-30 10:05",
		`[data-testid=knowledge-answer]`:                                    "Reset it in the Kestrel client; if that fails, IT can reissue it.",
		`[data-testid=verify-counts]`:                                       "Verifier: 1 citation removed, 2 uncited sentences",
		`[data-testid=whynot-excluded]`:                                     "The turn's filter removed it: it has none of the labels it",
		`[data-testid=prompt]`:                                              "Answer from the numbered sources only.\n[1] VPN › Resetting your token\n…",
		`[data-testid=decision-reason]`:                                     "the model reads the sources and decides",
		`[data-testid=decision-sources]`:                                    "2 chunks",
		`[data-testid=why-not-sent]`:                                        "cut by the source limit (2 sources)",
		`[data-testid=chunk-text]`:                                          "VPN > Resetting your token\n\nOpen the Kestrel VPN client and choose Reset token.",
		`[data-testid=citation-flagged]`:                                    "⚠ May be out of date: older than its source's policy. See stale documents.",
		`[data-testid=asked-by]`:                                            "asked by U123",
		`[data-testid=candidate]:nth-of-type(2) [data-testid=sent]`:         "sent, cited [1]",
	} {
		if got := strings.TrimSpace(doc.Find(sel).First().Text()); got != want {
			t.Errorf("%s = %q, want %q", sel, got, want)
		}
	}
	var ranks []string
	doc.Find(`[data-testid=candidate]`).Each(func(_ int, s *goquery.Selection) {
		ranks = append(ranks, strings.TrimSpace(s.Find(`[data-testid=keyword-rank]`).Text())+"/"+
			strings.TrimSpace(s.Find(`[data-testid=vector-rank]`).Text())+"/"+
			strings.TrimSpace(s.Find(`[data-testid=fused-score]`).Text())+"/"+
			strings.TrimSpace(s.Find(`[data-testid=rerank-score]`).Text()))
	})
	if got := strings.Join(ranks, " "); got != "1/2/0.9312/0.9700 3/1/0.6120/0.7100 –/5/0.2001/–" {
		t.Errorf("candidate ranks and scores = %q", got)
	}
	markers := doc.Find(`[data-testid=citation-marker]`)
	if href, _ := markers.Eq(1).Attr("href"); markers.Length() != 2 || href != "#chunk-c-sso" {
		t.Errorf("citation markers: %d, second links %q", markers.Length(), href)
	}
	if n := doc.Find(`tr.used`).Length(); n != 2 {
		t.Errorf("%d rows marked sent, want 2", n)
	}
	if got := strings.TrimSpace(doc.Find(`[data-testid=stage-latency]`).Eq(4).Text()); got != "950.0 ms" {
		t.Errorf("generate latency = %q", got)
	}
}

// firstDiff shows where two texts first differ.
func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(al) || i < len(bl); i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			return "line " + itoa(i+1) + ":\n- " + x + "\n+ " + y
		}
	}
	return ""
}

func itoa(n int) string { return Itoa(n) }
