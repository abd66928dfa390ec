package slack_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/answer"
	"github.com/docent-hq/docent/bot"
	"github.com/docent-hq/docent/bot/slack"
	"github.com/docent-hq/docent/bot/slack/workspacetest"
	"github.com/docent-hq/docent/internal/backoff/backofftest"
	"github.com/docent-hq/docent/store"
)

const (
	help       = "C0HELP0001" // a channel where people ask
	escalation = "C0ESCALATE" // where handoffs go
	asker      = "U0ASKER001"
	staff      = "U0STAFF001"
	group      = "S0ITTEAM01"
)

var vpnCite = docent.Citation{N: 1, DocID: "handbook:it/vpn.md", Title: "VPN", Section: "Resetting your token",
	URL: "https://docs.example.com/it/vpn", UpdatedAt: time.Date(2025, 3, 4, 0, 0, 0, 0, time.UTC)}

// harness is the Slack adapter, over the real core, store and Recorder,
// connected to a local workspace. The answer pipeline is scripted: it
// records the questions and answers by the script.
type harness struct {
	ws     *workspacetest.Workspace
	db     *store.DB
	dbPath string
	client *slack.Client
	url    string // the HTTP handler's server, in HTTP mode

	mu     sync.Mutex
	asked  []docent.Question
	script func(q docent.Question) (docent.Answer, error)
	deltas []string // streamed before each answer, when set
}

type setup struct {
	http    bool
	cfg     bot.Config
	opts    func(*slack.Options)
	deltas  []string
	ws      *workspacetest.Workspace
	dbPath  string
	noStart bool
}

func newHarness(t *testing.T, s setup) *harness {
	t.Helper()
	h := &harness{ws: s.ws, dbPath: s.dbPath, deltas: s.deltas}
	if h.ws == nil {
		h.ws = workspacetest.New(t)
	}
	if h.dbPath == "" {
		h.dbPath = filepath.Join(t.TempDir(), "docent.db")
	}
	db, err := store.Open(context.Background(), h.dbPath)
	if err != nil {
		t.Fatal(err)
	}
	h.db = db
	h.script = func(q docent.Question) (docent.Answer, error) {
		return docent.Answer{Status: docent.StatusAnswered, Text: "Reset it in **Gatekeeper** [1].",
			Citations: []docent.Citation{vpnCite}}, nil
	}
	rec := answer.NewRecorder(answerFunc(h.answer), db, nil, slog.New(slog.DiscardHandler), nil)
	var asker bot.Asker = rec
	if s.deltas != nil {
		asker = streamAsker{rec, h}
	}
	if s.cfg.GroupName == "" {
		s.cfg.GroupName = "the IT team"
	}
	core := bot.New("slack", asker, db, nil, s.cfg, nil)
	opts := slack.Options{APIURL: h.ws.APIURL(), BotToken: h.ws.BotToken, AppToken: h.ws.AppToken,
		SigningSecret: h.ws.SigningSecret, EscalationChannel: escalation, UserGroup: group, Reaction: "eyes",
		AssistantStatus: "Searching the docs…", PromptsTitle: "Try asking",
		Prompts: []slack.Prompt{{Title: "VPN", Message: "How do I reset my VPN token?"}},
		Logger:  slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	if s.opts != nil {
		s.opts(&opts)
	}
	h.client = slack.NewClient(core, opts)
	ctx, cancel := context.WithCancel(context.Background())
	if err := h.client.Start(ctx); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	if s.http {
		srv := httptest.NewServer(h.client.Handler())
		h.url = srv.URL
		t.Cleanup(srv.Close)
		close(done)
	} else {
		go func() { done <- h.client.RunSocketMode(ctx) }()
		h.ws.WaitConnected(t)
	}
	t.Cleanup(func() {
		cancel()
		<-done
		sctx, stop := context.WithTimeout(context.Background(), 10*time.Second)
		defer stop()
		if err := h.client.Shutdown(sctx); err != nil {
			t.Error(err)
		}
		db.Close()
	})
	return h
}

// testWriter sends logs to the test's log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

type answerFunc func(ctx context.Context, q docent.Question) (docent.Answer, error)

func (f answerFunc) Answer(ctx context.Context, q docent.Question) (docent.Answer, error) {
	return f(ctx, q)
}

func (h *harness) answer(_ context.Context, q docent.Question) (docent.Answer, error) {
	h.mu.Lock()
	h.asked = append(h.asked, q)
	script := h.script
	h.mu.Unlock()
	return script(q)
}

func (h *harness) setScript(f func(q docent.Question) (docent.Answer, error)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.script = f
}

func (h *harness) questions() []docent.Question {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.asked)
}

