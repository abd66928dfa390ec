package discord

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/bot"
)

// poster posts for the core while one event is handled. For an
// interaction, ephemeral replies go to the person who pressed or typed,
// and a deferred response (/ask) is filled in by the first reply.
type poster struct {
	c *Client
	// ix is the interaction being handled, nil for a message.
	ix *discordgo.Interaction
	// question names a thread the reply starts.
	question string

	mu sync.Mutex
	// pending: ix was answered with a deferred channel message that the
	// first reply fills.
	pending bool
}

var (
	_ bot.Poster    = (*poster)(nil)
	_ bot.Streamer  = (*poster)(nil)
	_ bot.Indicator = (*poster)(nil)
)

// takePending reports whether the deferred response still waits for its
// content, and marks it taken.
func (p *poster) takePending() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	was := p.pending
	p.pending = false
	return was
}

// Reply posts r in conversation t.
func (p *poster) Reply(ctx context.Context, t bot.Thread, r bot.Reply) error {
	parts := p.c.render(r, t)
	switch {
	case p.takePending():
		return p.fillOriginal(ctx, parts)
	case p.ix != nil && r.Ephemeral:
		for _, m := range parts {
			if _, err := p.c.s.FollowupMessageCreate(p.ix, true, webhookParams(m, discordgo.MessageFlagsEphemeral),
				discordgo.WithContext(ctx)); err != nil {
				return fmt.Errorf("discord: ephemeral reply: %w", clean(err))
			}
		}
		return nil
	}
	// Answers (and a handoff) start a thread, unless the channel answers
	// inline; a notice about a message with no thread yet is a reply to
	// it in the channel.
	place := placeAnswer
	switch r.Kind {
	case bot.ReplyNote, bot.ReplyRateLimited, bot.ReplyBusy, bot.ReplyStatus:
		place = placeNotice
	}
	target, ref, err := p.c.target(ctx, t, place, p.question)
	if err != nil {
		return err
	}
	if err := p.c.send(ctx, target, ref, parts); err != nil {
		return err
	}
	p.c.tagReply(ctx, t, r.Kind)
	return nil
}

// fillOriginal puts the first part into the deferred response's message
// (editing the original response: Discord's documented way to follow up
// a deferral) and sends the rest as follow-up messages.
func (p *poster) fillOriginal(ctx context.Context, parts []*discordgo.MessageSend) error {
	if _, err := p.c.s.InteractionResponseEdit(p.ix, webhookEdit(parts[0]), discordgo.WithContext(ctx)); err != nil {
		return fmt.Errorf("discord: answer /%s: %w", p.c.cfg.Command, clean(err))
	}
	for _, m := range parts[1:] {
		if _, err := p.c.s.FollowupMessageCreate(p.ix, true, webhookParams(m, 0), discordgo.WithContext(ctx)); err != nil {
			return fmt.Errorf("discord: answer /%s: %w", p.c.cfg.Command, clean(err))
		}
	}
	return nil
}

// abandon removes a deferred response the core never filled (a
// redelivered interaction), so it does not spin forever.
func (p *poster) abandon(ctx context.Context) {
	if p.ix == nil || !p.takePending() {
		return
	}
	if err := p.c.s.InteractionResponseDelete(p.ix, discordgo.WithContext(ctx)); err != nil {
		p.c.log.WarnContext(ctx, "discord: remove an unanswered deferred response", slog.Any("error", clean(err)))
	}
}

func webhookParams(m *discordgo.MessageSend, flags discordgo.MessageFlags) *discordgo.WebhookParams {
	return &discordgo.WebhookParams{Content: m.Content, Embeds: m.Embeds, Components: m.Components,
		AllowedMentions: m.AllowedMentions, Flags: flags}
}

func webhookEdit(m *discordgo.MessageSend) *discordgo.WebhookEdit {
	content, embeds, components := m.Content, m.Embeds, m.Components
	if embeds == nil {
		embeds = []*discordgo.MessageEmbed{}
	}
	if components == nil {
		components = []discordgo.MessageComponent{}
	}
	return &discordgo.WebhookEdit{Content: &content, Embeds: &embeds, Components: &components, AllowedMentions: m.AllowedMentions}
}

func messageEdit(channel, id string, m *discordgo.MessageSend) *discordgo.MessageEdit {
	e := webhookEdit(m)
	return &discordgo.MessageEdit{Channel: channel, ID: id, Content: e.Content, Embeds: e.Embeds,
		Components: e.Components, AllowedMentions: e.AllowedMentions}
}

// send posts parts in a channel; each one replies to ref when set (so a
// reply to any of them finds the conversation).
func (c *Client) send(ctx context.Context, channel string, ref *discordgo.MessageReference, parts []*discordgo.MessageSend) error {
	for _, m := range parts {
		if ref != nil {
			cp := *m
			cp.Reference = ref
			m = &cp
		}
		if _, err := c.s.ChannelMessageSendComplex(channel, m, discordgo.WithContext(ctx)); err != nil {
			return fmt.Errorf("discord: post in %s: %w", channel, clean(err))
		}
	}
	return nil
}

