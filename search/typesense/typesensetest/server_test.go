package typesensetest

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"
)

func mustCluster(t *testing.T) *Cluster {
	t.Helper()
	c, err := New(1, Options{})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(c.Close)
	return c
}

func do(t *testing.T, c *Cluster, key, method, path, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, c.URLs()[0]+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("X-TYPESENSE-API-KEY", key)
	}
	if body != "" {
		ct := "application/json"
		if strings.Contains(path, "/import") {
			ct = "application/octet-stream"
		}
		req.Header.Set("Content-Type", ct)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

const schemaOK = `{"name":"books","fields":[{"name":"title","type":"string","stem":true},{"name":"year","type":"int32"},` +
	`{"name":"tags","type":"string[]","facet":true},{"name":"vec","type":"float[]","num_dim":3}],"token_separators":["-"]}`

const docOK = `{"id":"1","title":"Garden roses","year":2001,"tags":["a,b [x]"],"vec":[1,0,0]}`

func search(c string) string {
	return `{"searches":[` + c + `]}`
}

// TestRejectsMalformed sends requests the real server would refuse and
// checks that each is refused, with the real status, and recorded as a
// violation; the well-formed ones next to them pass.
func TestRejectsMalformed(t *testing.T) {
	c := mustCluster(t)
	key := c.APIKey()
	if code, body := do(t, c, key, "POST", "/collections", schemaOK); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	if code, body := do(t, c, key, "POST", "/collections/books/documents/import?action=upsert", docOK); code != 200 || !strings.Contains(body, `"success":true`) {
		t.Fatalf("import: %d %s", code, body)
	}
	good := []struct{ name, method, path, body string }{
		{"keyword search", "POST", "/multi_search?use_cache=false", search(`{"collection":"books","q":"rose","query_by":"title","num_typos":"0","prefix":"false"}`)},
		{"vector search", "POST", "/multi_search?use_cache=false", search(`{"collection":"books","q":"*","vector_query":"vec:([0.5,0.5,0], k:3)"}`)},
		{"filter with backticks", "POST", "/multi_search?use_cache=false", search("{\"collection\":\"books\",\"q\":\"*\",\"filter_by\":\"tags:=[`a,b [x]`] && year:>=2000\"}")},
		{"delete by filter", "DELETE", "/collections/books/documents?filter_by=year:<1900", ""},
		{"export", "GET", "/collections/books/documents/export?filter_by=year:=2001&include_fields=title", ""},
	}
	for _, tt := range good {
		t.Run("accepts "+tt.name, func(t *testing.T) {
			code, body := do(t, c, key, tt.method, tt.path, tt.body)
			if code != 200 || strings.Contains(body, `"error"`) {
				t.Errorf("%d %s", code, body)
			}
		})
	}
	if v := c.Violations(); len(v) != 0 {
		t.Fatalf("well-formed requests recorded as violations: %v", v)
	}

	bad := []struct {
		name, method, path, key, body string
		status                        int
		want                          string
	}{
		{"no API key", "GET", "/collections/books", "", "", 401, "Forbidden"},
		{"wrong API key", "GET", "/collections/books", "nope", "", 401, "Forbidden"},
		{"unknown collection: import", "POST", "/collections/films/documents/import?action=upsert", key, docOK, 404, "films"},
		{"unknown collection: delete", "DELETE", "/collections/films/documents?filter_by=year:=1", key, "", 404, "films"},
		{"unknown collection: search", "POST", "/multi_search?use_cache=false", key, search(`{"collection":"films","q":"*"}`), 200, `"code":404`},
		{"field type not a string (spec)", "POST", "/collections", key, `{"name":"x","fields":[{"name":"a","type":5}]}`, 400, "must be a string"},
		{"unknown field type", "POST", "/collections", key, `{"name":"x","fields":[{"name":"a","type":"strang"}]}`, 400, "invalid data type"},
		{"import action not in enum (spec)", "POST", "/collections/books/documents/import?action=replace", key, docOK, 400, "allowed values"},
		{"import document of the wrong type", "POST", "/collections/books/documents/import?action=upsert", key,
			`{"id":"2","title":"x","year":"2001","tags":[],"vec":[1,0,0]}`, 200, "must be an int32"},
		{"import vector of the wrong length", "POST", "/collections/books/documents/import?action=upsert", key,
			`{"id":"2","title":"x","year":1,"tags":[],"vec":[1,0]}`, 200, "must have 3 dimensions"},
		{"per_page not an integer (spec)", "POST", "/multi_search?use_cache=false", key, search(`{"collection":"books","q":"*","per_page":"ten"}`), 400, "must be an integer"},
		{"multi_search without query parameters (spec)", "POST", "/multi_search", key, search(`{"collection":"books","q":"*"}`), 400, "multiSearchParameters"},
		{"vector_query of the wrong length", "POST", "/multi_search?use_cache=false", key, search(`{"collection":"books","q":"*","vector_query":"vec:([1,0], k:3)"}`), 200, "must have 3 dimensions"},
		{"vector_query on a non-vector field", "POST", "/multi_search?use_cache=false", key, search(`{"collection":"books","q":"*","vector_query":"title:([1,0,0], k:3)"}`), 200, "vector query index"},
		{"vector_query malformed", "POST", "/multi_search?use_cache=false", key, search(`{"collection":"books","q":"*","vector_query":"vec:[1,0,0]"}`), 200, "Malformed vector query"},
		{"vector_query with a bad k", "POST", "/multi_search?use_cache=false", key, search(`{"collection":"books","q":"*","vector_query":"vec:([1,0,0], k:-1)"}`), 200, "Malformed vector query"},
		{"filter on an unknown field", "POST", "/multi_search?use_cache=false", key, search(`{"collection":"books","q":"*","filter_by":"genre:=x"}`), 200, "filter field named `genre`"},
		{"filter with a number that is not", "DELETE", "/collections/books/documents?filter_by=year:>=abc", key, "", 400, "Not a int32"},
		{"filter value with an unbalanced backtick", "DELETE", "/collections/books/documents?filter_by=tags:=[`a,b]", key, "", 400, "Could not parse"},
		{"facet on a field that is not a facet", "POST", "/multi_search?use_cache=false", key, search(`{"collection":"books","q":"*","facet_by":"title"}`), 200, "facet field named"},
		{"page too large", "POST", "/multi_search?use_cache=false", key, search(`{"collection":"books","q":"*","per_page":251}`), 200, "250"},
		{"unknown search parameter", "POST", "/multi_search?use_cache=false", key, search(`{"collection":"books","q":"*","fliter_by":"year:=1"}`), 200, "fliter_by"},
		{"alias to a missing collection", "PUT", "/aliases/shelf", key, `{"collection_name":"films"}`, 404, "films"},
		{"collection that exists", "POST", "/collections", key, schemaOK, 409, "already exists"},
		{"no such endpoint (spec)", "GET", "/collections/books/overrides/x/y", key, "", 400, "no such operation"},
	}
	for _, tt := range bad {
		t.Run("refuses "+tt.name, func(t *testing.T) {
			if strings.HasSuffix(tt.name, "(spec)") && !c.SpecChecked() {
				t.Skip("the official OpenAPI spec is not on this machine")
			}
			before := len(c.Violations())
			code, body := do(t, c, tt.key, tt.method, tt.path, tt.body)
			if code != tt.status || !strings.Contains(body, tt.want) {
				t.Errorf("got %d %s; want %d containing %q", code, body, tt.status, tt.want)
			}
			if after := len(c.Violations()); after != before+1 {
				t.Errorf("violations went from %d to %d; want one more", before, after)
			}
		})
	}
	if !c.SpecChecked() {
		t.Log("spec not found: the (spec) cases above were refused by the server's own checks")
	}
}

// TestWithoutSpec: the server runs, and keeps its own checks, without the
// spec file.
func TestWithoutSpec(t *testing.T) {
	c, err := New(1, Options{SpecPath: SpecOff})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.SpecChecked() {
		t.Fatal("SpecChecked with the spec off")
	}
	if code, body := do(t, c, c.APIKey(), "POST", "/collections", schemaOK); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	if code, _ := do(t, c, c.APIKey(), "DELETE", "/collections/films/documents?filter_by=year:=1", ""); code != 404 {
		t.Errorf("unknown collection: %d, want 404", code)
	}
	if len(c.Violations()) != 1 {
		t.Errorf("violations = %v, want the one refusal", c.Violations())
	}
}

// TestLookupsAreNotViolations: asking whether an alias or document exists
// is how clients find out; a 404 there is an answer, not a refusal.
func TestLookupsAreNotViolations(t *testing.T) {
	c := mustCluster(t)
	for _, p := range []string{"/aliases/none", "/collections/none", "/collections/none/documents/x"} {
		if code, _ := do(t, c, c.APIKey(), "GET", p, ""); code != 404 {
			t.Errorf("GET %s = %d, want 404", p, code)
		}
	}
	if v := c.Violations(); len(v) != 0 {
		t.Errorf("violations = %v, want none", v)
	}
}

// TestFaults: an unavailable node answers 503, a hanging-up node closes
// the connection after reading the body, a cluster without a leader
// reports it on /health.
func TestFaults(t *testing.T) {
	c, err := New(2, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	get := func(i int, path string) (int, error) {
		req, _ := http.NewRequest("GET", c.URLs()[i]+path, nil)
		req.Header.Set("X-TYPESENSE-API-KEY", c.APIKey())
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	c.SetFault(0, Unavailable)
	if code, err := get(0, "/health"); err != nil || code != 503 {
		t.Errorf("unavailable node: %d, %v; want 503", code, err)
	}
	if code, err := get(1, "/health"); err != nil || code != 200 {
		t.Errorf("healthy node: %d, %v; want 200", code, err)
	}
	c.SetFault(0, Hangup)
	req, _ := http.NewRequest("POST", c.URLs()[0]+"/collections", bytes.NewBufferString(schemaOK))
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
		t.Errorf("hang-up node answered %d", resp.StatusCode)
	}
	c.SetFault(0, Healthy)
	c.SetLeader(false)
	if code, _ := get(1, "/health"); code != 503 {
		t.Errorf("no leader: /health = %d, want 503", code)
	}
	c.SetLeader(true)
	if code, _ := get(1, "/health"); code != 200 {
		t.Errorf("leader back: /health = %d, want 200", code)
	}
}
