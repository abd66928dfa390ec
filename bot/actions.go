package bot

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/docent-hq/docent"
)

// HandleAction carries out a button press: feedback is stored against
// the turn; "Get a human" hands the thread off (the escalation channel is
// told, the asker too, and the bot goes quiet in the thread); Claim and
// Resolve move the handoff on and update its escalation post. Resolving
// saves the person's last reply in the thread as a knowledge candidate,
// and the bot answers in the thread again. "Bring docent back" returns a
// handed-off thread to the bot and answers the question the asker put to
// it meanwhile.
func (b *Bot) HandleAction(ctx context.Context, a Action, out Poster) error {
	switch a.Kind {
	case ActionHelpful, ActionNotHelpful:
		return b.feedback(ctx, a, out)
	case ActionHandoff:
		return b.handoff(ctx, a, out)
	case ActionClaim, ActionResolve:
		return b.escalationAction(ctx, a, out)
	case ActionResume:
		return b.resume(ctx, a, out)
	}
	return fmt.Errorf("bot: unknown action %q", a.Kind)
}

func (b *Bot) feedback(ctx context.Context, a Action, out Poster) error {
	rating := docent.RatingHelpful
	if a.Kind == ActionNotHelpful {
		rating = docent.RatingNotHelpful
	}
	f := docent.Feedback{TurnID: a.TurnID, Rating: rating, Reason: a.Reason, Platform: b.platform, User: a.User}
	if err := b.store.CreateFeedback(ctx, &f); err != nil {
		return fmt.Errorf("bot: feedback: %w", err)
	}
	text := "Thanks for the feedback."
	if rating == docent.RatingNotHelpful {
		text = "Thanks for telling me. An admin will review this answer; press \"Get a human\" if you still need help."
	}
	return out.Reply(ctx, a.Thread, Reply{Kind: ReplyNote, Text: text, TurnID: a.TurnID, Ephemeral: true})
}

func (b *Bot) handoff(ctx context.Context, a Action, out Poster) error {
	t := a.Thread
	h, ok, err := b.store.ThreadHandoff(ctx, t.Platform, t.Channel, t.ID)
	if err != nil {
		return fmt.Errorf("bot: handoff: %w", err)
	}
	if ok && h.State.Open() {
		return out.Reply(ctx, t, Reply{Kind: ReplyHandoff, Ephemeral: true,
			Text: "I've already asked " + b.cfg.GroupName + " to help here; a person will reply in this thread."})
	}
	var turn docent.Turn
	if a.TurnID != 0 {
		if turn, err = b.store.Turn(ctx, a.TurnID); err != nil {
			return fmt.Errorf("bot: handoff: %w", err)
		}
	}
	h = docent.Handoff{TurnID: a.TurnID, Platform: t.Platform, Channel: t.Channel, Thread: t.ID,
		Question: turn.Question.Text, State: docent.HandoffRequested, RequestedBy: a.User, RequestedAt: b.now().UTC()}
	if err := b.store.CreateHandoff(ctx, &h); err != nil {
		return fmt.Errorf("bot: handoff: %w", err)
	}
	ref, escErr := out.Escalate(ctx, Escalation{Handoff: h, Answer: turn.Answer})
	if escErr != nil {
		b.log.ErrorContext(ctx, "escalation failed", slog.Int64("handoff", h.ID), slog.Any("error", escErr))
		// The thread is released before the asker hears back, so that
		// their next message is answered, not taken for a handed-off one.
		// No one resolved it: failed, not resolved, so that it counts in
		// no time to resolve.
		_, uerr := b.updateHandoff(ctx, h.ID, func(h *docent.Handoff) bool {
			h.State = docent.HandoffFailed
			return true
		})
		err := out.Reply(ctx, t, Reply{Kind: ReplyFailed, Buttons: []ActionKind{ActionHandoff},
			Text: "Sorry, I couldn't reach " + b.cfg.GroupName + ". Please try \"Get a human\" again in a moment."})
		return errors.Join(fmt.Errorf("bot: escalate: %w", escErr), uerr, err)
	}
	h, err = b.updateHandoff(ctx, h.ID, func(h *docent.Handoff) bool {
		h.EscalationRef = ref
		return true
	})
	if err != nil {
		return fmt.Errorf("bot: handoff: %w", err)
	}
	b.log.InfoContext(ctx, "handed off", slog.Int64("handoff", h.ID), slog.String("thread", t.ID))
	return out.Reply(ctx, t, Reply{Kind: ReplyHandoff,
		Text: "I've asked " + b.cfg.GroupName + " to help. A person will reply in this thread; I'll stay out of it until they're done."})
}

