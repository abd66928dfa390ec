package api

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// FuzzParseAsk feeds the /api/ask decoder arbitrary bodies and content
// types. It must never panic; it accepts exactly the bodies that are one
// JSON object (plus whitespace) with known fields and a non-blank question,
// and refuses everything else with a known code and status.
func FuzzParseAsk(f *testing.F) {
	for _, seed := range []struct{ body, contentType string }{
		{`{"question":"What does GK-409 mean?"}`, "application/json"},
		{`{"question":"q","filter":{"sources":["handbook"],"labels":["it"],"updated_after":"2025-01-01T00:00:00Z"},"trace":true}`, "application/json"},
		{`{"question":"q"} {"question":"r"}`, "application/json"},
		{`{"question":"q"}garbage`, ""},
		{`{"question":"q","k":1}`, "application/json; charset=utf-8"},
		{`{"question":"\u0000\ud800"}`, "application/x-www-form-urlencoded"},
		{`question=hi`, "application/x-www-form-urlencoded"},
		{`[{"question":"q"}]`, "application/json"},
		{`null`, "text/plain"},
		{``, ""},
		{"\xef\xbb\xbf{\"question\":\"bom\"}", "application/json"},
		{`{"question":"q","filter":{"updated_after":"yesterday"}}`, "application/problem+json"},
		{`{"question":` + strings.Repeat("[", 100) + `}`, "application/json"},
	} {
		f.Add([]byte(seed.body), seed.contentType)
	}
	codes := map[string]int{
		CodeInvalidJSON: http.StatusBadRequest, CodeUnknownField: http.StatusBadRequest,
		CodeTrailingData: http.StatusBadRequest, CodeEmptyQuestion: http.StatusBadRequest,
		CodeUnsupportedMediaType: http.StatusUnsupportedMediaType,
	}
	f.Fuzz(func(t *testing.T, body []byte, contentType string) {
		req, aerr := parseAsk(body, contentType)
		if aerr != nil {
			if want, ok := codes[aerr.code]; !ok || want != aerr.status || aerr.msg == "" {
				t.Fatalf("refusal %+v: unknown code, wrong status or no message", aerr)
			}
			if aerr.code == CodeUnsupportedMediaType && isJSONType(contentType) {
				t.Fatalf("415 for a JSON content type %q", contentType)
			}
			return
		}
		if strings.TrimSpace(req.Question) == "" {
			t.Fatal("accepted a blank question")
		}
		trimmed := bytes.TrimSpace(body)
		if !json.Valid(trimmed) || len(trimmed) == 0 || trimmed[0] != '{' {
			t.Fatalf("accepted a body that is not one JSON object: %q", body)
		}
		// Re-encoding what was accepted gives a body accepted the same way.
		again, err := json.Marshal(req)
		if err != nil {
			t.Fatal(err)
		}
		req2, aerr := parseAsk(again, "application/json")
		if aerr != nil || req2.Question != req.Question || req2.Trace != req.Trace ||
			!slices.Equal(req2.Filter.Sources, req.Filter.Sources) || !req2.Filter.UpdatedAfter.Equal(req.Filter.UpdatedAfter) {
			t.Fatalf("re-encoded request %s parsed as %+v, %v; want %+v", again, req2, aerr, req)
		}
	})
}
