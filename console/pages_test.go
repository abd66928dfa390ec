package console

import (
	"bytes"
	"context"
	"mime/multipart"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/connectors"
	"github.com/docent-hq/docent/eval"
	"github.com/docent-hq/docent/store"
	"github.com/docent-hq/docent/templates"
)

func attrs(s *goquery.Selection, name string) []string {
	var out []string
	s.Each(func(_ int, x *goquery.Selection) {
		v, _ := x.Attr(name)
		out = append(out, v)
	})
	return out
}

func texts(s *goquery.Selection) []string {
	var out []string
	s.Each(func(_ int, x *goquery.Selection) { out = append(out, text(x)) })
	return out
}

func TestOverview(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	answered := e.ask(questionText("How do I reset my VPN token?"))
	menu := e.ask(docent.Question{Text: "What is on the cafeteria menu on Fridays?", Platform: "api"})
	vacation := e.ask(docent.Question{Text: "How many vacation days do I get?", Platform: "discord"})
	e.ask(docent.Question{Text: "eval question", Platform: eval.GoldenPlatform})
	if menu.Answer.Status != docent.StatusNotFound {
		t.Fatalf("the menu question was %s, want not_found", menu.Answer.Status)
	}
	// An uncertain answer stored by a chat bot, and one from two days ago
	// that only the 7-day window counts.
	for _, created := range []time.Time{time.Now().UTC(), time.Now().UTC().Add(-48 * time.Hour)} {
		tu := docent.Turn{Question: docent.Question{Text: "Is the office open on Boxing Day?", Platform: "slack", Channel: "C-help"},
			Answer: docent.Answer{Status: docent.StatusUncertain, Text: "Possibly."}, CreatedAt: created}
		if err := e.db.CreateTurn(ctx, &tu); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.db.CreateFeedback(ctx, &docent.Feedback{TurnID: answered.ID, Rating: docent.RatingHelpful}); err != nil {
		t.Fatal(err)
	}
	if err := e.db.CreateFeedback(ctx, &docent.Feedback{TurnID: vacation.ID, Rating: docent.RatingNotHelpful}); err != nil {
		t.Fatal(err)
	}
	if err := e.db.CreateHandoff(ctx, &docent.Handoff{TurnID: vacation.ID, Platform: "discord", Channel: "D1", Thread: "1"}); err != nil {
		t.Fatal(err)
	}
	answeredN := 0
	for _, tu := range []docent.Turn{answered, menu, vacation} {
		if tu.Answer.Status == docent.StatusAnswered {
			answeredN++
		}
	}
	c := e.client()
	c.login()
	if got := text(c.get("/?window=7d").doc.Find(`[data-testid=questions]`)); got != "5" {
		t.Errorf("questions in 7 days = %q, want 5", got)
	}
	r := c.get("/?window=24h")
	if r.StatusCode != http.StatusOK {
		t.Fatalf("GET / = %d", r.StatusCode)
	}
	for sel, want := range map[string]string{
		"questions":      "4", // the golden run's turn and the one from two days ago are left out
		"answered-rate":  strconv.FormatFloat(100*float64(answeredN)/4, 'f', 1, 64) + "%",
		"not-found-rate": "25.0%",
		"uncertain-rate": "25.0%",
		"helpful":        "1",
		"not-helpful":    "1",
		"handoff-rate":   "25.0%",
	} {
		if got := text(r.doc.Find(`[data-testid=` + sel + `]`)); got != want {
			t.Errorf("%s = %q, want %q", sel, got, want)
		}
	}
	if got := text(r.doc.Find(`[data-testid=latency-p95]`)); !strings.HasSuffix(got, " ms") && !strings.HasSuffix(got, " s") {
		t.Errorf("p95 latency = %q", got)
	}
	if n := r.doc.Find(`[data-testid=daily-chart] [data-testid=bar]`).Length(); n != 3 {
		t.Errorf("daily chart has %d bars, want one per platform today (slack, api, discord)", n)
	}
	if got := texts(r.doc.Find(`[data-testid=top-cited-row] a`)); len(got) == 0 || got[0] != "VPN" && got[0] != "Paid Time Off" {
		t.Errorf("top cited = %v", got)
	}
	if got := texts(r.doc.Find(`[data-testid=sync-health-row] td:first-child`)); len(got) != 1 || got[0] != "handbook" {
		t.Errorf("sync health rows = %v", got)
	}
	if v, _ := r.doc.Find(`[data-testid=window] option[selected]`).Attr("value"); v != "24h" {
		t.Errorf("selected window = %q", v)
	}
}

func TestRetrievalLogsFilters(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	vpn := e.ask(questionText("How do I reset my VPN token?"))
	menu := e.ask(docent.Question{Text: "What is on the cafeteria menu on Fridays?", Platform: "api"})
	pto := e.ask(docent.Question{Text: "How many vacation days do I get?", Platform: "discord", Channel: "C-people"})
	if err := e.db.CreateFeedback(ctx, &docent.Feedback{TurnID: pto.ID, Rating: docent.RatingNotHelpful}); err != nil {
		t.Fatal(err)
	}
	c := e.client()
	c.login()
	ids := func(r *response) []string { return attrs(r.doc.Find(`[data-testid=turn-row]`), "data-turn") }
	today := time.Now().UTC().Format("2006-01-02")
	for _, tc := range []struct {
		name, query string
		want        []int64
	}{
		{"newest first", "", []int64{pto.ID, menu.ID, vpn.ID}},
		{"status", "status=not_found", []int64{menu.ID}},
		{"feedback", "feedback=not_helpful", []int64{pto.ID}},
		{"platform", "platform=api", []int64{menu.ID}},
		{"channel", "channel=C-help", []int64{vpn.ID}},
		{"source cited", "source=handbook", []int64{pto.ID, vpn.ID}},
		{"document cited", "doc=handbook:it/vpn.md", []int64{vpn.ID}},
		{"text", "q=vpn", []int64{vpn.ID}},
		{"date range", "since=" + today + "&until=" + today, []int64{pto.ID, menu.ID, vpn.ID}},
		{"date range before", "until=2020-01-01", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := c.get("/turns?" + tc.query)
			if r.StatusCode != http.StatusOK {
				t.Fatalf("GET /turns?%s = %d", tc.query, r.StatusCode)
			}
			var want []string
			for _, id := range tc.want {
				want = append(want, itoa(id))
			}
			if got := ids(r); strings.Join(got, ",") != strings.Join(want, ",") {
				t.Errorf("turns = %v, want %v", got, want)
			}
			if got := text(r.doc.Find(`[data-testid=turn-total]`)); got != templates.Plural(len(tc.want), "turn", "turns") {
				t.Errorf("total = %q", got)
			}
		})
	}
	if r := c.get("/turns?since=yesterday"); r.StatusCode != http.StatusBadRequest {
		t.Errorf("a malformed date = %d, want 400", r.StatusCode)
	}
	// The answer pipeline's uncertain outcome is a status of its own.
	unsure := docent.Turn{Question: docent.Question{Text: "Is the office open on Boxing Day?", Platform: "slack", Channel: "C-help"},
		Answer: docent.Answer{Status: docent.StatusUncertain, Text: "Possibly."}}
	if err := e.db.CreateTurn(ctx, &unsure); err != nil {
		t.Fatal(err)
	}
	r := c.get("/turns?status=uncertain")
	if got := ids(r); len(got) != 1 || got[0] != itoa(unsure.ID) {
		t.Errorf("uncertain turns = %v, want [%d]", got, unsure.ID)
	}
	if got := text(r.doc.Find(`[data-testid=turn-row] [data-testid=status]`)); got != "uncertain" {
		t.Errorf("status shown = %q", got)
	}
	// Paginated: 55 more turns make two pages of 50.
	for i := range 55 {
		if err := e.db.CreateTurn(ctx, &docent.Turn{Question: docent.Question{Text: "q" + strconv.Itoa(i), Platform: "api"},
			Answer: docent.Answer{Status: docent.StatusAnswered}}); err != nil {
			t.Fatal(err)
		}
	}
	p1 := c.get("/turns?platform=api")
	next, ok := p1.doc.Find(`[data-testid=next]`).Attr("href")
	if len(ids(p1)) != 50 || !ok {
		t.Fatalf("page 1 has %d turns, next %q", len(ids(p1)), next)
	}
	p2 := c.get(next)
	if len(ids(p2)) != 6 || !strings.Contains(next, "platform=api") {
		t.Errorf("page 2 has %d turns (want 6), link %q", len(ids(p2)), next)
	}
}