func (b *Bot) escalationAction(ctx context.Context, a Action, out Poster) error {
	now := b.now().UTC()
	var note string
	h, err := b.updateHandoff(ctx, a.HandoffID, func(h *docent.Handoff) bool {
		switch {
		case !h.State.Open():
			return false // nothing left to do (resolved or failed); show the final state
		case a.Kind == ActionClaim && h.State == docent.HandoffRequested:
			h.State, h.ClaimedBy, h.ClaimedAt = docent.HandoffClaimed, a.User, now
			note = "A person is looking at this now."
		case a.Kind == ActionResolve:
			if h.ClaimedBy == "" {
				h.ClaimedBy, h.ClaimedAt = a.User, now
			}
			h.State, h.ResolvedBy, h.ResolvedAt = docent.HandoffResolved, a.User, now
			note = "This was marked resolved. I'll answer new questions in this thread again."
		default:
			return false // a second claim: nothing changes
		}
		return true
	})
	if err != nil {
		return fmt.Errorf("bot: %s: %w", a.Kind, err)
	}
	if note == "" {
		return out.UpdateEscalation(ctx, h)
	}
	t := Thread{Platform: h.Platform, Channel: h.Channel, ID: h.Thread}
	if h.State == docent.HandoffResolved && h.LastReply != "" {
		k := docent.KnowledgeCandidate{HandoffID: h.ID, TurnID: h.TurnID, Question: h.Question,
			Answer: h.LastReply, Author: h.LastReplyBy, CreatedAt: now}
		if err := b.store.CreateKnowledgeCandidate(ctx, &k); err != nil {
			return fmt.Errorf("bot: %s: %w", a.Kind, err)
		}
	}
	return errors.Join(out.UpdateEscalation(ctx, h), out.Reply(ctx, t, Reply{Kind: ReplyNote, Text: note}))
}

// handoffStatus is the one-line status a handed-off thread's asker gets
// for a mention: whom the bot asked and when, who claimed it and when;
// no sources, and the button that brings the bot back.
func (b *Bot) handoffStatus(h docent.Handoff) Reply {
	now := b.now()
	var text string
	if h.State == docent.HandoffClaimed && h.ClaimedBy != "" {
		text = fmt.Sprintf("<@%s> from %s is on this (claimed %s; I asked them %s), so I'm staying out of the thread.",
			h.ClaimedBy, b.cfg.GroupName, ago(now, h.ClaimedAt), ago(now, h.RequestedAt))
	} else {
		text = fmt.Sprintf("I asked %s for help here %s; no one has picked it up yet, and I'm staying out of the thread until they do.",
			b.cfg.GroupName, ago(now, h.RequestedAt))
	}
	return Reply{Kind: ReplyStatus, Ephemeral: true, HandoffID: h.ID, Buttons: []ActionKind{ActionResume},
		Text: text + " Press \"Bring docent back\" if you'd rather I answer."}
}

// ago says how long before now t was, for people.
func ago(now, t time.Time) string {
	d := now.Sub(t)
	switch {
	case t.IsZero():
		return "a while ago"
	case d < time.Minute:
		return "just now"
	case d < 2*time.Minute:
		return "a minute ago"
	case d < time.Hour:
		return fmt.Sprintf("%d minutes ago", int(d/time.Minute))
	case d < 2*time.Hour:
		return "an hour ago"
	case d < 48*time.Hour:
		return fmt.Sprintf("%d hours ago", int(d/time.Hour))
	}
	return fmt.Sprintf("%d days ago", int(d/(24*time.Hour)))
}

// resume gives a handed-off thread back to the bot ("Bring docent
// back"): the asker (or the person who claimed it) may; the handoff is
// returned, its escalation post says so, and the question the asker put
// to the bot meanwhile is answered.
func (b *Bot) resume(ctx context.Context, a Action, out Poster) error {
	now := b.now().UTC()
	var asked string
	allowed, changed := true, false
	h, err := b.updateHandoff(ctx, a.HandoffID, func(h *docent.Handoff) bool {
		if !h.State.Open() {
			return false
		}
		if a.User != h.RequestedBy && a.User != h.ClaimedBy {
			allowed = false
			return false
		}
		h.State, h.ResolvedBy, h.ResolvedAt = docent.HandoffReturned, a.User, now
		asked, h.AskedAgain = h.AskedAgain, ""
		changed = true
		return true
	})
	if err != nil {
		return fmt.Errorf("bot: resume: %w", err)
	}
	t := Thread{Platform: h.Platform, Channel: h.Channel, ID: h.Thread}
	switch {
	case !allowed:
		return out.Reply(ctx, t, Reply{Kind: ReplyNote, Ephemeral: true,
			Text: "Only the person who asked (or whoever claimed it) can bring me back into this thread."})
	case !changed:
		return out.Reply(ctx, t, Reply{Kind: ReplyNote, Ephemeral: true, Text: "I'm already answering in this thread."})
	}
	b.log.InfoContext(ctx, "handoff returned to the bot", slog.Int64("handoff", h.ID), slog.String("thread", t.ID))
	var errs []error
	if h.EscalationRef != "" {
		errs = append(errs, out.UpdateEscalation(ctx, h))
	}
	if asked == "" {
		errs = append(errs, out.Reply(ctx, t, Reply{Kind: ReplyNote, Text: "I'm back in this thread: ask me anything about the docs."}))
		return errors.Join(errs...)
	}
	history, err := b.store.ThreadTurns(ctx, t.Platform, t.Channel, t.ID, b.cfg.History)
	if err != nil {
		return errors.Join(append(errs, fmt.Errorf("bot: resume: %w", err))...)
	}
	q := b.question(h.RequestedBy, t, asked, history)
	m := Message{Thread: t, User: h.RequestedBy, Text: asked, Mentioned: true}
	return errors.Join(append(errs, b.submit(ctx, m, q, out, false, nil))...)
}
