// Package bot is the conversation core the chat adapters share: which
// messages to answer, thread context for follow-ups, per-channel source
// scope, feedback, the handoff state machine (bot → requested → claimed →
// resolved; requested → failed when the escalation is refused; requested
// or claimed → returned when the asker brings the bot back), dedupe of
// redelivered events, rate limits, questions held until the first sync is
// done, and the delivery of each answer recorded in its turn. Answers go
// through the shared admission control (Config.Admission); adapters
// receive events on a bounded Intake. Adapters (bot/slack, bot/discord)
// stay thin: they turn platform events into Messages and Actions, and
// post the Replies and escalations the core asks for through their
// Poster.
package bot

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/internal/question"
	"github.com/docent-hq/docent/internal/redact"
)

// Asker answers a question and stores the turn; answer.Recorder
// implements it. A failed answer returns the stored turn (with its ID)
// and the error.
type Asker interface {
	Ask(ctx context.Context, q docent.Question) (docent.Turn, error)
}

// Store keeps the core's state; store.DB implements it.
type Store interface {
	// MarkEvent records a delivered event and reports whether it is new;
	// a redelivery, even across a restart, returns false.
	MarkEvent(ctx context.Context, platform, eventID string) (bool, error)
	// ThreadTurns returns the latest limit turns of a conversation,
	// oldest first.
	ThreadTurns(ctx context.Context, platform, channel, thread string, limit int) ([]docent.Turn, error)
	// Turn returns a stored turn; an unknown ID is an error.
	Turn(ctx context.Context, id int64) (docent.Turn, error)
	// CreateFeedback stores a rating; an unknown turn is an error.
	CreateFeedback(ctx context.Context, f *docent.Feedback) error
	// ThreadHandoff returns the latest handoff of a conversation; ok is
	// false when it was never handed off.
	ThreadHandoff(ctx context.Context, platform, channel, thread string) (h docent.Handoff, ok bool, err error)
	// Handoff returns a handoff by ID; an unknown ID is an error.
	Handoff(ctx context.Context, id int64) (docent.Handoff, error)
	// CreateHandoff stores a new handoff and sets its ID.
	CreateHandoff(ctx context.Context, h *docent.Handoff) error
	// UpdateHandoff writes a handoff's state; an unknown ID is an error.
	UpdateHandoff(ctx context.Context, h docent.Handoff) error
	// CreateKnowledgeCandidate stores a person's resolving reply.
	CreateKnowledgeCandidate(ctx context.Context, k *docent.KnowledgeCandidate) error
	// SetTurnDelivery records whether a turn's reply was posted, with
	// the platform's error when not; an unknown turn is an error.
	SetTurnDelivery(ctx context.Context, id int64, d docent.Delivery, errText string) error
}

// Admission admits an answer to the pipeline, shared by every entrance
// (admission.Controller implements it).
type Admission interface {
	// Go runs job under ctx once the answer may run (err nil), and
	// otherwise tells job why not: a refusal (the pipeline is too busy),
	// or ctx's error. It calls job exactly once, possibly before it
	// returns.
	Go(ctx context.Context, platform, channel string, job func(ctx context.Context, err error))
}

// StaleChecker says which documents are flagged stale, so that an answer
// can say so next to a stale source. It may be nil.
type StaleChecker interface {
	// Stale returns the IDs among docIDs that are flagged stale.
	Stale(ctx context.Context, docIDs []string) (map[string]bool, error)
}

// Thread identifies a conversation: a thread on a platform.
type Thread struct {
	// Platform is "slack" or "discord".
	Platform string
	// Channel is the channel (or DM) the thread is in.
	Channel string
	// ID is the thread's root: the first message's ID (Slack thread_ts,
	// Discord thread channel ID).
	ID string
}

