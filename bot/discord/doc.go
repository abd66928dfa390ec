// Package discord connects the conversation core (package bot) to
// Discord through a discordgo session: gateway events in, REST calls out.
// It stays thin: which messages to answer, thread context, scope,
// feedback, handoff and dedupe live in the core; this package maps
// Discord's events to bot.Message and bot.Action and renders bot.Reply.
//
// # Conversations
//
// A conversation is keyed by its root: a thread's ID, or for a new
// question in a text channel the question's message ID, which the thread
// the answer starts takes (Discord gives a thread started from a message
// that message's ID; a forum post's thread and its first message share an
// ID too). So a question in a channel gets its answer in a new thread, a
// forum post and a question inside a thread are answered in place, and a
// DM is one conversation.
//
// The bot answers mentions, DMs, questions in channels configured to
// auto-answer, every new post in such a forum, and follow-ups in threads
// it answers (per the core's follow-up policy). /ask (the command name is
// configurable) is a deferred response filled with the answer; in a text
// channel that response is the conversation's root.
//
// # Replies
//
// An answer is a message whose [n] markers link to their sources, with an
// embed listing the sources (number, title › section as a link, updated
// date, a warning on a source flagged stale) and buttons Helpful, Not
// helpful (which asks for an optional reason in a modal) and Get a human.
// Text past Discord's 2,000-character limit continues in further messages
// (the embed and buttons go on the last); nothing an answer quotes can
// ping anyone. With a streaming model the answer is posted at once and
// edited as it is written, at most once per Config.StreamInterval, then
// replaced by the verified answer.
//
// "Get a human" posts to the staff channel (or the thread itself when
// none is configured): the question, the bot's answer and sources, a link
// to the thread, a ping of the escalation role, and Claim / Resolve
// buttons whose presses update the post. The thread is told, with the
// role pinged there as well, and the bot stays quiet in it until the
// handoff is resolved.
//
// # Connection
//
// discordgo speaks API v9 and builds its endpoints from discord.com at
// start-up; the client's HTTP transport sends every call to Config.APIURL
// (v10 by default) instead, and asks GET /gateway/bot there for the
// gateway URL. The gateway intents are Intents: MESSAGE_CONTENT is
// privileged and must be switched on in the developer portal.
// Interactions arrive over the gateway, or over HTTP at
// InteractionsHandler when the application has an Interactions Endpoint
// URL, verified with its Ed25519 public key before anything is parsed.
package discord
