package slack

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	slackapi "github.com/slack-go/slack"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/bot"
)

// poster posts for the core on behalf of one event: a message (whose
// author sees ephemeral replies and receives a streamed answer, and on
// which the working reaction goes) or a button press.
type poster struct {
	c *Client
	// user is who the event came from.
	user string
	// questionTS is the message being answered; assistant is true in an
	// assistant thread (a thread in the app's DM).
	questionTS string
	assistant  bool
	// pressed is the message whose button was pressed, in channel
	// pressedIn: an escalation post keeps its blocks when it is updated.
	pressed   *slackapi.Message
	pressedIn string
}

var (
	_ bot.Poster    = (*poster)(nil)
	_ bot.Indicator = (*poster)(nil)
	_ bot.Streamer  = (*poster)(nil)
)

// Reply posts r in thread t: in as many messages as Block Kit's limits
// take, buttons on the last; an ephemeral reply only its asker sees.
func (p *poster) Reply(ctx context.Context, t bot.Thread, r bot.Reply) error {
	for _, m := range render(r, t.ID) {
		if r.Ephemeral && p.user != "" {
			if err := p.c.postEphemeral(ctx, t, p.user, m); err != nil {
				return err
			}
			continue
		}
		if _, err := p.c.post(ctx, t.Channel, t.ID, m); err != nil {
			return err
		}
	}
	return nil
}

// Escalate posts the handoff request in the escalation channel (the
// thread itself when none is configured) with the thread's permalink and
// the user group's mention. The reference is "channel/ts" of the post.
func (p *poster) Escalate(ctx context.Context, e bot.Escalation) (string, error) {
	h := e.Handoff
	var link string
	err := p.c.call(ctx, "chat.getPermalink", func(ctx context.Context) (err error) {
		link, err = p.c.api.GetPermalinkContext(ctx, &slackapi.PermalinkParameters{Channel: h.Channel, Ts: h.Thread})
		return err
	})
	if err != nil {
		p.c.log.WarnContext(ctx, "permalink; escalating without it", slog.Any("error", err))
	}
	channel, thread := p.c.opts.EscalationChannel, ""
	if channel == "" {
		channel, thread = h.Channel, h.Thread
	}
	ts, err := p.c.post(ctx, channel, thread, escalation(h, e.Answer, link, p.c.opts.UserGroup))
	if err != nil {
		return "", err
	}
	return channel + "/" + ts, nil
}

// UpdateEscalation shows h's state on its escalation post. When a button
// on that post was pressed, the post keeps its content and only its
// state line and buttons change; otherwise it is drawn again from h.
func (p *poster) UpdateEscalation(ctx context.Context, h docent.Handoff) error {
	channel, ts, ok := strings.Cut(h.EscalationRef, "/")
	if !ok {
		return fmt.Errorf("slack: handoff %d has no escalation post (ref %q)", h.ID, h.EscalationRef)
	}
	var m message
	if p.pressed != nil && p.pressedIn == channel && p.pressed.Timestamp == ts && len(p.pressed.Blocks.BlockSet) > 0 {
		m = message{text: p.pressed.Text, blocks: restate(p.pressed.Blocks.BlockSet, h)}
	} else {
		var link string
		_ = p.c.call(ctx, "chat.getPermalink", func(ctx context.Context) (err error) {
			link, err = p.c.api.GetPermalinkContext(ctx, &slackapi.PermalinkParameters{Channel: h.Channel, Ts: h.Thread})
			return err
		})
		m = escalation(h, docent.Answer{}, link, p.c.opts.UserGroup)
	}
	return p.c.call(ctx, "chat.update", func(ctx context.Context) error {
		_, _, _, err := p.c.api.UpdateMessageContext(ctx, channel, ts,
			slackapi.MsgOptionText(m.text, false), slackapi.MsgOptionBlocks(m.blocks...))
		return err
	})
}

// Working shows the question is being answered: in an assistant thread,
// the status line ("Searching the docs…") and, for the first question,
// the thread's title; elsewhere (or when the status is refused) the
// reaction on the question. The returned function clears it.
func (p *poster) Working(ctx context.Context, m bot.Message, first bool) func() {
	t := m.Thread
	if p.assistant && p.c.opts.AssistantStatus != "" {
		err := p.c.setStatus(ctx, t, p.c.opts.AssistantStatus)
		if err == nil {
			if first {
				err := p.c.call(ctx, "assistant.threads.setTitle", func(ctx context.Context) error {
					return p.c.api.SetAssistantThreadsTitleContext(ctx, slackapi.AssistantThreadsSetTitleParameters{
						ChannelID: t.Channel, ThreadTS: t.ID, Title: truncate(m.Text, 80)})
				})
				if err != nil {
					p.c.log.WarnContext(ctx, "set thread title", slog.Any("error", err))
				}
			}
			return func() {
				if err := p.c.setStatus(context.WithoutCancel(ctx), t, ""); err != nil {
					p.c.log.DebugContext(ctx, "clear status", slog.Any("error", err))
				}
			}
		}
		p.c.log.DebugContext(ctx, "set status; reacting instead", slog.Any("error", err))
	}
	name := p.c.opts.Reaction
	if name == "" || p.questionTS == "" {
		return func() {}
	}
	item := slackapi.ItemRef{Channel: t.Channel, Timestamp: p.questionTS}
	if err := p.c.call(ctx, "reactions.add", func(ctx context.Context) error {
		return p.c.api.AddReactionContext(ctx, name, item)
	}); err != nil {
		p.c.log.DebugContext(ctx, "add reaction", slog.Any("error", err))
		return func() {}
	}
	return func() {
		if err := p.c.call(context.WithoutCancel(ctx), "reactions.remove", func(ctx context.Context) error {
			return p.c.api.RemoveReactionContext(ctx, name, item)
		}); err != nil {
			p.c.log.DebugContext(ctx, "remove reaction", slog.Any("error", err))
		}
	}
}