// Message is a platform message that may be a question to the bot.
type Message struct {
	// EventID identifies the message for dedupe (Slack: channel/ts, as a
	// mention arrives under two event IDs; Discord: the message ID); ""
	// skips dedupe.
	EventID string
	// Thread is the conversation; for a new top-level message, the thread
	// the reply starts.
	Thread Thread
	// User is the author's platform ID.
	User string
	// Text is the message with the bot's mention removed.
	Text string
	// Mentioned: the message mentions the bot.
	Mentioned bool
	// Direct: a direct message to the bot.
	Direct bool
	// TopLevel: a new message in a channel or a new forum post, not a
	// reply inside an existing thread.
	TopLevel bool
	// ReplyToBot: a reply to one of the bot's own messages.
	ReplyToBot bool
	// Post: a new post in a forum channel (TopLevel too). In an
	// auto-answer forum every post is a question, whether or not it
	// reads as one.
	Post bool
	// FromBot: written by a bot (the bot itself included); ignored.
	FromBot bool
	// Staff: the author is known to answer for the team (Discord: holds
	// the escalation role). Staff never trigger the bot in a thread that
	// was handed off, unless they mention it once it is over.
	Staff bool
}

// ActionKind is a button a person pressed.
type ActionKind string

// Actions.
const (
	ActionHelpful    ActionKind = "helpful"
	ActionNotHelpful ActionKind = "not_helpful"
	// ActionHandoff is "Get a human" under an answer.
	ActionHandoff ActionKind = "handoff"
	// ActionClaim and ActionResolve are buttons on the escalation post.
	ActionClaim   ActionKind = "claim"
	ActionResolve ActionKind = "resolve"
	// ActionResume is "Bring docent back" under a handed-off thread's
	// status: the asker takes the thread back from the person.
	ActionResume ActionKind = "resume"
)

// Action is a button press.
type Action struct {
	// Kind is the button.
	Kind ActionKind
	// Thread is the conversation the answer is in (feedback, handoff);
	// unused for claim and resolve, which name HandoffID.
	Thread Thread
	// TurnID is the answer the button was under (feedback, handoff).
	TurnID int64
	// HandoffID is the handoff an escalation button acts on.
	HandoffID int64
	// User is who pressed it.
	User string
	// Reason is the optional text given with "not helpful".
	Reason string
}

// ReplyKind says what a Reply is.
type ReplyKind string

// Replies.
const (
	// ReplyAnswer: an answer with its sources.
	ReplyAnswer ReplyKind = "answer"
	// ReplyUncertain: the closest page, a hedge and the handoff button.
	ReplyUncertain ReplyKind = "uncertain"
	// ReplyNotFound: the docs do not cover it; the handoff button first.
	ReplyNotFound ReplyKind = "not_found"
	// ReplyFailed: answering failed; an apology and the handoff button.
	ReplyFailed ReplyKind = "failed"
	// ReplyRateLimited: too many questions; try again shortly.
	ReplyRateLimited ReplyKind = "rate_limited"
	// ReplyBusy: the pipeline is too busy to take the question now.
	ReplyBusy ReplyKind = "busy"
	// ReplyHold: the question is held until the first sync is done; the
	// answer follows in the same thread.
	ReplyHold ReplyKind = "hold"
	// ReplyHandoff: a person was asked for (or already was).
	ReplyHandoff ReplyKind = "handoff"
	// ReplyStatus: where a handed-off thread's handoff stands, with the
	// button that brings the bot back; no sources.
	ReplyStatus ReplyKind = "status"
	// ReplyNote: a short notice in the thread (claimed, resolved,
	// feedback thanks, small talk).
	ReplyNote ReplyKind = "note"
)

// Reply is what the core asks an adapter to post in a thread.
type Reply struct {
	// Kind says what it is; adapters may style each kind.
	Kind ReplyKind
	// Text is the message; answers carry [n] citation markers.
	Text string
	// Citations are the sources, numbered from 1 (answer, uncertain).
	Citations []docent.Citation
	// Stale flags, per citation, a source flagged stale.
	Stale []bool
	// TurnID is the stored turn the reply shows (0 for notices).
	TurnID int64
	// Buttons are the actions to offer, in order.
	Buttons []ActionKind
	// HandoffID is the handoff a status's button acts on.
	HandoffID int64
	// Ephemeral: only the person who triggered it needs to see it
	// (adapters that can, show it to them alone).
	Ephemeral bool
}

// Escalation is a handoff request to post in the escalation channel.
type Escalation struct {
	// Handoff is the stored handoff (ID set): the post's buttons act on it.
	Handoff docent.Handoff
	// Answer is what the bot replied (text and sources), when it did.
	Answer docent.Answer
}