// streamAsker streams the harness's deltas, then answers through the
// real Recorder: a scripted streaming model.
type streamAsker struct {
	*answer.Recorder
	h *harness
}

func (s streamAsker) AskStream(ctx context.Context, q docent.Question, onDelta func(string)) (docent.Turn, error) {
	for _, d := range s.h.deltas {
		onDelta(d)
	}
	return s.Ask(ctx, q)
}

// deliver sends an event the way the harness receives events.
func (h *harness) deliver(t *testing.T, ev workspacetest.Event) {
	t.Helper()
	if h.url != "" {
		resp := h.ws.PostEvent(t, h.url+slack.EventsPath, ev.Body, 0)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("event %s: HTTP %d", ev.ID, resp.StatusCode)
		}
		return
	}
	if ack := h.ws.Send(t, "events_api", ev.Body); ack.After > 3*time.Second {
		t.Errorf("event %s acked after %s, Slack waits 3s", ev.ID, ack.After)
	}
}

// click presses a button the bot drew.
func (h *harness) click(t *testing.T, m workspacetest.Message, action, user string) {
	t.Helper()
	payload := h.ws.Click(t, m, action, user)
	h.interact(t, payload)
}

func (h *harness) interact(t *testing.T, payload []byte) {
	t.Helper()
	if h.url != "" {
		resp := h.ws.PostInteraction(t, h.url+slack.InteractionsPath, payload)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("interaction: HTTP %d", resp.StatusCode)
		}
		return
	}
	if ack := h.ws.Send(t, "interactive", payload); ack.After > 3*time.Second {
		t.Errorf("interaction acked after %s", ack.After)
	}
}

// ask mentions the bot in the help channel and waits for its reply.
func (h *harness) ask(t *testing.T, text string) (thread string, reply workspacetest.Message) {
	t.Helper()
	mention, _ := h.ws.Mention(workspacetest.Said{Channel: help, User: asker, Text: text})
	h.deliver(t, mention)
	return mention.TS, h.ws.WaitBotMessages(t, help, mention.TS, 1)[0]
}

func labels(m workspacetest.Message) []string { return m.ButtonTexts() }

// TestMentionAnswersInThread: a mention (delivered twice, as app_mention
// and as a message event, as Slack does) gets one threaded reply with
// the answer ([1] linked to its source), the sources and the three
// buttons; the eyes reaction is on the question while it is answered.
func TestMentionAnswersInThread(t *testing.T) {
	h := newHarness(t, setup{})
	answering := make(chan struct{})
	release := make(chan struct{})
	h.setScript(func(q docent.Question) (docent.Answer, error) {
		close(answering)
		<-release
		return docent.Answer{Status: docent.StatusAnswered, Text: "Reset it in **Gatekeeper** [1].",
			Citations: []docent.Citation{vpnCite}}, nil
	})
	mention, message := h.ws.Mention(workspacetest.Said{Channel: help, User: asker, Text: "How do I reset my VPN token?"})
	h.deliver(t, mention) // acked while the answer is still being written
	<-answering
	h.deliver(t, message)
	q := h.ws.Messages(help)[0]
	if !slices.Equal(q.Reactions, []string{"eyes"}) {
		t.Errorf("reactions while answering = %q, want eyes", q.Reactions)
	}
	close(release)

	h.ws.WaitBotMessages(t, help, mention.TS, 1)
	h.client.WaitIdle() // both deliveries handled
	got := h.ws.BotMessages(help, mention.TS)
	if len(got) != 1 {
		t.Fatalf("%d replies, want 1: %+v", len(got), got)
	}
	r := got[0]
	text := r.AllText()
	for _, want := range []string{"Reset it in *Gatekeeper* <https://docs.example.com/it/vpn|[1]>.",
		"*[1]* <https://docs.example.com/it/vpn|VPN> · Resetting your token · updated 4 Mar 2025"} {
		if !strings.Contains(text, want) {
			t.Errorf("reply lacks %q:\n%s", want, text)
		}
	}
	if r.ThreadTS != mention.TS || r.Ephemeral {
		t.Errorf("reply in thread %q (ephemeral %v), want the question's thread %q", r.ThreadTS, r.Ephemeral, mention.TS)
	}
	if !slices.Equal(labels(r), []string{"Helpful", "Not helpful", "Get a human"}) {
		t.Errorf("buttons = %q", labels(r))
	}
	if qs := h.questions(); len(qs) != 1 || qs[0].Text != "How do I reset my VPN token?" || qs[0].Channel != help ||
		qs[0].Thread != mention.TS || qs[0].User != asker || qs[0].Platform != "slack" {
		t.Errorf("questions = %+v", qs)
	}
	h.ws.Wait(t, 5*time.Second, "the reaction removed", func() bool { return len(h.ws.Messages(help)[0].Reactions) == 0 })
}