// StartStream returns a stream into thread t. Slack sees it with the
// first text: chat.startStream, then chat.appendStream in pieces, then
// chat.stopStream and the final reply (see stream).
func (p *poster) StartStream(_ context.Context, t bot.Thread) (bot.Stream, error) {
	return &stream{p: p, t: t}, nil
}

// Stream pacing: after the first piece, text is sent when this much has
// gathered or this long has passed since the last send.
const (
	streamChunk = 120
	streamEvery = 400 * time.Millisecond
)

// stream is an answer streamed into a thread with chat.startStream,
// appendStream and stopStream. Finish ends the stream with the sources
// and buttons under it, then replaces the streamed (provisional) text
// with the verified reply through chat.update.
type stream struct {
	p       *poster
	t       bot.Thread
	ts      string // the streamed message, once started
	pending strings.Builder
	sent    time.Time
}

func (s *stream) Append(ctx context.Context, text string) error {
	s.pending.WriteString(text)
	if s.ts != "" && s.pending.Len() < streamChunk && time.Since(s.sent) < streamEvery {
		return nil
	}
	return s.flush(ctx)
}

// flush sends the gathered text: it starts the stream or appends to it.
func (s *stream) flush(ctx context.Context) error {
	if s.pending.Len() == 0 {
		return nil
	}
	text := s.pending.String()
	s.pending.Reset()
	s.sent = time.Now()
	c := s.p.c
	if s.ts != "" {
		return c.call(ctx, "chat.appendStream", func(ctx context.Context) error {
			_, _, err := c.api.AppendStreamContext(ctx, s.t.Channel, s.ts, slackapi.MsgOptionMarkdownText(text))
			return err
		})
	}
	opts := []slackapi.MsgOption{slackapi.MsgOptionTS(s.t.ID), slackapi.MsgOptionMarkdownText(text)}
	if !strings.HasPrefix(s.t.Channel, "D") {
		// Outside a DM, Slack wants to know who the stream is for.
		opts = append(opts, slackapi.MsgOptionRecipientUserID(s.p.user), slackapi.MsgOptionRecipientTeamID(c.team))
	}
	return c.call(ctx, "chat.startStream", func(ctx context.Context) (err error) {
		_, s.ts, err = c.api.StartStreamContext(ctx, s.t.Channel, opts...)
		return err
	})
}

func (s *stream) Finish(ctx context.Context, r bot.Reply) error {
	c := s.p.c
	if s.ts == "" {
		// Nothing reached Slack: post the reply as usual.
		return s.p.Reply(ctx, s.t, r)
	}
	msgs := render(r, s.t.ID)
	last := msgs[len(msgs)-1].blocks
	var tail []slackapi.Block
	for _, b := range last {
		if !strings.HasPrefix(b.ID(), "docent_text_") {
			tail = append(tail, b)
		}
	}
	opts := []slackapi.MsgOption{}
	if rest := s.pending.String(); rest != "" {
		opts = append(opts, slackapi.MsgOptionMarkdownText(rest))
	}
	if len(tail) > 0 {
		opts = append(opts, slackapi.MsgOptionBlocks(tail...))
	}
	stopErr := c.call(ctx, "chat.stopStream", func(ctx context.Context) error {
		_, _, err := c.api.StopStreamContext(ctx, s.t.Channel, s.ts, opts...)
		return err
	})
	// The verified reply replaces the provisional text; a long one
	// continues in further messages.
	first := msgs[0]
	err := c.call(ctx, "chat.update", func(ctx context.Context) error {
		_, _, _, err := c.api.UpdateMessageContext(ctx, s.t.Channel, s.ts,
			slackapi.MsgOptionText(first.text, false), slackapi.MsgOptionBlocks(first.blocks...))
		return err
	})
	if err != nil {
		return errors.Join(stopErr, err)
	}
	if stopErr != nil {
		c.log.WarnContext(ctx, "stop stream; the reply replaced it anyway", slog.Any("error", stopErr))
	}
	for _, m := range msgs[1:] {
		if _, err := c.post(ctx, s.t.Channel, s.t.ID, m); err != nil {
			return err
		}
	}
	return nil
}

// post posts m in channel (in thread, when set) and returns its ts.
func (c *Client) post(ctx context.Context, channel, thread string, m message) (string, error) {
	opts := []slackapi.MsgOption{slackapi.MsgOptionText(m.text, false), slackapi.MsgOptionBlocks(m.blocks...)}
	if thread != "" {
		opts = append(opts, slackapi.MsgOptionTS(thread))
	}
	var ts string
	err := c.call(ctx, "chat.postMessage", func(ctx context.Context) (err error) {
		_, ts, err = c.api.PostMessageContext(ctx, channel, opts...)
		return err
	})
	return ts, err
}

func (c *Client) postEphemeral(ctx context.Context, t bot.Thread, user string, m message) error {
	return c.call(ctx, "chat.postEphemeral", func(ctx context.Context) error {
		_, err := c.api.PostEphemeralContext(ctx, t.Channel, user, slackapi.MsgOptionText(m.text, false),
			slackapi.MsgOptionBlocks(m.blocks...), slackapi.MsgOptionTS(t.ID))
		return err
	})
}

func (c *Client) setStatus(ctx context.Context, t bot.Thread, status string) error {
	return c.call(ctx, "assistant.threads.setStatus", func(ctx context.Context) error {
		return c.api.SetAssistantThreadsStatusContext(ctx, slackapi.AssistantThreadsSetStatusParameters{
			ChannelID: t.Channel, ThreadTS: t.ID, Status: status})
	})
}