func TestTurnDetailTrace(t *testing.T) {
	e := newEnv(t)
	turn := e.ask(questionText("How do I reset my VPN token?"))
	if turn.Answer.Status != docent.StatusAnswered {
		t.Fatalf("the VPN question was not answered: %+v", turn.Answer)
	}
	c := e.client()
	c.login()
	r := c.get("/turns/" + itoa(turn.ID))
	if r.StatusCode != http.StatusOK {
		t.Fatalf("GET turn = %d", r.StatusCode)
	}
	if got := text(r.doc.Find(`[data-testid=turn-question]`)); got != "How do I reset my VPN token?" {
		t.Errorf("question = %q", got)
	}
	cands := r.doc.Find(`[data-testid=candidate]`)
	if cands.Length() != len(turn.Answer.Trace.Candidates) || cands.Length() == 0 {
		t.Fatalf("%d candidate rows, trace has %d", cands.Length(), len(turn.Answer.Trace.Candidates))
	}
	for i, h := range turn.Answer.Trace.Candidates {
		row := cands.Eq(i)
		if id, _ := row.Attr("id"); id != "chunk-"+h.Chunk.ID {
			t.Errorf("row %d id = %q", i, id)
		}
		if got := text(row.Find(`[data-testid=keyword-rank]`)); got != rankText(h.KeywordRank) {
			t.Errorf("row %d keyword rank = %q, want %d", i, got, h.KeywordRank)
		}
		if got := text(row.Find(`[data-testid=vector-rank]`)); got != rankText(h.VectorRank) {
			t.Errorf("row %d vector rank = %q, want %d", i, got, h.VectorRank)
		}
		if got := text(row.Find(`[data-testid=fused-score]`)); got != strconv.FormatFloat(h.Score, 'f', 4, 64) {
			t.Errorf("row %d fused = %q, want %v", i, got, h.Score)
		}
	}
	// Citation markers link to their chunks' rows; sent chunks are marked.
	markers := attrs(r.doc.Find(`[data-testid=citation-marker]`), "href")
	if len(markers) == 0 {
		t.Fatal("the answer has no linked citation")
	}
	for _, m := range markers {
		if r.doc.Find(`tr`+m).Length() != 1 {
			t.Errorf("marker %s links to no candidate row", m)
		}
	}
	if n := r.doc.Find(`[data-testid=candidate].used`).Length(); n != len(turn.Answer.Trace.Used) {
		t.Errorf("%d rows marked sent, trace used %d", n, len(turn.Answer.Trace.Used))
	}
	if got := attrs(r.doc.Find(`[data-testid=citation-url]`), "href"); len(got) == 0 || !strings.HasPrefix(got[0], "http://localhost:8080/docs/handbook/it/vpn.md") {
		t.Errorf("citation URLs = %v", got)
	}
	if n := r.doc.Find(`[data-testid=stage]`).Length(); n != 6 {
		t.Errorf("%d stages shown, want 6", n)
	}
	if got := text(r.doc.Find(`[data-testid=filter]`)); got != "none" {
		t.Errorf("filter = %q", got)
	}
	if got := text(r.doc.Find(`[data-testid=handoff-state]`)); got != "none" {
		t.Errorf("handoff = %q", got)
	}
	// The chat bots' feedback, handoff and the person's resolving reply
	// show on the turn.
	ctx := context.Background()
	if err := e.db.CreateFeedback(ctx, &docent.Feedback{TurnID: turn.ID, Rating: docent.RatingNotHelpful, User: "U5", Reason: "wrong client"}); err != nil {
		t.Fatal(err)
	}
	ho := docent.Handoff{TurnID: turn.ID, Platform: "slack", Channel: "C-help", Thread: "1.0", RequestedBy: "U5"}
	if err := e.db.CreateHandoff(ctx, &ho); err != nil {
		t.Fatal(err)
	}
	ho.State, ho.ClaimedBy, ho.ClaimedAt = docent.HandoffClaimed, "U7", ho.RequestedAt.Add(time.Minute)
	ho.ResolvedBy, ho.ResolvedAt = "U7", ho.RequestedAt.Add(time.Hour)
	ho.State = docent.HandoffResolved
	if err := e.db.UpdateHandoff(ctx, ho); err != nil {
		t.Fatal(err)
	}
	if err := e.db.CreateKnowledgeCandidate(ctx, &docent.KnowledgeCandidate{HandoffID: ho.ID, TurnID: turn.ID,
		Question: turn.Question.Text, Answer: "Use the Kestrel client's Reset token button.", Author: "U7"}); err != nil {
		t.Fatal(err)
	}
	r = c.get("/turns/" + itoa(turn.ID))
	if got := text(r.doc.Find(`[data-testid=feedback-row]`)); !strings.HasPrefix(got, "not helpful U5 ") || !strings.HasSuffix(got, " wrong client") {
		t.Errorf("feedback = %q", got)
	}
	for sel, want := range map[string]string{
		`[data-testid=handoff-state]`:     "resolved",
		`[data-testid=handoff-claimed]`:   "claimed by U7 " + templates.When(ho.ClaimedAt),
		`[data-testid=handoff-resolved]`:  "resolved by U7 " + templates.When(ho.ResolvedAt),
		`[data-testid=knowledge-answer]`:  "Use the Kestrel client's Reset token button.",
		`[data-testid=handoff-requested]`: "requested by U5 " + templates.When(ho.RequestedAt) + " in Slack #C-help",
	} {
		if got := text(r.doc.Find(sel)); got != want {
			t.Errorf("%s = %q, want %q", sel, got, want)
		}
	}
	if r := c.get("/turns/999999"); r.StatusCode != http.StatusNotFound {
		t.Errorf("unknown turn = %d", r.StatusCode)
	}
}

