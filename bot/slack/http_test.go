package slack_test

import (
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docent-hq/docent/bot/slack"
	"github.com/docent-hq/docent/bot/slack/workspacetest"
)

// TestEventsAPIVerifiesBeforeParsing: a request is accepted only with a
// valid v0 signature and a fresh timestamp; anything else is refused with
// 401 before its body is read as JSON (a body that is not JSON at all
// gets 401, not 400), a body over 1 MB gets 413, and nothing is answered.
func TestEventsAPIVerifiesBeforeParsing(t *testing.T) {
	h := newHarness(t, setup{http: true})
	url := h.url + slack.EventsPath
	ev, _ := h.ws.Mention(workspacetest.Said{Channel: help, User: asker, Text: "How do I reset my VPN token?"})
	tampered := []byte(strings.Replace(string(ev.Body), "VPN token", "VPN password", 1))
	big := []byte(`{"type":"event_callback","pad":"` + strings.Repeat("x", 1<<20) + `"}`)
	withoutHeader := func(name string) http.Header {
		hd := h.ws.Sign(ev.Body, time.Now())
		hd.Del(name)
		return hd
	}
	tests := []struct {
		name   string
		body   []byte
		header http.Header
		want   int
	}{
		{"signature over another body", tampered, h.ws.Sign(ev.Body, time.Now()), http.StatusUnauthorized},
		{"signed with another secret", ev.Body, workspacetest.SignWith("not-the-secret", ev.Body, time.Now()), http.StatusUnauthorized},
		{"no signature", ev.Body, withoutHeader("X-Slack-Signature"), http.StatusUnauthorized},
		{"no timestamp", ev.Body, withoutHeader("X-Slack-Request-Timestamp"), http.StatusUnauthorized},
		{"no headers at all", ev.Body, http.Header{}, http.StatusUnauthorized},
		{"timestamp 6 minutes old", ev.Body, h.ws.Sign(ev.Body, time.Now().Add(-6*time.Minute)), http.StatusUnauthorized},
		{"timestamp 6 minutes ahead", ev.Body, h.ws.Sign(ev.Body, time.Now().Add(6*time.Minute)), http.StatusUnauthorized},
		{"not JSON, unsigned: refused before parsing", []byte("{not json"), http.Header{}, http.StatusUnauthorized},
		{"not JSON, signed: unreadable", []byte("{not json"), h.ws.Sign([]byte("{not json"), time.Now()), http.StatusBadRequest},
		{"signed body over 1 MB", big, h.ws.Sign(big, time.Now()), http.StatusRequestEntityTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := workspacetest.Do(t, url, tt.body, tt.header).StatusCode; got != tt.want {
				t.Errorf("HTTP %d, want %d", got, tt.want)
			}
		})
	}
	h.client.WaitIdle()
	if n := len(h.questions()); n != 0 {
		t.Fatalf("%d questions answered from refused requests", n)
	}

	t.Run("a valid request is answered", func(t *testing.T) {
		start := time.Now()
		resp := h.ws.PostEvent(t, url, ev.Body, 0)
		if resp.StatusCode != http.StatusOK || time.Since(start) > 3*time.Second {
			t.Fatalf("HTTP %d after %s", resp.StatusCode, time.Since(start))
		}
		h.ws.WaitBotMessages(t, help, ev.TS, 1)
	})
}

func TestURLVerification(t *testing.T) {
	h := newHarness(t, setup{http: true})
	body := workspacetest.URLVerification("3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P")
	resp := h.ws.PostEvent(t, h.url+slack.EventsPath, body, 0)
	defer resp.Body.Close()
	var got struct{ Challenge string }
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil || resp.StatusCode != http.StatusOK ||
		got.Challenge != "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P" {
		t.Errorf("HTTP %d, challenge %q, %v", resp.StatusCode, got.Challenge, err)
	}
	unsigned := workspacetest.Do(t, h.url+slack.EventsPath, body, http.Header{"Content-Type": {"application/json"}})
	if unsigned.StatusCode != http.StatusUnauthorized {
		t.Errorf("unsigned url_verification: HTTP %d, want 401", unsigned.StatusCode)
	}
}

// TestRetriesAnsweredOnceAcrossRestart: the same event delivered three
// times (X-Slack-Retry-Num 1 and 2 after the first) gets one answer,
// and again once more after the process restarts on the same data.
func TestRetriesAnsweredOnceAcrossRestart(t *testing.T) {
	ws := workspacetest.New(t)
	dbPath := filepath.Join(t.TempDir(), "docent.db")
	h := newHarness(t, setup{http: true, ws: ws, dbPath: dbPath})
	ev, _ := ws.Mention(workspacetest.Said{Channel: help, User: asker, Text: "How do I reset my VPN token?"})
	for retry := range 3 {
		if resp := ws.PostEvent(t, h.url+slack.EventsPath, ev.Body, retry); resp.StatusCode != http.StatusOK {
			t.Fatalf("delivery %d: HTTP %d", retry, resp.StatusCode)
		}
	}
	ws.WaitBotMessages(t, help, ev.TS, 1)

	again := newHarness(t, setup{http: true, ws: ws, dbPath: dbPath}) // a restarted process
	if resp := ws.PostEvent(t, again.url+slack.EventsPath, ev.Body, 3); resp.StatusCode != http.StatusOK {
		t.Fatalf("after restart: HTTP %d", resp.StatusCode)
	}
	h.client.WaitIdle()
	again.client.WaitIdle()
	if n := len(h.questions()) + len(again.questions()); n != 1 {
		t.Errorf("answered %d times, want once", n)
	}
	if n := len(ws.BotMessages(help, ev.TS)); n != 1 {
		t.Errorf("%d replies, want 1", n)
	}
}

// TestInteractionsOverHTTP: a signed button press is carried out; a
// tampered one is refused with 401.
func TestInteractionsOverHTTP(t *testing.T) {
	h := newHarness(t, setup{http: true})
	_, r := h.ask(t, "How do I reset my VPN token?")
	payload := h.ws.Click(t, r, "docent_handoff", asker)

	tampered := []byte(strings.Replace(string(payload), asker, staff, 1))
	body := []byte("payload=" + string(tampered))
	hd := h.ws.Sign([]byte("payload="+string(payload)), time.Now())
	hd.Set("Content-Type", "application/x-www-form-urlencoded")
	resp := workspacetest.Do(t, h.url+slack.InteractionsPath, body, hd)
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("tampered press: HTTP %d, want 401", resp.StatusCode)
	}
	h.client.WaitIdle()
	if n := len(h.ws.Messages(escalation)); n != 0 {
		t.Fatalf("a tampered press escalated")
	}

	resp = h.ws.PostInteraction(t, h.url+slack.InteractionsPath, payload)
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || len(b) != 0 {
		t.Errorf("press: HTTP %d %q, want an empty 200", resp.StatusCode, b)
	}
	h.ws.Wait(t, 10*time.Second, "the escalation", func() bool { return len(h.ws.Messages(escalation)) == 1 })
}
