package slack

import (
	"context"
	"encoding/json"
	"html"
	"log/slog"
	"regexp"
	"strings"

	slackapi "github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"

	"github.com/docent-hq/docent/bot"
)

// handleEvent carries out one Events API event_callback: messages and
// mentions go to the core; a new assistant thread gets suggested prompts.
func (c *Client) handleEvent(ctx context.Context, ev slackevents.EventsAPIEvent) {
	switch e := ev.InnerEvent.Data.(type) {
	case *slackevents.AppMentionEvent:
		c.handleMessage(ctx, incoming{channel: e.Channel, user: e.User, botID: e.BotID, text: e.Text,
			ts: e.TimeStamp, threadTS: e.ThreadTimeStamp, mention: true, edited: e.Edited != nil})
	case *slackevents.MessageEvent:
		if !answerable(e.SubType) {
			return
		}
		in := incoming{channel: e.Channel, channelType: e.ChannelType, user: e.User, botID: e.BotID, text: e.Text,
			ts: e.TimeStamp, threadTS: e.ThreadTimeStamp}
		if e.Message != nil {
			in.parentUser = e.Message.ParentUserId
		}
		c.handleMessage(ctx, in)
	case *slackevents.AssistantThreadStartedEvent:
		c.suggestPrompts(ctx, e.AssistantThread)
	}
}

// answerable reports whether a message subtype is something a person
// wrote: a plain message, one with files, or a thread reply also sent to
// the channel. Edits, deletions, joins and bot messages are not.
func answerable(subtype string) bool {
	switch subtype {
	case "", "file_share", "thread_broadcast":
		return true
	}
	return false
}

// incoming is a message event's fields that matter here.
type incoming struct {
	channel, channelType, user, botID, text, ts, threadTS, parentUser string
	mention, edited                                                   bool
}

func (c *Client) handleMessage(ctx context.Context, in incoming) {
	if in.edited {
		return // an edited mention is not a new question
	}
	m := c.message(in)
	p := &poster{c: c, user: in.user, questionTS: in.ts, assistant: m.Direct && !m.TopLevel}
	if err := c.core.HandleMessage(ctx, m, p); err != nil {
		c.log.ErrorContext(ctx, "handle message", slog.String("channel", in.channel), slog.String("ts", in.ts),
			slog.Any("error", err))
	}
}

// message turns a Slack message into the core's Message. A message is
// identified by its channel and ts, not by event_id: Slack delivers a
// mention twice (app_mention, and message.* to an app that reads the
// channel) under two event IDs, and retries under the same one; keying
// on the message answers it once either way.
func (c *Client) message(in incoming) bot.Message {
	direct := in.channelType == slackevents.ChannelTypeIM || (in.channelType == "" && strings.HasPrefix(in.channel, "D"))
	thread := in.threadTS
	if thread == "" {
		thread = in.ts
	}
	text, mentioned := c.clean(in.text)
	return bot.Message{
		EventID:    in.channel + "/" + in.ts,
		Thread:     bot.Thread{Platform: "slack", Channel: in.channel, ID: thread},
		User:       in.user,
		Text:       text,
		Mentioned:  in.mention || mentioned,
		Direct:     direct,
		TopLevel:   in.threadTS == "" || in.threadTS == in.ts,
		ReplyToBot: in.parentUser != "" && in.parentUser == c.botUser,
		FromBot:    in.botID != "" || (c.botUser != "" && in.user == c.botUser) || in.user == "",
	}
}

var entity = regexp.MustCompile(`<([^<>]*)>`)

// clean turns Slack's message text into the question: the bot's mention
// removed (reporting whether there was one), links and channel names as
// people read them, and &amp; &lt; &gt; unescaped.
func (c *Client) clean(text string) (string, bool) {
	mentioned := false
	text = entity.ReplaceAllStringFunc(text, func(e string) string {
		body := e[1 : len(e)-1]
		target, label, _ := strings.Cut(body, "|")
		switch {
		case strings.HasPrefix(target, "@"):
			if c.botUser != "" && target[1:] == c.botUser {
				mentioned = true
				return ""
			}
			return "@" + orDefault(label, target[1:])
		case strings.HasPrefix(target, "#"):
			return "#" + orDefault(label, target[1:])
		case strings.HasPrefix(target, "!"):
			name, _, _ := strings.Cut(target[1:], "^")
			return "@" + orDefault(label, name)
		}
		return orDefault(label, target)
	})
	return strings.Join(strings.Fields(html.UnescapeString(text)), " "), mentioned
}