func rankText(n int) string {
	if n == 0 {
		return "–"
	}
	return strconv.Itoa(n)
}

func TestWhyNotThisDocument(t *testing.T) {
	e := newEnv(t)
	c := e.client()
	c.login()
	turn := e.ask(questionText("How do I reset my VPN token?"))
	// Search finds the document; picking it shows its chunks' ranks.
	r := c.get("/turns/" + itoa(turn.ID) + "?docq=wi-fi")
	links := attrs(r.doc.Find(`[data-testid=whynot-match] a`), "href")
	if len(links) != 1 || !strings.Contains(links[0], "doc=handbook%3Ait%2Fguest-wifi.md") {
		t.Fatalf("document search links = %v", links)
	}
	r = c.get(links[0])
	res := r.doc.Find(`[data-testid=whynot-result]`)
	if got := text(res.Find(`[data-testid=whynot-doc]`)); got != "Guest Wi-Fi" {
		t.Fatalf("why-not document = %q", got)
	}
	rows := res.Find(`[data-testid=whynot-chunk]`)
	if rows.Length() != 1 {
		t.Fatalf("%d chunk rows, want 1", rows.Length())
	}
	// The hash embedder ranks every chunk; the VPN question shares no
	// keyword with the Wi-Fi page.
	if kw := text(rows.Find(`[data-testid=whynot-keyword]`)); kw != "–" {
		t.Errorf("keyword rank = %q, want none", kw)
	}
	if vec := text(rows.Find(`[data-testid=whynot-vector]`)); vec == "–" || vec == "" {
		t.Errorf("vector rank = %q, want a rank", vec)
	}

	// A turn scoped to another source: the filter removed the document.
	scoped := e.ask(docent.Question{Text: "How do I reset my VPN token?", Platform: "slack", Filter: docent.Filter{Sources: []string{"wiki"}}})
	r = c.get("/turns/" + itoa(scoped.ID) + "?doc=" + url.QueryEscape("handbook:it/vpn.md"))
	if got := text(r.doc.Find(`[data-testid=whynot-excluded]`)); !strings.Contains(got, "source handbook is not among wiki") {
		t.Errorf("excluded = %q", got)
	}
	if got := text(r.doc.Find(`[data-testid=whynot-chunk] [data-testid=whynot-keyword]`)); got != "–" {
		t.Errorf("filtered keyword rank = %q, want none", got)
	}
	if got := r.doc.Find(`[data-testid=whynot-chunk] td`).Eq(3).Text(); strings.HasPrefix(strings.TrimSpace(got), "–") {
		t.Errorf("unfiltered ranks = %q, want the rank it would have had", got)
	}
}

