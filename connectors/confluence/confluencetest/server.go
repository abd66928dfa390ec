// Package confluencetest is a fake Confluence for tests: an HTTP server
// speaking the parts of Confluence Cloud's REST API v2 and Data Center's
// REST API v1 that the confluence source uses, with their documented
// response shapes, pagination (v2: opaque cursors in _links.next and the
// Link header; v1: start/limit with _links.next), limits, auth and
// errors. Tests edit its spaces and pages, restrict pages, inject
// failures and rate limits, and count the requests it served.
package confluencetest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docent-hq/docent/connectors/webapi/webapitest"
)

// Flavor is the API the server speaks.
type Flavor string

// Flavors (the values of confluence.Flavor).
const (
	Cloud      Flavor = "cloud"
	DataCenter Flavor = "datacenter"
)

// Credentials the server accepts.
const (
	Email = "bot@acme.example"
	Token = "atl-token-0123456789"
)

// Page is a page the server holds.
type Page struct {
	ID, SpaceKey, Title, ParentID string
	// Body is the storage-format body; with Body empty and Size > 0 the
	// server makes a body of about Size bytes from the ID on each
	// request (large spaces without holding their bodies).
	Body string
	Size int
	// Labels are the page's labels.
	Labels []string
	// Version and Modified describe the current version.
	Version  int
	Modified time.Time
	// Restricted pages are invisible to the account: left out of
	// listings, 403 when asked for.
	Restricted bool
	// Author is the display name of the last editor.
	Author string
}

// Server is a fake Confluence. Create it with New.
type Server struct {
	// URL is the base URL a source is configured with: ".../wiki" for
	// Cloud, ".../confluence" (a context path) for Data Center.
	URL string
	// Flavor is the API it speaks.
	Flavor Flavor

	// Faults scripts failures (Script, and FailPage for one page) and
	// counts requests (Requests).
	webapitest.Faults

	srv *httptest.Server

	mu       sync.Mutex
	now      time.Time
	spaces   []space
	pages    map[string]*Page
	nextID   int
	bodies   map[string]int // page ID -> bodies served
	labelIDs map[string]string
}

type space struct{ ID, Key, Name string }

// Start is the time of the server's first change.
var Start = time.Date(2026, 2, 2, 9, 0, 0, 0, time.UTC)

// New starts a server of flavor holding the given space keys (empty),
// closed when the test ends.
func New(t testing.TB, flavor Flavor, spaceKeys ...string) *Server {
	t.Helper()
	s := &Server{Flavor: flavor, now: Start, pages: map[string]*Page{}, nextID: 1000,
		bodies: map[string]int{}, labelIDs: map[string]string{}}
	for i, k := range spaceKeys {
		s.spaces = append(s.spaces, space{ID: strconv.Itoa(100 + i), Key: k, Name: k + " space"})
	}
	s.srv = httptest.NewServer(s)
	t.Cleanup(s.srv.Close)
	if flavor == Cloud {
		s.URL = s.srv.URL + "/wiki"
	} else {
		s.URL = s.srv.URL + "/confluence"
	}
	return s
}

// Tick advances the server's clock: the next change is dated after it.
func (s *Server) Tick(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.now = s.now.Add(d)
}

// Now returns the server's clock.
func (s *Server) Now() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.now
}

// Put creates a page (p.ID empty: a new ID is given) or replaces it as a
// new version dated now, and returns its ID.
func (s *Server) Put(p Page) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.now = s.now.Add(time.Second)
	if p.ID == "" {
		s.nextID++
		p.ID = strconv.Itoa(s.nextID)
	}
	if old, ok := s.pages[p.ID]; ok {
		p.Version = old.Version + 1
	} else if p.Version == 0 {
		p.Version = 1
	}
	if p.Modified.IsZero() {
		p.Modified = s.now
	}
	if p.Author == "" {
		p.Author = "Dana Reyes"
	}
	cp := p
	s.pages[p.ID] = &cp
	return p.ID
}

// Edit changes a page in place as a new version (fn edits it).
func (s *Server) Edit(id string, fn func(*Page)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.pages[id]
	if !ok {
		panic("confluencetest: no page " + id)
	}
	s.now = s.now.Add(time.Second)
	fn(p)
	p.Version++
	p.Modified = s.now
}

// SetModified dates a page's current version (a change the listing shows
// late), without a new version.
func (s *Server) SetModified(id string, t time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pages[id].Modified = t
}

