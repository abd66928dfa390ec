package bot_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/admission"
	"github.com/docent-hq/docent/bot"
	"github.com/docent-hq/docent/store"
)

func mention(id, user, text string, th bot.Thread) bot.Message {
	return bot.Message{EventID: id, Thread: th, User: user, Text: text, Mentioned: true, TopLevel: true}
}

// TestQuestionsBeforeReadyAreHeldThenAnswered: before the index is loaded
// a question is acknowledged at once and held, up to the bound (past it,
// a polite note); when it is loaded the held ones are answered in their
// threads, oldest first, through the admission control.
func TestQuestionsBeforeReadyAreHeldThenAnswered(t *testing.T) {
	loaded := make(chan struct{})
	adm := admission.New(admission.Options{Slots: 1})
	e := newEnv(t, bot.Config{Loaded: loaded, HoldQueue: 2, Admission: adm}, nil)
	threads := []bot.Thread{{Platform: "slack", Channel: "C1", ID: "1.1"}, {Platform: "slack", Channel: "C1", ID: "2.1"},
		{Platform: "slack", Channel: "C2", ID: "3.1"}}
	for i, th := range threads {
		if err := e.bot.HandleMessage(ctx, mention("Ev"+th.ID, "U"+th.ID, "question "+string(rune('A'+i))+"?", th), e.out); err != nil {
			t.Fatal(err)
		}
	}
	got := e.out.waitReplies(t, 3)
	for i, want := range []struct {
		kind bot.ReplyKind
		text string
	}{{bot.ReplyHold, bot.HoldText}, {bot.ReplyHold, bot.HoldText}, {bot.ReplyNote, bot.HoldFullText}} {
		if got[i].thread != threads[i] || got[i].reply.Kind != want.kind || got[i].reply.Text != want.text {
			t.Errorf("reply %d = %+v in %v, want %s %q in %v", i, got[i].reply, got[i].thread, want.kind, want.text, threads[i])
		}
	}
	if n := len(e.questions()); n != 0 {
		t.Fatalf("asked %d questions before the index was loaded", n)
	}
	close(loaded)
	got = e.out.waitReplies(t, 5)[3:]
	for i, p := range got {
		if p.thread != threads[i] || p.reply.Kind != bot.ReplyAnswer || len(p.reply.Citations) == 0 || p.reply.TurnID == 0 {
			t.Errorf("after loading, reply %d = %+v in %v, want the cited answer in %v", i, p.reply, p.thread, threads[i])
		}
	}
	if qs := e.questions(); len(qs) != 2 || qs[0].Text != "question A?" || qs[1].Text != "question B?" {
		t.Errorf("asked %+v, want A then B (oldest first; C was turned away)", qs)
	}
	// Once loaded, questions are answered without being held.
	th := bot.Thread{Platform: "slack", Channel: "C2", ID: "4.1"}
	if err := e.bot.HandleMessage(ctx, mention("Ev4", "U4", "question D?", th), e.out); err != nil {
		t.Fatal(err)
	}
	if p := e.out.waitReplies(t, 6)[5]; p.thread != th || p.reply.Kind != bot.ReplyAnswer {
		t.Errorf("after loading, a new question got %+v, want its answer", p.reply)
	}
	if err := e.bot.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestShutdownTellsHeldQuestions: a question held for the first sync
// when the server stops is told so (the hold queue lives in memory).
func TestShutdownTellsHeldQuestions(t *testing.T) {
	e := newEnv(t, bot.Config{Loaded: make(chan struct{})}, nil)
	if err := e.bot.HandleMessage(ctx, mention("Ev1", "U1", "vpn?", thread), e.out); err != nil {
		t.Fatal(err)
	}
	if err := e.bot.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if r := e.out.last(t); r.Kind != bot.ReplyNote || r.Text != bot.RestartText {
		t.Errorf("held question told %+v at shutdown, want %q", r, bot.RestartText)
	}
	if err := e.bot.HandleMessage(ctx, mention("Ev2", "U1", "vpn?", thread), e.out); !errors.Is(err, bot.ErrClosed) {
		t.Errorf("a question after Shutdown: %v, want ErrClosed", err)
	}
}

// refuser is an Admission that refuses every answer.
type refuser struct{}

func (refuser) Go(ctx context.Context, _, _ string, job func(context.Context, error)) {
	job(ctx, &admission.BusyError{Reason: admission.ReasonWait, RetryAfter: time.Second})
}

func TestBusyPipelineRepliesAndAsksNothing(t *testing.T) {
	e := newEnv(t, bot.Config{Admission: refuser{}}, nil)
	if err := e.bot.HandleMessage(ctx, mention("Ev1", "U1", "vpn?", thread), e.out); err != nil {
		t.Fatal(err)
	}
	if r := e.out.last(t); r.Kind != bot.ReplyBusy || r.Text != bot.BusyText || !r.Ephemeral {
		t.Errorf("reply = %+v, want the busy notice", r)
	}
	if n := len(e.questions()); n != 0 {
		t.Errorf("asked %d questions the admission refused", n)
	}
}

// TestHandoffEtiquette: in a handed-off thread the asker's mention gets
// the handoff's status (whom, who claimed it, since when) with "Bring
// docent back" and no docs answer; another person's message, mentioned or
// not, never triggers the bot; bringing it back answers the question the
// asker put meanwhile; once over, the person who helped is not answered
// unless they mention the bot.
func TestHandoffEtiquette(t *testing.T) {
	e := newEnv(t, bot.Config{GroupName: "the IT team"}, nil)
	clock := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	bot.SetClock(e.bot, func() time.Time { return clock })
	first := mention("Ev1", "U-asker", "can I expense a gym membership?", thread)
	if err := e.bot.HandleMessage(ctx, first, e.out); err != nil {
		t.Fatal(err)
	}
	turn := e.out.last(t).TurnID
	if err := e.bot.HandleAction(ctx, bot.Action{Kind: bot.ActionHandoff, Thread: thread, TurnID: turn, User: "U-asker"}, e.out); err != nil {
		t.Fatal(err)
	}
	h, _, _ := e.db.ThreadHandoff(ctx, thread.Platform, thread.Channel, thread.ID)
	asked := len(e.questions())

	clock = clock.Add(5 * time.Minute)
	m := mention("Ev2", "U-asker", "any update? I still cannot expense it", thread)
	m.TopLevel = false
	if err := e.bot.HandleMessage(ctx, m, e.out); err != nil {
		t.Fatal(err)
	}
	r := e.out.last(t)
	if r.Kind != bot.ReplyStatus || len(r.Citations) != 0 || !slices.Equal(r.Buttons, []bot.ActionKind{bot.ActionResume}) ||
		r.HandoffID != h.ID || !strings.Contains(r.Text, "the IT team") || !strings.Contains(r.Text, "5 minutes ago") ||
		strings.Contains(r.Text, "http") {
		t.Errorf("status = %+v, want whom and since when, the resume button, no sources or links", r)
	}

	// Staff talk in the thread, even mentioning the bot: no answer.
	for i, text := range []string{"Looking now.", "what does the expense policy say about fitness?"} {
		sm := mention("Ev-staff"+string(rune('0'+i)), "U-staff", text, thread)
		sm.TopLevel, sm.Mentioned = false, i == 1
		n := e.out.count()
		if err := e.bot.HandleMessage(ctx, sm, e.out); err != nil {
			t.Fatal(err)
		}
		if e.out.count() != n {
			t.Errorf("staff message %q got a reply: %+v", text, e.out.last(t))
		}
	}
	if len(e.questions()) != asked {
		t.Errorf("the bot answered in a handed-off thread")
	}
	if err := e.bot.HandleAction(ctx, bot.Action{Kind: bot.ActionClaim, HandoffID: h.ID, User: "U-staff"}, e.out); err != nil {
		t.Fatal(err)
	}
	clock = clock.Add(3 * time.Minute)
	m.EventID = "Ev3"
	if err := e.bot.HandleMessage(ctx, m, e.out); err != nil {
		t.Fatal(err)
	}
	if r := e.out.last(t); r.Kind != bot.ReplyStatus || !strings.Contains(r.Text, "<@U-staff>") ||
		!strings.Contains(r.Text, "claimed 3 minutes ago") || !strings.Contains(r.Text, "8 minutes ago") {
		t.Errorf("status once claimed = %q", r.Text)
	}

	// Someone else cannot bring the bot back; the asker can, and the
	// question they asked meanwhile is answered.
	if err := e.bot.HandleAction(ctx, bot.Action{Kind: bot.ActionResume, HandoffID: h.ID, User: "U-other"}, e.out); err != nil {
		t.Fatal(err)
	}
	if got, _ := e.db.Handoff(ctx, h.ID); got.State != docent.HandoffClaimed {
		t.Fatalf("a bystander's resume changed the handoff to %s", got.State)
	}
	if err := e.bot.HandleAction(ctx, bot.Action{Kind: bot.ActionResume, HandoffID: h.ID, User: "U-asker"}, e.out); err != nil {
		t.Fatal(err)
	}
	got, _ := e.db.Handoff(ctx, h.ID)
	if got.State != docent.HandoffReturned || got.ResolvedBy != "U-asker" || got.AskedAgain != "" {
		t.Errorf("after resume: %+v, want returned by the asker", got)
	}
	if u := e.out.updates[len(e.out.updates)-1]; u.State != docent.HandoffReturned {
		t.Errorf("escalation post shows %s, want returned", u.State)
	}
	if qs := e.questions(); len(qs) != asked+1 || qs[asked].Text != "any update? I still cannot expense it" {
		t.Errorf("after resume asked %+v, want the question asked meanwhile", qs[asked:])
	}
	if r := e.out.last(t); r.Kind != bot.ReplyAnswer {
		t.Errorf("after resume got %+v, want the answer", r)
	}

	// Over: the person who helped is not answered as a follow-up.
	n := len(e.questions())
	staff := bot.Message{EventID: "Ev5", Thread: thread, User: "U-staff", Text: "did that work for you?"}
	if err := e.bot.HandleMessage(ctx, staff, e.out); err != nil {
		t.Fatal(err)
	}
	if len(e.questions()) != n {
		t.Errorf("a follow-up by the person who helped was answered")
	}
	asker := bot.Message{EventID: "Ev6", Thread: thread, User: "U-asker", Text: "what about a yoga class?"}
	if err := e.bot.HandleMessage(ctx, asker, e.out); err != nil {
		t.Fatal(err)
	}
	if len(e.questions()) != n+1 {
		t.Errorf("the asker's follow-up after the handoff was not answered")
	}
}

// TestDeliveryInTheTurn: the turn records whether its reply was posted,
// with the platform's error when not.
func TestDeliveryInTheTurn(t *testing.T) {
	var posted, failed atomic.Int64
	e := newEnv(t, bot.Config{OnDelivery: func(ok bool) {
		if ok {
			posted.Add(1)
		} else {
			failed.Add(1)
		}
	}}, nil)
	if err := e.bot.HandleMessage(ctx, mention("Ev1", "U1", "vpn?", thread), e.out); err != nil {
		t.Fatal(err)
	}
	ok, err := e.db.Turn(ctx, e.out.last(t).TurnID)
	if err != nil || ok.Delivery != docent.DeliveryPosted || ok.DeliveryError != "" {
		t.Errorf("posted turn: delivery %q %q (%v), want posted", ok.Delivery, ok.DeliveryError, err)
	}
	e.out.replyErr = errors.New("slack: chat.postMessage: channel_not_found")
	if err := e.bot.HandleMessage(ctx, mention("Ev2", "U1", "wifi?", thread), e.out); err == nil {
		t.Fatal("a failed post returned no error")
	}
	turns, err := e.db.ListTurns(ctx, store.TurnFilter{Undelivered: true})
	if err != nil || len(turns) != 1 || turns[0].Question.Text != "wifi?" || turns[0].Delivery != docent.DeliveryFailed ||
		!strings.Contains(turns[0].DeliveryError, "channel_not_found") {
		t.Fatalf("undelivered turns = %+v (%v), want the wifi turn with the platform's error", turns, err)
	}
	if posted.Load() != 1 || failed.Load() != 1 {
		t.Errorf("OnDelivery saw %d posted, %d failed; want 1 and 1", posted.Load(), failed.Load())
	}
}

// TestDefaultUserRateBurst: the default rate, 10 a minute, lets a person
// ask ten at once.
func TestDefaultUserRateBurst(t *testing.T) {
	e := newEnv(t, bot.Config{}, nil)
	for i := range 11 {
		th := bot.Thread{Platform: "slack", Channel: "C1", ID: string(rune('a'+i)) + ".1"}
		if err := e.bot.HandleMessage(ctx, mention("", "U1", "question "+th.ID+"?", th), e.out); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(e.questions()); n != 10 {
		t.Errorf("answered %d of 11 rapid questions, want 10", n)
	}
	if r := e.out.last(t); r.Kind != bot.ReplyRateLimited {
		t.Errorf("11th got %+v, want the rate-limit notice", r)
	}
}
