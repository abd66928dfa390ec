package bot_test

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/answer"
	"github.com/docent-hq/docent/bot"
	"github.com/docent-hq/docent/store"
)

// answererFunc is a function-field fake of the answer pipeline.
type answererFunc func(ctx context.Context, q docent.Question) (docent.Answer, error)

func (f answererFunc) Answer(ctx context.Context, q docent.Question) (docent.Answer, error) {
	return f(ctx, q)
}

// poster records what the core asked the adapter to post.
type poster struct {
	mu          sync.Mutex
	replies     []posted
	escalations []bot.Escalation
	updates     []docent.Handoff
	escErr      error
	// replyErr fails every Reply; changed is closed on each reply.
	replyErr error
	changed  chan struct{}
}

type posted struct {
	thread bot.Thread
	reply  bot.Reply
}

func (p *poster) Reply(_ context.Context, t bot.Thread, r bot.Reply) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.replyErr != nil {
		return p.replyErr
	}
	p.replies = append(p.replies, posted{t, r})
	if p.changed != nil {
		close(p.changed)
	}
	p.changed = make(chan struct{})
	return nil
}

// waitReplies waits until n replies were posted and returns them.
func (p *poster) waitReplies(t *testing.T, n int) []posted {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		p.mu.Lock()
		if len(p.replies) >= n {
			out := slices.Clone(p.replies)
			p.mu.Unlock()
			return out
		}
		if p.changed == nil {
			p.changed = make(chan struct{})
		}
		ch := p.changed
		got := len(p.replies)
		p.mu.Unlock()
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("%d replies posted, want %d", got, n)
		}
	}
}

func (p *poster) Escalate(_ context.Context, e bot.Escalation) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.escErr != nil {
		return "", p.escErr
	}
	p.escalations = append(p.escalations, e)
	return "ESC/" + e.Handoff.Thread, nil
}

func (p *poster) UpdateEscalation(_ context.Context, h docent.Handoff) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.updates = append(p.updates, h)
	return nil
}

func (p *poster) last(t *testing.T) bot.Reply {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.replies) == 0 {
		t.Fatal("no reply posted")
	}
	return p.replies[len(p.replies)-1].reply
}

func (p *poster) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.replies)
}

// env is a core over a real SQLite store and the real Recorder, with a
// scripted answer pipeline that records the questions it gets.
type env struct {
	db   *store.DB
	bot  *bot.Bot
	out  *poster
	mu   sync.Mutex
	asks []docent.Question
	// status and err script the next answers.
	status docent.Status
	err    error
}

func newEnv(t *testing.T, cfg bot.Config, stale bot.StaleChecker) *env {
	t.Helper()
	return newEnvAt(t, filepath.Join(t.TempDir(), "docent.db"), cfg, stale)
}

func newEnvAt(t *testing.T, path string, cfg bot.Config, stale bot.StaleChecker) *env {
	t.Helper()
	db, err := store.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	e := &env{db: db, out: &poster{}, status: docent.StatusAnswered}
	ans := answererFunc(func(_ context.Context, q docent.Question) (docent.Answer, error) {
		e.mu.Lock()
		defer e.mu.Unlock()
		e.asks = append(e.asks, q)
		if e.err != nil {
			return docent.Answer{Status: docent.StatusError}, e.err
		}
		a := docent.Answer{Status: e.status, Text: "Answer to " + q.Text + " [1].",
			Citations: []docent.Citation{{N: 1, DocID: "hb:it/vpn.md", Title: "VPN", URL: "https://docs/vpn"}}}
		if e.status == docent.StatusNotFound {
			a.Text, a.Citations = answer.NotFoundText, nil
		}
		return a, nil
	})
	rec := answer.NewRecorder(ans, db, nil, slog.New(slog.DiscardHandler), nil)
	e.bot = bot.New("slack", rec, db, stale, cfg, nil)
	return e
}

func (e *env) questions() []docent.Question {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.asks)
}

var (
	ctx    = context.Background()
	thread = bot.Thread{Platform: "slack", Channel: "C-help", ID: "100.1"}
)

func msg(id, user, text string) bot.Message {
	return bot.Message{EventID: id, Thread: thread, User: user, Text: text}
}