// Get returns a copy of a page.
func (s *Server) Get(id string) (Page, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.pages[id]
	if !ok {
		return Page{}, false
	}
	return *p, true
}

// Delete removes pages.
func (s *Server) Delete(ids ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range ids {
		delete(s.pages, id)
	}
}

// Restrict makes a page invisible to the account (on) or visible again,
// without a new version, as a permission change does.
func (s *Server) Restrict(id string, on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pages[id].Restricted = on
}

// SetLabels replaces a page's labels without a new version, as labelling
// does.
func (s *Server) SetLabels(id string, labels ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pages[id].Labels = labels
}

// FailPage makes requests about one page (the page, its labels) answer
// status, times times (< 0: until FailPage(id, 0, 0)).
func (s *Server) FailPage(id string, status, times int) { s.Fail(id, status, times) }

// Bodies returns how many times each page's body was served.
func (s *Server) Bodies() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.bodies)
}

// ResetCounts zeroes the request and body counts.
func (s *Server) ResetCounts() {
	s.Reset()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.bodies = map[string]int{}
}

// Body returns the storage-format body of p as the server serves it.
func Body(p *Page) string {
	if p.Body != "" || p.Size <= 0 {
		return p.Body
	}
	var b strings.Builder
	line := fmt.Sprintf("<p>Page %s paragraph about deployments, on-call rotations and expense policy number %s.</p>\n", p.ID, p.ID)
	for b.Len() < p.Size {
		b.WriteString(line)
	}
	return b.String()
}

// ServeHTTP routes a request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a, ok := s.Next(); ok {
		for k, v := range a.Header {
			w.Header()[k] = v
		}
		s.errorJSON(w, a.Status, "scripted failure")
		return
	}
	if !s.authorized(r) {
		s.Count("unauthorized")
		s.errorJSON(w, http.StatusUnauthorized, "Unauthorized; scope does not match")
		return
	}
	if r.Method != http.MethodGet {
		s.errorJSON(w, http.StatusMethodNotAllowed, "method not allowed")
		return
	}
	if s.Flavor == Cloud {
		s.serveCloud(w, r)
	} else {
		s.serveDC(w, r)
	}
}

func (s *Server) authorized(r *http.Request) bool {
	h := r.Header.Get("Authorization")
	if s.Flavor == Cloud {
		return h == "Basic "+base64.StdEncoding.EncodeToString([]byte(Email+":"+Token))
	}
	return h == "Bearer "+Token
}

func (s *Server) errorJSON(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if s.Flavor == Cloud {
		json.NewEncoder(w).Encode(map[string]any{"errors": []map[string]any{{"status": status, "code": http.StatusText(status), "title": msg}}})
		return
	}
	json.NewEncoder(w).Encode(map[string]any{"statusCode": status, "message": msg})
}

