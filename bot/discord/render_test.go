package discord

import (
	"strings"
	"testing"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/bot"
)

func TestSplitNeverCutsALink(t *testing.T) {
	cites := []docent.Citation{{N: 1, URL: "https://docs.example.com/" + strings.Repeat("x", 80)}}
	for _, n := range []int{10, 50, 200} {
		text := linkCitations(strings.Repeat("word [1] ", n)+strings.Repeat("y", 300)+" [1]", cites)
		for _, max := range []int{120, 300, 2000} {
			parts := split(text, max)
			if got := strings.Join(parts, " "); strings.Count(got, `[\[1\]](<`) != strings.Count(text, `[\[1\]](<`) {
				t.Errorf("n=%d max=%d: links lost or cut", n, max)
			}
			for _, p := range parts {
				if length(p) > max {
					t.Errorf("n=%d max=%d: part of %d", n, max, length(p))
				}
				if c := strings.Count(p, "[\\["); c != strings.Count(p, "\\]](<") {
					t.Errorf("n=%d max=%d: a link cut in %q", n, max, p)
				}
			}
		}
	}
}

func TestRenderCapsParts(t *testing.T) {
	c := &Client{}
	r := bot.Reply{Kind: bot.ReplyAnswer, Text: strings.Repeat("A sentence that goes on. ", 2000),
		Buttons: []bot.ActionKind{bot.ActionHelpful}, TurnID: 7}
	parts := c.render(r, bot.Thread{Channel: "1", ID: "2"})
	if len(parts) != maxParts || !strings.HasSuffix(parts[maxParts-1].Content, "*(answer shortened)*") ||
		length(parts[maxParts-1].Content) > maxContent || len(parts[maxParts-1].Components) != 1 {
		t.Errorf("%d parts, last %q", len(parts), parts[len(parts)-1].Content[max(0, len(parts[len(parts)-1].Content)-40):])
	}
}

func TestCustomIDRoundTrip(t *testing.T) {
	for _, k := range []bot.ActionKind{bot.ActionHelpful, bot.ActionNotHelpful, bot.ActionHandoff, bot.ActionClaim, bot.ActionResolve} {
		id := customID(k, 1234567890123, "1299999999999999999")
		if len(id) > 100 {
			t.Errorf("%s: custom ID %q over 100", k, id)
		}
		kind, n, root, ok := parseCustomID(id)
		if !ok || kind != k || n != 1234567890123 || root != "1299999999999999999" {
			t.Errorf("%q read back as %s %d %q %v", id, kind, n, root, ok)
		}
	}
	for _, bad := range []string{"", "docent", "docent:helpful", "docent:delete:1", "other:helpful:1", "docent:helpful:x", "docent:helpful:-1"} {
		if _, _, _, ok := parseCustomID(bad); ok {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestSourceLineEscapesTitles(t *testing.T) {
	line := sourceLine(docent.Citation{N: 3, Title: "Q1 [draft] *notes*", Section: "a_b", URL: "https://x.test/p"}, true)
	want := "`[3]` [Q1 \\[draft\\] \\*notes\\* › a\\_b](https://x.test/p) · ⚠️ **may be out of date**"
	if line != want {
		t.Errorf("line = %q, want %q", line, want)
	}
}