func TestMissesInbox(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	answered := e.ask(questionText("How do I reset my VPN token?"))
	menu := e.ask(docent.Question{Text: "What is on the cafeteria menu on Fridays?", Platform: "api"})
	rated := e.ask(questionText("How many vacation days do I get?"))
	handed := e.ask(questionText("How do I reset my VPN token? again"))
	if err := e.db.CreateFeedback(ctx, &docent.Feedback{TurnID: rated.ID, Rating: docent.RatingNotHelpful, Reason: "outdated"}); err != nil {
		t.Fatal(err)
	}
	ho := docent.Handoff{TurnID: handed.ID, Platform: "slack", Channel: "C-help", Thread: "1"}
	if err := e.db.CreateHandoff(ctx, &ho); err != nil {
		t.Fatal(err)
	}
	// The answer pipeline's other outcomes, as the chat bots store them.
	var uncertain, failed docent.Turn
	for _, tu := range []struct {
		turn   *docent.Turn
		status docent.Status
		err    string
	}{{&uncertain, docent.StatusUncertain, ""}, {&failed, docent.StatusError, "llm: 503"}} {
		*tu.turn = docent.Turn{Question: docent.Question{Text: "Is the office open on Boxing Day?", Platform: "discord", Channel: "D1"},
			Answer:    docent.Answer{Status: tu.status, Text: "Possibly.", Trace: docent.Trace{Error: tu.err}},
			CreatedAt: time.Now().UTC()}
		if err := e.db.CreateTurn(ctx, tu.turn); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.db.CreateKnowledgeCandidate(ctx, &docent.KnowledgeCandidate{HandoffID: ho.ID, TurnID: handed.ID, Question: handed.Question.Text,
		Answer: "Ask IT to reissue it in the Kestrel admin.", Author: "U7"}); err != nil {
		t.Fatal(err)
	}
	c := e.client()
	c.login()
	r := c.get("/misses")
	got := attrs(r.doc.Find(`[data-testid=turn-row]`), "data-turn")
	want := []string{itoa(failed.ID), itoa(uncertain.ID), itoa(handed.ID), itoa(rated.ID), itoa(menu.ID)}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("inbox = %v, want %v (not %d)", got, want, answered.ID)
	}
	reasons := texts(r.doc.Find(`[data-testid=miss-reasons]`))
	for i, want := range []string{"failed", "uncertain", "handoff requested", "not helpful", "not found"} {
		if !strings.Contains(reasons[i], want) {
			t.Errorf("reasons[%d] = %q, want %q", i, reasons[i], want)
		}
	}
	// One click from the inbox to the golden-set form, filled from the turn.
	toGolden, _ := r.doc.Find(`[data-testid=turn-row][data-turn="` + itoa(menu.ID) + `"] [data-testid=to-golden]`).Attr("href")
	form := c.get(toGolden)
	if v, _ := form.doc.Find(`[data-testid=golden-question-text]`).Attr("value"); form.StatusCode != http.StatusOK || v != menu.Question.Text {
		t.Errorf("GET %q = %d, question %q; want the form for %q", toGolden, form.StatusCode, v, menu.Question.Text)
	}
	if v, _ := form.doc.Find(`[data-testid=golden-kind] option[selected]`).Attr("value"); v != "unanswerable" {
		t.Errorf("golden kind for a not-found turn = %q, want unanswerable", v)
	}
	k := r.doc.Find(`[data-testid=knowledge-row]`)
	if k.Length() != 1 || text(k.Find(`[data-testid=knowledge-answer]`)) != "Ask IT to reissue it in the Kestrel admin." {
		t.Errorf("knowledge candidates = %v", texts(k))
	}
	if href, _ := k.Find(`[data-testid=knowledge-turn]`).Attr("href"); href != "/turns/"+itoa(handed.ID) {
		t.Errorf("knowledge candidate links to %q", href)
	}
	for _, id := range []int64{uncertain.ID, failed.ID} {
		if r := c.post("/misses/"+itoa(id)+"/review", url.Values{"reviewed": {"1"}}); r.StatusCode != http.StatusSeeOther {
			t.Fatalf("review = %d", r.StatusCode)
		}
	}
	// Mark reviewed: out of the open inbox, in the reviewed one.
	if r := c.post("/misses/"+itoa(menu.ID)+"/review", url.Values{"reviewed": {"1"}}); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("review = %d", r.StatusCode)
	}
	if got := attrs(c.get("/misses").doc.Find(`[data-testid=turn-row]`), "data-turn"); len(got) != 2 {
		t.Errorf("open inbox after review = %v", got)
	}
	rev := c.get("/misses?review=reviewed")
	if got := attrs(rev.doc.Find(`[data-testid=turn-row]`), "data-turn"); strings.Join(got, ",") != itoa(failed.ID)+","+itoa(uncertain.ID)+","+itoa(menu.ID) {
		t.Errorf("reviewed = %v", got)
	}
	if !strings.Contains(rev.body, "reviewed by alice") {
		t.Error("the reviewer is not shown")
	}
	// Assign to a person; filter by assignee.
	if r := c.post("/misses/"+itoa(rated.ID)+"/assign", url.Values{"assignee": {"bob"}}); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("assign = %d", r.StatusCode)
	}
	bob := c.get("/misses?assignee=bob")
	if got := attrs(bob.doc.Find(`[data-testid=turn-row]`), "data-turn"); len(got) != 1 || got[0] != itoa(rated.ID) {
		t.Errorf("bob's misses = %v", got)
	}
	if v, _ := bob.doc.Find(`[data-testid=assignee]`).Attr("value"); v != "bob" {
		t.Errorf("assignee field = %q", v)
	}
	if r := c.post("/misses/999999/review", nil); r.StatusCode != http.StatusNotFound {
		t.Errorf("review of an unknown turn = %d", r.StatusCode)
	}
}