// TestFollowUpWithoutMention: a question in the thread, with no mention,
// is answered with the thread's earlier exchange; a remark is not.
func TestFollowUpWithoutMention(t *testing.T) {
	h := newHarness(t, setup{})
	thread, _ := h.ask(t, "how many vacation days do employees get?")
	h.deliver(t, h.ws.Post(workspacetest.Said{Channel: help, User: asker, Text: "thanks!", ThreadTS: thread}))
	h.deliver(t, h.ws.Post(workspacetest.Said{Channel: help, User: asker, Text: "and for contractors?", ThreadTS: thread}))
	h.ws.WaitBotMessages(t, help, thread, 2)
	qs := h.questions()
	if len(qs) != 2 {
		t.Fatalf("%d questions, want 2 (the remark is no question): %+v", len(qs), qs)
	}
	if qs[1].Text != "and for contractors?" || len(qs[1].History) != 1 ||
		qs[1].History[0].Question != "how many vacation days do employees get?" {
		t.Errorf("follow-up = %+v, want the first exchange as history", qs[1])
	}
}

// TestHandoff: "Get a human" posts in the escalation channel with the
// thread's permalink and the user group's mention and tells the asker;
// the bot then stays quiet in the thread; Claim and Resolve on the
// escalation post move the handoff on in the store and redraw the post;
// the staff member's reply becomes a knowledge candidate.
func TestHandoff(t *testing.T) {
	h := newHarness(t, setup{})
	h.setScript(func(docent.Question) (docent.Answer, error) {
		return docent.Answer{Status: docent.StatusNotFound, Text: answer.NotFoundText}, nil
	})
	thread, r := h.ask(t, "can I expense a gym membership?")
	if !slices.Equal(labels(r), []string{"Get a human"}) || r.Buttons()[0].Style != "primary" {
		t.Fatalf("not-found reply buttons = %q, want Get a human first", labels(r))
	}
	h.click(t, r, "docent_handoff", asker)

	var esc []workspacetest.Message
	h.ws.Wait(t, 10*time.Second, "the escalation post", func() bool {
		esc = h.ws.Messages(escalation)
		return len(esc) == 1
	})
	post := esc[0]
	for _, want := range []string{"<!subteam^" + group + ">", "<@" + asker + "> asked for a person",
		"<" + h.ws.Permalink(help, thread) + "|this thread>", "can I expense a gym membership?", "not in the docs"} {
		if !strings.Contains(post.AllText(), want) {
			t.Errorf("escalation lacks %q:\n%s", want, post.AllText())
		}
	}
	if !strings.Contains(post.Text, "<!subteam^"+group+">") {
		t.Errorf("the notification text %q does not ping the group", post.Text)
	}
	if !slices.Equal(labels(post), []string{"Claim", "Resolve"}) {
		t.Errorf("escalation buttons = %q", labels(post))
	}
	told := h.ws.WaitBotMessages(t, help, thread, 2)[1]
	if !strings.Contains(told.Text, "the IT team") || told.Ephemeral {
		t.Errorf("the asker was told %q (ephemeral %v)", told.Text, told.Ephemeral)
	}

	// The bot stays quiet; the staff member's reply is kept.
	asked := len(h.questions())
	h.deliver(t, h.ws.Post(workspacetest.Said{Channel: help, User: asker, Text: "any update?", ThreadTS: thread}))
	h.deliver(t, h.ws.Post(workspacetest.Said{Channel: help, User: staff, Text: "Yes, up to $50 a month under Wellness.", ThreadTS: thread}))
	h.client.WaitIdle()
	if len(h.questions()) != asked || len(h.ws.BotMessages(help, thread)) != 2 {
		t.Fatalf("the bot answered in a handed-off thread")
	}

	handoffs, err := h.db.ListHandoffs(context.Background(), store.HandoffFilter{})
	if err != nil || len(handoffs) != 1 {
		t.Fatalf("handoffs = %+v, %v", handoffs, err)
	}
	id := handoffs[0].ID
	if handoffs[0].EscalationRef != escalation+"/"+post.TS || handoffs[0].State != docent.HandoffRequested {
		t.Errorf("handoff = %+v", handoffs[0])
	}

	h.click(t, post, "docent_claim", staff)
	h.ws.Wait(t, 10*time.Second, "the claim", func() bool {
		got, _ := h.db.Handoff(context.Background(), id)
		return got.State == docent.HandoffClaimed
	})
	var claimed workspacetest.Message
	h.ws.Wait(t, 10*time.Second, "the escalation post redrawn", func() bool {
		claimed = h.ws.Messages(escalation)[0]
		return claimed.Edits == 1
	})
	if !slices.Equal(labels(claimed), []string{"Resolve"}) || !strings.Contains(claimed.AllText(), "Claimed by <@"+staff+">") ||
		!strings.Contains(claimed.AllText(), "can I expense a gym membership?") {
		t.Errorf("claimed post: buttons %q\n%s", labels(claimed), claimed.AllText())
	}

	h.click(t, claimed, "docent_resolve", staff)
	h.ws.Wait(t, 10*time.Second, "the resolve", func() bool {
		got, _ := h.db.Handoff(context.Background(), id)
		return got.State == docent.HandoffResolved
	})
	got, _ := h.db.Handoff(context.Background(), id)
	if got.ClaimedBy != staff || got.ResolvedBy != staff || got.ClaimedAt.IsZero() || got.ResolvedAt.Before(got.ClaimedAt) {
		t.Errorf("resolved handoff = %+v", got)
	}
	h.ws.Wait(t, 10*time.Second, "the post redrawn again", func() bool { return h.ws.Messages(escalation)[0].Edits == 2 })
	if final := h.ws.Messages(escalation)[0]; len(final.Buttons()) != 0 || !strings.Contains(final.AllText(), "Resolved by <@"+staff+">") {
		t.Errorf("resolved post: buttons %q\n%s", labels(final), final.AllText())
	}
	ks, err := h.db.ListKnowledgeCandidates(context.Background(), 0)
	if err != nil || len(ks) != 1 || ks[0].Answer != "Yes, up to $50 a month under Wellness." || ks[0].Author != staff {
		t.Errorf("knowledge candidates = %+v, %v", ks, err)
	}
}

