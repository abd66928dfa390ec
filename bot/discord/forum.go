package discord

import (
	"context"
	"log/slog"
	"regexp"
	"slices"

	"github.com/bwmarrin/discordgo"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/bot"
)

// ForumTags names the tags a forum's posts carry as they move: answered
// by the bot, handed to a person, solved. Each post carries at most one
// of them; the post's other tags are left alone.
type ForumTags struct {
	Answered, Handoff, Solved string
}

// Default forum tag names.
const (
	DefaultTagAnswered = "Answered"
	DefaultTagHandoff  = "Needs a human"
	DefaultTagSolved   = "Solved"
)

func (f ForumTags) names() []string {
	var out []string
	for _, n := range []string{f.Answered, f.Handoff, f.Solved} {
		if n != "" && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// solvedText is the asker saying the post is solved: "solved",
// "[Solved]", "solved, thanks!".
var solvedText = regexp.MustCompile(`(?i)^\W*\[?solved\]?(\W.*)?$`)

// solvedEmoji are the reactions that mark a post solved.
var solvedEmoji = []string{"✅", "✔️", "☑️"}

// forumPost returns the tags of the forum t is a post in, when that
// forum is configured with tags.
func (c *Client) forumPost(t bot.Thread) (ForumTags, bool) {
	tags, ok := c.cfg.Forums[t.Channel]
	return tags, ok && t.ID != t.Channel
}

// tagIDs returns a forum's tag IDs by name, creating the configured tags
// it lacks; without Manage Channels, the ones it has. Asked once per
// forum.
func (c *Client) tagIDs(ctx context.Context, forumID string) map[string]string {
	c.tagMu.Lock()
	defer c.tagMu.Unlock()
	if ids, ok := c.tags[forumID]; ok {
		return ids
	}
	ch, err := c.s.Channel(forumID, discordgo.WithContext(ctx))
	if err != nil {
		c.log.WarnContext(ctx, "discord: read a forum's tags", slog.String("forum", forumID), slog.Any("error", clean(err)))
		return nil // asked again next time
	}
	ids := func(ch *discordgo.Channel) map[string]string {
		m := map[string]string{}
		for _, t := range ch.AvailableTags {
			m[t.Name] = t.ID
		}
		return m
	}
	have := ids(ch)
	tags := slices.Clone(ch.AvailableTags)
	for _, n := range c.cfg.Forums[forumID].names() {
		if _, ok := have[n]; !ok {
			tags = append(tags, discordgo.ForumTag{Name: n})
		}
	}
	if len(tags) > len(ch.AvailableTags) {
		edited, err := c.s.ChannelEditComplex(forumID, &discordgo.ChannelEdit{AvailableTags: &tags}, discordgo.WithContext(ctx))
		if err != nil {
			c.log.WarnContext(ctx, "discord: cannot create the forum's tags (the bot needs Manage Channels there); using those it has",
				slog.String("forum", forumID), slog.Any("error", clean(err)))
		} else {
			have = ids(edited)
		}
	}
	c.tags[forumID] = have
	return have
}

// tagPost moves forum post t to the tag named state, replacing the
// other lifecycle tags. keep lists lifecycle tags that state does not
// replace (an answer does not undo "Solved").
func (c *Client) tagPost(ctx context.Context, t bot.Thread, state string, keep ...string) {
	tags, ok := c.forumPost(t)
	if !ok || state == "" {
		return
	}
	ids := c.tagIDs(ctx, t.Channel)
	id, ok := ids[state]
	if !ok {
		return
	}
	post, err := c.s.Channel(t.ID, discordgo.WithContext(ctx))
	if err != nil {
		c.log.WarnContext(ctx, "discord: read a forum post's tags", slog.String("post", t.ID), slog.Any("error", clean(err)))
		return
	}
	lifecycle := map[string]bool{}
	for _, n := range tags.names() {
		lifecycle[ids[n]] = true
	}
	for _, n := range keep {
		if slices.Contains(post.AppliedTags, ids[n]) {
			return
		}
	}
	var applied []string
	for _, a := range post.AppliedTags {
		if !lifecycle[a] {
			applied = append(applied, a)
		}
	}
	if len(applied) >= 5 { // Discord's limit: the lifecycle tag takes the last place
		applied = applied[:4]
	}
	applied = append(applied, id)
	if slices.Equal(applied, post.AppliedTags) {
		return
	}
	edited, err := c.s.ChannelEditComplex(t.ID, &discordgo.ChannelEdit{AppliedTags: &applied}, discordgo.WithContext(ctx))
	if err != nil {
		c.log.WarnContext(ctx, "discord: tag a forum post", slog.String("post", t.ID), slog.String("tag", state), slog.Any("error", clean(err)))
		return
	}
	c.remember(edited)
}

// tagReply applies the tag a reply moves a forum post to: an answer
// "Answered" (unless solved or handed off meanwhile), a handoff "Needs a
// human".
func (c *Client) tagReply(ctx context.Context, t bot.Thread, kind bot.ReplyKind) {
	tags, ok := c.forumPost(t)
	if !ok {
		return
	}
	switch kind {
	case bot.ReplyAnswer:
		c.tagPost(ctx, t, tags.Answered, tags.Solved, tags.Handoff)
	case bot.ReplyHandoff:
		c.tagPost(ctx, t, tags.Handoff, tags.Solved)
	}
}

// solved reports whether forum post t carries its "Solved" tag (from the
// channel cache, which every THREAD_UPDATE refreshes).
func (c *Client) solved(t bot.Thread) bool {
	tags, ok := c.forumPost(t)
	if !ok || tags.Solved == "" {
		return false
	}
	c.tagMu.Lock()
	id, known := c.tags[t.Channel][tags.Solved]
	c.tagMu.Unlock()
	c.chanMu.Lock()
	info := c.channels[t.ID]
	c.chanMu.Unlock()
	return known && slices.Contains(info.appliedTags, id)
}

// Resolutions records how forum posts were solved; store.DB implements
// it. A post's first resolution stands: recorded reports false for a
// later one.
type Resolutions interface {
	RecordForumResolution(ctx context.Context, r docent.ForumResolution) (recorded bool, err error)
}

// markSolved closes the bot's part in forum post t: the "Solved" tag,
// after which the bot answers there only when mentioned, and the
// resolution recorded. by is who marked it, how the way.
func (c *Client) markSolved(ctx context.Context, t bot.Thread, by string, how docent.ResolutionHow) {
	tags, ok := c.forumPost(t)
	if !ok {
		return
	}
	c.tagPost(ctx, t, tags.Solved)
	c.log.InfoContext(ctx, "discord: forum post solved", slog.String("forum", t.Channel), slog.String("post", t.ID),
		slog.String("by", by), slog.String("how", string(how)))
	if c.cfg.Resolutions == nil {
		return
	}
	r := docent.ForumResolution{Platform: Platform, Forum: t.Channel, Thread: t.ID, How: how, By: by}
	if forum, err := c.channel(ctx, t.Channel); err == nil {
		r.ForumName = forum.name
	}
	if _, err := c.cfg.Resolutions.RecordForumResolution(ctx, r); err != nil {
		c.log.ErrorContext(ctx, "discord: record a forum post's resolution", slog.String("post", t.ID), slog.Any("error", err))
	}
}

// onReaction marks a forum post solved when its asker, or a holder of
// the escalation role (marking a reply as the answer), reacts with ✅.
func (c *Client) onReaction(ctx context.Context, r *discordgo.MessageReaction, member *discordgo.Member) {
	if r.GuildID == "" || !slices.Contains(solvedEmoji, r.Emoji.Name) || r.UserID == c.me() {
		return
	}
	ch, err := c.channel(ctx, r.ChannelID)
	if err != nil || !ch.thread() {
		return
	}
	t := bot.Thread{Platform: Platform, Channel: ch.parentID, ID: r.ChannelID}
	if _, ok := c.forumPost(t); !ok {
		return
	}
	staff := c.cfg.EscalationRole != "" && member != nil && slices.Contains(member.Roles, c.cfg.EscalationRole)
	if r.UserID != ch.ownerID && !staff {
		return
	}
	how := docent.ResolvedAskerReaction
	if r.UserID != ch.ownerID {
		how = docent.ResolvedStaffReaction
	}
	c.markSolved(ctx, t, r.UserID, how)
}
