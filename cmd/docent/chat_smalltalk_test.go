package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/bot/discord/discordtest"
	"github.com/docent-hq/docent/bot/slack/workspacetest"
	"github.com/docent-hq/docent/store"
)

// smallTalk is what TestChatSmallTalk says to the bot: small talk gets a
// short reply citing nothing, with no buttons, stored as small talk and
// kept out of the misses inbox; a question that opens with a greeting is
// answered with its sources.
var smallTalk = []struct {
	text  string
	small bool
}{
	{"good morning :)", true},
	{"thanks!", true},
	{"lol ok", true},
	{"👍🎉", true},
	{"hi! how do I reset my vpn token?", false},
}

// checkSmallTalkTurns checks the turns stored for the smallTalk texts and
// that the misses inbox holds none of them.
func checkSmallTalkTurns(t *testing.T, db *store.DB, platform string) {
	t.Helper()
	ctx := context.Background()
	turns, err := db.ListTurns(ctx, store.TurnFilter{Platform: platform})
	if err != nil {
		t.Fatal(err)
	}
	status := map[string]docent.Status{}
	for _, tu := range turns {
		status[tu.Question.Text] = tu.Answer.Status
	}
	for _, tc := range smallTalk {
		want := docent.StatusAnswered
		if tc.small {
			want = docent.StatusSmallTalk
		}
		if status[tc.text] != want {
			t.Errorf("%q stored as %q, want %q", tc.text, status[tc.text], want)
		}
	}
	misses, n, err := db.SearchTurns(ctx, store.TurnQuery{Platform: platform, Misses: true, Review: "all"})
	if err != nil || n != 0 {
		t.Errorf("misses inbox = %d %+v (%v), want empty", n, misses, err)
	}
}

// TestChatSmallTalk: in Slack (Socket Mode) and Discord (gateway), through
// serve's wiring and the real answer pipeline over the handbook, small
// talk is answered at once, briefly, with no sources, links or buttons,
// and is no miss; "hi! how do I …?" is answered as the question it is.
func TestChatSmallTalk(t *testing.T) {
	t.Parallel()
	t.Run("slack", func(t *testing.T) {
		t.Parallel()
		ws := workspacetest.New(t)
		m := &Main{ConfigPath: mustSlackConfig(t, t.TempDir(), ws, "", ""), Stdout: io.Discard, Stderr: io.Discard, Getenv: envOf(nil)}
		serveReady(t, m)
		ws.WaitConnected(t)
		for _, tc := range smallTalk {
			mention, _ := ws.Mention(workspacetest.Said{Channel: slackHelp, User: slackAsker, Text: tc.text})
			if ack := ws.Send(t, "events_api", mention.Body); ack.After > 3*time.Second {
				t.Errorf("%q acked after %s", tc.text, ack.After)
			}
			reply := ws.WaitBotMessages(t, slackHelp, mention.TS, 1)[0]
			text := reply.AllText()
			if tc.small {
				if len(text) > 200 || strings.Contains(text, "http") || strings.Contains(text, "[1]") || len(reply.ButtonTexts()) > 0 {
					t.Errorf("%q: reply %q with buttons %q, want a short note with no sources, links or buttons", tc.text, text, reply.ButtonTexts())
				}
				continue
			}
			if !strings.Contains(text, "|[1]>") || !strings.Contains(text, "/docs/handbook/it/vpn.md") || len(reply.ButtonTexts()) == 0 {
				t.Errorf("%q: reply %q, want the VPN page cited, with buttons", tc.text, text)
			}
		}
		checkSmallTalkTurns(t, m.Store, "slack")
	})
	t.Run("discord", func(t *testing.T) {
		t.Parallel()
		srv := discordtest.NewServer(t)
		general := srv.AddChannel("general", discordtest.ChannelText)
		alice := srv.AddUser("alice")
		dataDir := handbookData(t)
		cfg := filepath.Join(t.TempDir(), "docent.yaml")
		if err := os.WriteFile(cfg, []byte(discordYAML(dataDir, srv, "", "", "", "")), 0o600); err != nil {
			t.Fatal(err)
		}
		m := &Main{ConfigPath: cfg, Stdout: io.Discard, Stderr: io.Discard, Getenv: envOf(map[string]string{"DISCORD_TOKEN": srv.Token})}
		serveReady(t, m)
		srv.WaitReady(t)
		for _, tc := range smallTalk {
			q := srv.Post(general.ID, alice, srv.Bot.Mention()+" "+tc.text)
			if !tc.small {
				a := answerIn(t, srv, q.ID)
				if links := cited(a); len(links) == 0 || !strings.Contains(links[0], "/docs/handbook/it/vpn.md") {
					t.Errorf("%q: answer %q cites %q, want the VPN page", tc.text, a.Content, links)
				}
				continue
			}
			// A note replies to the question in the channel: no thread.
			var reply discordtest.Message
			srv.WaitFor(t, "the reply to "+tc.text, func() bool {
				for _, b := range srv.BotMessages(general.ID) {
					if b.MessageReference != nil && b.MessageReference.MessageID == q.ID {
						reply = b
						return true
					}
				}
				return false
			})
			if len(reply.Content) > 200 || strings.Contains(reply.Content, "http") || len(reply.Embeds) > 0 || len(reply.Components) > 0 {
				t.Errorf("%q: reply %q with %d embeds and %d component rows, want a short note with no sources or buttons",
					tc.text, reply.Content, len(reply.Embeds), len(reply.Components))
			}
			if _, thread := srv.Channel(q.ID); thread {
				t.Errorf("%q: a thread was started for small talk", tc.text)
			}
		}
		checkSmallTalkTurns(t, m.Store, "discord")
	})
}