func TestMentionAnswersWithButtonsAndScope(t *testing.T) {
	cfg := bot.Config{Channels: map[string]bot.ChannelConfig{"C-help": {Sources: []string{"public-docs"}}}}
	e := newEnv(t, cfg, nil)
	m := msg("Ev1", "U1", "How do I reset my VPN token?")
	m.Mentioned, m.TopLevel = true, true
	if err := e.bot.HandleMessage(ctx, m, e.out); err != nil {
		t.Fatal(err)
	}
	r := e.out.last(t)
	if r.Kind != bot.ReplyAnswer || r.TurnID == 0 || len(r.Citations) != 1 ||
		!slices.Equal(r.Buttons, []bot.ActionKind{bot.ActionHelpful, bot.ActionNotHelpful, bot.ActionHandoff}) {
		t.Errorf("reply = %+v", r)
	}
	q := e.questions()[0]
	if !slices.Equal(q.Filter.Sources, []string{"public-docs"}) || q.Platform != "slack" || q.Channel != "C-help" ||
		q.Thread != "100.1" || q.User != "U1" {
		t.Errorf("question = %+v, want the channel's scope and the thread", q)
	}
	if turn, err := e.db.Turn(ctx, r.TurnID); err != nil || turn.Question.Thread != "100.1" {
		t.Errorf("stored turn = %+v, %v", turn, err)
	}
}