func writeJSON(w http.ResponseWriter, h http.Header, v any) {
	for k, vs := range h {
		w.Header()[k] = vs
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// pageFault applies FailPage to a request about page id; it reports
// whether it answered.
func (s *Server) pageFault(w http.ResponseWriter, id string) bool {
	status, ok := s.Failing(id)
	if ok {
		s.errorJSON(w, status, "injected failure")
	}
	return ok
}

// visible returns the visible current pages of a space, by ID, or sorted
// newest first.
func (s *Server) visible(key string, newestFirst bool) []*Page {
	var out []*Page
	for _, p := range s.pages {
		if p.SpaceKey == key && !p.Restricted {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b *Page) int {
		if newestFirst {
			if c := b.Modified.Compare(a.Modified); c != 0 {
				return c
			}
		}
		ai, _ := strconv.Atoi(a.ID)
		bi, _ := strconv.Atoi(b.ID)
		return ai - bi
	})
	return out
}

func (s *Server) spaceByID(id string) (space, bool) {
	for _, sp := range s.spaces {
		if sp.ID == id {
			return sp, true
		}
	}
	return space{}, false
}

func (s *Server) spaceByKey(key string) (space, bool) {
	for _, sp := range s.spaces {
		if sp.Key == key {
			return sp, true
		}
	}
	return space{}, false
}

// limit reads the limit parameter: default def, 400 above max.
func limit(w http.ResponseWriter, q url.Values, def, maxLimit int, s *Server) (int, bool) {
	v := q.Get("limit")
	if v == "" {
		return def, true
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > maxLimit {
		s.errorJSON(w, http.StatusBadRequest, fmt.Sprintf("limit must be between 1 and %d", maxLimit))
		return 0, false
	}
	return n, true
}

// Cloud (REST API v2).

func (s *Server) serveCloud(w http.ResponseWriter, r *http.Request) {
	path := strings.TrimPrefix(r.URL.Path, "/wiki/api/v2")
	if path == r.URL.Path {
		s.errorJSON(w, http.StatusNotFound, "not found")
		return
	}
	parts := strings.Split(strings.Trim(path, "/"), "/")
	q := r.URL.Query()
	switch {
	case len(parts) == 1 && parts[0] == "spaces":
		s.Count("spaces")
		var keys []string
		for _, k := range q["keys"] {
			keys = append(keys, strings.Split(k, ",")...)
		}
		var out []any
		for _, sp := range s.spaces {
			if len(keys) == 0 || slices.Contains(keys, sp.Key) {
				out = append(out, map[string]any{"id": sp.ID, "key": sp.Key, "name": sp.Name, "type": "global",
					"status": "current", "_links": map[string]any{"webui": "/spaces/" + sp.Key}})
			}
		}
		s.cloudPage(w, r, out, 25)
	case len(parts) == 3 && parts[0] == "spaces" && parts[2] == "pages":
		sp, ok := s.spaceByID(parts[1])
		if !ok {
			s.errorJSON(w, http.StatusNotFound, "space not found")
			return
		}
		bodies := q.Get("body-format") == "storage"
		if bodies {
			s.Count("pages+body")
		} else {
			s.Count("pages")
		}
		if st := q.Get("status"); st != "" && st != "current" {
			s.cloudPage(w, r, nil, 25)
			return
		}
		var out []any
		for _, p := range s.visible(sp.Key, q.Get("sort") == "-modified-date") {
			out = append(out, p)
		}
		s.cloudPageFunc(w, r, out, 25, func(v any) any { return s.v2Page(v.(*Page), bodies) })
	case len(parts) == 2 && parts[0] == "pages":
		s.Count("page")
		p, ok := s.pages[parts[1]]
		switch {
		case s.pageFault(w, parts[1]):
		case !ok:
			s.errorJSON(w, http.StatusNotFound, "page not found")
		case p.Restricted:
			s.errorJSON(w, http.StatusForbidden, "not permitted to view this page")
		default:
			writeJSON(w, nil, s.v2Page(p, q.Get("body-format") == "storage"))
		}
	case len(parts) == 3 && parts[0] == "pages" && parts[2] == "labels":
		s.Count("labels")
		p, ok := s.pages[parts[1]]
		switch {
		case s.pageFault(w, parts[1]):
		case !ok:
			s.errorJSON(w, http.StatusNotFound, "page not found")
		case p.Restricted:
			s.errorJSON(w, http.StatusForbidden, "not permitted")
		default:
			var out []any
			for _, l := range p.Labels {
				out = append(out, map[string]any{"id": s.labelID(l), "name": l, "prefix": "global"})
			}
			s.cloudPage(w, r, out, 25)
		}
	case len(parts) == 4 && parts[0] == "spaces" && parts[2] == "content" && parts[3] == "labels":
		s.Count("space-labels")
		sp, ok := s.spaceByID(parts[1])
		if !ok {
			s.errorJSON(w, http.StatusNotFound, "space not found")
			return
		}
		seen := map[string]bool{}
		var out []any
		for _, p := range s.visible(sp.Key, false) {
			for _, l := range p.Labels {
				if !seen[l] {
					seen[l] = true
					out = append(out, map[string]any{"id": s.labelID(l), "name": l, "prefix": "global"})
				}
			}
		}
		s.cloudPage(w, r, out, 25)
	case len(parts) == 3 && parts[0] == "labels" && parts[2] == "pages":
		s.Count("label-pages")
		var out []any
		spaceIDs := q["space-id"]
		for _, sp := range s.spaces {
			if len(spaceIDs) > 0 && !slices.Contains(spaceIDs, sp.ID) {
				continue
			}
			for _, p := range s.visible(sp.Key, false) {
				for _, l := range p.Labels {
					if s.labelID(l) == parts[1] {
						out = append(out, s.v2Page(p, false))
						break
					}
				}
			}
		}
		s.cloudPage(w, r, out, 25)
	default:
		s.errorJSON(w, http.StatusNotFound, "no route "+r.URL.Path)
	}
}

func (s *Server) labelID(name string) string {
	id, ok := s.labelIDs[name]
	if !ok {
		id = strconv.Itoa(9000 + len(s.labelIDs))
		s.labelIDs[name] = id
	}
	return id
}

func (s *Server) v2Page(p *Page, body bool) map[string]any {
	sp, _ := s.spaceByKey(p.SpaceKey)
	m := map[string]any{
		"id": p.ID, "status": "current", "title": p.Title, "spaceId": sp.ID,
		"parentId": nilIfEmpty(p.ParentID), "parentType": "page", "authorId": "557058:author", "ownerId": "557058:author",
		"createdAt": Start.Format(time.RFC3339Nano),
		"version": map[string]any{"createdAt": p.Modified.Format("2006-01-02T15:04:05.000Z07:00"), "message": "",
			"number": p.Version, "minorEdit": false, "authorId": "557058:editor"},
		"body": map[string]any{},
		"_links": map[string]any{"webui": "/spaces/" + p.SpaceKey + "/pages/" + p.ID + "/" + url.PathEscape(strings.ReplaceAll(p.Title, " ", "+")),
			"editui": "/pages/resumedraft.action?draftId=" + p.ID, "tinyui": "/x/" + p.ID},
	}
	if body {
		m["body"] = map[string]any{"storage": map[string]any{"representation": "storage", "value": Body(p)}}
		s.bodies[p.ID]++
	}
	return m
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// cloudPage answers one page of a v2 listing of items.
func (s *Server) cloudPage(w http.ResponseWriter, r *http.Request, items []any, def int) {
	s.cloudPageFunc(w, r, items, def, func(v any) any { return v })
}

// cloudPageFunc answers one page of a v2 listing, rendering only the
// items on the page: an opaque cursor in _links.next and the Link header.
func (s *Server) cloudPageFunc(w http.ResponseWriter, r *http.Request, items []any, def int, render func(any) any) {
	q := r.URL.Query()
	n, ok := limit(w, q, def, 250, s)
	if !ok {
		return
	}
	off := 0
	if c := q.Get("cursor"); c != "" {
		raw, err := base64.RawURLEncoding.DecodeString(c)
		if err != nil || !strings.HasPrefix(string(raw), "offset:") {
			s.errorJSON(w, http.StatusBadRequest, "invalid cursor")
			return
		}
		off, _ = strconv.Atoi(strings.TrimPrefix(string(raw), "offset:"))
	}
	end := min(len(items), off+n)
	results := []any{}
	for _, it := range items[min(off, len(items)):end] {
		results = append(results, render(it))
	}
	links := map[string]any{"base": "http://" + r.Host + "/wiki"}
	h := http.Header{}
	if end < len(items) {
		nq := url.Values{}
		for k, v := range q {
			nq[k] = v
		}
		nq.Set("cursor", base64.RawURLEncoding.EncodeToString([]byte("offset:"+strconv.Itoa(end))))
		next := r.URL.Path + "?" + nq.Encode()
		links["next"] = next
		h.Set("Link", "<"+next+`>; rel="next"`)
	}
	writeList(w, h, results, map[string]any{"_links": links})
}

// writeList writes {"results": [...], ...rest} an item at a time, so the
// server never holds a whole page of bodies (memory tests measure the
// client in the same process).
func writeList(w http.ResponseWriter, h http.Header, results []any, rest map[string]any) {
	for k, vs := range h {
		w.Header()[k] = vs
	}
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, `{"results":[`)
	for i, r := range results {
		if i > 0 {
			io.WriteString(w, ",")
		}
		b, _ := json.Marshal(r)
		w.Write(b)
	}
	io.WriteString(w, "]")
	for k, v := range rest {
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, ",%q:%s", k, b)
	}
	io.WriteString(w, "}\n")
}

// Data Center (REST API v1).

func (s *Server) serveDC(w http.ResponseWriter, r *http.Request) {
	path := strings.TrimPrefix(r.URL.Path, "/confluence/rest/api")
	if path == r.URL.Path {
		s.errorJSON(w, http.StatusNotFound, "not found")
		return
	}
	parts := strings.Split(strings.Trim(path, "/"), "/")
	q := r.URL.Query()
	switch {
	case len(parts) == 2 && parts[0] == "space":
		s.Count("space")
		sp, ok := s.spaceByKey(parts[1])
		if !ok {
			s.errorJSON(w, http.StatusNotFound, "No space with key : "+parts[1])
			return
		}
		id, _ := strconv.Atoi(sp.ID)
		writeJSON(w, nil, map[string]any{"id": id, "key": sp.Key, "name": sp.Name, "type": "global",
			"_links": map[string]any{"webui": "/display/" + sp.Key}})
	case len(parts) == 1 && parts[0] == "content":
		expand := strings.Split(q.Get("expand"), ",")
		bodies := slices.Contains(expand, "body.storage")
		if bodies {
			s.Count("pages+body")
		} else {
			s.Count("pages")
		}
		maxLimit := 500
		if bodies {
			maxLimit = 100
		}
		n, ok := limit(w, q, 25, maxLimit, s)
		if !ok {
			return
		}
		if q.Get("type") != "page" || q.Get("spaceKey") == "" {
			s.errorJSON(w, http.StatusBadRequest, "docent's fake wants type=page and spaceKey")
			return
		}
		start, _ := strconv.Atoi(q.Get("start"))
		all := s.visible(q.Get("spaceKey"), false)
		end := min(len(all), start+n)
		results := []any{}
		for _, p := range all[min(start, len(all)):end] {
			results = append(results, s.v1Content(p, expand))
		}
		links := map[string]any{"base": "http://" + r.Host + "/confluence", "context": "/confluence",
			"self": "http://" + r.Host + r.URL.RequestURI()}
		if end < len(all) {
			nq := url.Values{}
			for k, v := range q {
				nq[k] = v
			}
			nq.Set("start", strconv.Itoa(end))
			nq.Set("limit", strconv.Itoa(n))
			links["next"] = "/rest/api/content?" + nq.Encode()
		}
		writeList(w, nil, results, map[string]any{"start": start, "limit": n, "size": len(results), "_links": links})
	case len(parts) == 2 && parts[0] == "content":
		s.Count("page")
		p, ok := s.pages[parts[1]]
		switch {
		case s.pageFault(w, parts[1]):
		case !ok:
			s.errorJSON(w, http.StatusNotFound, "No content found with id: ContentId{id="+parts[1]+"}")
		case p.Restricted:
			s.errorJSON(w, http.StatusForbidden, "User not permitted to view content")
		default:
			writeJSON(w, nil, s.v1Content(p, strings.Split(q.Get("expand"), ",")))
		}
	default:
		s.errorJSON(w, http.StatusNotFound, "no route "+r.URL.Path)
	}
}

func (s *Server) v1Content(p *Page, expand []string) map[string]any {
	m := map[string]any{
		"id": p.ID, "type": "page", "status": "current", "title": p.Title,
		"_links": map[string]any{"webui": "/display/" + p.SpaceKey + "/" + url.QueryEscape(p.Title), "tinyui": "/x/" + p.ID,
			"self": "/rest/api/content/" + p.ID},
		"_expandable": map[string]any{"children": "/rest/api/content/" + p.ID + "/child"},
	}
	if slices.Contains(expand, "space") {
		m["space"] = map[string]any{"key": p.SpaceKey}
	}
	if slices.Contains(expand, "version") {
		m["version"] = map[string]any{"number": p.Version, "when": p.Modified.Format("2006-01-02T15:04:05.000Z07:00"),
			"minorEdit": false, "by": map[string]any{"type": "known", "username": "dreyes", "displayName": p.Author}}
	}
	if slices.Contains(expand, "ancestors") {
		var anc []any
		for id := p.ParentID; id != ""; {
			a, ok := s.pages[id]
			if !ok {
				break
			}
			anc = append([]any{map[string]any{"id": a.ID, "type": "page", "status": "current", "title": a.Title}}, anc...)
			id = a.ParentID
		}
		if anc == nil {
			anc = []any{}
		}
		m["ancestors"] = anc
	}
	if slices.Contains(expand, "metadata.labels") {
		var labels []any
		for _, l := range p.Labels {
			labels = append(labels, map[string]any{"prefix": "global", "name": l, "id": s.labelID(l)})
		}
		if labels == nil {
			labels = []any{}
		}
		m["metadata"] = map[string]any{"labels": map[string]any{"results": labels, "start": 0, "limit": 200, "size": len(labels)}}
	}
	if slices.Contains(expand, "body.storage") {
		m["body"] = map[string]any{"storage": map[string]any{"value": Body(p), "representation": "storage"}}
		s.bodies[p.ID]++
	}
	return m
}
