package slack

// BotEvents are the Events API events the adapter handles; the app must
// subscribe to them (deploy/slack-app-manifest.yaml). message.* bring
// thread follow-ups and DMs; app_mention brings mentions in channels the
// app reads without message.* events.
var BotEvents = []string{
	"app_mention",
	"assistant_thread_started",
	"message.channels",
	"message.groups",
	"message.im",
	"message.mpim",
}

// BotScopes are the bot token scopes the adapter needs: reading mentions
// and messages (public and private channels, DMs, group DMs), posting,
// updating and streaming messages (chat:write), the working reaction
// (reactions:write), and assistant threads' prompts, status and title
// (assistant:write). chat.getPermalink and views.open need no scope.
var BotScopes = []string{
	"app_mentions:read",
	"assistant:write",
	"channels:history",
	"chat:write",
	"groups:history",
	"im:history",
	"mpim:history",
	"reactions:write",
}
