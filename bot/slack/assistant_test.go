package slack_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docent-hq/docent/bot/slack/workspacetest"
)

const dm = "D0ASKER001" // the asker's DM with the app, where assistant threads live

// TestAssistantThread: a new assistant thread gets the suggested prompts;
// a question in it sets the status while it is answered, titles the
// thread, and is answered in the thread.
func TestAssistantThread(t *testing.T) {
	h := newHarness(t, setup{})
	started, thread := h.ws.AssistantThreadStarted(dm, asker)
	h.deliver(t, started)
	var prompts []workspacetest.Call
	h.ws.Wait(t, 10*time.Second, "suggested prompts", func() bool {
		prompts = h.ws.Calls("assistant.threads.setSuggestedPrompts")
		return len(prompts) == 1
	})
	var got []struct{ Title, Message string }
	if err := json.Unmarshal([]byte(prompts[0].Args["prompts"]), &got); err != nil || len(got) != 1 ||
		got[0].Message != "How do I reset my VPN token?" || prompts[0].Args["title"] != "Try asking" ||
		prompts[0].Args["channel_id"] != dm || prompts[0].Args["thread_ts"] != thread {
		t.Errorf("setSuggestedPrompts %v: %+v, %v", prompts[0].Args, got, err)
	}

	q := h.ws.Post(workspacetest.Said{Channel: dm, User: asker, Text: "How do I reset my VPN token?", ThreadTS: thread})
	h.deliver(t, q)
	reply := h.ws.WaitBotMessages(t, dm, thread, 1)[0]
	if !slices.Equal(labels(reply), []string{"Helpful", "Not helpful", "Get a human"}) {
		t.Errorf("buttons = %q", labels(reply))
	}
	h.ws.Wait(t, 5*time.Second, "the status cleared", func() bool { return len(h.ws.Calls("assistant.threads.setStatus")) == 2 })
	statuses := h.ws.Calls("assistant.threads.setStatus")
	post := h.ws.Calls("chat.postMessage")[0]
	if statuses[0].Args["status"] != "Searching the docs…" || statuses[0].Args["thread_ts"] != thread ||
		!statuses[0].At.Before(post.At) || statuses[1].Args["status"] != "" {
		t.Errorf("statuses %v, %v; want Searching the docs… before the reply, then cleared", statuses[0].Args, statuses[1].Args)
	}
	titles := h.ws.Calls("assistant.threads.setTitle")
	if len(titles) != 1 || titles[0].Args["title"] != "How do I reset my VPN token?" {
		t.Errorf("titles = %+v", titles)
	}
	if r := h.ws.Calls("reactions.add"); len(r) != 0 {
		t.Errorf("reacted in an assistant thread (the status shows the work): %+v", r)
	}

	// A follow-up keeps the title.
	h.deliver(t, h.ws.Post(workspacetest.Said{Channel: dm, User: asker, Text: "and on a Mac?", ThreadTS: thread}))
	h.ws.WaitBotMessages(t, dm, thread, 2)
	if n := len(h.ws.Calls("assistant.threads.setTitle")); n != 1 {
		t.Errorf("the thread was titled %d times, want once", n)
	}
}

// TestStreamedAnswer: with a streaming model, the answer streams into the
// thread (chat.startStream, chat.appendStream, chat.stopStream) and the
// message ends as the verified reply with its sources and buttons.
func TestStreamedAnswer(t *testing.T) {
	deltas := []string{"Reset it ", "in ", strings.Repeat("Gatekeeper, ", 12), "then sign in again [1]."}
	for _, channel := range []string{dm, help} {
		t.Run(channel, func(t *testing.T) {
			h := newHarness(t, setup{deltas: deltas})
			var thread string
			if channel == dm {
				var started workspacetest.Event
				started, thread = h.ws.AssistantThreadStarted(dm, asker)
				h.deliver(t, started)
				h.deliver(t, h.ws.Post(workspacetest.Said{Channel: dm, User: asker, Text: "How do I reset my VPN token?", ThreadTS: thread}))
			} else {
				mention, _ := h.ws.Mention(workspacetest.Said{Channel: help, User: asker, Text: "How do I reset my VPN token?"})
				thread = mention.TS
				h.deliver(t, mention)
			}
			var msg workspacetest.Message
			h.ws.Wait(t, 10*time.Second, "the streamed message finished", func() bool {
				msgs := h.ws.BotMessages(channel, thread)
				if len(msgs) == 0 || msgs[0].Edits == 0 {
					return false
				}
				msg = msgs[0]
				return true
			})
			start, appends, stop := h.ws.Calls("chat.startStream"), h.ws.Calls("chat.appendStream"), h.ws.Calls("chat.stopStream")
			if len(start) != 1 || len(appends) == 0 || len(stop) != 1 {
				t.Fatalf("stream calls: %d start, %d append, %d stop", len(start), len(appends), len(stop))
			}
			streamed := start[0].Args["markdown_text"]
			for _, a := range appends {
				streamed += a.Args["markdown_text"]
			}
			streamed += stop[0].Args["markdown_text"]
			if want := strings.Join(deltas, ""); streamed != want {
				t.Errorf("streamed %q, want %q", streamed, want)
			}
			if start[0].Args["thread_ts"] != thread {
				t.Errorf("stream started in thread %q, want %q", start[0].Args["thread_ts"], thread)
			}
			if channel == help && (start[0].Args["recipient_user_id"] != asker || start[0].Args["recipient_team_id"] != h.ws.TeamID) {
				t.Errorf("a channel stream needs its recipient: %v", start[0].Args)
			}
			if !strings.Contains(stop[0].Args["blocks"], "docent_helpful") {
				t.Errorf("the stream did not end with the buttons: %s", stop[0].Args["blocks"])
			}
			// The verified reply replaced the provisional text.
			if msg.Streaming || msg.Streamed != "" || !strings.Contains(msg.AllText(), "Reset it in *Gatekeeper* <https://docs.example.com/it/vpn|[1]>.") ||
				!strings.Contains(msg.AllText(), "*[1]* <https://docs.example.com/it/vpn|VPN>") ||
				!slices.Equal(labels(msg), []string{"Helpful", "Not helpful", "Get a human"}) {
				t.Errorf("final message: buttons %q\n%s", labels(msg), msg.AllText())
			}
			if n := len(h.ws.BotMessages(channel, thread)); n != 1 {
				t.Errorf("%d bot messages, want the one streamed", n)
			}
		})
	}
}
