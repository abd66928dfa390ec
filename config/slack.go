package config

import (
	"fmt"
	"slices"
	"strings"
)

// Slack connection modes.
const (
	// SlackSocket is Socket Mode: docent dials Slack (the app-level token
	// opens the connection), so no public URL is needed.
	SlackSocket = "socket"
	// SlackHTTP is the Events API over HTTP: Slack posts events to
	// server.public_url/slack/events and button presses to
	// /slack/interactions, signed with the signing secret.
	SlackHTTP = "http"
)

// Follow-up policies: which messages in a thread the bot answers without
// a mention (see bot.FollowUps).
const (
	FollowQuestions = "questions"
	FollowReplies   = "replies"
	FollowAll       = "all"
)

// SlackConfig connects docent to a Slack workspace (bot/slack). It is on
// when BotToken is set.
type SlackConfig struct {
	// Mode is SlackSocket (the default) or SlackHTTP.
	Mode string `yaml:"mode"`
	// APIURL is the Web API base, https://slack.com/api/ by default;
	// override it for a proxy or a local test server. Socket Mode's
	// websocket URL comes from apps.connections.open there.
	APIURL string `yaml:"api_url"`
	// BotToken (xoxb-…) calls the Web API (secret).
	BotToken string `yaml:"bot_token,omitempty" secret:"true"`
	// AppToken (xapp-…, scope connections:write) opens Socket Mode
	// connections; required in socket mode (secret).
	AppToken string `yaml:"app_token,omitempty" secret:"true"`
	// SigningSecret verifies the requests Slack sends in http mode
	// (secret).
	SigningSecret string `yaml:"signing_secret,omitempty" secret:"true"`
	// EscalationChannel is the channel ID handoffs are posted to, with
	// Claim and Resolve buttons; empty posts them in the asker's thread.
	EscalationChannel string `yaml:"escalation_channel,omitempty"`
	// UserGroup is the user group ID (S…) a handoff mentions.
	UserGroup string `yaml:"user_group,omitempty"`
	// GroupName names who a handoff asks ("the IT team") in the notice
	// the asker gets.
	GroupName string `yaml:"group_name,omitempty"`
	// FollowUps is FollowQuestions, FollowReplies or FollowAll.
	FollowUps string `yaml:"follow_ups"`
	// History is how many earlier turns of a thread make a follow-up
	// standalone.
	History int `yaml:"history"`
	// UserRate and ChannelRate bound questions per minute, per person and
	// per channel.
	UserRate    float64 `yaml:"user_rate"`
	ChannelRate float64 `yaml:"channel_rate"`
	// Reaction is the emoji name put on a question while it is being
	// answered ("eyes"); "off" for none.
	Reaction string `yaml:"reaction"`
	// Default is what the bot does in DMs and in channels not listed.
	Default SlackChannelConfig `yaml:"default"`
	// Channels configure channels by ID.
	Channels []SlackChannelConfig `yaml:"channels,omitempty"`
	// Assistant configures Slack's AI-app surface (assistant threads).
	Assistant SlackAssistantConfig `yaml:"assistant"`
}

// SlackChannelConfig is what the bot does in one channel.
type SlackChannelConfig struct {
	// ID is the channel ID (C…); unused in slack.default.
	ID string `yaml:"id,omitempty"`
	// Sources and Labels limit what the channel's answers may cite; empty
	// means everything. A public channel must list only public sources.
	Sources []string `yaml:"sources,omitempty"`
	Labels  []string `yaml:"labels,omitempty"`
	// AutoAnswer answers new messages that read as questions without a
	// mention (a help channel).
	AutoAnswer bool `yaml:"auto_answer,omitempty"`
}

// SlackAssistantConfig configures assistant threads: the suggested
// prompts shown when one starts, and the status shown while answering.
type SlackAssistantConfig struct {
	// Status is shown while a question is being answered.
	Status string `yaml:"status"`
	// PromptsTitle heads the suggested prompts.
	PromptsTitle string `yaml:"prompts_title"`
	// Prompts are offered when an assistant thread starts (at most 4).
	Prompts []SlackPrompt `yaml:"prompts,omitempty"`
}

// SlackPrompt is one suggested prompt: a short title, and the message it
// sends.
type SlackPrompt struct {
	Title   string `yaml:"title"`
	Message string `yaml:"message"`
}

// Enabled reports whether Slack is configured.
func (s SlackConfig) Enabled() bool { return s.BotToken != "" }

// defaultSlack is the Slack section's defaults (off: no token).
func defaultSlack() SlackConfig {
	return SlackConfig{
		Mode:        SlackSocket,
		APIURL:      "https://slack.com/api/",
		FollowUps:   FollowQuestions,
		History:     3,
		UserRate:    10,
		ChannelRate: 60,
		Reaction:    "eyes",
		Assistant: SlackAssistantConfig{
			Status:       "Searching the docs…",
			PromptsTitle: "Ask me about the docs",
			Prompts: []SlackPrompt{
				{Title: "Getting started", Message: "Where should a new starter begin?"},
				{Title: "Find a policy", Message: "What is the expense policy?"},
				{Title: "Fix a problem", Message: "How do I reset my password?"},
			},
		},
	}
}

