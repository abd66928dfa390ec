package deploy_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/docent-hq/docent/bot/slack"
)

// TestSlackManifest: the Slack app manifest subscribes to exactly the
// events the adapter handles and asks for exactly the scopes it needs,
// turns on interactivity (the buttons) and Socket Mode, and its HTTP-mode
// request URLs are the paths docent serves.
func TestSlackManifest(t *testing.T) {
	const path = "slack-app-manifest.yaml"
	ms := docs(t, path)
	if len(ms) != 1 {
		t.Fatalf("%s: %d documents, want 1", path, len(ms))
	}
	m := ms[0]
	strs := func(v any) []string {
		var out []string
		for _, s := range v.([]any) {
			out = append(out, str(s))
		}
		slices.Sort(out)
		return out
	}
	if got, want := strs(get(m, "settings", "event_subscriptions", "bot_events")), slices.Sorted(slices.Values(slack.BotEvents)); !slices.Equal(got, want) {
		t.Errorf("bot_events = %q, want %q", got, want)
	}
	if got, want := strs(get(m, "oauth_config", "scopes", "bot")), slices.Sorted(slices.Values(slack.BotScopes)); !slices.Equal(got, want) {
		t.Errorf("bot scopes = %q, want %q", got, want)
	}
	for _, key := range [][]any{{"settings", "interactivity", "is_enabled"}, {"settings", "socket_mode_enabled"},
		{"features", "app_home", "messages_tab_enabled"}} {
		if get(m, key...) != true {
			t.Errorf("%v = %v, want true", key, get(m, key...))
		}
	}
	if d := str(get(m, "features", "assistant_view", "assistant_description")); d == "" || len(d) > 300 {
		t.Errorf("assistant_description %q: want 1 to 300 characters", d)
	}
	if n := len(str(get(m, "display_information", "long_description"))); n < 174 || n > 4000 {
		t.Errorf("long_description is %d characters; Slack wants 174 to 4,000", n)
	}
	text := readFile(t, path)
	for _, p := range []string{slack.EventsPath, slack.InteractionsPath} {
		if !strings.Contains(text, "# request_url: https://docent.example.com"+p+"\n") {
			t.Errorf("%s does not show the HTTP-mode request URL for %s", path, p)
		}
	}
}
