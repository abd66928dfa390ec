package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/api"
	"github.com/docent-hq/docent/bot/slack/workspacetest"
	"github.com/docent-hq/docent/store"
)

// chatGoroutines counts the goroutines running docent's chat code (the
// bot core and its adapters), and the peak seen by sample.
type chatGoroutines struct {
	peak atomic.Int64
	buf  []byte
}

// sample counts them once.
func (g *chatGoroutines) sample() {
	for {
		n := runtime.Stack(g.buf, true)
		if n < len(g.buf) {
			g.buf = g.buf[:cap(g.buf)]
			count := int64(0)
			for _, st := range bytes.Split(g.buf[:n], []byte("\n\n")) {
				// bot/... but not the test's own workspace.
				if bytes.Contains(st, []byte("docent-hq/docent/bot")) && !bytes.Contains(st, []byte("workspacetest")) {
					count++
				}
			}
			if count > g.peak.Load() {
				g.peak.Store(count)
			}
			return
		}
		g.buf = make([]byte, 2*len(g.buf))
	}
}

// TestLoadChatAndAPI: 200 Slack mentions at once (Socket Mode, the real
// slack-go client against the local workspace) beside 100 concurrent API
// clients, through serve's one admission control: every envelope is
// acked within 3 s, no request gets a 5xx, the goroutines running chat
// code stay within the intake's workers and the admission's slots (not
// one per event), every mention is answered in its thread and every
// question is a stored turn, counted in docent_turns_total.
//
// It does not run in parallel: beside the package's other servers under
// -race on a shared machine, the admission control rightly estimates the
// wait past MaxWait and sheds API requests with 503 (seen: 90 of 100).
func TestLoadChatAndAPI(t *testing.T) {
	ws := workspacetest.New(t)
	dir := t.TempDir()
	cfg := MustDocsConfig(t, dir, tinyDocs, "")
	f, err := os.OpenFile(cfg, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(f, "slack:\n  api_url: %s\n  bot_token: %s\n  app_token: %s\n", ws.APIURL(), ws.BotToken, ws.AppToken)
	f.Close()
	var logs syncBuffer
	m := &Main{ConfigPath: cfg, Stdout: io.Discard, Stderr: &logs, Getenv: envOf(nil)}
	base, stop := MustServeMain(t, m)
	waitReady(t, base)
	ws.WaitConnected(t)
	slots := m.admission.Stats().Slots

	questions := []string{"When does the office open?", "Where is parking?", "How do I reset my VPN token?"}
	const events, clients, channels = 200, 100, 10
	// The mentions, written before the clock starts.
	mentions := make([]workspacetest.Event, events)
	for i := range mentions {
		mentions[i], _ = ws.Mention(workspacetest.Said{Channel: fmt.Sprintf("C0LOAD%04d", i%channels),
			User: fmt.Sprintf("U0LOAD%04d", i), Text: questions[i%len(questions)]})
	}
	var g chatGoroutines
	g.buf = make([]byte, 1<<20)
	sampling, stopSampling := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(sampling)
		for {
			select {
			case <-stopSampling:
				return
			case <-time.After(50 * time.Millisecond):
				g.sample()
			}
		}
	}()

	start := time.Now()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients}}
	var mu sync.Mutex
	codes := map[int]int{}
	var slowest time.Duration
	apiTurns := map[int64]bool{}
	var wg sync.WaitGroup
	for i, ev := range mentions {
		wg.Go(func() {
			ack := ws.Send(t, "events_api", ev.Body)
			mu.Lock()
			slowest = max(slowest, ack.After)
			mu.Unlock()
			_ = i
		})
	}
	for c := range clients {
		wg.Go(func() {
			r := ask(t, client, base, questions[c%len(questions)])
			mu.Lock()
			defer mu.Unlock()
			codes[r.status]++
			if r.status != http.StatusOK {
				t.Errorf("API client %d: status %d: %s", c, r.status, r.body)
				return
			}
			var resp api.AskResponse
			if err := json.Unmarshal(r.body, &resp); err != nil || resp.TurnID == 0 {
				t.Errorf("200 without a turn: %v %s", err, r.body)
				return
			}
			apiTurns[resp.TurnID] = true
		})
	}
	wg.Wait()
	for _, ev := range mentions {
		ch := fmt.Sprintf("C0LOAD%04d", indexOf(mentions, ev)%channels)
		ws.WaitBotMessages(t, ch, ev.TS, 1)
	}
	took := time.Since(start)
	close(stopSampling)
	<-sampling
	g.sample()
	t.Logf("%d mentions and %d API asks in %s; slowest ack %s; API statuses %v; chat goroutines at most %d (%d slots)",
		events, clients, took.Round(time.Millisecond), slowest, codes, g.peak.Load(), slots)
	if slowest > 3*time.Second {
		t.Errorf("slowest ack %s, Slack waits 3s", slowest)
	}
	// The intake's 16 workers, the answers running (at most every slot),
	// and a few for the Socket Mode connection.
	if bound := int64(16 + slots + 8); g.peak.Load() > bound {
		t.Errorf("%d goroutines ran chat code at once, want at most %d (intake workers + slots + a few), not one per event",
			g.peak.Load(), bound)
	}
	counted := metricSum(t, base, "docent_turns_total")
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	db := mustOpenStore(t, filepath.Join(dir, "data"))
	if stored := storedTurns(t, db); stored != events+clients || int(counted) != stored {
		t.Errorf("%d stored turns, docent_turns_total %v: want %d", stored, counted, events+clients)
	}
	chat, err := db.ListTurns(context.Background(), store.TurnFilter{Platform: "slack", Limit: 1000})
	if err != nil || len(chat) != events {
		t.Fatalf("%d Slack turns (%v), want %d", len(chat), err, events)
	}
	for _, tu := range chat {
		if tu.Delivery != docent.DeliveryPosted {
			t.Errorf("turn %d delivery %q, want posted", tu.ID, tu.Delivery)
		}
	}
	if len(apiTurns) != clients {
		t.Errorf("%d distinct API turns, want %d", len(apiTurns), clients)
	}
	if strings.Contains(logs.String(), "SQLITE_BUSY") || strings.Contains(logs.String(), "database is locked") {
		t.Errorf("the store was busy:\n%s", logs.String())
	}
}

func indexOf(evs []workspacetest.Event, ev workspacetest.Event) int {
	for i := range evs {
		if evs[i].ID == ev.ID {
			return i
		}
	}
	return -1
}
