package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docent-hq/docent/config"
)

// readmeYAML returns the first ```yaml block after heading, within the
// README's section (a "## " heading).
func readmeYAML(t *testing.T, section, heading string) string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	sec := strings.Index(readme, "\n"+section+"\n")
	if sec < 0 {
		t.Fatalf("README has no %q", section)
	}
	readme = readme[sec:]
	at := strings.Index(readme, "\n"+heading+"\n")
	if at < 0 {
		t.Fatalf("README has no %q", heading)
	}
	rest := readme[at:]
	start := strings.Index(rest, "```yaml\n")
	if start < 0 {
		t.Fatalf("no yaml block after %q", heading)
	}
	rest = rest[start+len("```yaml\n"):]
	end := strings.Index(rest, "```")
	if end < 0 {
		t.Fatalf("unterminated yaml block after %q", heading)
	}
	return rest[:end]
}

// TestREADMEChatConfigLoads: the Slack and Discord configuration examples
// in the README load and validate as written (no unknown keys, channel
// sources that name the configured sources), with the tokens from the
// environment as they show.
func TestREADMEChatConfigLoads(t *testing.T) {
	dir := t.TempDir()
	sources := "sources:\n" +
		"  - name: handbook\n    type: bundled\n" +
		"  - name: eng-docs\n    type: dir\n    dir:\n      path: " + dir + "\n"
	env := envOf(map[string]string{"SLACK_BOT_TOKEN": "xoxb-1-2-readme", "SLACK_APP_TOKEN": "xapp-1-A1-readme",
		"DISCORD_TOKEN": "discord.readme.token"})
	for _, tt := range []struct {
		section, heading string
		check            func(c config.Config) bool
	}{
		{"## Slack", "### Configure it", func(c config.Config) bool {
			return c.Slack.Enabled() && c.Slack.BotToken == "xoxb-1-2-readme" && len(c.Slack.Channels) == 2 &&
				c.Slack.EscalationChannel != "" && c.Slack.UserGroup != ""
		}},
		{"## Discord", "### Configure Discord", func(c config.Config) bool {
			return c.Discord.Enabled() && c.Discord.Token == "discord.readme.token" && len(c.Discord.Channels) == 3 &&
				c.Discord.EscalationChannel != "" && c.Discord.EscalationRole != ""
		}},
	} {
		t.Run(tt.heading, func(t *testing.T) {
			y := readmeYAML(t, tt.section, tt.heading)
			p := filepath.Join(t.TempDir(), "docent.yaml")
			if err := os.WriteFile(p, []byte(sources+y), 0o600); err != nil {
				t.Fatal(err)
			}
			c, err := config.Load(p, env, implementations())
			if err != nil {
				t.Fatalf("the README's example does not load: %v\n%s", err, y)
			}
			if !tt.check(c) {
				t.Errorf("the README's example loaded as something else: %+v", c)
			}
		})
	}
}