// Poster posts for the core; each adapter implements it.
type Poster interface {
	// Reply posts r in thread t.
	Reply(ctx context.Context, t Thread, r Reply) error
	// Escalate posts a handoff request in the escalation channel, with a
	// link to the thread, the question, the bot's answer and sources, a
	// mention of the configured group or role, and Claim/Resolve buttons;
	// it returns a reference UpdateEscalation can edit.
	Escalate(ctx context.Context, e Escalation) (ref string, err error)
	// UpdateEscalation shows h's new state on its escalation post.
	UpdateEscalation(ctx context.Context, h docent.Handoff) error
}

// Indicator is a Poster that can show people the bot is working on their
// question (a reaction, a status line, a typing indicator).
type Indicator interface {
	// Working is called once the core has decided to answer m, before it
	// asks; first is true for the conversation's first question. The
	// returned function is called after the reply was posted.
	Working(ctx context.Context, m Message, first bool) (done func())
}

// StreamAsker is an Asker that can hand out an answer's text while it is
// being written (answer.Recorder, with a streaming model).
type StreamAsker interface {
	Asker
	// AskStream is Ask, calling onDelta with each new piece of the
	// provisional answer text, in order and never concurrently. The
	// returned turn holds the verified answer, which replaces what was
	// streamed.
	AskStream(ctx context.Context, q docent.Question, onDelta func(delta string)) (docent.Turn, error)
}

// Streamer is a Poster that can show an answer growing in a thread. The
// core streams only when both its Asker and the Poster can.
type Streamer interface {
	// StartStream starts a message in thread t that Append grows.
	StartStream(ctx context.Context, t Thread) (Stream, error)
}

// Stream is an answer being shown while it is written.
type Stream interface {
	// Append adds text to the message.
	Append(ctx context.Context, text string) error
	// Finish ends the stream with the final reply (verified text,
	// sources, buttons), which replaces the streamed text.
	Finish(ctx context.Context, r Reply) error
}

// FollowUps says which messages in a thread the bot answers without a
// mention.
type FollowUps string

// Follow-up policies.
const (
	// FollowQuestions answers messages that read as questions (end in
	// "?" or start with a question word), and replies to the bot.
	FollowQuestions FollowUps = "questions"
	// FollowReplies answers only replies to the bot's messages.
	FollowReplies FollowUps = "replies"
	// FollowAll answers every message.
	FollowAll FollowUps = "all"
)

// ChannelConfig is what the bot does in one channel.
type ChannelConfig struct {
	// Sources and Labels scope retrieval: a public channel must never
	// cite internal docs. Empty means every source and label.
	Sources []string
	Labels  []string
	// AutoAnswer answers new top-level messages that read as questions
	// (help channels, forum posts) without a mention.
	AutoAnswer bool
}

// Config tunes the core.
type Config struct {
	// Channels configures channels by ID; others use Default.
	Channels map[string]ChannelConfig
	// Default is the configuration of DMs and unlisted channels.
	Default ChannelConfig
	// FollowUps is the follow-up policy in threads the bot answers;
	// default FollowQuestions.
	FollowUps FollowUps
	// History is how many earlier turns make a follow-up standalone;
	// default 3.
	History int
	// GroupName names who is asked in a handoff ("the IT team"), for the
	// asker's notice.
	GroupName string
	// UserRate and ChannelRate bound questions per minute per user and
	// per channel, with a burst of a minute's worth; 0 means 10 and 60.
	UserRate, ChannelRate float64
	// Loaded is closed once the index can answer (serve's readiness: the
	// first sync of an empty index has finished). Until then a question is
	// acknowledged at once (HoldText) and held, up to HoldQueue of them,
	// then answered in its thread, oldest first, when Loaded closes: "not
	// in the docs" from a half-filled index would be wrong. Nil means
	// always ready.
	Loaded <-chan struct{}
	// HoldQueue bounds the questions held until Loaded; past it a
	// question gets HoldFullText. Default 100.
	HoldQueue int
	// Admission admits each answer to the pipeline; nil answers at once,
	// before HandleMessage returns.
	Admission Admission
	// Timeout bounds one answer once admitted to wait for a slot (queue,
	// pipeline, posting); default 2m.
	Timeout time.Duration
	// OnDelivery, when set, is told whether each answer was posted, for
	// metrics.
	OnDelivery func(posted bool)
}