// suggestPrompts offers the configured prompts in a new assistant thread.
func (c *Client) suggestPrompts(ctx context.Context, t slackevents.AssistantThread) {
	if len(c.opts.Prompts) == 0 {
		return
	}
	params := slackapi.AssistantThreadsSetSuggestedPromptsParameters{Title: c.opts.PromptsTitle,
		ChannelID: t.ChannelID, ThreadTS: t.ThreadTimeStamp}
	for _, p := range c.opts.Prompts {
		params.AddPrompt(p.Title, p.Message)
	}
	err := c.call(ctx, "assistant.threads.setSuggestedPrompts", func(ctx context.Context) error {
		return c.api.SetAssistantThreadsSuggestedPromptsContext(ctx, params)
	})
	if err != nil {
		c.log.WarnContext(ctx, "suggest prompts", slog.String("channel", t.ChannelID), slog.Any("error", err))
	}
}

// handleInteraction carries out a button press or a modal's submission.
func (c *Client) handleInteraction(ctx context.Context, cb slackapi.InteractionCallback) {
	switch cb.Type {
	case slackapi.InteractionTypeBlockActions:
		for _, a := range cb.ActionCallback.BlockActions {
			c.handleButton(ctx, cb, a)
		}
	case slackapi.InteractionTypeViewSubmission, slackapi.InteractionTypeViewClosed:
		if cb.View.CallbackID != callbackReason {
			return
		}
		var v buttonValue
		if err := json.Unmarshal([]byte(cb.View.PrivateMetadata), &v); err != nil {
			c.log.WarnContext(ctx, "feedback modal without its answer", slog.Any("error", err))
			return
		}
		reason := ""
		if cb.Type == slackapi.InteractionTypeViewSubmission && cb.View.State != nil {
			reason = strings.TrimSpace(cb.View.State.Values[blockReason][actionReason].Value)
		}
		c.act(ctx, bot.Action{Kind: bot.ActionNotHelpful, Thread: slackThread(v.Channel, v.Thread), TurnID: v.Turn,
			User: cb.User.ID, Reason: reason}, &poster{c: c, user: cb.User.ID})
	}
}

func (c *Client) handleButton(ctx context.Context, cb slackapi.InteractionCallback, a *slackapi.BlockAction) {
	kind, ok := strings.CutPrefix(a.ActionID, actionPrefix)
	if !ok {
		return
	}
	var v buttonValue
	if err := json.Unmarshal([]byte(a.Value), &v); err != nil {
		c.log.WarnContext(ctx, "button without a readable value", slog.String("action", a.ActionID), slog.Any("error", err))
		return
	}
	channel := orDefault(cb.Channel.ID, cb.Container.ChannelID)
	p := &poster{c: c, user: cb.User.ID, pressed: &cb.Message, pressedIn: channel}
	act := bot.Action{Kind: bot.ActionKind(kind), Thread: slackThread(channel, v.Thread), TurnID: v.Turn,
		HandoffID: v.Handoff, User: cb.User.ID}
	if act.Kind == bot.ActionNotHelpful && cb.TriggerID != "" {
		// Ask why (optional); the feedback is stored when the modal is
		// sent or closed. Without a modal it is stored now, reasonless.
		v.Channel = channel
		err := c.call(ctx, "views.open", func(ctx context.Context) error {
			_, err := c.api.OpenViewContext(ctx, cb.TriggerID, reasonModal(v))
			return err
		})
		if err == nil {
			return
		}
		c.log.WarnContext(ctx, "open feedback modal", slog.Any("error", err))
	}
	c.act(ctx, act, p)
}

func (c *Client) act(ctx context.Context, a bot.Action, p *poster) {
	if err := c.core.HandleAction(ctx, a, p); err != nil {
		c.log.ErrorContext(ctx, "handle action", slog.String("action", string(a.Kind)), slog.Any("error", err))
	}
}

func slackThread(channel, ts string) bot.Thread {
	return bot.Thread{Platform: "slack", Channel: channel, ID: ts}
}