// TestFeedback: Helpful is stored at once with an ephemeral thanks; Not
// helpful asks why in a modal and stores the reason when it is sent, or
// none when it is closed, or none at once when the modal cannot open.
func TestFeedback(t *testing.T) {
	h := newHarness(t, setup{})
	ctx := context.Background()
	feedback := func(turn int64, n int) []docent.Feedback {
		t.Helper()
		var fb []docent.Feedback
		h.ws.Wait(t, 10*time.Second, "feedback", func() bool {
			fb, _ = h.db.TurnFeedback(ctx, turn)
			return len(fb) >= n
		})
		return fb
	}
	turnOf := func() int64 {
		turns, err := h.db.ListTurns(ctx, store.TurnFilter{})
		if err != nil || len(turns) == 0 {
			t.Fatalf("turns = %v, %v", turns, err)
		}
		return turns[0].ID
	}

	thread, r := h.ask(t, "How do I reset my VPN token?")
	turn := turnOf()
	h.click(t, r, "docent_helpful", asker)
	if fb := feedback(turn, 1); fb[0].Rating != docent.RatingHelpful || fb[0].User != asker {
		t.Errorf("feedback = %+v", fb)
	}
	thanks := h.ws.WaitBotMessages(t, help, thread, 2)[1]
	if !thanks.Ephemeral || thanks.To != asker {
		t.Errorf("thanks = %+v, want ephemeral to the asker", thanks)
	}

	h.click(t, r, "docent_not_helpful", asker)
	var views []workspacetest.View
	h.ws.Wait(t, 10*time.Second, "the reason modal", func() bool { views = h.ws.Views(); return len(views) == 1 })
	h.interact(t, h.ws.SubmitView(views[0], asker, map[string]string{"docent_reason": "It's the old portal"}))
	if fb := feedback(turn, 2); fb[1].Rating != docent.RatingNotHelpful || fb[1].Reason != "It's the old portal" {
		t.Errorf("feedback = %+v", fb)
	}

	h.click(t, r, "docent_not_helpful", asker)
	h.ws.Wait(t, 10*time.Second, "a second modal", func() bool { views = h.ws.Views(); return len(views) == 2 })
	h.interact(t, h.ws.CloseView(views[1], asker))
	if fb := feedback(turn, 3); fb[2].Rating != docent.RatingNotHelpful || fb[2].Reason != "" {
		t.Errorf("feedback = %+v", fb)
	}

	h.ws.FailNext("views.open", workspacetest.Fault{Error: "expired_trigger_id"})
	h.click(t, r, "docent_not_helpful", asker)
	if fb := feedback(turn, 4); fb[3].Rating != docent.RatingNotHelpful {
		t.Errorf("feedback = %+v", fb)
	}
}