func TestGoldenFromTurnRunAndDiff(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.client()
	c.login()
	turn := e.ask(questionText("How do I reset my VPN token?"))
	// The turn page offers its candidate documents to pick from.
	r := c.get("/turns/" + itoa(turn.ID))
	picks := attrs(r.doc.Find(`[data-testid=golden-from-turn] [data-testid=golden-pick]`), "value")
	if len(picks) == 0 || !strings.HasPrefix(picks[0], "it/vpn.md | ") {
		t.Fatalf("candidate picks = %v", picks)
	}
	id, _ := r.doc.Find(`[data-testid=golden-from-turn] [data-testid=golden-id]`).Attr("value")
	if id != "how-do-i-reset-my-vpn-token" {
		t.Errorf("proposed id = %q", id)
	}
	form := url.Values{"id": {id}, "question": {turn.Question.Text}, "kind": {"paraphrase"}, "pick": {picks[0]},
		"from_turn": {itoa(turn.ID)}}
	if r := c.post("/golden", form); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("add from turn = %d: %s", r.StatusCode, texts(r.doc.Find(`[data-testid=field-error]`)))
	}
	q, err := e.db.Golden(ctx, id)
	if err != nil || q.FromTurn != turn.ID || len(q.Expect) != 1 || q.Expect[0].Doc != "it/vpn.md" || q.Expect[0].Section != "Resetting your token" {
		t.Fatalf("stored question = %+v, %v", q, err)
	}
	// Validation: a duplicate id, a missing expected document.
	if r := c.post("/golden", form); r.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(r.body, "already in the set") {
		t.Errorf("duplicate id = %d", r.StatusCode)
	}
	bad := url.Values{"id": {"x"}, "question": {"Q?"}, "kind": {"exact"}}
	if r := c.post("/golden", bad); r.StatusCode != http.StatusUnprocessableEntity || r.doc.Find(`[data-testid=field-error]`).Length() == 0 {
		t.Errorf("no expected document = %d", r.StatusCode)
	}
	// Found by search instead of picked.
	found := c.get("/golden/new?docq=time+off")
	if got := attrs(found.doc.Find(`[data-testid=golden-pick]`), "value"); len(got) != 1 || got[0] != "people/pto.md | " {
		t.Errorf("search picks = %v", got)
	}
	if r := c.post("/golden", url.Values{"id": {"menu"}, "question": {"What is on the cafeteria menu on Fridays?"},
		"kind": {"unanswerable"}}); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("add unanswerable = %d", r.StatusCode)
	}
	// Edit.
	edit := c.get("/golden/q/menu")
	if got := text(edit.doc.Find("h1")); got != "Edit menu" {
		t.Errorf("edit page = %q", got)
	}
	if r := c.post("/golden/q/menu", url.Values{"question": {"What is served in the cafeteria on Fridays?"}, "kind": {"unanswerable"}}); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("edit = %d", r.StatusCode)
	}
	if q, _ := e.db.Golden(ctx, "menu"); q.Question != "What is served in the cafeteria on Fridays?" {
		t.Errorf("edited question = %q", q.Question)
	}
	list := c.get("/golden")
	if got := attrs(list.doc.Find(`[data-testid=golden-question]`), "data-id"); strings.Join(got, ",") != id+",menu" {
		t.Errorf("golden list = %v", got)
	}

	// Run now: the run is stored with its rows and numbers.
	r = c.post("/golden/runs", nil)
	loc := r.Header.Get("Location")
	if r.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, "/golden/runs/") {
		t.Fatalf("run now = %d %q", r.StatusCode, loc)
	}
	e.console.h.runs.Wait()
	run := c.get(strings.Split(loc, "?")[0])
	if got := text(run.doc.Find(`h1 [data-testid=status]`)); got != "ok" {
		t.Fatalf("run status = %q: %s", got, text(run.doc.Find(`[data-testid=run-error]`)))
	}
	if got := text(run.doc.Find(`[data-testid=run-hit5]`)); got != "1.000" {
		t.Errorf("hit@5 = %q", got)
	}
	if got := text(run.doc.Find(`[data-testid=run-nfa]`)); got != "1.000" {
		t.Errorf("not-found accuracy = %q", got)
	}
	if n := run.doc.Find(`[data-testid=run-row]`).Length(); n != 2 {
		t.Errorf("%d rows, want 2", n)
	}
	// The run is stored with the configuration it ran under.
	if got := run.doc.Find(`[data-testid=run-config]`).Text(); got != e.console.h.opts.Config() {
		t.Errorf("run config = %q, want %q", got, e.console.h.opts.Config())
	}
	if got := text(run.doc.Find(`[data-testid=run-row]`).First().Find("td").Last()); !strings.Contains(got, "handbook:it/vpn.md") {
		t.Errorf("ranked documents = %q", got)
	}
	// A row drills into the question's trace, stored as a golden turn
	// that the logs leave out.
	row := run.doc.Find(`[data-testid=run-row][data-question="` + id + `"]`)
	if got := text(row.Find(`[data-testid=run-row-expected]`)); got != "it/vpn.md › Resetting your token" {
		t.Errorf("expected document shown = %q, want it/vpn.md › Resetting your token", got)
	}
	trace, ok := row.Find(`[data-testid=run-row-trace]`).Attr("href")
	if !ok {
		t.Fatalf("the run row has no link to the trace: %s", text(row))
	}
	tp := c.get(trace)
	if tp.StatusCode != http.StatusOK || text(tp.doc.Find(`[data-testid=turn-question]`)) != turn.Question.Text ||
		tp.doc.Find(`[data-testid=candidate]`).Length() == 0 || text(tp.doc.Find(`[data-testid=turn-golden]`)) != id {
		t.Errorf("the row's trace %s = %d: question %q, %d candidates, golden %q", trace, tp.StatusCode,
			text(tp.doc.Find(`[data-testid=turn-question]`)), tp.doc.Find(`[data-testid=candidate]`).Length(), text(tp.doc.Find(`[data-testid=turn-golden]`)))
	}
	if !strings.Contains(text(tp.doc.Find(`[data-testid=turn-meta]`)), "golden run, run #") {
		t.Errorf("the trace's place = %q, want the golden run", text(tp.doc.Find(`[data-testid=turn-meta]`)))
	}
	if ids := attrs(c.get("/turns").doc.Find(`[data-testid=turn-row]`), "data-turn"); slices.Contains(ids, strings.TrimPrefix(trace, "/turns/")) {
		t.Errorf("a golden run's turn is in the retrieval logs: %v", ids)
	}

	// Break the answerable question's expectation, run again, and diff.
	if err := e.db.PutGolden(ctx, docent.GoldenQuestion{ID: id, Question: turn.Question.Text, Kind: "paraphrase",
		Expect: []docent.GoldenExpect{{Doc: "people/pto.md"}}}); err != nil {
		t.Fatal(err)
	}
	e.console.h.opts.Config = func() string { return "index:\n  fusion: rrf\nllm:\n  gemini:\n    api_key: REDACTED\n" }
	second, err := e.console.h.StartGoldenRun(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	e.console.h.runs.Wait()
	first, _ := strconv.ParseInt(strings.TrimPrefix(strings.Split(loc, "?")[0], "/golden/runs/"), 10, 64)
	diff := c.get("/golden/diff?a=" + itoa(first) + "&b=" + itoa(second))
	if got := text(diff.doc.Find(`[data-testid=diff-worse]`)); got != "1 worse" {
		t.Errorf("worse = %q", got)
	}
	if got := text(diff.doc.Find(`[data-testid=diff-same]`)); got != "1 unchanged" {
		t.Errorf("same = %q", got)
	}
	worse := diff.doc.Find(`[data-testid=diff-row][data-change=worse]`)
	if !strings.Contains(worse.Text(), "handbook:it/vpn.md") {
		t.Errorf("the worse row does not say what ranked instead: %q", worse.Text())
	}
	// The diff says what changed in the configuration between the runs.
	var lines []string
	diff.doc.Find(`[data-testid=config-diff] span`).Each(func(_ int, s *goquery.Selection) { lines = append(lines, s.Text()) })
	if !slices.Contains(lines, "-   fusion: score") || !slices.Contains(lines, "+   fusion: rrf") || !slices.Contains(lines, "  index:") {
		t.Errorf("config diff = %q, want fusion: score → rrf with context", lines)
	}
	// The failed row says why.
	second2 := c.get("/golden/runs/" + itoa(second))
	if why := text(second2.doc.Find(`[data-testid=run-row][data-question="` + id + `"] [data-testid=run-row-why]`)); why != "the first citation is not an expected page" && why != "no expected page was retrieved" && !strings.HasPrefix(why, "an expected page ranked") {
		t.Errorf("the failed row's reason = %q", why)
	}
	// History with the trend chart.
	list = c.get("/golden")
	if n := list.doc.Find(`[data-testid=golden-run-row]`).Length(); n != 2 {
		t.Errorf("%d runs listed", n)
	}
	if n := list.doc.Find(`[data-testid=golden-trend] [data-testid=series]`).Length(); n != 4 {
		t.Errorf("trend has %d series, want 4 (hit@1, hit@5, MRR@10, declined)", n)
	}
	// Delete.
	if r := c.post("/golden/q/menu/delete", nil); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("delete = %d", r.StatusCode)
	}
	if _, err := e.db.Golden(ctx, "menu"); err == nil {
		t.Error("deleted question still stored")
	}
}