// Notices of the question queue.
const (
	// HoldText acknowledges a question held until the first sync is done.
	HoldText = "Reading the docs for the first time — I'll answer here in a moment."
	// HoldFullText is the reply when too many questions are already held.
	HoldFullText = "I'm still reading the docs for the first time, and many questions are already waiting. " +
		"Please ask again in a few minutes."
	// RestartText tells a held question that it will not be answered: the
	// server is stopping.
	RestartText = "I'm restarting before I could answer this. Please ask again in a minute."
	// BusyText is the reply when the pipeline is too busy.
	BusyText = "I'm answering a lot of questions right now and couldn't get to yours. Please ask again in a minute."
)

// Bot is the conversation core. It is safe for concurrent use.
type Bot struct {
	platform string
	asker    Asker
	store    Store
	stale    StaleChecker
	cfg      Config
	log      *slog.Logger
	now      func() time.Time

	mu       sync.Mutex
	limiters map[string]*rate.Limiter

	// handoffMu serialises the read-modify-write of handoffs (a person's
	// reply, claim, resolve, the escalation's reference): UpdateHandoff
	// writes the whole record, so two of them interleaved would undo one
	// another, e.g. a reply saved from a stale read re-opening a thread
	// just resolved.
	handoffMu sync.Mutex

	// ctx is cancelled when Shutdown gives up waiting: queued and running
	// answers stop. jobs counts them.
	ctx    context.Context
	cancel context.CancelFunc
	jobs   sync.WaitGroup
	// The questions held until Loaded (see queue.go).
	holdMu  sync.Mutex
	held    []*heldQuestion
	drained bool
	closed  bool
	waiting bool
	// quit is closed by Shutdown.
	quit chan struct{}
}

// updateHandoff re-reads handoff id and, under handoffMu, applies change
// to it and writes it back, unless change reports false. It returns the
// handoff as written (or as read, when nothing was written).
func (b *Bot) updateHandoff(ctx context.Context, id int64, change func(h *docent.Handoff) bool) (docent.Handoff, error) {
	b.handoffMu.Lock()
	defer b.handoffMu.Unlock()
	h, err := b.store.Handoff(ctx, id)
	if err != nil {
		return h, err
	}
	if !change(&h) {
		return h, nil
	}
	return h, b.store.UpdateHandoff(ctx, h)
}

