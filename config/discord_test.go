package config

import (
	"strings"
	"testing"
)

func TestValidateDiscord(t *testing.T) {
	on := func(c *Config) { c.Discord.Token = "MTE.x.y" }
	tests := []struct {
		name    string
		mutate  func(*Config)
		wantKey string // "" means valid
		wantMsg string
	}{
		{"off by default", func(*Config) {}, "", ""},
		{"on with a token alone", on, "", ""},
		{"settings without a token", func(c *Config) { c.Discord.EscalationChannel = "1" }, "discord.escalation_channel", "discord.token is not"},
		{"channels without a token", func(c *Config) { c.Discord.Channels = []DiscordChannelConfig{{ID: "1"}} }, "discord.channels", "discord.token is not"},
		{"token with its prefix", func(c *Config) { c.Discord.Token = "Bot MTE.x.y" }, "discord.token", `without the "Bot " prefix`},
		{"relative api_url", func(c *Config) { on(c); c.Discord.APIURL = "discord.com/api" }, "discord.api_url", "absolute http(s) URL"},
		{"channel name for an ID", func(c *Config) { on(c); c.Discord.EscalationChannel = "#staff" }, "discord.escalation_channel", "want a Discord ID"},
		{"role mention for an ID", func(c *Config) { on(c); c.Discord.EscalationRole = "<@&123>" }, "discord.escalation_role", "want a Discord ID"},
		{"short public key", func(c *Config) { on(c); c.Discord.PublicKey = "abcd" }, "discord.public_key", "64 hex digits"},
		{"public key", func(c *Config) { on(c); c.Discord.PublicKey = strings.Repeat("0f", 32) }, "", ""},
		{"command with capitals", func(c *Config) { on(c); c.Discord.Command = "Ask" }, "discord.command", "lowercase"},
		{"unknown follow-up policy", func(c *Config) { on(c); c.Discord.FollowUps = "mentions" }, "discord.follow_ups", `unknown policy "mentions"`},
		{"negative rate", func(c *Config) { on(c); c.Discord.UserRate = -1 }, "discord.user_rate", ">= 0"},
		{"forum tags, defaults", func(c *Config) {
			on(c)
			c.Discord.Channels = []DiscordChannelConfig{{ID: "123", Tags: &DiscordForumTags{}}}
		}, "", ""},
		{"forum tag named twice", func(c *Config) {
			on(c)
			c.Discord.Channels = []DiscordChannelConfig{{ID: "123", Tags: &DiscordForumTags{Handoff: "Solved"}}}
		}, "discord.channels[0].tags", `"Solved" is named twice`},
		{"forum tag too long", func(c *Config) {
			on(c)
			c.Discord.Channels = []DiscordChannelConfig{{ID: "123", Tags: &DiscordForumTags{Answered: strings.Repeat("a", 21)}}}
		}, "discord.channels[0].tags", "20 characters"},
		{"tags on the default", func(c *Config) { on(c); c.Discord.Default.Tags = &DiscordForumTags{} }, "discord.default.tags", "belong to a forum"},
		{"channel without an ID", func(c *Config) { on(c); c.Discord.Channels = []DiscordChannelConfig{{AutoAnswer: true}} }, "discord.channels[0].id", "must not be empty"},
		{"channel twice", func(c *Config) {
			on(c)
			c.Discord.Channels = []DiscordChannelConfig{{ID: "12"}, {ID: "12"}}
		}, "discord.channels[1].id", "already configured"},
		{"unknown source in a channel's scope", func(c *Config) {
			on(c)
			c.Discord.Channels = []DiscordChannelConfig{{ID: "12", Sources: []string{"intranet"}}}
		}, "discord.channels[0].sources", `unknown source "intranet" (configured: handbook)`},
		{"unknown source in the default scope", func(c *Config) { on(c); c.Discord.Default.Sources = []string{"wiki"} }, "discord.default.sources", "unknown source"},
		{"unknown reply style", func(c *Config) {
			on(c)
			c.Discord.Channels = []DiscordChannelConfig{{ID: "12", Reply: "dm"}}
		}, "discord.channels[0].reply", `unknown reply style "dm"`},
		{"inline replies", func(c *Config) { on(c); c.Discord.Channels = []DiscordChannelConfig{{ID: "12", Reply: "inline"}} }, "", ""},
		{"default with an ID", func(c *Config) { on(c); c.Discord.Default.ID = "12" }, "discord.default.id", "not allowed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := Default()
			tc.mutate(&c)
			err := c.Validate(Builtin())
			if tc.wantKey == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			want := "config: " + tc.wantKey + ": "
			if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), tc.wantMsg) {
				t.Errorf("Validate() = %v, want %q ... %q", err, want, tc.wantMsg)
			}
		})
	}
}

func TestDiscordErrorsNameTheLine(t *testing.T) {
	p := mustWrite(t, "docent.yaml", "discord:\n  token: MTE.x.y\n  channels:\n    - id: \"12\"\n      sources: [wiki]\n")
	_, err := Load(p, env(nil), Builtin())
	if err == nil || !strings.Contains(err.Error(), "docent.yaml:5: discord.channels[0].sources: unknown source") {
		t.Errorf("err = %v, want the line of the bad source", err)
	}
}

func TestDiscordTokenRedacted(t *testing.T) {
	c := Default()
	c.Discord.Token = "MTE.very.secret"
	c.Discord.Channels = []DiscordChannelConfig{{ID: "12", Sources: []string{"handbook"}}}
	out := c.Redacted()
	if strings.Contains(out, "MTE.very.secret") || !strings.Contains(out, "token: REDACTED") {
		t.Errorf("redacted config shows the token:\n%s", out)
	}
	if !strings.Contains(strings.Join(c.Secrets(), " "), "MTE.very.secret") {
		t.Errorf("Secrets() misses the Discord token")
	}
	r := c.redact()
	r.Discord.Channels[0].Sources[0] = "x"
	if c.Discord.Token != "MTE.very.secret" || c.Discord.Channels[0].Sources[0] != "handbook" {
		t.Errorf("redaction changed the config: %+v", c.Discord)
	}
}