func TestGoldenImportExport(t *testing.T) {
	e := newEnv(t)
	c := e.client()
	c.login()
	yaml := "questions:\n  - id: vpn\n    question: How do I reset my VPN token?\n    kind: exact\n    expect:\n      - doc: it/vpn.md\n        section: Resetting your token\n" +
		"  - id: menu\n    question: What is for lunch?\n    kind: unanswerable\n"
	// Uploaded as a file, replacing the set.
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	mw.WriteField("csrf", c.csrf())
	mw.WriteField("replace", "1")
	fw, _ := mw.CreateFormFile("file", "golden.yaml")
	fw.Write([]byte(yaml))
	mw.Close()
	req, _ := http.NewRequest(http.MethodPost, c.url+"/golden/import", &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	if r := c.do(req); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("import = %d: %s", r.StatusCode, text(r.doc.Find(`[data-testid=error]`)))
	}
	exp := c.get("/golden/export.yaml")
	if exp.Header.Get("Content-Type") != "application/yaml; charset=utf-8" {
		t.Errorf("export content type = %q", exp.Header.Get("Content-Type"))
	}
	g, err := eval.ParseGolden("export", []byte(exp.body))
	if err != nil || len(g.Questions) != 2 || g.Questions[0].Expect[0].Section != "Resetting your token" || g.Questions[1].Kind != docent.KindUnanswerable {
		t.Fatalf("export does not parse back: %+v, %v\n%s", g, err, exp.body)
	}
	// Pasted, with an error at a line: nothing changes.
	r := c.post("/golden/import", url.Values{"yaml": {"questions:\n  - id: x\n    question: Q\n    kind: sideways\n"}})
	if r.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(text(r.doc.Find(`[data-testid=error]`)), "unknown kind") {
		t.Errorf("bad import = %d %q", r.StatusCode, text(r.doc.Find(`[data-testid=error]`)))
	}
	if qs, _ := e.db.ListGolden(context.Background()); len(qs) != 2 {
		t.Errorf("a failed import changed the set: %d questions", len(qs))
	}
}

func TestStaleDocuments(t *testing.T) {
	e := newEnv(t)
	c := e.client()
	c.login()
	r := c.get("/stale")
	kinds := map[string][]string{}
	r.doc.Find(`[data-testid=stale-row]`).Each(func(_ int, row *goquery.Selection) {
		doc, _ := row.Attr("data-doc")
		kinds[doc] = attrs(row.Find(`[data-testid=stale-finding]`), "data-kind")
	})
	if got := strings.Join(kinds["handbook:it/guest-wifi.md"], ","); got != "old" {
		t.Errorf("guest wifi = %q", got)
	}
	if got := strings.Join(kinds["handbook:travel/expense-policy-2021.md"], ","); got != "old,conflict" {
		t.Errorf("2021 expense policy = %q", got)
	}
	if _, ok := kinds["handbook:it/vpn.md"]; ok {
		t.Error("a current page is flagged")
	}
	open, _ := r.doc.Find(`[data-stale-open], [data-testid=stale-open]`).First().Attr("href")
	if !strings.HasPrefix(open, "http://localhost:8080/docs/handbook/") {
		t.Errorf("open at source = %q", open)
	}
	// Acknowledge until a date: hidden unless asked for.
	until := time.Now().AddDate(0, 1, 0).Format("2006-01-02")
	if r := c.post("/stale/ack", url.Values{"doc": {"handbook:it/guest-wifi.md"}, "until": {until}, "note": {"rewrite"}}); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("ack = %d", r.StatusCode)
	}
	if strings.Contains(c.get("/stale").body, "handbook:it/guest-wifi.md") {
		t.Error("an acknowledged document is still listed")
	}
	acked := c.get("/stale?acked=1")
	if !strings.Contains(text(acked.doc.Find(`[data-testid=stale-acked]`)), "acknowledged by alice until "+until) {
		t.Errorf("acknowledged row = %q", text(acked.doc.Find(`[data-testid=stale-acked]`)))
	}
	if r := c.post("/stale/ack", url.Values{"doc": {"handbook:it/guest-wifi.md"}, "until": {"2001-01-01"}}); r.StatusCode != http.StatusBadRequest {
		t.Errorf("ack in the past = %d", r.StatusCode)
	}
	if r := c.post("/stale/unack", url.Values{"doc": {"handbook:it/guest-wifi.md"}}); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("unack = %d", r.StatusCode)
	}
	if !strings.Contains(c.get("/stale").body, "handbook:it/guest-wifi.md") {
		t.Error("a withdrawn acknowledgement still hides the document")
	}
	// The answers that cited a flagged document are one click away.
	e.ask(questionText("What is the meal per diem in the United States?"))
	links := attrs(c.get("/stale").doc.Find(`[data-testid=stale-answers]`), "href")
	if len(links) == 0 || !strings.HasPrefix(links[0], "/turns?doc=") {
		t.Fatalf("answers links = %v", links)
	}
	if n := c.get(links[0]).doc.Find(`[data-testid=turn-row]`).Length(); n != 1 {
		t.Errorf("answers citing it: %d rows", n)
	}
}

