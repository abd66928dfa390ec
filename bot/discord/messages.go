package discord

import (
	"context"
	"log/slog"
	"slices"
	"strings"

	"github.com/bwmarrin/discordgo"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/bot"
)

// Platform names Discord in threads, turns and handoffs.
const Platform = "discord"

// onMessage turns a message into a bot.Message for the core. The
// conversation is keyed by its root: a thread's ID (a thread started from
// a message, and a forum post, share the ID of their first message), a
// new channel message's own ID (the thread the answer starts will have
// it), or a DM channel's ID.
func (c *Client) onMessage(ctx context.Context, m *discordgo.Message) {
	me := c.me()
	if m.Author == nil || m.Author.ID == me || m.Author.Bot || m.WebhookID != "" {
		return
	}
	if m.Type != discordgo.MessageTypeDefault && m.Type != discordgo.MessageTypeReply {
		return // joins, pins, thread notices, command messages
	}
	msg := bot.Message{
		EventID:    m.ID,
		User:       m.Author.ID,
		Text:       stripMention(m.Content, me),
		Mentioned:  slices.ContainsFunc(m.Mentions, func(u *discordgo.User) bool { return u.ID == me }),
		ReplyToBot: m.ReferencedMessage != nil && m.ReferencedMessage.Author != nil && m.ReferencedMessage.Author.ID == me,
		// Holders of the escalation role answer for the team.
		Staff: c.cfg.EscalationRole != "" && m.Member != nil && slices.Contains(m.Member.Roles, c.cfg.EscalationRole),
	}
	if m.GuildID == "" {
		msg.Direct = true
		msg.Thread = bot.Thread{Platform: Platform, Channel: m.ChannelID, ID: m.ChannelID}
	} else {
		ch, err := c.channel(ctx, m.ChannelID)
		if err != nil {
			c.log.ErrorContext(ctx, "discord: message in an unknown channel", slog.String("message", m.ID), slog.Any("error", err))
			return
		}
		switch {
		case ch.thread():
			msg.Thread = bot.Thread{Platform: Platform, Channel: ch.parentID, ID: m.ChannelID}
			if m.ID == m.ChannelID { // the first message of a thread it opened: a forum post
				if parent, err := c.channel(ctx, ch.parentID); err == nil && parent.forum() {
					msg.TopLevel, msg.Post = true, true
					msg.Text = postText(ch.name, msg.Text)
				}
			}
		case c.cfg.Inline[m.ChannelID] && msg.ReplyToBot && m.ReferencedMessage.MessageReference != nil &&
			m.ReferencedMessage.MessageReference.MessageID != "":
			// A reply to an answer given inline continues its conversation:
			// every inline answer replies to the conversation's root.
			msg.Thread = bot.Thread{Platform: Platform, Channel: m.ChannelID, ID: m.ReferencedMessage.MessageReference.MessageID}
		default:
			msg.Thread = bot.Thread{Platform: Platform, Channel: m.ChannelID, ID: m.ID}
			msg.TopLevel = true
		}
	}
	if _, ok := c.forumPost(msg.Thread); ok && !msg.Direct {
		if !msg.Post && solvedText.MatchString(msg.Text) {
			if ch, err := c.channel(ctx, m.ChannelID); err == nil && (ch.ownerID == msg.User || msg.Staff) {
				how := docent.ResolvedAskerSaid
				if ch.ownerID != msg.User {
					how = docent.ResolvedStaffSaid
				}
				c.markSolved(ctx, msg.Thread, msg.User, how)
				return
			}
		}
		if !msg.Mentioned && c.solved(msg.Thread) {
			return // solved: the bot's part is over unless it is asked again
		}
	}
	p := &poster{c: c, question: msg.Text}
	if err := c.core.HandleMessage(ctx, msg, p); err != nil {
		c.log.ErrorContext(ctx, "discord: handle message", slog.String("message", m.ID),
			slog.String("thread", msg.Thread.ID), slog.Any("error", err))
	}
}

// stripMention removes mentions of the bot from a message.
func stripMention(text, me string) string {
	if me != "" {
		text = strings.NewReplacer("<@"+me+">", "", "<@!"+me+">", "").Replace(text)
	}
	return strings.TrimSpace(text)
}

// postText is a forum post's question: its title, then its body (when
// the body does not already say it).
func postText(title, body string) string {
	title, body = strings.TrimSpace(title), strings.TrimSpace(body)
	switch {
	case body == "":
		return title
	case title == "" || strings.Contains(strings.ToLower(body), strings.ToLower(title)):
		return body
	}
	return title + "\n" + body
}
