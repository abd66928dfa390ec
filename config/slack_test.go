package config

import (
	"bytes"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
)

// slackOn returns a mutation that turns Slack on in socket mode, then
// applies more.
func slackOn(more func(s *SlackConfig)) func(*Config) {
	return func(c *Config) {
		c.Slack.BotToken, c.Slack.AppToken = "xoxb-1", "xapp-1"
		if more != nil {
			more(&c.Slack)
		}
	}
}

func TestValidateSlack(t *testing.T) {
	runValidateCases(t, []validateCase{
		{"off by default", func(*Config) {}, "", ""},
		{"socket mode with both tokens", slackOn(nil), "", ""},
		{"socket mode needs the app token", slackOn(func(s *SlackConfig) { s.AppToken = "" }), "slack.app_token", "required in socket mode"},
		{"app token swapped for a bot token", slackOn(func(s *SlackConfig) { s.AppToken = "xoxb-2" }), "slack.app_token", "app-level token"},
		{"bot token swapped for a user token", slackOn(func(s *SlackConfig) { s.BotToken = "xoxp-2" }), "slack.bot_token", "bot token (xoxb-"},
		{"http mode needs the signing secret", slackOn(func(s *SlackConfig) { s.Mode = SlackHTTP; s.AppToken = "" }),
			"slack.signing_secret", "required in http mode"},
		{"http mode with a signing secret", slackOn(func(s *SlackConfig) { s.Mode = SlackHTTP; s.AppToken = ""; s.SigningSecret = "x" }), "", ""},
		{"unknown mode", slackOn(func(s *SlackConfig) { s.Mode = "rtm" }), "slack.mode", `unknown mode "rtm"`},
		{"api_url must be a URL", slackOn(func(s *SlackConfig) { s.APIURL = "slack.local/api" }), "slack.api_url", "absolute http(s) URL"},
		{"unknown follow-up policy", slackOn(func(s *SlackConfig) { s.FollowUps = "some" }), "slack.follow_ups", `unknown policy "some"`},
		{"negative rate", slackOn(func(s *SlackConfig) { s.UserRate = -1 }), "slack.user_rate", ">= 0"},
		{"reaction with colons", slackOn(func(s *SlackConfig) { s.Reaction = ":eyes:" }), "slack.reaction", "without colons"},
		{"reaction off", slackOn(func(s *SlackConfig) { s.Reaction = "off" }), "", ""},
		{"channel without an ID", slackOn(func(s *SlackConfig) { s.Channels = []SlackChannelConfig{{AutoAnswer: true}} }),
			"slack.channels[0].id", "must not be empty"},
		{"channel configured twice", slackOn(func(s *SlackConfig) { s.Channels = []SlackChannelConfig{{ID: "C1"}, {ID: "C1"}} }),
			"slack.channels[1].id", "already configured by slack.channels[0]"},
		{"channel scoped to an unknown source", slackOn(func(s *SlackConfig) {
			s.Channels = []SlackChannelConfig{{ID: "C1", Sources: []string{"handbok"}}}
		}), "slack.channels[0].sources", `unknown source "handbok" (configured: handbook)`},
		{"default scoped to a known source", slackOn(func(s *SlackConfig) { s.Default.Sources = []string{"handbook"} }), "", ""},
		{"default with an ID", slackOn(func(s *SlackConfig) { s.Default.ID = "C1" }), "slack.default.id", "not allowed"},
		{"too many prompts", slackOn(func(s *SlackConfig) { s.Assistant.Prompts = make([]SlackPrompt, 5) }), "slack.assistant.prompts", "at most 4"},
		{"prompt without a message", slackOn(func(s *SlackConfig) { s.Assistant.Prompts = []SlackPrompt{{Title: "VPN"}} }),
			"slack.assistant.prompts[0]", "needs a title and a message"},
		{"settings without a bot token", func(c *Config) { c.Slack.AppToken = "xapp-1" }, "slack.app_token", "slack.bot_token is not"},
	})

	t.Run("a slack error names its line", func(t *testing.T) {
		p := mustWrite(t, "docent.yaml", "slack:\n  bot_token: xoxb-1\n  app_token: xapp-1\n  channels:\n    - id: C1\n      sources: [wiki]\n")
		_, err := Load(p, env(nil), Builtin())
		if err == nil || !strings.Contains(err.Error(), "docent.yaml:6: slack.channels[0].sources: unknown source \"wiki\"") {
			t.Errorf("err = %v, want the sources line", err)
		}
	})
}

func TestSlackSecretsRedacted(t *testing.T) {
	secrets := []string{"xoxb-bot-secret-1", "xapp-app-secret-2", "signing-secret-3"}
	c := Default()
	c.Slack.BotToken, c.Slack.AppToken, c.Slack.SigningSecret = secrets[0], secrets[1], secrets[2]
	c.Slack.Channels = []SlackChannelConfig{{ID: "C1", Sources: []string{"handbook"}}}
	if err := c.Validate(Builtin()); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	slog.New(slog.NewJSONHandler(&log, nil)).Info("loaded", slog.Any("config", c))
	for name, out := range map[string]string{"Redacted": c.Redacted(), "fmt": fmt.Sprintf("%+v", c), "slog": log.String()} {
		for _, s := range secrets {
			if strings.Contains(out, s) {
				t.Errorf("%s output contains %q", name, s)
			}
		}
		if !strings.Contains(out, "REDACTED") || !strings.Contains(out, "C1") {
			t.Errorf("%s output lost the slack section:\n%s", name, out)
		}
	}
	got := c.Secrets()
	for _, s := range secrets {
		if !slices.Contains(got, s) {
			t.Errorf("Secrets() = %q, missing %q", got, s)
		}
	}
	if c.Slack.BotToken != secrets[0] || c.Slack.Channels[0].Sources[0] != "handbook" {
		t.Errorf("redaction modified the config: %+v", c.Slack)
	}
}