// placement says where a post goes when its conversation has no thread
// yet.
type placement int

const (
	// placeNotice replies to the root message in its channel.
	placeNotice placement = iota
	// placeAnswer starts a thread, or in an inline channel replies to the
	// root message.
	placeAnswer
	// placeThread always starts a thread (a handoff: people talk there).
	placeThread
)

// target returns the channel to post in for conversation t. A DM is its
// own channel; a thread that exists is posted in; otherwise the post
// starts a thread from the root message (the thread takes the message's
// ID) or replies to the root message in its channel, per place.
func (c *Client) target(ctx context.Context, t bot.Thread, place placement, question string) (string, *discordgo.MessageReference, error) {
	if t.ID == t.Channel {
		return t.Channel, nil, nil
	}
	c.chanMu.Lock()
	info, known := c.channels[t.ID]
	c.chanMu.Unlock()
	if known && info.thread() {
		return t.ID, nil, nil
	}
	if place == placeThread || (place == placeAnswer && !c.cfg.Inline[t.Channel]) {
		th, err := c.s.MessageThreadStartComplex(t.Channel, t.ID, &discordgo.ThreadStart{
			Name: threadName(question), AutoArchiveDuration: 1440}, discordgo.WithContext(ctx))
		switch {
		case err == nil:
			c.remember(th)
			return th.ID, nil, nil
		case restCode(err) == discordgo.ErrCodeThreadAlreadyCreatedForThisMessage:
			return t.ID, nil, nil
		}
		return "", nil, fmt.Errorf("discord: start a thread in %s: %w", t.Channel, clean(err))
	}
	if info, err := c.channel(ctx, t.ID); err == nil && info.thread() { // an archived thread
		return t.ID, nil, nil
	}
	no := false
	return t.Channel, &discordgo.MessageReference{MessageID: t.ID, ChannelID: t.Channel, FailIfNotExists: &no}, nil
}

// Working shows Discord's typing indicator where the answer to m goes
// (starting its thread), refreshed until done; a deferred /ask already
// shows one.
func (p *poster) Working(ctx context.Context, m bot.Message, _ bool) func() {
	t := m.Thread
	if p.ix != nil {
		return func() {}
	}
	target, _, err := p.c.target(ctx, t, placeAnswer, p.question)
	if err != nil {
		p.c.log.DebugContext(ctx, "discord: no typing indicator", slog.Any("error", err))
		return func() {}
	}
	typing := func(ctx context.Context) {
		if err := p.c.s.ChannelTyping(target, discordgo.WithContext(ctx)); err != nil && ctx.Err() == nil {
			p.c.log.DebugContext(ctx, "discord: typing", slog.Any("error", clean(err)))
		}
	}
	typing(ctx)
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-ctx.Done():
				return
			case <-time.After(8 * time.Second): // the indicator lasts 10s, or until the bot posts
				typing(ctx)
			}
		}
	}()
	return func() { cancel(); <-done }
}

// Escalate posts a handoff in the staff channel (or, with none
// configured, in the thread itself), pinging the escalation role; the
// reference is "channel/message".
func (p *poster) Escalate(ctx context.Context, e bot.Escalation) (string, error) {
	h := e.Handoff
	t := bot.Thread{Platform: h.Platform, Channel: h.Channel, ID: h.Thread}
	link, err := p.c.threadLink(ctx, t, h.Question)
	if err != nil {
		return "", err
	}
	channel := p.c.cfg.EscalationChannel
	if channel == "" {
		if channel, _, err = p.c.target(ctx, t, placeThread, h.Question); err != nil {
			return "", err
		}
	}
	var a *docent.Answer
	if e.Answer.Text != "" || len(e.Answer.Citations) > 0 {
		a = &e.Answer
	}
	m, err := p.c.s.ChannelMessageSendComplex(channel, p.c.escalation(h, a, link), discordgo.WithContext(ctx))
	if err != nil {
		return "", fmt.Errorf("discord: post handoff %d: %w", h.ID, clean(err))
	}
	return channel + "/" + m.ID, nil
}

