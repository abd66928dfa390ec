package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/bot"
	"github.com/docent-hq/docent/bot/slack/workspacetest"
	"github.com/docent-hq/docent/connectors/notion/notiontest"
	"github.com/docent-hq/docent/store"
)

// gatedNotion is a local Notion whose every request waits until release
// is closed: a first sync that takes as long as the test wants. syncing
// is closed when the first request arrives.
func gatedNotion(t *testing.T, pages ...notiontest.Page) (url string, syncing <-chan struct{}, release chan struct{}) {
	t.Helper()
	nt := notiontest.New(t)
	for _, p := range pages {
		nt.AddPage(p)
	}
	target, err := neturl(nt.URL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	started, open := make(chan struct{}), make(chan struct{})
	var once sync.Once
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		once.Do(func() { close(started) })
		select {
		case <-open:
		case <-r.Context().Done():
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, started, open
}

func neturl(s string) (*url.URL, error) { return url.Parse(s) }

// TestSlackHoldsQuestionsDuringTheFirstSync: a mention delivered while
// the first sync of an empty index runs is acked at once, acknowledged in
// its thread (the reaction and a note) and stored as no turn; when the
// sync lands it is answered in the same thread, with citations, within
// 30 s, and its turn records the delivery.
func TestSlackHoldsQuestionsDuringTheFirstSync(t *testing.T) {
	t.Parallel()
	ws := workspacetest.New(t)
	dir := t.TempDir()
	notion, syncing, release := gatedNotion(t, notiontest.Page{Title: "Gatekeeper error codes", Blocks: []*notiontest.Block{
		notiontest.Heading(2, "GK-409"),
		notiontest.Paragraph("Gatekeeper error GK-409 means your VPN token expired. Reset the token in the Gatekeeper portal under Security, then sign in again."),
	}})
	cfg := mustSlackConfig(t, dir, ws, "  - name: wiki\n    type: notion\n    notion:\n      api_url: "+notion+
		"\n      token: ${NOTION_TOKEN}\n      requests_per_second: 50\n", "")
	m := &Main{ConfigPath: cfg, Stdout: io.Discard, Stderr: io.Discard,
		Getenv: envOf(map[string]string{"NOTION_TOKEN": notiontest.Token})}
	_, stop := MustServeMain(t, m)
	released := false
	defer func() {
		if !released {
			close(release)
		}
		_ = stop()
	}()
	ws.WaitConnected(t)
	<-syncing

	mention, _ := ws.Mention(workspacetest.Said{Channel: slackHelp, User: slackAsker, Text: "What does Gatekeeper error GK-409 mean?"})
	if ack := ws.Send(t, "events_api", mention.Body); ack.After > 3*time.Second {
		t.Errorf("acked after %s, Slack waits 3s", ack.After)
	}
	held := ws.WaitBotMessages(t, slackHelp, mention.TS, 1)[0]
	if !strings.Contains(held.AllText(), bot.HoldText) {
		t.Errorf("acknowledgement:\n%s\nwant %q", held.AllText(), bot.HoldText)
	}
	ws.Wait(t, 10*time.Second, "the working reaction on the question", func() bool {
		for _, q := range ws.Messages(slackHelp) {
			if q.TS == mention.TS {
				return len(q.Reactions) == 1 && q.Reactions[0] == "eyes"
			}
		}
		return false
	})
	if turns, err := m.Store.ListTurns(context.Background(), store.TurnFilter{}); err != nil || len(turns) != 0 {
		t.Errorf("%d turns stored during the first sync (%v), want 0", len(turns), err)
	}

	released = true
	close(release)
	loadedAt := time.Now()
	answer := ws.WaitBotMessages(t, slackHelp, mention.TS, 2)[1] // within 30s
	if took := time.Since(loadedAt); took > 30*time.Second {
		t.Errorf("answered %s after the sync was let through, want within 30s", took)
	}
	text := answer.AllText()
	for _, want := range []string{"GK-409", "|[1]>", "Gatekeeper error codes"} {
		if !strings.Contains(text, want) {
			t.Errorf("answer lacks %q:\n%s", want, text)
		}
	}
	ws.Wait(t, 10*time.Second, "the reaction cleared", func() bool {
		for _, q := range ws.Messages(slackHelp) {
			if q.TS == mention.TS {
				return len(q.Reactions) == 0
			}
		}
		return false
	})
	turns, err := m.Store.ThreadTurns(context.Background(), "slack", slackHelp, mention.TS, 5)
	if err != nil || len(turns) != 1 || turns[0].Answer.Status != docent.StatusAnswered || turns[0].Delivery != docent.DeliveryPosted {
		t.Errorf("thread turns = %+v (%v), want the one answered and posted", turns, err)
	}
}
