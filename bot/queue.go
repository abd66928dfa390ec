package bot

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/docent-hq/docent"
)

// ErrClosed is returned for a question that arrives once Shutdown began.
var ErrClosed = errors.New("bot: shutting down")

// heldQuestion is a question held until the index is loaded.
type heldQuestion struct {
	m     Message
	q     docent.Question
	out   Poster
	first bool
	// ctx lives as long as the question waits (not the event's context,
	// which ends when the adapter is done with the event); stop ends it.
	ctx  context.Context
	stop func()
	// working clears the indicator shown since the question arrived.
	working func()
}

// loaded reports whether the index can answer.
func (b *Bot) loaded() bool {
	if b.cfg.Loaded == nil {
		return true
	}
	select {
	case <-b.cfg.Loaded:
		return true
	default:
		return false
	}
}

// detach returns a context for work that outlives ctx (the event) but
// not the bot: it keeps ctx's values, ends when Shutdown gives up, and
// after timeout when timeout > 0.
func (b *Bot) detach(ctx context.Context, timeout time.Duration) (context.Context, func()) {
	ctx = context.WithoutCancel(ctx)
	var cancel context.CancelFunc
	if timeout > 0 {
		ctx, cancel = context.WithTimeout(ctx, timeout)
	} else {
		ctx, cancel = context.WithCancel(ctx)
	}
	stop := context.AfterFunc(b.ctx, cancel)
	return ctx, func() { stop(); cancel() }
}

// hold keeps a question asked before the index is loaded, acknowledges
// it at once (the working indicator and HoldText in its thread), and
// answers it when Loaded closes. Past HoldQueue it gets HoldFullText.
func (b *Bot) hold(ctx context.Context, m Message, q docent.Question, out Poster, first bool) error {
	b.holdMu.Lock()
	switch {
	case b.closed:
		b.holdMu.Unlock()
		return ErrClosed
	case b.drained:
		// Loaded closed since the check: answer it now.
		b.holdMu.Unlock()
		return b.submit(ctx, m, q, out, first, nil)
	case len(b.held) >= b.cfg.HoldQueue:
		b.holdMu.Unlock()
		b.log.WarnContext(ctx, "hold queue full; question turned away", slog.Int("held", b.cfg.HoldQueue))
		return out.Reply(ctx, m.Thread, Reply{Kind: ReplyNote, Text: HoldFullText})
	}
	hq := &heldQuestion{m: m, q: q, out: out, first: first}
	hq.ctx, hq.stop = b.detach(ctx, 0)
	b.held = append(b.held, hq)
	if !b.waiting {
		b.waiting = true
		b.jobs.Go(b.drainWhenLoaded)
	}
	b.holdMu.Unlock()
	hq.working = b.working(hq.ctx, m, out, first)
	b.log.InfoContext(ctx, "question held until the first sync is done", slog.String("thread", m.Thread.ID))
	return out.Reply(ctx, m.Thread, Reply{Kind: ReplyHold, Text: HoldText})
}

// drainWhenLoaded waits for Loaded, then hands the held questions to the
// pipeline, oldest first. Shutdown ends the wait.
func (b *Bot) drainWhenLoaded() {
	select {
	case <-b.cfg.Loaded:
	case <-b.quit:
		return
	}
	b.holdMu.Lock()
	if b.closed {
		b.holdMu.Unlock()
		return
	}
	held := b.held
	b.held, b.drained = nil, true
	b.holdMu.Unlock()
	b.log.Info("index loaded: answering the questions held", slog.Int("held", len(held)))
	for _, hq := range held {
		if err := b.submit(hq.ctx, hq.m, hq.q, hq.out, hq.first, hq); err != nil {
			b.log.Error("answer a held question", slog.String("thread", hq.m.Thread.ID), slog.Any("error", err))
		}
	}
}

// working shows out's working indicator for m; the returned function
// clears it.
func (b *Bot) working(ctx context.Context, m Message, out Poster, first bool) func() {
	if ind, ok := out.(Indicator); ok {
		return ind.Working(ctx, m, first)
	}
	return func() {}
}

// submit answers q in m's thread: at once without an Admission, else
// once admitted (HandleMessage does not wait). A held question (hq) has
// its indicator shown already; it is cleared once the reply is posted.
func (b *Bot) submit(ctx context.Context, m Message, q docent.Question, out Poster, first bool, hq *heldQuestion) error {
	t := m.Thread
	if b.cfg.Admission == nil {
		done := b.working(ctx, m, out, first)
		if hq != nil {
			done = hq.working
			defer hq.stop()
		}
		defer done()
		return b.answer(ctx, t, q, out)
	}
	b.holdMu.Lock()
	if b.closed {
		b.holdMu.Unlock()
		return ErrClosed
	}
	b.jobs.Add(1)
	b.holdMu.Unlock()
	jctx, stop := b.detach(ctx, b.cfg.Timeout)
	var done func()
	if hq != nil {
		done = hq.working
	} else {
		done = b.working(jctx, m, out, first)
	}
	b.cfg.Admission.Go(jctx, b.platform, t.Channel, func(jctx context.Context, err error) {
		defer b.jobs.Done()
		defer stop()
		if hq != nil {
			defer hq.stop()
		}
		defer done()
		if err == nil {
			err = b.answer(jctx, t, q, out)
			if err != nil {
				b.log.ErrorContext(jctx, "answer", slog.String("thread", t.ID), slog.Any("error", err))
			}
			return
		}
		if jctx.Err() != nil {
			b.log.WarnContext(jctx, "question dropped: the answer was cancelled before it began", slog.String("thread", t.ID),
				slog.Any("error", err))
			return
		}
		b.log.WarnContext(jctx, "pipeline too busy; question turned away", slog.String("thread", t.ID), slog.Any("error", err))
		if perr := out.Reply(jctx, t, Reply{Kind: ReplyBusy, Ephemeral: true, Text: BusyText}); perr != nil {
			b.log.ErrorContext(jctx, "post the busy reply", slog.String("thread", t.ID), slog.Any("error", perr))
		}
	})
	return nil
}

// Shutdown stops taking questions and waits for the answers queued or
// running to be posted. Questions still held for the first sync are told
// RestartText (they live in memory only, and a restart forgets them).
// When ctx ends first the answers are cancelled, and Shutdown returns
// ctx's error once they stopped. Stop the adapter's events first.
func (b *Bot) Shutdown(ctx context.Context) error {
	b.holdMu.Lock()
	if !b.closed {
		close(b.quit)
	}
	b.closed = true
	held := b.held
	b.held = nil
	b.holdMu.Unlock()
	for _, hq := range held {
		if err := hq.out.Reply(ctx, hq.m.Thread, Reply{Kind: ReplyNote, Text: RestartText}); err != nil {
			b.log.WarnContext(ctx, "tell a held question docent is restarting", slog.String("thread", hq.m.Thread.ID),
				slog.Any("error", err))
		}
		hq.working()
		hq.stop()
	}
	done := make(chan struct{})
	go func() {
		b.jobs.Wait()
		close(done)
	}()
	select {
	case <-done:
		b.cancel()
		return nil
	case <-ctx.Done():
		b.cancel()
		<-done
		return fmt.Errorf("bot: answers in flight cancelled: %w", ctx.Err())
	}
}
