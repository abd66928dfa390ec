// Package slack is docent's Slack adapter, on slack-go. It stays thin:
// Slack events become the bot core's Messages and button presses its
// Actions (bot.Bot decides what to answer, keeps thread context, handoff
// state and dedupe), and the core's Replies and escalations become Block
// Kit messages.
//
// Events arrive over Socket Mode (RunSocketMode: no public URL, an
// app-level token) or the Events API over HTTP (Handler: requests
// verified with the signing secret before anything else is read). Either
// way an event is acknowledged at once and answered on its own goroutine;
// Shutdown waits for the answers in flight.
//
// In a thread the bot answers with the text ([n] markers linked to their
// sources), a context block listing the sources (title · section ·
// updated, stale ones flagged) and the buttons Helpful, Not helpful (a
// modal asks why, optionally) and Get a human. An "eyes" reaction shows
// it is working; in Slack's assistant threads the status line does, the
// thread gets a title, and new threads get suggested prompts. With a
// streaming model the answer streams into the thread (chat.startStream,
// appendStream, stopStream) and is then replaced by the verified reply.
// A handoff is posted in the escalation channel with the thread's
// permalink and the user group's mention, and Claim and Resolve buttons.
//
// Every Web API call waits out a 429 (Retry-After) and retries. The Web
// API base is configurable (Options.APIURL), so the adapter runs
// unchanged against a local server (see workspacetest).
package slack