// clone returns a copy of s that shares no slice with it.
func (s SlackConfig) clone() SlackConfig {
	cloneChannel := func(c SlackChannelConfig) SlackChannelConfig {
		c.Sources, c.Labels = slices.Clone(c.Sources), slices.Clone(c.Labels)
		return c
	}
	out := s
	out.Default = cloneChannel(s.Default)
	out.Channels = nil
	for _, c := range s.Channels {
		out.Channels = append(out.Channels, cloneChannel(c))
	}
	out.Assistant.Prompts = slices.Clone(s.Assistant.Prompts)
	return out
}

// validateSlack checks the slack section; sources are the configured
// source names a channel's scope may name.
func (c Config) validateSlack(bad func(key, format string, args ...any)) {
	s := c.Slack
	if !s.Enabled() {
		for _, f := range []struct {
			key string
			set bool
		}{
			{"slack.app_token", s.AppToken != ""}, {"slack.signing_secret", s.SigningSecret != ""},
			{"slack.escalation_channel", s.EscalationChannel != ""}, {"slack.channels", len(s.Channels) > 0},
		} {
			if f.set {
				bad(f.key, "set, but slack.bot_token is not: Slack is on only with a bot token")
			}
		}
		return
	}
	if !strings.HasPrefix(s.BotToken, "xoxb-") {
		bad("slack.bot_token", "must be a bot token (xoxb-…)")
	}
	switch s.Mode {
	case SlackSocket:
		if s.AppToken == "" {
			bad("slack.app_token", "required in socket mode (an app-level token, xapp-…, with connections:write)")
		} else if !strings.HasPrefix(s.AppToken, "xapp-") {
			bad("slack.app_token", "must be an app-level token (xapp-…)")
		}
	case SlackHTTP:
		if s.SigningSecret == "" {
			bad("slack.signing_secret", "required in http mode (Basic Information › Signing Secret)")
		}
	default:
		bad("slack.mode", "unknown mode %q (want socket or http)", s.Mode)
	}
	checkURL("slack.api_url", s.APIURL, bad)
	switch s.FollowUps {
	case FollowQuestions, FollowReplies, FollowAll:
	default:
		bad("slack.follow_ups", "unknown policy %q (want questions, replies or all)", s.FollowUps)
	}
	if s.History < 0 {
		bad("slack.history", "must be >= 0, got %d", s.History)
	}
	if s.UserRate < 0 {
		bad("slack.user_rate", "must be >= 0, got %g", s.UserRate)
	}
	if s.ChannelRate < 0 {
		bad("slack.channel_rate", "must be >= 0, got %g", s.ChannelRate)
	}
	if s.Reaction == "" || strings.ContainsAny(s.Reaction, ": ") {
		bad("slack.reaction", "want an emoji name without colons (eyes), or off; got %q", s.Reaction)
	}
	c.validateSlackChannel("slack.default", s.Default, bad)
	seen := map[string]int{}
	for i, ch := range s.Channels {
		key := fmt.Sprintf("slack.channels[%d]", i)
		if ch.ID == "" {
			bad(key+".id", "must not be empty (the channel ID, C…)")
		} else if j, dup := seen[ch.ID]; dup {
			bad(key+".id", "%q is already configured by slack.channels[%d]", ch.ID, j)
		} else {
			seen[ch.ID] = i
		}
		c.validateSlackChannel(key, ch, bad)
	}
	a := s.Assistant
	if len(a.Prompts) > 4 {
		bad("slack.assistant.prompts", "at most 4 suggested prompts, got %d", len(a.Prompts))
	}
	for i, p := range a.Prompts {
		if p.Title == "" || p.Message == "" {
			bad(fmt.Sprintf("slack.assistant.prompts[%d]", i), "needs a title and a message")
		}
	}
}

func (c Config) validateSlackChannel(key string, ch SlackChannelConfig, bad func(key, format string, args ...any)) {
	if key == "slack.default" && ch.ID != "" {
		bad(key+".id", "not allowed: the default applies to every channel not listed in slack.channels")
	}
	for _, name := range ch.Sources {
		if !slices.ContainsFunc(c.Sources, func(s SourceConfig) bool { return s.Name == name }) {
			bad(key+".sources", "unknown source %q (configured: %s)", name, strings.Join(c.sourceNames(), ", "))
		}
	}
}

// sourceNames lists the configured source names.
func (c Config) sourceNames() []string {
	var out []string
	for _, s := range c.Sources {
		out = append(out, s.Name)
	}
	return out
}
