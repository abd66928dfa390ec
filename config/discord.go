package config

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// DiscordConfig connects docent to Discord (bot/discord). It is on when
// Token is set.
type DiscordConfig struct {
	// Token is the bot token (developer portal › Bot › Reset Token),
	// without the "Bot " prefix (secret).
	Token string `yaml:"token,omitempty" secret:"true"`
	// APIURL is the REST API base, https://discord.com/api/v10 by default;
	// override it for a proxy or a local test server. The gateway URL
	// comes from GET {api_url}/gateway/bot.
	APIURL string `yaml:"api_url"`
	// ApplicationID is the application's ID; empty takes it from the
	// gateway's READY.
	ApplicationID string `yaml:"application_id,omitempty"`
	// PublicKey is the application's Ed25519 public key (General
	// Information › Public Key, 64 hex digits). When set, docent accepts
	// interactions at server.public_url + /discord/interactions, verified
	// with it: set that as the Interactions Endpoint URL.
	PublicKey string `yaml:"public_key,omitempty"`
	// EscalationChannel is the staff channel ID handoffs are posted to,
	// with Claim and Resolve buttons; empty posts them in the thread.
	EscalationChannel string `yaml:"escalation_channel,omitempty"`
	// EscalationRole is the role ID a handoff pings (in the thread and in
	// the staff channel); make the role mentionable.
	EscalationRole string `yaml:"escalation_role,omitempty"`
	// GroupName names who a handoff asks ("the support team") in the
	// notice the asker gets.
	GroupName string `yaml:"group_name,omitempty"`
	// Command is the slash command's name ("ask": /ask).
	Command string `yaml:"command"`
	// FollowUps says which messages in a thread the bot answers without a
	// mention: questions (they read as one, or reply to the bot),
	// replies (only replies to the bot) or all.
	FollowUps string `yaml:"follow_ups"`
	// History is how many earlier turns of a thread make a follow-up
	// standalone.
	History int `yaml:"history"`
	// UserRate and ChannelRate bound questions per minute, per person and
	// per channel.
	UserRate    float64 `yaml:"user_rate"`
	ChannelRate float64 `yaml:"channel_rate"`
	// Default is what the bot does in DMs and in channels not listed.
	Default DiscordChannelConfig `yaml:"default"`
	// Channels configure text and forum channels by ID (a thread follows
	// its channel).
	Channels []DiscordChannelConfig `yaml:"channels,omitempty"`
}

// DiscordChannelConfig is what the bot does in one channel or forum.
type DiscordChannelConfig struct {
	// ID is the channel's ID; unused in discord.default.
	ID string `yaml:"id,omitempty"`
	// Sources and Labels limit what the channel's answers may cite; empty
	// means everything. A public channel must list only public sources.
	Sources []string `yaml:"sources,omitempty"`
	Labels  []string `yaml:"labels,omitempty"`
	// AutoAnswer answers new messages that read as questions without a
	// mention (a help channel), and every new post in a forum.
	AutoAnswer bool `yaml:"auto_answer,omitempty"`
	// Reply is the reply style for a question asked in the channel:
	// "thread" (the default) starts a thread for the answer; "inline"
	// answers as a reply in the channel, and a reply to the answer
	// follows up. Threads and forum posts are always answered in place.
	Reply string `yaml:"reply,omitempty"`
	// Tags, on a forum, tags its posts as they move: answered by docent,
	// handed to a person, solved (the asker's ✅ or "solved", a ✅ by a
	// holder of escalation_role, or the handoff resolved; docent then
	// answers there only when mentioned). Names left empty are the
	// defaults; tags the forum lacks are created when the bot may manage
	// the forum. "tags: {}" turns it on with the default names.
	Tags *DiscordForumTags `yaml:"tags,omitempty"`
}

// DiscordForumTags names a forum's lifecycle tags.
type DiscordForumTags struct {
	// Answered: docent answered the post ("Answered").
	Answered string `yaml:"answered,omitempty"`
	// Handoff: a person was asked for ("Needs a human").
	Handoff string `yaml:"handoff,omitempty"`
	// Solved: the asker (or staff) marked it solved ("Solved").
	Solved string `yaml:"solved,omitempty"`
}

// WithDefaults returns the names with the empty ones defaulted.
func (t DiscordForumTags) WithDefaults() DiscordForumTags {
	for _, f := range []struct {
		v   *string
		def string
	}{{&t.Answered, "Answered"}, {&t.Handoff, "Needs a human"}, {&t.Solved, "Solved"}} {
		if *f.v == "" {
			*f.v = f.def
		}
	}
	return t
}

// Enabled reports whether Discord is configured.
func (d DiscordConfig) Enabled() bool { return d.Token != "" }

// defaultDiscord is the Discord section's defaults (off: no token).
func defaultDiscord() DiscordConfig {
	return DiscordConfig{APIURL: "https://discord.com/api/v10", Command: "ask", FollowUps: "questions",
		History: 3, UserRate: 10, ChannelRate: 60}
}