func TestWhichMessagesAreAnswered(t *testing.T) {
	cfg := bot.Config{Channels: map[string]bot.ChannelConfig{"C-auto": {AutoAnswer: true}}}
	tests := []struct {
		name string
		m    bot.Message
		want bool
	}{
		{"mention", bot.Message{Mentioned: true, TopLevel: true, Text: "vpn token reset"}, true},
		{"direct message", bot.Message{Direct: true, TopLevel: true, Text: "vpn token reset"}, true},
		{"plain message in a normal channel", bot.Message{TopLevel: true, Text: "how do I reset the vpn?"}, false},
		{"question in an auto-answer channel", bot.Message{TopLevel: true, Text: "how do I reset the vpn?",
			Thread: bot.Thread{Platform: "slack", Channel: "C-auto", ID: "5.5"}}, true},
		{"statement in an auto-answer channel", bot.Message{TopLevel: true, Text: "thanks everyone, all good now",
			Thread: bot.Thread{Platform: "slack", Channel: "C-auto", ID: "5.6"}}, false},
		{"from a bot", bot.Message{Mentioned: true, FromBot: true, Text: "how?"}, false},
		{"reply in a thread the bot never answered", bot.Message{Text: "what about mac?"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, cfg, nil)
			if tt.m.Thread.ID == "" {
				tt.m.Thread = thread
			}
			tt.m.User = "U1"
			if err := e.bot.HandleMessage(ctx, tt.m, e.out); err != nil {
				t.Fatal(err)
			}
			if got := len(e.questions()) == 1; got != tt.want {
				t.Errorf("answered = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestFollowUpsUseThreadContext(t *testing.T) {
	e := newEnv(t, bot.Config{}, nil)
	first := msg("Ev1", "U1", "how many vacation days do employees get?")
	first.Mentioned, first.TopLevel = true, true
	if err := e.bot.HandleMessage(ctx, first, e.out); err != nil {
		t.Fatal(err)
	}
	// No mention, in the same thread: a question is answered with the
	// thread's earlier exchange; a remark is not.
	for _, m := range []bot.Message{msg("Ev2", "U1", "thanks!"), msg("Ev3", "U1", "and for contractors?")} {
		if err := e.bot.HandleMessage(ctx, m, e.out); err != nil {
			t.Fatal(err)
		}
	}
	qs := e.questions()
	if len(qs) != 2 {
		t.Fatalf("asked %d questions, want 2 (the remark is not a question): %+v", len(qs), qs)
	}
	h := qs[1].History
	if qs[1].Text != "and for contractors?" || len(h) != 1 || h[0].Question != "how many vacation days do employees get?" ||
		!strings.Contains(h[0].Answer, "[1]") {
		t.Errorf("follow-up = %+v", qs[1])
	}
}

func TestRedeliveredEventAnsweredOnceAcrossRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "docent.db")
	m := msg("Ev-retry", "U1", "how do I reset my vpn token?")
	m.Mentioned, m.TopLevel = true, true
	e := newEnvAt(t, path, bot.Config{}, nil)
	for range 3 {
		if err := e.bot.HandleMessage(ctx, m, e.out); err != nil {
			t.Fatal(err)
		}
	}
	e.db.Close()
	again := newEnvAt(t, path, bot.Config{}, nil) // a restarted process
	if err := again.bot.HandleMessage(ctx, m, again.out); err != nil {
		t.Fatal(err)
	}
	if n := len(e.questions()) + len(again.questions()); n != 1 || e.out.count()+again.out.count() != 1 {
		t.Errorf("answered %d times with %d replies, want once", n, e.out.count()+again.out.count())
	}
}

func TestOutcomeReplies(t *testing.T) {
	tests := []struct {
		status docent.Status
		kind   bot.ReplyKind
		first  bot.ActionKind
		cites  int
	}{
		{docent.StatusAnswered, bot.ReplyAnswer, bot.ActionHelpful, 1},
		{docent.StatusUncertain, bot.ReplyUncertain, bot.ActionHandoff, 1},
		{docent.StatusNotFound, bot.ReplyNotFound, bot.ActionHandoff, 0},
		{docent.StatusSmallTalk, bot.ReplyNote, "", 0},
	}
	for _, tt := range tests {
		t.Run(string(tt.status), func(t *testing.T) {
			e := newEnv(t, bot.Config{}, nil)
			e.status = tt.status
			m := msg("Ev1", "U1", "question?")
			m.Mentioned = true
			if err := e.bot.HandleMessage(ctx, m, e.out); err != nil {
				t.Fatal(err)
			}
			r := e.out.last(t)
			if tt.first == "" {
				if r.Kind != tt.kind || len(r.Buttons) != 0 || len(r.Citations) != 0 {
					t.Errorf("reply = %+v, want a %s without buttons or citations", r, tt.kind)
				}
				return
			}
			if r.Kind != tt.kind || len(r.Buttons) == 0 || r.Buttons[0] != tt.first || len(r.Citations) != tt.cites {
				t.Errorf("reply = %+v, want kind %s, first button %s, %d citations", r, tt.kind, tt.first, tt.cites)
			}
		})
	}
}

func TestFailedAnswerIsNeverSilent(t *testing.T) {
	e := newEnv(t, bot.Config{}, nil)
	e.err = &answer.StageError{Stage: "generate", Err: errors.New("provider down")}
	m := msg("Ev1", "U1", "how do I reset my vpn token?")
	m.Mentioned = true
	err := e.bot.HandleMessage(ctx, m, e.out)
	if err == nil || !strings.Contains(err.Error(), "provider down") {
		t.Errorf("err = %v, want the answer's error", err)
	}
	r := e.out.last(t)
	if r.Kind != bot.ReplyFailed || !slices.Equal(r.Buttons, []bot.ActionKind{bot.ActionHandoff}) || !strings.Contains(r.Text, "Sorry") {
		t.Errorf("reply = %+v, want an apology with the handoff button", r)
	}
	if turn, err := e.db.Turn(ctx, r.TurnID); err != nil || turn.Answer.Trace.Error == "" {
		t.Errorf("failed turn %d not stored with its error: %+v, %v", r.TurnID, turn.Answer.Trace, err)
	}
}

func TestRateLimitRepliesPolitely(t *testing.T) {
	e := newEnv(t, bot.Config{UserRate: 2}, nil)
	for i := range 4 {
		m := msg("", "U1", "question number "+string(rune('a'+i))+"?")
		m.Mentioned = true
		if err := e.bot.HandleMessage(ctx, m, e.out); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(e.questions()); n != 2 {
		t.Errorf("answered %d of 4 rapid questions, want 2 (the burst)", n)
	}
	if r := e.out.last(t); r.Kind != bot.ReplyRateLimited || !r.Ephemeral {
		t.Errorf("last reply = %+v, want a polite rate-limit notice", r)
	}
}

type staleDocs map[string]bool

func (s staleDocs) Stale(_ context.Context, ids []string) (map[string]bool, error) { return s, nil }

func TestStaleSourceFlagged(t *testing.T) {
	e := newEnv(t, bot.Config{}, staleDocs{"hb:it/vpn.md": true})
	m := msg("Ev1", "U1", "vpn?")
	m.Mentioned = true
	if err := e.bot.HandleMessage(ctx, m, e.out); err != nil {
		t.Fatal(err)
	}
	if r := e.out.last(t); !slices.Equal(r.Stale, []bool{true}) {
		t.Errorf("stale flags = %v, want the cited source flagged", r.Stale)
	}
}

func TestFeedbackStored(t *testing.T) {
	e := newEnv(t, bot.Config{}, nil)
	m := msg("Ev1", "U1", "vpn?")
	m.Mentioned = true
	if err := e.bot.HandleMessage(ctx, m, e.out); err != nil {
		t.Fatal(err)
	}
	turn := e.out.last(t).TurnID
	if err := e.bot.HandleAction(ctx, bot.Action{Kind: bot.ActionNotHelpful, Thread: thread, TurnID: turn, User: "U1", Reason: "outdated"}, e.out); err != nil {
		t.Fatal(err)
	}
	fb, err := e.db.TurnFeedback(ctx, turn)
	if err != nil || len(fb) != 1 || fb[0].Rating != docent.RatingNotHelpful || fb[0].Reason != "outdated" || fb[0].Platform != "slack" {
		t.Errorf("feedback = %+v, %v", fb, err)
	}
	if r := e.out.last(t); r.Kind != bot.ReplyNote || !r.Ephemeral {
		t.Errorf("reply = %+v, want an ephemeral thanks", r)
	}
}

// TestHandoffLifecycle: "Get a human" escalates with the answer, tells the
// asker and silences the bot in the thread; a person's reply is kept;
// claim and resolve move the state and update the escalation post; the
// resolving reply becomes a knowledge candidate; the bot answers again.
func TestHandoffLifecycle(t *testing.T) {
	e := newEnv(t, bot.Config{GroupName: "the IT team"}, nil)
	e.status = docent.StatusNotFound
	first := msg("Ev1", "U-asker", "can I expense a gym membership?")
	first.Mentioned, first.TopLevel = true, true
	if err := e.bot.HandleMessage(ctx, first, e.out); err != nil {
		t.Fatal(err)
	}
	turn := e.out.last(t).TurnID

	if err := e.bot.HandleAction(ctx, bot.Action{Kind: bot.ActionHandoff, Thread: thread, TurnID: turn, User: "U-asker"}, e.out); err != nil {
		t.Fatal(err)
	}
	if len(e.out.escalations) != 1 {
		t.Fatalf("%d escalations, want 1", len(e.out.escalations))
	}
	esc := e.out.escalations[0]
	if esc.Handoff.ID == 0 || esc.Handoff.Question != "can I expense a gym membership?" || esc.Handoff.Thread != thread.ID ||
		esc.Answer.Status != docent.StatusNotFound {
		t.Errorf("escalation = %+v", esc)
	}
	if r := e.out.last(t); r.Kind != bot.ReplyHandoff || !strings.Contains(r.Text, "the IT team") {
		t.Errorf("asker told %+v", r)
	}
	// Asking again while handed off changes nothing.
	if err := e.bot.HandleAction(ctx, bot.Action{Kind: bot.ActionHandoff, Thread: thread, TurnID: turn, User: "U-asker"}, e.out); err != nil {
		t.Fatal(err)
	}
	if len(e.out.escalations) != 1 {
		t.Errorf("a second Get a human escalated again")
	}

	// The bot stays quiet in the thread; a person's reply is remembered.
	asked := len(e.questions())
	for _, m := range []bot.Message{msg("Ev2", "U-asker", "any update?"), msg("Ev3", "U-staff", "Yes: up to $50 a month, file it under Wellness.")} {
		if err := e.bot.HandleMessage(ctx, m, e.out); err != nil {
			t.Fatal(err)
		}
	}
	if len(e.questions()) != asked {
		t.Errorf("the bot answered in a handed-off thread")
	}

	id := esc.Handoff.ID
	if err := e.bot.HandleAction(ctx, bot.Action{Kind: bot.ActionClaim, HandoffID: id, User: "U-staff"}, e.out); err != nil {
		t.Fatal(err)
	}
	h, err := e.db.Handoff(ctx, id)
	if err != nil || h.State != docent.HandoffClaimed || h.ClaimedBy != "U-staff" || h.ClaimedAt.IsZero() || h.EscalationRef != "ESC/100.1" {
		t.Errorf("after claim: %+v, %v", h, err)
	}
	if err := e.bot.HandleAction(ctx, bot.Action{Kind: bot.ActionResolve, HandoffID: id, User: "U-staff"}, e.out); err != nil {
		t.Fatal(err)
	}
	h, _ = e.db.Handoff(ctx, id)
	if h.State != docent.HandoffResolved || h.ResolvedBy != "U-staff" || h.ResolvedAt.Before(h.ClaimedAt) {
		t.Errorf("after resolve: %+v", h)
	}
	if n := len(e.out.updates); n != 2 || e.out.updates[1].State != docent.HandoffResolved {
		t.Errorf("escalation updates = %+v, want claimed then resolved", e.out.updates)
	}
	ks, err := e.db.ListKnowledgeCandidates(ctx, 0)
	if err != nil || len(ks) != 1 || ks[0].Answer != "Yes: up to $50 a month, file it under Wellness." || ks[0].Author != "U-staff" {
		t.Errorf("knowledge candidates = %+v, %v", ks, err)
	}

	// Back to the bot.
	e.status = docent.StatusAnswered
	if err := e.bot.HandleMessage(ctx, msg("Ev4", "U-asker", "how do I reset my vpn token?"), e.out); err != nil {
		t.Fatal(err)
	}
	if len(e.questions()) != asked+1 {
		t.Errorf("the bot did not answer after the handoff was resolved")
	}
}

func TestEscalationFailureTellsTheAsker(t *testing.T) {
	e := newEnv(t, bot.Config{}, nil)
	first := msg("Ev1", "U1", "gym?")
	first.Mentioned = true
	if err := e.bot.HandleMessage(ctx, first, e.out); err != nil {
		t.Fatal(err)
	}
	e.out.escErr = errors.New("channel_not_found")
	err := e.bot.HandleAction(ctx, bot.Action{Kind: bot.ActionHandoff, Thread: thread, TurnID: e.out.last(t).TurnID, User: "U1"}, e.out)
	if err == nil || !strings.Contains(err.Error(), "channel_not_found") {
		t.Errorf("err = %v", err)
	}
	if r := e.out.last(t); r.Kind != bot.ReplyFailed || !slices.Contains(r.Buttons, bot.ActionHandoff) {
		t.Errorf("reply = %+v, want a failure notice with the button to retry", r)
	}
	// The thread is not left silenced, and the handoff is stored as
	// failed: not resolved, with no resolver and no time to resolve.
	h, ok, err := e.db.ThreadHandoff(ctx, thread.Platform, thread.Channel, thread.ID)
	if err != nil || !ok {
		t.Fatalf("ThreadHandoff = %v, %v; want the failed handoff", ok, err)
	}
	if h.State != docent.HandoffFailed || !h.ResolvedAt.IsZero() || h.ResolvedBy != "" || h.EscalationRef != "" {
		t.Errorf("a failed escalation stored %+v, want state failed, no resolver, no resolved time", h)
	}
	if err := e.bot.HandleMessage(ctx, msg("Ev2", "U1", "What does the expense policy say about the gym?"), e.out); err != nil {
		t.Fatal(err)
	}
	if n := len(e.questions()); n != 2 {
		t.Errorf("a follow-up after a failed escalation was not answered (%d questions)", n)
	}
	// "Get a human" again asks anew.
	e.out.escErr = nil
	if err := e.bot.HandleAction(ctx, bot.Action{Kind: bot.ActionHandoff, Thread: thread, User: "U1"}, e.out); err != nil {
		t.Fatal(err)
	}
	if len(e.out.escalations) != 1 || e.out.escalations[0].Handoff.ID == h.ID {
		t.Errorf("retry escalations = %+v, want one new handoff", e.out.escalations)
	}
}

// busyPoster is a poster that shows it is working, and records when.
type busyPoster struct {
	poster
	events []string
}

func (p *busyPoster) Working(_ context.Context, m bot.Message, first bool) func() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.events = append(p.events, "working:"+m.Text+":"+strconv.FormatBool(first))
	return func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.events = append(p.events, "done:"+strconv.Itoa(len(p.replies)))
	}
}

func TestIndicatorWrapsTheAnswer(t *testing.T) {
	e := newEnv(t, bot.Config{UserRate: 2}, nil)
	out := &busyPoster{}
	first := msg("Ev1", "U1", "how many vacation days do employees get?")
	first.Mentioned, first.TopLevel = true, true
	for _, m := range []bot.Message{first, msg("Ev2", "U1", "thanks!"), msg("Ev3", "U1", "and for contractors?"),
		msg("Ev4", "U1", "and for interns?")} {
		if err := e.bot.HandleMessage(ctx, m, out); err != nil {
			t.Fatal(err)
		}
	}
	// The remark is not answered and the rate-limited question gets a
	// notice: neither shows the bot working.
	want := []string{"working:how many vacation days do employees get?:true", "done:1",
		"working:and for contractors?:false", "done:2"}
	if !slices.Equal(out.events, want) {
		t.Errorf("indicator events = %q, want %q", out.events, want)
	}
}

// streamAsker is the real Recorder with a scripted stream of text before
// the answer.
type streamAsker struct {
	*answer.Recorder
	deltas []string
}

func (s streamAsker) AskStream(ctx context.Context, q docent.Question, onDelta func(string)) (docent.Turn, error) {
	for _, d := range s.deltas {
		onDelta(d)
	}
	return s.Ask(ctx, q)
}

// streamPoster records streams: each is its appended text and final reply.
type streamPoster struct {
	poster
	streams   []*stream
	startErr  error
	finishErr error
}

type stream struct {
	p      *streamPoster
	thread bot.Thread
	text   string
	final  *bot.Reply
}

func (p *streamPoster) StartStream(_ context.Context, t bot.Thread) (bot.Stream, error) {
	if p.startErr != nil {
		return nil, p.startErr
	}
	s := &stream{p: p, thread: t}
	p.streams = append(p.streams, s)
	return s, nil
}

func (s *stream) Append(_ context.Context, text string) error {
	s.text += text
	return nil
}

func (s *stream) Finish(_ context.Context, r bot.Reply) error {
	if s.p.finishErr != nil {
		return s.p.finishErr
	}
	s.final = &r
	return nil
}

func TestStreamedAnswers(t *testing.T) {
	tests := []struct {
		name      string
		deltas    []string
		status    docent.Status
		err       error
		startErr  error
		finishErr error
		// streamed is the text the stream showed ("" when none started);
		// final the kind that replaced it; replies the plain replies.
		streamed string
		final    bot.ReplyKind
		replies  int
	}{
		{name: "answer streams, then the verified reply replaces it", deltas: []string{"Reset it ", "in Gatekeeper [1]."},
			status: docent.StatusAnswered, streamed: "Reset it in Gatekeeper [1].", final: bot.ReplyAnswer},
		{name: "no text streamed: a plain reply", status: docent.StatusNotFound, replies: 1},
		{name: "declined after streaming: not found replaces the text", deltas: []string{"Maybe"},
			status: docent.StatusNotFound, streamed: "Maybe", final: bot.ReplyNotFound},
		{name: "failed after streaming: the apology replaces the text", deltas: []string{"Reset"},
			err: errors.New("provider down"), streamed: "Reset", final: bot.ReplyFailed},
		{name: "stream refused: a plain reply", deltas: []string{"Reset"}, status: docent.StatusAnswered,
			startErr: errors.New("not_allowed"), replies: 1},
		{name: "finishing fails: the reply is posted on its own", deltas: []string{"Reset"}, status: docent.StatusAnswered,
			finishErr: errors.New("message_not_found"), streamed: "Reset", replies: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db, err := store.Open(ctx, filepath.Join(t.TempDir(), "docent.db"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			ans := answererFunc(func(_ context.Context, q docent.Question) (docent.Answer, error) {
				if tt.err != nil {
					return docent.Answer{Status: docent.StatusError}, tt.err
				}
				return docent.Answer{Status: tt.status, Text: "Reset it in Gatekeeper [1].",
					Citations: []docent.Citation{{N: 1, DocID: "hb:it/vpn.md", Title: "VPN", URL: "https://docs/vpn"}}}, nil
			})
			rec := answer.NewRecorder(ans, db, nil, slog.New(slog.DiscardHandler), nil)
			b := bot.New("slack", streamAsker{rec, tt.deltas}, db, nil, bot.Config{}, nil)
			out := &streamPoster{startErr: tt.startErr, finishErr: tt.finishErr}
			m := msg("Ev1", "U1", "how do I reset my vpn token?")
			m.Mentioned = true
			err = b.HandleMessage(ctx, m, out)
			if (err != nil) != (tt.err != nil) {
				t.Fatalf("err = %v, want %v", err, tt.err)
			}
			if tt.streamed == "" {
				if len(out.streams) != 0 {
					t.Errorf("%d streams started, want none", len(out.streams))
				}
			} else {
				if len(out.streams) != 1 {
					t.Fatalf("%d streams started, want 1", len(out.streams))
				}
				s := out.streams[0]
				if s.text != tt.streamed || s.thread != thread {
					t.Errorf("stream showed %q in %+v, want %q in %+v", s.text, s.thread, tt.streamed, thread)
				}
				if got := s.final; (got == nil) != (tt.final == "") || got != nil && (got.Kind != tt.final || got.TurnID == 0) {
					t.Errorf("stream finished with %+v, want kind %q", got, tt.final)
				}
			}
			if n := out.count(); n != tt.replies {
				t.Errorf("%d plain replies, want %d", n, tt.replies)
			}
		})
	}
}