// New returns the core for one platform. stale may be nil; log nil
// discards logs.
func New(platform string, asker Asker, st Store, stale StaleChecker, cfg Config, log *slog.Logger) *Bot {
	if cfg.FollowUps == "" {
		cfg.FollowUps = FollowQuestions
	}
	if cfg.History <= 0 {
		cfg.History = 3
	}
	if cfg.UserRate <= 0 {
		cfg.UserRate = 10
	}
	if cfg.ChannelRate <= 0 {
		cfg.ChannelRate = 60
	}
	if cfg.GroupName == "" {
		cfg.GroupName = "the team"
	}
	if cfg.HoldQueue <= 0 {
		cfg.HoldQueue = 100
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 2 * time.Minute
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	b := &Bot{platform: platform, asker: asker, store: st, stale: stale, cfg: cfg, log: log,
		now: time.Now, limiters: map[string]*rate.Limiter{}}
	b.ctx, b.cancel = context.WithCancel(context.Background())
	b.quit = make(chan struct{})
	return b
}

// channel returns the configuration of a channel.
func (b *Bot) channel(id string) ChannelConfig {
	if c, ok := b.cfg.Channels[id]; ok {
		return c
	}
	return b.cfg.Default
}

// HandleMessage decides whether m is a question for the bot and, if so,
// answers it in its thread through out. It answers direct messages,
// mentions, top-level questions in auto-answer channels, and follow-ups
// in threads it already answers (per Config.FollowUps). In a thread handed
// to a person it does not answer: the asker's mention gets the handoff's
// status (with "Bring docent back"), and anyone else's message is kept as
// the person's latest reply. A redelivered event is ignored. Before the
// index is loaded the question is acknowledged and held; with an
// Admission the answer is queued and posted after HandleMessage returns.
// Small talk (question.SmallTalk: a greeting, thanks, "lol ok") is neither
// held nor queued: its short reply is posted before HandleMessage returns.
// Errors are returned after the asker was told (never silent); a failed
// answer gets an apology with the handoff button.
func (b *Bot) HandleMessage(ctx context.Context, m Message, out Poster) error {
	text := strings.TrimSpace(m.Text)
	if m.FromBot || (text == "" && !m.Mentioned) {
		return nil
	}
	if m.EventID != "" {
		fresh, err := b.store.MarkEvent(ctx, b.platform, m.EventID)
		if err != nil {
			return fmt.Errorf("bot: %w", err)
		}
		if !fresh {
			b.log.DebugContext(ctx, "duplicate event ignored", slog.String("event", m.EventID))
			return nil
		}
	}
	t := m.Thread
	h, handed, err := b.store.ThreadHandoff(ctx, t.Platform, t.Channel, t.ID)
	if err != nil {
		return fmt.Errorf("bot: %w", err)
	}
	if handed {
		if quiet, err := b.handedOff(ctx, m, text, h, out); quiet || err != nil {
			return err
		}
	}

	var history []docent.Turn
	if !m.TopLevel {
		if history, err = b.store.ThreadTurns(ctx, t.Platform, t.Channel, t.ID, b.cfg.History); err != nil {
			return fmt.Errorf("bot: %w", err)
		}
	}
	cc := b.channel(t.Channel)
	switch {
	case m.Direct, m.Mentioned:
	case m.TopLevel && cc.AutoAnswer && (m.Post || looksLikeQuestion(text)):
	case !m.TopLevel && len(history) > 0 && b.followUp(m, text):
	default:
		return nil
	}
	if text == "" {
		return out.Reply(ctx, t, Reply{Kind: ReplyNote, Text: "Ask me a question about the docs and I'll answer with sources."})
	}
	if !b.allow("user:"+m.User, b.cfg.UserRate) || !b.allow("channel:"+t.Channel, b.cfg.ChannelRate) {
		return out.Reply(ctx, t, Reply{Kind: ReplyRateLimited, Ephemeral: true,
			Text: "You're asking faster than I can keep up. Please try again in a minute."})
	}
	q := b.question(m.User, t, text, history)
	if _, small := question.SmallTalk(text); small {
		// A greeting or thanks needs no index, no slot and no working
		// indicator: the pipeline replies before retrieval, at once.
		return b.answer(ctx, t, q, out)
	}
	if !b.loaded() {
		return b.hold(ctx, m, q, out, len(history) == 0)
	}
	return b.submit(ctx, m, q, out, len(history) == 0, nil)
}

// question builds the question of a message in thread t, with the
// channel's scope and the thread's earlier turns.
func (b *Bot) question(user string, t Thread, text string, history []docent.Turn) docent.Question {
	cc := b.channel(t.Channel)
	q := docent.Question{Text: text, Platform: t.Platform, Channel: t.Channel, Thread: t.ID, User: user,
		Filter: docent.Filter{Sources: cc.Sources, Labels: cc.Labels}}
	for _, tu := range history {
		q.History = append(q.History, docent.Exchange{Question: tu.Question.Text, Answer: tu.Answer.Text})
	}
	return q
}

// handedOff handles a message in a thread that has a handoff. It reports
// quiet when the bot must not answer it: while the handoff is open, the
// asker's mention gets the status and everything else is the people's
// conversation (a person's reply is kept); once it is over, a person who
// took part in it (or staff) is not answered unless they mention the bot.
func (b *Bot) handedOff(ctx context.Context, m Message, text string, h docent.Handoff, out Poster) (quiet bool, err error) {
	asker := m.User == h.RequestedBy
	if !h.State.Open() {
		helped := m.User == h.ClaimedBy || m.User == h.ResolvedBy || m.User == h.LastReplyBy
		return !asker && (helped || m.Staff) && !m.Mentioned, nil
	}
	if !asker {
		if text == "" {
			return true, nil
		}
		_, err := b.updateHandoff(ctx, h.ID, func(h *docent.Handoff) bool {
			if !h.State.Open() {
				return false // resolved meanwhile: the reply is not the resolving one
			}
			h.LastReplyBy, h.LastReply = m.User, text
			return true
		})
		if err != nil {
			return true, fmt.Errorf("bot: %w", err)
		}
		return true, nil
	}
	if !m.Mentioned && !m.Direct {
		return true, nil // the asker talking with the person
	}
	if text != "" {
		h, err = b.updateHandoff(ctx, h.ID, func(h *docent.Handoff) bool {
			if !h.State.Open() {
				return false
			}
			h.AskedAgain = text
			return true
		})
		if err != nil {
			return true, fmt.Errorf("bot: %w", err)
		}
		if !h.State.Open() {
			return false, nil // given back meanwhile: answer it
		}
	}
	return true, out.Reply(ctx, m.Thread, b.handoffStatus(h))
}

// answer asks q and posts the reply in thread t, recording in the turn
// whether it was posted.
func (b *Bot) answer(ctx context.Context, t Thread, q docent.Question, out Poster) error {
	s := &streaming{b: b, t: t, out: out}
	turn, askErr := s.ask(ctx, q)
	if errors.Is(askErr, docent.ErrEmptyQuestion) {
		return nil
	}
	if askErr != nil {
		if !errors.Is(askErr, docent.ErrStorageUnavailable) { // the Recorder logs those, rate-limited
			b.log.ErrorContext(ctx, "answer failed", slog.Int64("turn", turn.ID), slog.String("thread", t.ID),
				slog.String("error", turn.Answer.Trace.Error))
		}
		err := s.post(ctx, failedReply(turn.ID))
		b.delivered(ctx, turn.ID, err)
		return errors.Join(fmt.Errorf("bot: answer: %w", askErr), err)
	}
	err := s.post(ctx, b.reply(ctx, turn))
	b.delivered(ctx, turn.ID, err)
	if err == nil || ctx.Err() != nil {
		return err
	}
	// The platform refused the answer (its blocks, its length, a link):
	// the thread still hears back, in a short plain reply.
	b.log.ErrorContext(ctx, "posting the answer failed; apologising", slog.Int64("turn", turn.ID),
		slog.String("thread", t.ID), slog.Any("error", err))
	return errors.Join(fmt.Errorf("bot: post answer: %w", err), out.Reply(ctx, t, failedReply(turn.ID)))
}

// delivered records in turn id whether its reply was posted (postErr
// nil) or not, with the platform's error.
func (b *Bot) delivered(ctx context.Context, id int64, postErr error) {
	if b.cfg.OnDelivery != nil {
		b.cfg.OnDelivery(postErr == nil)
	}
	if id == 0 {
		return
	}
	d, msg := docent.DeliveryPosted, ""
	if postErr != nil {
		d, msg = docent.DeliveryFailed, redact.URLs(postErr.Error())
	}
	if err := b.store.SetTurnDelivery(context.WithoutCancel(ctx), id, d, msg); err != nil {
		b.log.WarnContext(ctx, "record delivery", slog.Int64("turn", id), slog.Any("error", err))
	}
}

// failedReply is the apology a thread gets when answering fails, with
// the handoff button.
func failedReply(turn int64) Reply {
	return Reply{Kind: ReplyFailed, TurnID: turn, Buttons: []ActionKind{ActionHandoff},
		Text: "Sorry, something went wrong while I was answering. Want me to bring in a person?"}
}

// streaming asks a question and posts its reply, showing the answer
// while it is written when both the Asker and the Poster can stream. The
// stream starts with the first piece of text, so an answer decided before
// generation (not found, uncertain) is posted as a plain reply.
type streaming struct {
	b   *Bot
	t   Thread
	out Poster
	// s is the stream once started; broken stops appending after a
	// failure (the final reply still replaces what was shown).
	s      Stream
	broken bool
}

func (s *streaming) ask(ctx context.Context, q docent.Question) (docent.Turn, error) {
	sa, canAsk := s.b.asker.(StreamAsker)
	st, canPost := s.out.(Streamer)
	if !canAsk || !canPost {
		return s.b.asker.Ask(ctx, q)
	}
	return sa.AskStream(ctx, q, func(delta string) {
		if s.broken || delta == "" {
			return
		}
		if s.s == nil {
			stream, err := st.StartStream(ctx, s.t)
			if err != nil {
				s.b.log.WarnContext(ctx, "start stream", slog.String("thread", s.t.ID), slog.Any("error", err))
				s.broken = true
				return
			}
			s.s = stream
		}
		if err := s.s.Append(ctx, delta); err != nil {
			s.b.log.WarnContext(ctx, "append to stream", slog.String("thread", s.t.ID), slog.Any("error", err))
			s.broken = true
		}
	})
}

// post posts the final reply: it replaces the streamed message when one
// was started, and is posted on its own otherwise (or when finishing the
// stream fails: never silent).
func (s *streaming) post(ctx context.Context, r Reply) error {
	if s.s == nil {
		return s.out.Reply(ctx, s.t, r)
	}
	err := s.s.Finish(ctx, r)
	if err == nil {
		return nil
	}
	s.b.log.WarnContext(ctx, "finish stream; posting the reply on its own", slog.String("thread", s.t.ID), slog.Any("error", err))
	return s.out.Reply(ctx, s.t, r)
}

// followUp reports whether a message in a thread the bot answers is a
// follow-up to answer, per the policy.
func (b *Bot) followUp(m Message, text string) bool {
	switch b.cfg.FollowUps {
	case FollowAll:
		return true
	case FollowReplies:
		return m.ReplyToBot
	}
	return m.ReplyToBot || looksLikeQuestion(text)
}

// reply turns a stored turn into the reply for its outcome.
func (b *Bot) reply(ctx context.Context, turn docent.Turn) Reply {
	a := turn.Answer
	r := Reply{TurnID: turn.ID, Text: a.Text, Citations: a.Citations}
	switch a.Status {
	case docent.StatusAnswered:
		r.Kind = ReplyAnswer
		r.Buttons = []ActionKind{ActionHelpful, ActionNotHelpful, ActionHandoff}
	case docent.StatusUncertain:
		r.Kind = ReplyUncertain
		r.Buttons = []ActionKind{ActionHandoff, ActionHelpful, ActionNotHelpful}
	case docent.StatusSmallTalk:
		// A greeting or thanks: a short note, no sources, no buttons.
		r.Kind = ReplyNote
		r.Citations = nil
		return r
	default:
		r.Kind = ReplyNotFound
		r.Citations = nil
		r.Buttons = []ActionKind{ActionHandoff}
	}
	r.Stale = b.staleFlags(ctx, r.Citations)
	return r
}

// staleFlags marks, per citation, the sources flagged stale.
func (b *Bot) staleFlags(ctx context.Context, cites []docent.Citation) []bool {
	if b.stale == nil || len(cites) == 0 {
		return nil
	}
	ids := make([]string, len(cites))
	for i, c := range cites {
		ids[i] = c.DocID
	}
	stale, err := b.stale.Stale(ctx, ids)
	if err != nil {
		b.log.WarnContext(ctx, "stale check failed", slog.Any("error", err))
		return nil
	}
	flags := make([]bool, len(cites))
	flagged := false
	for i, c := range cites {
		flags[i] = stale[c.DocID]
		flagged = flagged || flags[i]
	}
	if !flagged {
		return nil
	}
	return flags
}

// allow takes a token from key's bucket: perMinute a minute, with a
// burst of a minute's worth (a person may ask their ten at once, then one
// every six seconds).
func (b *Bot) allow(key string, perMinute float64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	l, ok := b.limiters[key]
	if !ok {
		l = rate.NewLimiter(rate.Limit(perMinute/60), max(1, int(perMinute)))
		b.limiters[key] = l
	}
	return l.AllowN(b.now(), 1)
}

// looksLikeQuestion reports whether text reads as a question: it ends in
// "?" or starts with a question word (question.Looks, the answerer's
// reading too).
func looksLikeQuestion(text string) bool { return question.Looks(text) }
