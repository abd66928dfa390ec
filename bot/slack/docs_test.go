package slack

import (
	"os"
	"strings"
	"testing"
)

// TestDocsListScopesAndEvents keeps the setup guide's (docs/slack.md) list of bot
// scopes and events equal to what the adapter needs (which the manifest
// test holds the manifest to), and its configuration example naming the
// keys the adapter is configured with.
func TestDocsListScopesAndEvents(t *testing.T) {
	b, err := os.ReadFile("../../docs/slack.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	start := strings.Index(readme, "## Create the Slack app")
	end := strings.Index(readme, "## Test it without Slack")
	if start < 0 || end < start {
		t.Fatal("docs/slack.md has no setup section")
	}
	guide := readme[start:end]
	for _, want := range append(append([]string{}, BotScopes...), BotEvents...) {
		if !strings.Contains(guide, "`"+want+"`") {
			t.Errorf("the Slack setup guide does not list %q", want)
		}
	}
	for _, want := range []string{"deploy/slack-app-manifest.yaml", "connections:write", "Signing Secret",
		"bot_token:", "app_token:", "signing_secret:", "api_url:", "escalation_channel:", "user_group:", "channels:",
		EventsPath, InteractionsPath} {
		if !strings.Contains(guide, want) {
			t.Errorf("the Slack setup guide lacks %q", want)
		}
	}
}