// TestFailedAnswerApologizes: when answering fails the thread gets an
// apology with the handoff button, not silence, and the turn keeps the
// error.
func TestFailedAnswerApologizes(t *testing.T) {
	h := newHarness(t, setup{})
	h.setScript(func(docent.Question) (docent.Answer, error) {
		return docent.Answer{Status: docent.StatusError}, &answer.StageError{Stage: "generate", Err: errors.New("provider down")}
	})
	_, r := h.ask(t, "How do I reset my VPN token?")
	if !strings.Contains(r.AllText(), "Sorry") || !slices.Equal(labels(r), []string{"Get a human"}) {
		t.Errorf("reply = %q with buttons %q, want an apology and Get a human", r.AllText(), labels(r))
	}
	turns, err := h.db.ListTurns(context.Background(), store.TurnFilter{})
	if err != nil || len(turns) != 1 || !strings.Contains(turns[0].Answer.Trace.Error, "provider down") {
		t.Errorf("turns = %+v, %v", turns, err)
	}
}

// TestRateLimitedCallsWaitRetryAfter: a 429 on chat.postMessage is
// retried after exactly its Retry-After, on the client's clock, and the
// reply arrives.
func TestRateLimitedCallsWaitRetryAfter(t *testing.T) {
	clk := backofftest.NewClock(time.Now())
	h := newHarness(t, setup{opts: func(o *slack.Options) { o.Clock = clk }})
	h.ws.FailNext("chat.postMessage", workspacetest.Fault{Status: http.StatusTooManyRequests, RetryAfter: 7})
	h.ask(t, "How do I reset my VPN token?")
	calls := h.ws.Calls("chat.postMessage")
	if len(calls) != 2 {
		t.Fatalf("%d chat.postMessage calls, want the refused one and its retry", len(calls))
	}
	if got := clk.Sleeps(); len(got) != 1 || got[0] != 7*time.Second {
		t.Errorf("waits %v, want one of Retry-After (7s)", got)
	}
}

// TestLongAnswerSplitWithinLimits: an answer longer than a message can
// hold is split into sections of at most 3,000 characters and over
// messages of at most 50 blocks (the workspace refuses anything more),
// the buttons on the last.
func TestLongAnswerSplitWithinLimits(t *testing.T) {
	h := newHarness(t, setup{})
	para := strings.Repeat("The VPN token rotates every ninety days and the reset takes a minute [1]. ", 38)
	long := strings.TrimSpace(strings.Repeat(para+"\n\n", 52))
	h.setScript(func(docent.Question) (docent.Answer, error) {
		return docent.Answer{Status: docent.StatusAnswered, Text: long, Citations: []docent.Citation{vpnCite}}, nil
	})
	thread, _ := h.ask(t, "Tell me everything about the VPN token")
	h.ws.WaitBotMessages(t, help, thread, 2)
	h.client.WaitIdle()
	msgs := h.ws.BotMessages(help, thread)
	if len(msgs) != 2 {
		t.Fatalf("%d messages, want 2", len(msgs))
	}
	if len(msgs[0].Buttons()) != 0 || !slices.Equal(labels(msgs[1]), []string{"Helpful", "Not helpful", "Get a human"}) {
		t.Errorf("buttons: first %q, last %q", labels(msgs[0]), labels(msgs[1]))
	}
	var all string
	for _, m := range msgs {
		all += m.AllText()
	}
	if n := strings.Count(all, "<https://docs.example.com/it/vpn|[1]>"); n != 52*38 {
		t.Errorf("%d linked markers, want %d: text lost or a link cut", n, 52*38)
	}
}

// TestMessagesTheBotIgnores: its own messages, other bots', edits, and
// plain chatter in a channel are not answered.
func TestMessagesTheBotIgnores(t *testing.T) {
	h := newHarness(t, setup{})
	h.deliver(t, h.ws.Post(workspacetest.Said{Channel: help, User: h.ws.BotUserID, Text: "<@" + h.ws.BotUserID + "> how?"}))
	h.deliver(t, h.ws.Post(workspacetest.Said{Channel: help, User: asker, Text: "how do I reset the vpn?"}))
	h.client.WaitIdle()
	if n := len(h.questions()); n != 0 {
		t.Errorf("%d questions answered, want none", n)
	}
	// A DM needs no mention.
	dm := h.ws.Post(workspacetest.Said{Channel: "D0ASKER001", User: asker, Text: "how do I reset the vpn?"})
	h.deliver(t, dm)
	h.ws.WaitBotMessages(t, "D0ASKER001", dm.TS, 1)
}

