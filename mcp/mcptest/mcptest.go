// Package mcptest connects the MCP SDK's own client to a docent MCP
// server, in memory or over streamable HTTP, for tests; node/ holds a
// pinned TypeScript SDK client that tests run as a third-party client.
package mcptest

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	docentmcp "github.com/docent-hq/docent/mcp"
)

// MustConnect connects a client to s over in-memory transports; the
// session closes with the test.
func MustConnect(tb testing.TB, s *docentmcp.Server) *sdk.ClientSession {
	tb.Helper()
	ct, st := sdk.NewInMemoryTransports()
	if _, err := s.Connect(context.Background(), st); err != nil {
		tb.Fatal(err)
	}
	return mustClient(tb, ct)
}

// MustConnectHTTP connects a client to the streamable HTTP endpoint,
// sending token as a bearer token when it is not empty.
func MustConnectHTTP(tb testing.TB, endpoint, token string) *sdk.ClientSession {
	tb.Helper()
	cs, err := ConnectHTTP(endpoint, token)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { cs.Close() })
	return cs
}

// ConnectHTTP is MustConnectHTTP returning its error (a refused token).
func ConnectHTTP(endpoint, token string) (*sdk.ClientSession, error) {
	client := &http.Client{Transport: bearer{token: token, next: http.DefaultTransport}}
	t := &sdk.StreamableClientTransport{Endpoint: endpoint, HTTPClient: client, MaxRetries: -1}
	c := sdk.NewClient(&sdk.Implementation{Name: "docent-test", Version: "v0"}, nil)
	return c.Connect(context.Background(), t, nil)
}

func mustClient(tb testing.TB, t sdk.Transport) *sdk.ClientSession {
	tb.Helper()
	c := sdk.NewClient(&sdk.Implementation{Name: "docent-test", Version: "v0"}, nil)
	cs, err := c.Connect(context.Background(), t, nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { cs.Close() })
	return cs
}

type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	if b.token != "" {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+b.token)
	}
	return b.next.RoundTrip(r)
}

// Call calls a tool and decodes its structured content into out (when
// the call succeeded). It returns the result, whose IsError and text the
// caller checks.
func Call(tb testing.TB, cs *sdk.ClientSession, tool string, args map[string]any, out any) *sdk.CallToolResult {
	tb.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		tb.Fatalf("call %s: %v", tool, err)
	}
	if !res.IsError && out != nil {
		b, err := json.Marshal(res.StructuredContent)
		if err != nil {
			tb.Fatal(err)
		}
		if err := json.Unmarshal(b, out); err != nil {
			tb.Fatalf("%s: structured content %s: %v", tool, b, err)
		}
	}
	return res
}

// Text joins the text content of a result.
func Text(res *sdk.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if t, ok := c.(*sdk.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, "\n")
}
