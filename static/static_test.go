package static

import (
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"testing"
)

func TestHashedURLs(t *testing.T) {
	h := Handler()
	for _, name := range []string{"app.css", "app.js", "favicon.svg"} {
		t.Run(name, func(t *testing.T) {
			u := URL(name)
			if !regexp.MustCompile(`^/static/[a-z]+\.[0-9a-f]{12}\.[a-z]+$`).MatchString(u) {
				t.Fatalf("URL(%q) = %q, want a content-hashed path", name, u)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, u, nil))
			body, _ := io.ReadAll(rec.Body)
			want, _ := files.ReadFile(name)
			if rec.Code != http.StatusOK || string(body) != string(want) {
				t.Fatalf("GET %s = %d (%d bytes)", u, rec.Code, len(body))
			}
			if cc := rec.Header().Get("Cache-Control"); cc != "public, max-age=31536000, immutable" {
				t.Errorf("Cache-Control = %q", cc)
			}
			if rec.Header().Get("Content-Type") == "" {
				t.Error("no Content-Type")
			}
		})
	}
	for _, path := range []string{"/static/app.css", "/static/app.000000000000.css", "/static/../static.go"} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		if rec.Code != http.StatusNotFound {
			t.Errorf("GET %s = %d, want 404", path, rec.Code)
		}
	}
}