// TestSocketModeReconnects: when Slack asks the app to reconnect, it
// opens a new connection and keeps answering.
func TestSocketModeReconnects(t *testing.T) {
	h := newHarness(t, setup{})
	h.ws.Disconnect(t)
	h.ws.Wait(t, 30*time.Second, "a second connection", func() bool { return h.ws.WaitConnected(t) >= 2 })
	h.ask(t, "How do I reset my VPN token?")
}

// TestShutdownFinishesAnswersInFlight: Shutdown waits for the answer
// being written to be posted, and refuses new events after.
func TestShutdownFinishesAnswersInFlight(t *testing.T) {
	h := newHarness(t, setup{http: true})
	started, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	h.setScript(func(docent.Question) (docent.Answer, error) {
		// The late mention below can be taken before Shutdown begins; it
		// is then one more answer in flight, held like the first.
		once.Do(func() { close(started) })
		<-release // answering until Shutdown has begun
		return docent.Answer{Status: docent.StatusAnswered, Text: "Reset it [1].", Citations: []docent.Citation{vpnCite}}, nil
	})
	mention, _ := h.ws.Mention(workspacetest.Said{Channel: help, User: asker, Text: "How do I reset my VPN token?"})
	h.deliver(t, mention)
	<-started
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- h.client.Shutdown(ctx) }()
	// Shutdown has begun once new events are refused with 503 (so that
	// Slack retries them elsewhere); the answer in flight is still going.
	late, _ := h.ws.Mention(workspacetest.Said{Channel: help, User: asker, Text: "and another?"})
	h.ws.Wait(t, 10*time.Second, "events refused after Shutdown began", func() bool {
		return h.ws.PostEvent(t, h.url+slack.EventsPath, late.Body, 0).StatusCode == http.StatusServiceUnavailable
	})
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := len(h.ws.BotMessages(help, mention.TS)); n != 1 {
		t.Errorf("%d replies when Shutdown returned, want the answer in flight posted", n)
	}
}

// TestUnknownEventsAcknowledged: an event type the adapter does not know
// is acknowledged (Socket Mode) or answered 200 (HTTP), so that Slack
// does not redeliver it, and nothing else happens.
func TestUnknownEventsAcknowledged(t *testing.T) {
	ev := func(ws *workspacetest.Workspace) workspacetest.Event {
		return ws.Other(map[string]any{"type": "workflow_step_vanished", "event_ts": "1.2"})
	}
	socket := newHarness(t, setup{})
	socket.deliver(t, ev(socket.ws)) // fails without an ack
	web := newHarness(t, setup{http: true})
	web.deliver(t, ev(web.ws)) // fails without a 200
	if n := len(socket.ws.Calls("chat.postMessage")) + len(web.ws.Calls("chat.postMessage")); n != 0 {
		t.Errorf("%d posts for an unknown event", n)
	}
}

// TestHandoffInThreadWithoutEscalationChannel: with no escalation channel
// the handoff request, its group mention and its buttons go in the
// asker's thread.
func TestHandoffInThreadWithoutEscalationChannel(t *testing.T) {
	h := newHarness(t, setup{opts: func(o *slack.Options) { o.EscalationChannel = "" }})
	thread, r := h.ask(t, "How do I reset my VPN token?")
	h.click(t, r, "docent_handoff", asker)
	msgs := h.ws.WaitBotMessages(t, help, thread, 3)
	post := msgs[1]
	if !strings.Contains(post.AllText(), "<!subteam^"+group+">") || !slices.Equal(labels(post), []string{"Claim", "Resolve"}) {
		t.Errorf("handoff post in the thread: buttons %q\n%s", labels(post), post.AllText())
	}
	h.click(t, post, "docent_claim", staff)
	h.ws.Wait(t, 10*time.Second, "the post redrawn", func() bool { return h.ws.BotMessages(help, thread)[1].Edits == 1 })
	if got := labels(h.ws.BotMessages(help, thread)[1]); !slices.Equal(got, []string{"Resolve"}) {
		t.Errorf("after claim: buttons %q", got)
	}
}

