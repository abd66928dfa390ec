package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/bot"
	"github.com/docent-hq/docent/bot/discord/discordtest"
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
// its thread (the reaction and a note) and stored as no turn (small talk
// meanwhile is answered at once); when the
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
	// Small talk needs no index: answered at once, sync or not.
	hi, _ := ws.Mention(workspacetest.Said{Channel: slackHelp, User: slackAsker, Text: "good morning :)"})
	ws.Send(t, "events_api", hi.Body)
	if got := ws.WaitBotMessages(t, slackHelp, hi.TS, 1)[0].AllText(); strings.Contains(got, bot.HoldText) || strings.Contains(got, "http") {
		t.Errorf("small talk during the first sync got %q, want the short reply", got)
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

// TestDiscordHoldsQuestionsDuringTheFirstSync: the same on Discord — a
// mention during the first sync gets a thread with the typing indicator
// and the hold note at once, no turn, and its answer with citations in
// that thread within 30 s of the sync landing, recorded as posted.
func TestDiscordHoldsQuestionsDuringTheFirstSync(t *testing.T) {
	t.Parallel()
	srv := discordtest.NewServer(t)
	general := srv.AddChannel("general", discordtest.ChannelText)
	alice := srv.AddUser("alice")
	notion, syncing, release := gatedNotion(t, notiontest.Page{Title: "Gatekeeper error codes", Blocks: []*notiontest.Block{
		notiontest.Heading(2, "GK-409"),
		notiontest.Paragraph("Gatekeeper error GK-409 means your VPN token expired. Reset the token in the Gatekeeper portal under Security, then sign in again."),
	}})
	cfg := filepath.Join(t.TempDir(), "docent.yaml")
	sources := "sources:\n  - name: wiki\n    type: notion\n    notion:\n      api_url: " + notion +
		"\n      token: ${NOTION_TOKEN}\n      requests_per_second: 50\n"
	if err := os.WriteFile(cfg, []byte(discordYAML(t.TempDir(), srv, "", "", sources, "")), 0o600); err != nil {
		t.Fatal(err)
	}
	m := &Main{ConfigPath: cfg, Stdout: io.Discard, Stderr: io.Discard,
		Getenv: envOf(map[string]string{"NOTION_TOKEN": notiontest.Token, "DISCORD_TOKEN": srv.Token})}
	_, stop := MustServeMain(t, m)
	released := false
	defer func() {
		if !released {
			close(release)
		}
		_ = stop()
	}()
	srv.WaitReady(t)
	<-syncing

	q := srv.Post(general.ID, alice, srv.Bot.Mention()+" What does Gatekeeper error GK-409 mean?")
	srv.WaitFor(t, "the hold note in the question's thread", func() bool {
		msgs := srv.BotMessages(q.ID)
		return len(msgs) == 1 && msgs[0].Content == bot.HoldText
	})
	if n := len(srv.RequestsTo("POST /channels/" + q.ID + "/typing")); n == 0 {
		t.Error("no typing indicator in the thread while the question is held")
	}
	if turns, err := m.Store.ListTurns(context.Background(), store.TurnFilter{}); err != nil || len(turns) != 0 {
		t.Errorf("%d turns stored during the first sync (%v), want 0", len(turns), err)
	}

	released = true
	close(release)
	loadedAt := time.Now()
	a := answerIn(t, srv, q.ID)
	if took := time.Since(loadedAt); took > 30*time.Second {
		t.Errorf("answered %s after the sync was let through, want within 30s", took)
	}
	if !strings.Contains(a.Content, "GK-409") || !strings.Contains(a.Content, `[\[1\]](<`) || len(cited(a)) == 0 {
		t.Errorf("answer %q citing %q, want GK-409 explained with its source", a.Content, cited(a))
	}
	srv.WaitFor(t, "the delivery recorded", func() bool {
		turns, _ := m.Store.ThreadTurns(context.Background(), "discord", general.ID, q.ID, 5)
		return len(turns) == 1 && turns[0].Delivery != ""
	})
	turns, err := m.Store.ThreadTurns(context.Background(), "discord", general.ID, q.ID, 5)
	if err != nil || len(turns) != 1 || turns[0].Answer.Status != docent.StatusAnswered || turns[0].Delivery != docent.DeliveryPosted {
		t.Errorf("thread turns = %+v (%v), want the one answered and posted", turns, err)
	}
}