func TestSourcesAndSyncNow(t *testing.T) {
	e := newEnv(t)
	c := e.client()
	c.login()
	r := c.get("/sources")
	row := r.doc.Find(`[data-testid=source-row][data-source=handbook]`)
	if got := text(row.Find(`[data-testid=source-docs]`)); got != "5" {
		t.Errorf("docs = %q", got)
	}
	if got := text(row.Find(`[data-testid=source-status]`)); got != "ok" {
		t.Errorf("status = %q", got)
	}
	if got := text(row.Find(`[data-testid=source-next]`)); !strings.Contains(got, "@every 1h") {
		t.Errorf("next run = %q", got)
	}
	before, _ := e.db.ListRuns(context.Background(), "handbook", 10)
	if r := c.post("/sources/handbook/sync", nil); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("sync now = %d: %s", r.StatusCode, text(r.doc.Find(`[data-testid=error-message]`)))
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		runs, _ := e.db.ListRuns(context.Background(), "handbook", 10)
		if len(runs) > len(before) && runs[0].Status != docent.RunRunning {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("sync now ran no sync")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if n := c.get("/sources").doc.Find(`[data-testid=run]`).Length(); n != len(before)+1 {
		t.Errorf("%d runs listed, want %d", n, len(before)+1)
	}
	if r := c.post("/sources/nope/sync", nil); r.StatusCode != http.StatusNotFound {
		t.Errorf("unknown source = %d", r.StatusCode)
	}
}

func TestPlayground(t *testing.T) {
	e := newEnv(t)
	c := e.client()
	c.login()
	r := c.get("/playground")
	opts := attrs(r.doc.Find(`[data-testid=playground-channel] option`), "value")
	if strings.Join(opts, ",") != "all,source:handbook" {
		t.Fatalf("channels = %v", opts)
	}
	r = c.post("/playground", url.Values{"channel": {"source:handbook"}, "question": {"How do I reset my VPN token?"}})
	if r.StatusCode != http.StatusOK {
		t.Fatalf("ask = %d", r.StatusCode)
	}
	if r.doc.Find(`[data-testid=candidate]`).Length() == 0 || text(r.doc.Find(`[data-testid=answer] [data-testid=status]`)) != "answered" {
		t.Fatalf("no answer with its trace: %s", text(r.doc.Find(`main`)))
	}
	link, _ := r.doc.Find(`[data-testid=playground-turn]`).Attr("href")
	id, _ := strconv.ParseInt(strings.TrimPrefix(link, "/turns/"), 10, 64)
	turn, err := e.db.Turn(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if turn.Question.Platform != Platform || turn.Question.Channel != "source:handbook" || turn.Question.User != "alice" ||
		strings.Join(turn.Question.Filter.Sources, ",") != "handbook" {
		t.Errorf("stored question = %+v", turn.Question)
	}
	if r := c.post("/playground", url.Values{"channel": {"nope"}, "question": {"x"}}); r.StatusCode != http.StatusBadRequest {
		t.Errorf("unknown channel = %d", r.StatusCode)
	}
	if r := c.post("/playground", url.Values{"channel": {"all"}, "question": {"  "}}); r.StatusCode != http.StatusUnprocessableEntity {
		t.Errorf("empty question = %d", r.StatusCode)
	}
}

// TestPlaygroundBeforeReady: until the index is ready the playground
// says so with a 503 and stores no turn (a "not in the docs" from an
// index still being filled would mislead).
func TestPlaygroundBeforeReady(t *testing.T) {
	var ready atomic.Bool
	e := newEnv(t, func(o *Options) { o.Ready = ready.Load })
	c := e.client()
	c.login()
	form := url.Values{"channel": {"all"}, "question": {"How do I reset my VPN token?"}}
	r := c.post("/playground", form)
	if r.StatusCode != http.StatusServiceUnavailable || r.Header.Get("Retry-After") == "" ||
		!strings.Contains(text(r.doc.Find(`[data-testid=error]`)), "first sync") {
		t.Errorf("ask before ready = %d, Retry-After %q, error %q; want 503 saying the first sync is running",
			r.StatusCode, r.Header.Get("Retry-After"), text(r.doc.Find(`[data-testid=error]`)))
	}
	if turns, err := e.db.ListTurns(context.Background(), store.TurnFilter{}); err != nil || len(turns) != 0 {
		t.Errorf("%d turns stored before ready (%v), want 0", len(turns), err)
	}
	ready.Store(true)
	if r := c.post("/playground", form); r.StatusCode != http.StatusOK || r.doc.Find(`[data-testid=playground-turn]`).Length() != 1 {
		t.Errorf("ask once ready = %d, want the answer", r.StatusCode)
	}
}

func TestAPITokensPage(t *testing.T) {
	e := newEnv(t)
	c := e.client()
	c.login()
	r := c.post("/tokens", url.Values{"name": {"ci"}, "rate": {"30"}})
	tok := text(r.doc.Find(`[data-testid=new-token]`))
	if !strings.HasPrefix(tok, tokenPrefix) || len(tok) < 40 {
		t.Fatalf("new token = %q", tok)
	}
	stored, err := e.db.APITokenByHash(context.Background(), hashKey(tok))
	if err != nil || stored.Name != "ci" || stored.RatePerMinute != 30 || stored.CreatedBy != "alice" || strings.Contains(stored.Hash, tok) {
		t.Fatalf("stored token = %+v, %v", stored, err)
	}
	// Shown once: the list has its prefix only.
	list := c.get("/tokens")
	if strings.Contains(list.body, tok) || !strings.Contains(list.body, tok[:10]) {
		t.Error("the token list shows the whole token, or not its prefix")
	}
	if r := c.post("/tokens", url.Values{"name": {"x"}, "rate": {"-1"}}); r.StatusCode != http.StatusBadRequest {
		t.Errorf("bad rate = %d", r.StatusCode)
	}
	if r := c.post("/tokens/"+itoa(stored.ID)+"/revoke", nil); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("revoke = %d", r.StatusCode)
	}
	if n := c.get("/tokens").doc.Find(`[data-testid=token-revoked]`).Length(); n != 1 {
		t.Errorf("%d revoked rows", n)
	}
}

// TestAPITokenScopePage: the token page offers the configured sources
// and a label list as the new token's scope, stores it, and shows it in
// the list; an unknown source is refused.
func TestAPITokenScopePage(t *testing.T) {
	e := newEnv(t)
	c := e.client()
	c.login()
	form := c.get("/tokens")
	var offered []string
	form.doc.Find(`[data-testid=token-source]`).Each(func(_ int, s *goquery.Selection) {
		offered = append(offered, s.AttrOr("value", ""))
	})
	if !slices.Equal(offered, []string{"handbook"}) || form.doc.Find(`[data-testid=token-labels]`).Length() != 1 {
		t.Fatalf("scope fields offer sources %v", offered)
	}
	r := c.post("/tokens", url.Values{"name": {"community"}, "source": {"handbook"}, "labels": {"faq, howto,faq"}})
	tok := text(r.doc.Find(`[data-testid=new-token]`))
	stored, err := e.db.APITokenByHash(context.Background(), hashKey(tok))
	if err != nil || !slices.Equal(stored.Scope.Sources, []string{"handbook"}) || !slices.Equal(stored.Scope.Labels, []string{"faq", "howto"}) {
		t.Fatalf("stored token = %+v, %v", stored, err)
	}
	c.post("/tokens", url.Values{"name": {"everything"}})
	var shown []string
	c.get("/tokens").doc.Find(`[data-testid=token-scope-shown]`).Each(func(_ int, s *goquery.Selection) { shown = append(shown, text(s)) })
	if want := []string{"every source", "sources: handbook · labels: faq, howto"}; !slices.Equal(shown, want) {
		t.Errorf("scopes shown = %q, want %q", shown, want)
	}
	if r := c.post("/tokens", url.Values{"name": {"x"}, "source": {"internal"}}); r.StatusCode != http.StatusBadRequest {
		t.Errorf("unknown source = %d, want 400", r.StatusCode)
	}
}

// sickScheduler reports the handbook's syncs as failing and stale, as
// the scheduler does after a source's API keeps erroring.
type sickScheduler struct {
	Scheduler
	health connectors.Health
}

func (s sickScheduler) Status() []connectors.JobStatus {
	out := s.Scheduler.Status()
	for i := range out {
		out[i].Health = s.health
	}
	return out
}

func TestSourcesSyncHealth(t *testing.T) {
	lastOK := time.Now().UTC().Add(-30 * time.Hour)
	cases := []struct {
		name        string
		health      *connectors.Health // nil: the real scheduler's
		wantHealth  string
		wantDetail  string // the failures and stale lines
		wantClass   string
		wantSuccess string
		wantError   string
	}{
		{name: "healthy", wantHealth: "healthy", wantClass: "ok", wantSuccess: "last success"},
		{name: "failing and stale",
			health: &connectors.Health{LastSuccess: lastOK, ConsecutiveFailures: 4, MissedRuns: 3, Stale: true,
				LastError: "confluence: list pages: 503 Service Unavailable"},
			wantHealth:  "stale",
			wantDetail:  "4 failed in a row stale: no successful run in 3 scheduled runs",
			wantClass:   "bad",
			wantSuccess: "last success " + lastOK.Format("2006-01-02"),
			wantError:   "confluence: list pages: 503 Service Unavailable"},
		{name: "new source", health: &connectors.Health{}, wantHealth: "not synced yet", wantClass: "muted",
			wantSuccess: "no successful sync yet"},
		{name: "never succeeded",
			health:     &connectors.Health{ConsecutiveFailures: 1, LastError: "notion: 401 Unauthorized"},
			wantHealth: "failing", wantDetail: "1 failed in a row", wantClass: "bad", wantSuccess: "no successful sync yet",
			wantError: "notion: 401 Unauthorized"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var opts []envOption
			if tc.health != nil {
				opts = append(opts, func(o *Options) { o.Scheduler = sickScheduler{o.Scheduler, *tc.health} })
			}
			e := newEnv(t, opts...)
			if tc.health == nil {
				// The real scheduler learns of a success once it has run one.
				if err := e.sched.RunNow("handbook"); err != nil {
					t.Fatal(err)
				}
				deadline := time.Now().Add(30 * time.Second)
				for e.sched.Status()[0].Health.LastSuccess.IsZero() {
					if time.Now().After(deadline) {
						t.Fatal("the sync did not finish")
					}
					time.Sleep(20 * time.Millisecond)
				}
			}
			c := e.client()
			c.login()
			for _, path := range []string{"/sources", "/"} {
				r := c.get(path)
				row := r.doc.Find(`[data-testid=source-row][data-source=handbook]`)
				if path == "/" {
					row = r.doc.Find(`[data-testid=sync-health-row]`)
				}
				h := row.Find(`[data-testid=source-health]`)
				if got := text(h); got != tc.wantHealth {
					t.Errorf("%s: health = %q, want %q", path, got, tc.wantHealth)
				}
				if got := strings.Join(texts(row.Find(`[data-testid=source-failures], [data-testid=source-stale]`)), " "); got != tc.wantDetail {
					t.Errorf("%s: health detail = %q, want %q", path, got, tc.wantDetail)
				}
				if !h.HasClass(tc.wantClass) {
					t.Errorf("%s: health class = %q, want %q", path, h.AttrOr("class", ""), tc.wantClass)
				}
				if got := text(row.Find(`[data-testid=source-last-success]`)); !strings.HasPrefix(got, tc.wantSuccess) {
					t.Errorf("%s: last success = %q, want prefix %q", path, got, tc.wantSuccess)
				}
				if path == "/sources" {
					if got := text(row.Find(`[data-testid=source-error]`)); got != tc.wantError {
						t.Errorf("last error = %q, want %q", got, tc.wantError)
					}
				}
			}
		})
	}
}