// TestHandoffEtiquette: the escalation post carries the bot's answer and
// its sources; while the thread is handed off the bot ignores plain
// messages in it, the asker's mention gets a one-line status of the
// handoff (only the asker sees it; no sources, no links) with "Bring
// docent back", and staff replies never trigger it, mention or not;
// pressing the button answers what the asker asked meanwhile.
func TestHandoffEtiquette(t *testing.T) {
	h := newHarness(t, setup{})
	thread, r := h.ask(t, "How do I reset my VPN token?")
	h.click(t, r, "docent_handoff", asker)
	var post workspacetest.Message
	h.ws.Wait(t, 10*time.Second, "the escalation post", func() bool {
		esc := h.ws.Messages(escalation)
		if len(esc) == 0 {
			return false
		}
		post = esc[0]
		return true
	})
	for _, want := range []string{"Reset it in *Gatekeeper* <https://docs.example.com/it/vpn|[1]>.",
		"*[1]* <https://docs.example.com/it/vpn|VPN> · Resetting your token"} {
		if !strings.Contains(post.AllText(), want) {
			t.Errorf("escalation lacks the answer and its sources: %q\n%s", want, post.AllText())
		}
	}
	h.ws.WaitBotMessages(t, help, thread, 2) // the asker is told

	// Staff talk in the thread, one of them mentioning the bot: nothing.
	h.deliver(t, h.ws.Post(workspacetest.Said{Channel: help, User: asker, Text: "and on a phone?", ThreadTS: thread}))
	mention, message := h.ws.Mention(workspacetest.Said{Channel: help, User: staff, Text: "can you answer the phone part?", ThreadTS: thread})
	h.deliver(t, mention)
	h.deliver(t, message)
	h.client.WaitIdle()
	if n, q := len(h.ws.BotMessages(help, thread)), len(h.questions()); n != 2 || q != 1 {
		t.Fatalf("%d bot messages and %d questions after people talked in the handed-off thread, want 2 and 1", n, q)
	}

	// The asker mentions the bot: the handoff's status, for them alone.
	mention, message = h.ws.Mention(workspacetest.Said{Channel: help, User: asker, Text: "any update? it still fails on my phone", ThreadTS: thread})
	h.deliver(t, mention)
	h.deliver(t, message)
	status := h.ws.WaitBotMessages(t, help, thread, 3)[2]
	h.client.WaitIdle()
	text := status.AllText()
	if !status.Ephemeral || status.To != asker || !slices.Equal(labels(status), []string{"Bring docent back"}) ||
		!strings.Contains(text, "the IT team") || !strings.Contains(text, "just now") ||
		strings.Contains(text, "http") || strings.Contains(text, "[1]") || len(h.questions()) != 1 ||
		len(h.ws.BotMessages(help, thread)) != 3 {
		t.Errorf("status = %+v\n%s\nwant one ephemeral line to the asker: whom, since when, the button; no sources or links", status, text)
	}
	h.click(t, status, "docent_resume", asker)
	answer := h.ws.WaitBotMessages(t, help, thread, 4)[3]
	if q := h.questions(); len(q) != 2 || q[1].Text != "any update? it still fails on my phone" ||
		!strings.Contains(answer.AllText(), "<https://docs.example.com/it/vpn|[1]>") {
		t.Errorf("after Bring docent back: questions %v, reply\n%s\nwant the question asked meanwhile answered", q, answer.AllText())
	}
	hs, err := h.db.ListHandoffs(context.Background(), store.HandoffFilter{})
	if err != nil || len(hs) != 1 || hs[0].State != docent.HandoffReturned {
		t.Errorf("handoffs = %+v, %v; want the one returned", hs, err)
	}
	h.ws.Wait(t, 10*time.Second, "the escalation post updated", func() bool {
		return strings.Contains(h.ws.Messages(escalation)[0].AllText(), "returned")
	})
}

// TestRateLimitedAskerGetsAPoliteNotice: past the per-person rate, a
// question gets a polite note only the asker sees, in its thread, and is
// not answered.
func TestRateLimitedAskerGetsAPoliteNotice(t *testing.T) {
	h := newHarness(t, setup{cfg: bot.Config{UserRate: 1}})
	h.ask(t, "How do I reset my VPN token?")
	mention, _ := h.ws.Mention(workspacetest.Said{Channel: help, User: asker, Text: "Where is the expense policy?"})
	h.deliver(t, mention)
	note := h.ws.WaitBotMessages(t, help, mention.TS, 1)[0]
	if !note.Ephemeral || note.To != asker || len(note.Buttons()) != 0 || !strings.Contains(strings.ToLower(note.AllText()), "try again") {
		t.Errorf("notice = %+v, want a polite ephemeral note to the asker", note)
	}
	if n := len(h.questions()); n != 1 {
		t.Errorf("%d questions answered, want 1", n)
	}
}

