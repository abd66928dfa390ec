package slack

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	slackapi "github.com/slack-go/slack"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/bot"
)

func TestMrkdwn(t *testing.T) {
	cites := []docent.Citation{{N: 1, URL: "https://docs/a?x=1&y=2"}, {N: 2}}
	tests := []struct{ name, in, want string }{
		{"markers link to their sources", "Reset it [1].", "Reset it <https://docs/a?x=1&amp;y=2|[1]>."},
		{"a source without a URL stays a number", "See [2].", "See [2]."},
		{"an unknown marker stays", "See [7].", "See [7]."},
		{"bold", "Use **Gatekeeper** now", "Use *Gatekeeper* now"},
		{"links", "Open [the portal](https://p.example.com/x) first", "Open <https://p.example.com/x|the portal> first"},
		{"headings", "## Steps\nDo it", "*Steps*\nDo it"},
		{"bullets", "- one\n  * two", "• one\n  • two"},
		{"reserved characters escaped", "a < b && c > d", "a &lt; b &amp;&amp; c &gt; d"},
		{"no link injection from text", "<https://evil.example|[1]>", "&lt;https://evil.example|<https://docs/a?x=1&amp;y=2|[1]>&gt;"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := mrkdwn(tt.in, cites); got != tt.want {
				t.Errorf("mrkdwn(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestSplitText(t *testing.T) {
	link := "<https://docs.example.com/a/very/long/path|[1]>"
	text := strings.Repeat("word ", 50) + link + " " + strings.Repeat("more ", 50)
	parts := splitText(text, 270)
	if strings.Join(parts, " ") != strings.TrimSpace(text) {
		t.Errorf("text lost in the split: %q", parts)
	}
	for _, p := range parts {
		if utf8.RuneCountInString(p) > 270 {
			t.Errorf("part of %d characters, limit 270", utf8.RuneCountInString(p))
		}
		if strings.Count(p, "<") != strings.Count(p, ">") {
			t.Errorf("a link was cut: %q", p)
		}
	}
	paras := splitText("first paragraph here.\n\nsecond paragraph, which is longer than the first one.", 40)
	if len(paras) < 2 || paras[0] != "first paragraph here." {
		t.Errorf("split = %q, want the paragraph break used", paras)
	}
}

func TestRender(t *testing.T) {
	r := bot.Reply{Kind: bot.ReplyAnswer, Text: "Reset it [1] [2].", TurnID: 7,
		Citations: []docent.Citation{{N: 1, Title: "VPN", URL: "https://d/vpn"}, {N: 2, Title: "Old VPN", Section: "Tokens"}},
		Stale:     []bool{false, true}, Buttons: []bot.ActionKind{bot.ActionHelpful, bot.ActionNotHelpful, bot.ActionHandoff}}
	msgs := render(r, "171.1")
	if len(msgs) != 1 {
		t.Fatalf("%d messages", len(msgs))
	}
	var ids []string
	for _, b := range msgs[0].blocks {
		ids = append(ids, b.ID())
	}
	if strings.Join(ids, ",") != "docent_text_0,docent_sources_0,docent_actions" {
		t.Errorf("blocks = %v", ids)
	}
	if msgs[0].text != "Reset it [1] [2]." {
		t.Errorf("fallback text = %q", msgs[0].text)
	}
	stale := sourceLine(r.Citations[1], true)
	if stale != "*[2]* Old VPN · Tokens · :warning: may be out of date" {
		t.Errorf("stale source line = %q", stale)
	}
	if v := (buttonValue{Turn: 7, Thread: "171.1"}).String(); v != `{"turn":7,"thread":"171.1"}` {
		t.Errorf("button value = %s", v)
	}
}

func TestMessageMapping(t *testing.T) {
	c := &Client{botUser: "UBOT"}
	tests := []struct {
		name string
		in   incoming
		want bot.Message
	}{
		{"mention in a channel starts a thread",
			incoming{channel: "C1", channelType: "channel", user: "U1", text: "<@UBOT> how do I reset &amp; <https://x.example|the VPN>?", ts: "10.1", mention: true},
			bot.Message{EventID: "C1/10.1", Thread: bot.Thread{Platform: "slack", Channel: "C1", ID: "10.1"}, User: "U1",
				Text: "how do I reset & the VPN?", Mentioned: true, TopLevel: true}},
		{"a message event carrying the mention is the same message",
			incoming{channel: "C1", channelType: "channel", user: "U1", text: "<@UBOT|docent> how do I reset &amp; <https://x.example|the VPN>?", ts: "10.1"},
			bot.Message{EventID: "C1/10.1", Thread: bot.Thread{Platform: "slack", Channel: "C1", ID: "10.1"}, User: "U1",
				Text: "how do I reset & the VPN?", Mentioned: true, TopLevel: true}},
		{"reply in a thread the bot started",
			incoming{channel: "C1", channelType: "channel", user: "U1", text: "and <#C2|general>?", ts: "10.5", threadTS: "10.1", parentUser: "UBOT"},
			bot.Message{EventID: "C1/10.5", Thread: bot.Thread{Platform: "slack", Channel: "C1", ID: "10.1"}, User: "U1",
				Text: "and #general?", ReplyToBot: true}},
		{"direct message",
			incoming{channel: "D1", channelType: "im", user: "U1", text: "hi <@U2> <!here>", ts: "11.1"},
			bot.Message{EventID: "D1/11.1", Thread: bot.Thread{Platform: "slack", Channel: "D1", ID: "11.1"}, User: "U1",
				Text: "hi @U2 @here", Direct: true, TopLevel: true}},
		{"the bot itself", incoming{channel: "C1", user: "UBOT", text: "answer", ts: "12.1"},
			bot.Message{EventID: "C1/12.1", Thread: bot.Thread{Platform: "slack", Channel: "C1", ID: "12.1"}, User: "UBOT",
				Text: "answer", TopLevel: true, FromBot: true}},
		{"another bot", incoming{channel: "C1", user: "U9", botID: "B9", text: "beep", ts: "13.1"},
			bot.Message{EventID: "C1/13.1", Thread: bot.Thread{Platform: "slack", Channel: "C1", ID: "13.1"}, User: "U9",
				Text: "beep", TopLevel: true, FromBot: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := c.message(tt.in); got != tt.want {
				t.Errorf("message = %+v\nwant      %+v", got, tt.want)
			}
		})
	}
}

// TestSourcesLabelClosestPages: the pages of an uncertain answer are
// headed "Closest pages", in the thread and in the escalation post, and
// a context block still holds at most ten elements.
func TestSourcesLabelClosestPages(t *testing.T) {
	var cites []docent.Citation
	for n := 1; n <= 10; n++ {
		cites = append(cites, docent.Citation{N: n, Title: "Page " + strconv.Itoa(n)})
	}
	h := docent.Handoff{ID: 1, RequestedBy: "U1", Question: "gym?", State: docent.HandoffRequested}
	tests := []struct {
		name    string
		status  docent.Status
		closest bool
	}{
		{"answered", docent.StatusAnswered, false},
		{"uncertain", docent.StatusUncertain, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kind := bot.ReplyAnswer
			if tt.status == docent.StatusUncertain {
				kind = bot.ReplyUncertain
			}
			thread := render(bot.Reply{Kind: kind, Text: "Text [1].", Citations: cites}, "171.1")
			esc := escalation(h, docent.Answer{Status: tt.status, Text: "Text [1].", Citations: cites}, "", "")
			for name, blocks := range map[string][]slackapi.Block{"thread": thread[len(thread)-1].blocks, "escalation": esc.blocks} {
				js, err := json.Marshal(blocks)
				if err != nil {
					t.Fatal(err)
				}
				if has := strings.Contains(string(js), "Closest pages"); has != tt.closest {
					t.Errorf("%s: labelled closest pages: %v, want %v", name, has, tt.closest)
				}
				for _, b := range blocks {
					if c, ok := b.(*slackapi.ContextBlock); ok && len(c.ContextElements.Elements) > maxContextItems {
						t.Errorf("%s: context block %s holds %d elements", name, c.BlockID, len(c.ContextElements.Elements))
					}
				}
			}
		})
	}
}
