package main

import (
	"context"
	"net/http"

	"github.com/docent-hq/docent/config"
)

// chatAdapter is a chat platform serve runs beside the HTTP API.
type chatAdapter interface {
	// Routes adds the adapter's HTTP endpoints, if it has any.
	Routes(mux *http.ServeMux)
	// Run receives events until ctx ends; it returns an error only when
	// it cannot go on (credentials refused).
	Run(ctx context.Context) error
	// Shutdown waits for the answers in flight, until ctx ends.
	Shutdown(ctx context.Context) error
}

// chatOpeners open the chat adapters; each returns nil when its section
// is off. A new platform is a package and a line here.
var chatOpeners = []func(ctx context.Context, m *Main) (chatAdapter, error){
	openDiscord,
}

// openChats opens every chat adapter the configuration turns on.
func (m *Main) openChats(ctx context.Context) ([]chatAdapter, error) {
	var out []chatAdapter
	for _, open := range chatOpeners {
		a, err := open(ctx, m)
		if err != nil {
			return nil, err
		}
		if a != nil {
			out = append(out, a)
		}
	}
	return out, nil
}

// chatSeams are the chat adapters cfg turns on, for `docent config`.
func chatSeams(cfg config.Config) []Seam {
	var out []Seam
	if dc := cfg.Discord; dc.Enabled() {
		out = append(out, discordSeam(cfg))
	}
	return out
}