// TestOutcomeReplies: each outcome has its own reply in the thread: an
// answer with its sources and Helpful first; uncertain with the closest
// page labelled "Closest pages" (not listed as a source of an answer, as
// bot/discord labels it), the hedge and Get a human first; not found with
// Get a human alone and no sources.
func TestOutcomeReplies(t *testing.T) {
	h := newHarness(t, setup{})
	tests := []struct {
		status  docent.Status
		text    string
		cites   []docent.Citation
		buttons []string
		source  bool
		closest bool // the sources are labelled "Closest pages"
	}{
		{docent.StatusAnswered, "Reset it in **Gatekeeper** [1].", []docent.Citation{vpnCite},
			[]string{"Helpful", "Not helpful", "Get a human"}, true, false},
		{docent.StatusUncertain, "I couldn't confirm this; the closest page is [1].", []docent.Citation{vpnCite},
			[]string{"Get a human", "Helpful", "Not helpful"}, true, true},
		{docent.StatusNotFound, answer.NotFoundText, nil, []string{"Get a human"}, false, false},
	}
	for _, tt := range tests {
		t.Run(string(tt.status), func(t *testing.T) {
			h.setScript(func(docent.Question) (docent.Answer, error) {
				return docent.Answer{Status: tt.status, Text: tt.text, Citations: tt.cites}, nil
			})
			_, r := h.ask(t, "Is the VPN needed in the lab? ("+string(tt.status)+")")
			text := r.AllText()
			if got := labels(r); len(got) == 0 || got[0] != tt.buttons[0] || len(got) != len(tt.buttons) {
				t.Errorf("buttons %q, want %q", got, tt.buttons)
			}
			if has := strings.Contains(text, "*[1]* <https://docs.example.com/it/vpn|VPN>"); has != tt.source {
				t.Errorf("source listed: %v, want %v\n%s", has, tt.source, text)
			}
			if has := strings.Contains(text, "Closest pages"); has != tt.closest {
				t.Errorf("labelled closest pages: %v, want %v\n%s", has, tt.closest, text)
			}
			if tt.status == docent.StatusUncertain && !strings.Contains(text, "couldn't confirm") {
				t.Errorf("uncertain reply lacks the hedge:\n%s", text)
			}
		})
	}
}

// TestRefusedAnswerStillApologizes: when Slack refuses the answer message
// itself (here invalid_blocks), the thread still gets the apology with
// the handoff button, not silence.
func TestRefusedAnswerStillApologizes(t *testing.T) {
	h := newHarness(t, setup{})
	h.ws.FailNext("chat.postMessage", workspacetest.Fault{Error: "invalid_blocks"})
	_, r := h.ask(t, "How do I reset my VPN token?")
	if !strings.Contains(r.AllText(), "Sorry") || !slices.Equal(labels(r), []string{"Get a human"}) {
		t.Errorf("reply = %q with buttons %q, want an apology and Get a human", r.AllText(), labels(r))
	}
}

// TestEscalationRefusedTellsTheAsker: when Slack refuses the escalation
// post (the app is not in the escalation channel), the asker is told in
// the thread with the button to try again, and the thread is not left
// silenced.
func TestEscalationRefusedTellsTheAsker(t *testing.T) {
	h := newHarness(t, setup{})
	thread, r := h.ask(t, "How do I reset my VPN token?")
	h.ws.FailNext("chat.postMessage", workspacetest.Fault{Error: "not_in_channel"})
	h.click(t, r, "docent_handoff", asker)
	told := h.ws.WaitBotMessages(t, help, thread, 2)[1]
	if !strings.Contains(told.AllText(), "couldn't reach") || !slices.Equal(labels(told), []string{"Get a human"}) {
		t.Errorf("the asker was told %q with buttons %q", told.AllText(), labels(told))
	}
	if n := len(h.ws.Messages(escalation)); n != 0 {
		t.Errorf("%d escalation posts, want none", n)
	}
	h.deliver(t, h.ws.Post(workspacetest.Said{Channel: help, User: asker, Text: "and on a phone?", ThreadTS: thread}))
	h.ws.WaitBotMessages(t, help, thread, 3)
}