// UpdateEscalation shows a handoff's new state on its post and turns off
// the buttons that no longer apply.
func (p *poster) UpdateEscalation(ctx context.Context, h docent.Handoff) error {
	channel, id, ok := strings.Cut(h.EscalationRef, "/")
	if !ok {
		return fmt.Errorf("discord: handoff %d has no escalation post", h.ID)
	}
	t := bot.Thread{Platform: h.Platform, Channel: h.Channel, ID: h.Thread}
	link, err := p.c.threadLink(ctx, t, h.Question)
	if err != nil {
		return err
	}
	// Keep what the post said about the answer: only the state changes.
	old, err := p.c.s.ChannelMessage(channel, id, discordgo.WithContext(ctx))
	if err != nil {
		return fmt.Errorf("discord: read handoff post %d: %w", h.ID, clean(err))
	}
	m := p.c.escalation(h, nil, link)
	if len(old.Embeds) == 1 {
		kept := *old.Embeds[0]
		fresh := m.Embeds[0]
		kept.Title, kept.Color = fresh.Title, fresh.Color
		for i, f := range kept.Fields {
			if f.Name == "State" {
				kept.Fields[i] = fresh.Fields[len(fresh.Fields)-1]
			}
		}
		m.Embeds = []*discordgo.MessageEmbed{&kept}
	}
	m.Content = old.Content
	m.AllowedMentions = noPings()
	if _, err := p.c.s.ChannelMessageEditComplex(messageEdit(channel, id, m), discordgo.WithContext(ctx)); err != nil {
		return fmt.Errorf("discord: update handoff post %d: %w", h.ID, clean(err))
	}
	if h.State == docent.HandoffResolved {
		p.c.markSolved(ctx, t, h.ResolvedBy, docent.ResolvedHandoff)
	}
	return nil
}

// threadLink is the URL that opens conversation t in Discord. The thread
// is started first when t is a message without one, so the link leads
// where the person will reply.
func (c *Client) threadLink(ctx context.Context, t bot.Thread, question string) (string, error) {
	if t.ID == t.Channel {
		return "https://discord.com/channels/@me/" + t.Channel, nil
	}
	target, _, err := c.target(ctx, t, placeThread, question)
	if err != nil {
		return "", err
	}
	info, err := c.channel(ctx, t.Channel)
	if err != nil {
		return "", err
	}
	return "https://discord.com/channels/" + info.guildID + "/" + target, nil
}

// StartStream opens a message that shows an answer while it is written:
// the deferred /ask response, or a new message in the thread.
func (p *poster) StartStream(ctx context.Context, t bot.Thread) (bot.Stream, error) {
	s := &stream{p: p, t: t}
	if p.takePending() {
		s.original = true
		return s, nil
	}
	target, ref, err := p.c.target(ctx, t, placeAnswer, p.question)
	if err != nil {
		return nil, err
	}
	m, err := p.c.s.ChannelMessageSendComplex(target, &discordgo.MessageSend{Content: "✍️ …", Reference: ref,
		AllowedMentions: noPings()}, discordgo.WithContext(ctx))
	if err != nil {
		return nil, fmt.Errorf("discord: start an answer in %s: %w", target, clean(err))
	}
	s.channel, s.message, s.ref = target, m.ID, ref
	return s, nil
}

// stream edits one message as the answer grows, no more often than the
// client's StreamInterval, and finally replaces it with the verified
// reply.
type stream struct {
	p        *poster
	t        bot.Thread
	original bool
	channel  string
	message  string
	// ref is the root message the answer replies to (inline channels).
	ref  *discordgo.MessageReference
	text strings.Builder
	last time.Time
}

// Append adds text and shows it when the interval since the last edit
// has passed.
func (s *stream) Append(ctx context.Context, delta string) error {
	s.text.WriteString(delta)
	if time.Since(s.last) < s.p.c.cfg.StreamInterval {
		return nil
	}
	s.last = time.Now()
	text := s.text.String()
	if length(text) > maxContent-10 {
		text = truncate(text, maxContent-10)
	}
	return s.edit(ctx, &discordgo.MessageSend{Content: text + " ▍", AllowedMentions: noPings()})
}

func (s *stream) edit(ctx context.Context, m *discordgo.MessageSend) error {
	var err error
	if s.original {
		_, err = s.p.c.s.InteractionResponseEdit(s.p.ix, webhookEdit(m), discordgo.WithContext(ctx))
	} else {
		_, err = s.p.c.s.ChannelMessageEditComplex(messageEdit(s.channel, s.message, m), discordgo.WithContext(ctx))
	}
	if err != nil {
		return fmt.Errorf("discord: edit the answer being written: %w", clean(err))
	}
	return nil
}

// Finish replaces the provisional text with the reply (its first part;
// the rest follow as new messages).
func (s *stream) Finish(ctx context.Context, r bot.Reply) error {
	parts := s.p.c.render(r, s.t)
	if err := s.edit(ctx, parts[0]); err != nil {
		return err
	}
	rest := parts[1:]
	if len(rest) == 0 {
		return nil
	}
	if s.original {
		var errs []error
		for _, m := range rest {
			if _, err := s.p.c.s.FollowupMessageCreate(s.p.ix, true, webhookParams(m, 0), discordgo.WithContext(ctx)); err != nil {
				errs = append(errs, clean(err))
			}
		}
		if err := errors.Join(errs...); err != nil {
			return fmt.Errorf("discord: finish the answer: %w", err)
		}
		return nil
	}
	return s.p.c.send(ctx, s.channel, s.ref, rest)
}
