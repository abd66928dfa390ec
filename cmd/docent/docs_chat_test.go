package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docent-hq/docent/config"
)

// docYAML returns the first ```yaml block after heading (a line of its
// own) on a page of docs/.
func docYAML(t *testing.T, page, heading string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", page))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	at := strings.Index(readme, "\n"+heading+"\n")
	if at < 0 {
		t.Fatalf("docs/%s has no %q", page, heading)
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

// TestDocsChatConfigLoads: the Slack and Discord configuration examples
// of docs/slack.md and docs/discord.md load and validate as written (no unknown keys, channel
// sources that name the configured sources), with the tokens from the
// environment as they show.
func TestDocsChatConfigLoads(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	sources := "sources:\n" +
		"  - name: handbook\n    type: bundled\n" +
		"  - name: eng-docs\n    type: dir\n    dir:\n      path: " + dir + "\n"
	env := envOf(map[string]string{"SLACK_BOT_TOKEN": "xoxb-1-2-readme", "SLACK_APP_TOKEN": "xapp-1-A1-readme",
		"DISCORD_TOKEN": "discord.readme.token"})
	for _, tt := range []struct {
		page, heading string
		check         func(c config.Config) bool
	}{
		{"slack.md", "## Configure it", func(c config.Config) bool {
			return c.Slack.Enabled() && c.Slack.BotToken == "xoxb-1-2-readme" && len(c.Slack.Channels) == 2 &&
				c.Slack.EscalationChannel != "" && c.Slack.UserGroup != ""
		}},
		{"discord.md", "## Configure Discord", func(c config.Config) bool {
			return c.Discord.Enabled() && c.Discord.Token == "discord.readme.token" && len(c.Discord.Channels) == 3 &&
				c.Discord.EscalationChannel != "" && c.Discord.EscalationRole != ""
		}},
	} {
		t.Run(tt.heading, func(t *testing.T) {
			y := docYAML(t, tt.page, tt.heading)
			p := filepath.Join(t.TempDir(), "docent.yaml")
			if err := os.WriteFile(p, []byte(sources+y), 0o600); err != nil {
				t.Fatal(err)
			}
			c, err := config.Load(p, env, implementations())
			if err != nil {
				t.Fatalf("the example in docs/%s does not load: %v\n%s", tt.page, err, y)
			}
			if !tt.check(c) {
				t.Errorf("the example in docs/%s loaded as something else: %+v", tt.page, c)
			}
		})
	}
}