// clone returns a copy of d that shares no slice with it.
func (d DiscordConfig) clone() DiscordConfig {
	cp := func(c DiscordChannelConfig) DiscordChannelConfig {
		c.Sources, c.Labels = slices.Clone(c.Sources), slices.Clone(c.Labels)
		if c.Tags != nil {
			t := *c.Tags
			c.Tags = &t
		}
		return c
	}
	out := d
	out.Default = cp(d.Default)
	out.Channels = nil
	for _, c := range d.Channels {
		out.Channels = append(out.Channels, cp(c))
	}
	return out
}

var (
	snowflake   = regexp.MustCompile(`^[0-9]{1,20}$`)
	commandName = regexp.MustCompile(`^[-_a-z0-9]{1,32}$`)
	hexKey      = regexp.MustCompile(`^[0-9a-fA-F]{64}$`)
)

func (c Config) validateDiscord(bad func(key, format string, args ...any)) {
	d := c.Discord
	if !d.Enabled() {
		for _, f := range []struct {
			key string
			set bool
		}{
			{"discord.application_id", d.ApplicationID != ""}, {"discord.public_key", d.PublicKey != ""},
			{"discord.escalation_channel", d.EscalationChannel != ""}, {"discord.escalation_role", d.EscalationRole != ""},
			{"discord.channels", len(d.Channels) > 0},
		} {
			if f.set {
				bad(f.key, "set, but discord.token is not: Discord is on only with a bot token")
			}
		}
		return
	}
	switch {
	case strings.HasPrefix(d.Token, "Bot "):
		bad("discord.token", `give the token alone, without the "Bot " prefix`)
	case strings.ContainsAny(d.Token, " \t\r\n"):
		bad("discord.token", "must not contain spaces")
	}
	checkURL("discord.api_url", d.APIURL, bad)
	for _, id := range []struct{ key, value string }{
		{"discord.application_id", d.ApplicationID}, {"discord.escalation_channel", d.EscalationChannel},
		{"discord.escalation_role", d.EscalationRole},
	} {
		if id.value != "" && !snowflake.MatchString(id.value) {
			bad(id.key, "want a Discord ID (digits; Developer Mode › Copy ID), got %q", id.value)
		}
	}
	if d.PublicKey != "" && !hexKey.MatchString(d.PublicKey) {
		bad("discord.public_key", "want the application's public key: 64 hex digits")
	}
	if !commandName.MatchString(d.Command) {
		bad("discord.command", "want 1-32 lowercase letters, digits, - or _, got %q", d.Command)
	}
	if !slices.Contains([]string{"questions", "replies", "all"}, d.FollowUps) {
		bad("discord.follow_ups", "unknown policy %q (want questions, replies or all)", d.FollowUps)
	}
	if d.History < 0 {
		bad("discord.history", "must be >= 0, got %d", d.History)
	}
	if d.UserRate < 0 {
		bad("discord.user_rate", "must be >= 0, got %g", d.UserRate)
	}
	if d.ChannelRate < 0 {
		bad("discord.channel_rate", "must be >= 0, got %g", d.ChannelRate)
	}
	if d.Default.ID != "" {
		bad("discord.default.id", "not allowed: the default applies to every channel not listed in discord.channels")
	}
	if d.Default.Tags != nil {
		bad("discord.default.tags", "not allowed: tags belong to a forum, listed in discord.channels by its ID")
	}
	c.validateDiscordScope("discord.default", d.Default, bad)
	seen := map[string]int{}
	for i, ch := range d.Channels {
		key := fmt.Sprintf("discord.channels[%d]", i)
		switch j, dup := seen[ch.ID]; {
		case ch.ID == "":
			bad(key+".id", "must not be empty (the channel's ID)")
		case !snowflake.MatchString(ch.ID):
			bad(key+".id", "want a Discord channel ID (digits), got %q", ch.ID)
		case dup:
			bad(key+".id", "%q is already configured by discord.channels[%d]", ch.ID, j)
		default:
			seen[ch.ID] = i
		}
		c.validateDiscordScope(key, ch, bad)
		if ch.Tags != nil {
			tags := ch.Tags.WithDefaults()
			names := []string{tags.Answered, tags.Handoff, tags.Solved}
			for j, n := range names {
				if len([]rune(n)) > 20 {
					bad(key+".tags", "tag %q is longer than Discord's 20 characters", n)
				}
				if slices.Contains(names[:j], n) {
					bad(key+".tags", "tag %q is named twice: each state needs its own", n)
				}
			}
		}
	}
}

// validateDiscordScope checks a channel's reply style and that its
// sources are configured.
func (c Config) validateDiscordScope(key string, ch DiscordChannelConfig, bad func(key, format string, args ...any)) {
	if !slices.Contains([]string{"", "thread", "inline"}, ch.Reply) {
		bad(key+".reply", "unknown reply style %q (want thread or inline)", ch.Reply)
	}
	var names []string
	for _, s := range c.Sources {
		names = append(names, s.Name)
	}
	for _, name := range ch.Sources {
		if !slices.Contains(names, name) {
			bad(key+".sources", "unknown source %q (configured: %s)", name, strings.Join(names, ", "))
		}
	}
}
