package main

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docent-hq/docent/api"
)

// TestLinksFollowTheListenAddress: with server.public_url unset, the
// server moved to another port (server.addr, or serve --addr) logs
// `ready url=` with that port, and the answers' citation links point at
// it and open there.
func TestLinksFollowTheListenAddress(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		// file sets server.addr to localhost:PORT in a config file;
		// otherwise serve gets --addr 127.0.0.1:PORT.
		file bool
	}{
		{name: "server.addr", file: true},
		{name: "--addr"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			addr := testAddr(t)
			want, args := "http://"+addr, []string{"--addr", addr}
			data := t.TempDir() // fresh: the handbook is indexed under the address
			m := &Main{Stdout: io.Discard, Getenv: envOf(map[string]string{"DOCENT_DATA": data})}
			if tc.file {
				_, port, _ := strings.Cut(addr, ":")
				want, args = "http://localhost:"+port, []string{"--addr="} // over MustServeMain's --addr: server.addr
				m.ConfigPath = filepath.Join(t.TempDir(), "docent.yaml")
				if err := os.WriteFile(m.ConfigPath, []byte("server:\n  addr: localhost:"+port+"\n"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			var logs syncBuffer
			m.Stderr = &logs
			base, stop := MustServeMain(t, m, args...)
			t.Cleanup(func() { _ = stop() })
			if _, port, _ := strings.Cut(addr, ":"); !strings.HasSuffix(base, ":"+port) {
				t.Fatalf("listening at %s, want port %s", base, port)
			}
			waitReady(t, base)
			if !strings.Contains(logs.String(), "msg=ready url="+want+"\n") {
				t.Errorf("logs lack `ready url=%s`:\n%s", want, logs.String())
			}
			status, body := postAsk(t, base, `{"question": "How do I reset my VPN token?"}`)
			var resp api.AskResponse
			if err := json.Unmarshal(body, &resp); status != http.StatusOK || err != nil || len(resp.Citations) == 0 {
				t.Fatalf("POST /api/ask = %d %s (%v), want an answer with citations", status, body, err)
			}
			link := resp.Citations[0].URL
			if !strings.HasPrefix(link, want+"/docs/handbook/") {
				t.Fatalf("citation link %s, want it under %s/docs/handbook/", link, want)
			}
			page, err := http.Get(link)
			if err != nil {
				t.Fatal(err)
			}
			page.Body.Close()
			if page.StatusCode != http.StatusOK {
				t.Errorf("GET %s = %d, want 200", link, page.StatusCode)
			}
		})
	}
}
