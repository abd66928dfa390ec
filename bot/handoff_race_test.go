package bot_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/answer"
	"github.com/docent-hq/docent/bot"
	"github.com/docent-hq/docent/store"
)

// pausedStore is the real store, except that one ThreadHandoff read,
// once armed, waits until released: the moment between a person's
// message reading a thread's handoff and saving the reply on it.
type pausedStore struct {
	*store.DB
	armed   chan struct{} // closed to arm the pause
	read    chan struct{} // closed once the paused read happened
	release chan struct{}
}

func (s *pausedStore) ThreadHandoff(ctx context.Context, platform, channel, thread string) (docent.Handoff, bool, error) {
	h, ok, err := s.DB.ThreadHandoff(ctx, platform, channel, thread)
	select {
	case <-s.armed:
		select {
		case <-s.read:
		default:
			close(s.read)
			<-s.release
		}
	default:
	}
	return h, ok, err
}

// TestResolveIsNotUndoneByAReplyReadBefore: a person's reply read while
// the thread was handed off, and saved after a Resolve, must not re-open
// the thread (the whole-record write of a stale read did, leaving the bot
// silent there for good).
func TestResolveIsNotUndoneByAReplyReadBefore(t *testing.T) {
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "docent.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	st := &pausedStore{DB: db, armed: make(chan struct{}), read: make(chan struct{}), release: make(chan struct{})}
	ans := answererFunc(func(_ context.Context, q docent.Question) (docent.Answer, error) {
		return docent.Answer{Status: docent.StatusNotFound, Text: answer.NotFoundText}, nil
	})
	b := bot.New("slack", answer.NewRecorder(ans, db, nil, slog.New(slog.DiscardHandler), nil), st, nil, bot.Config{}, nil)
	out := &poster{}
	m := msg("Ev1", "U1", "can I expense a gym membership?")
	m.Mentioned = true
	if err := b.HandleMessage(ctx, m, out); err != nil {
		t.Fatal(err)
	}
	if err := b.HandleAction(ctx, bot.Action{Kind: bot.ActionHandoff, Thread: thread, TurnID: out.last(t).TurnID, User: "U1"}, out); err != nil {
		t.Fatal(err)
	}
	h, ok, err := db.ThreadHandoff(ctx, thread.Platform, thread.Channel, thread.ID)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}

	close(st.armed)
	done := make(chan error, 1)
	go func() { done <- b.HandleMessage(ctx, msg("Ev2", "U2", "Yes, up to $50 a month."), out) }()
	select {
	case <-st.read:
	case <-time.After(10 * time.Second):
		t.Fatal("the staff reply never read the handoff")
	}
	if err := b.HandleAction(ctx, bot.Action{Kind: bot.ActionResolve, HandoffID: h.ID, User: "U2"}, out); err != nil {
		t.Fatal(err)
	}
	close(st.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got, _ := db.Handoff(ctx, h.ID); got.State != docent.HandoffResolved || got.ResolvedBy != "U2" {
		t.Errorf("handoff after resolve = %+v, want it to stay resolved", got)
	}
}
