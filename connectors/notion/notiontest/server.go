// Package notiontest is a fake Notion API for tests: an HTTP server
// speaking the endpoints the notion source uses (search, block children,
// database queries, pages, databases, blocks, users) with the documented
// request and response shapes, cursor pagination (start_cursor,
// next_cursor, has_more, page_size up to 100), the Notion-Version header,
// bearer auth and error objects. Tests add and edit pages and databases,
// unshare pages, inject failures and rate limits, and count requests.
package notiontest

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docent-hq/docent/connectors/webapi/webapitest"
)

// Token is the integration secret the server accepts.
const Token = "secret_notiontest0123456789"

// Start is the time of the server's first change.
var Start = time.Date(2026, 2, 2, 9, 0, 0, 0, time.UTC)

// Block is a block the server holds: its type, the type's payload (as the
// API writes it, without children) and its children.
type Block struct {
	ID       string
	Type     string
	Payload  map[string]any
	Children []*Block
}

// Parent says where a page or database lives: Type is "workspace",
// "page_id", "database_id" or "block_id".
type Parent struct {
	Type, ID string
}

// Page is a page or a database row.
type Page struct {
	ID     string
	Parent Parent
	Title  string
	// TitleProperty names the title property ("title" for pages; a
	// database's title column for rows).
	TitleProperty string
	// Properties are a row's other property values, in the API's shape
	// ({"type": "select", "select": {"name": "Done"}}).
	Properties map[string]any
	Blocks     []*Block
	LastEdited time.Time
	// EditorID is the user who edited the page last.
	EditorID string
	// Archived pages are in the trash; Unshared pages are not shared
	// with the integration (404 when asked for, left out of search).
	Archived, Unshared bool
	// Unsearchable pages are shared but search does not return them (its
	// index lags, or it gave up): Notion's search is not an exhaustive
	// listing.
	Unsearchable bool
}

// Database is a database.
type Database struct {
	ID, Title  string
	Parent     Parent
	LastEdited time.Time
	Unshared   bool
}

// Server is a fake Notion API. Create it with New.
type Server struct {
	// URL is the API base URL a source is configured with.
	URL string

	// Faults scripts failures (Script, and FailPage for one page's
	// blocks) and counts requests (Requests).
	webapitest.Faults

	srv *httptest.Server

	mu        sync.Mutex
	now       time.Time
	pages     map[string]*Page
	databases map[string]*Database
	blocks    map[string]*Block // every block by ID
	owner     map[string]string // block ID -> page ID
	holder    map[string]string // block ID -> the block it is nested in
	users     map[string]string // user ID -> name
	next      int
	fetched   map[string]int // page ID -> top-level children requests
}

// New starts a server, closed when the test ends.
func New(t testing.TB) *Server {
	t.Helper()
	s := &Server{now: Start, pages: map[string]*Page{}, databases: map[string]*Database{}, blocks: map[string]*Block{},
		owner: map[string]string{}, holder: map[string]string{}, users: map[string]string{"u-editor": "Dana Reyes"}, fetched: map[string]int{}}
	s.srv = httptest.NewServer(s)
	t.Cleanup(s.srv.Close)
	s.URL = s.srv.URL
	return s
}

// ID returns a new UUID-shaped ID.
func (s *Server) newID() string {
	s.next++
	return fmt.Sprintf("%08x-0000-4000-8000-%012x", 0x10000000+s.next, s.next)
}

// Tick advances the server's clock.
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

// stamp advances the clock a minute (Notion's edit times are whole
// minutes) and returns it.
func (s *Server) stamp() time.Time {
	s.now = s.now.Add(time.Minute).Truncate(time.Minute)
	return s.now
}

// AddDatabase adds a database and returns its ID.
func (s *Server) AddDatabase(d Database) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if d.ID == "" {
		d.ID = s.newID()
	}
	d.LastEdited = s.stamp()
	s.databases[d.ID] = &d
	return d.ID
}

// AddPage adds a page (p.ID empty: a new ID) edited now and returns its ID.
func (s *Server) AddPage(p Page) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p.ID == "" {
		p.ID = s.newID()
	}
	if p.Parent.Type == "" {
		p.Parent = Parent{Type: "workspace"}
	}
	if p.TitleProperty == "" {
		p.TitleProperty = "title"
	}
	if p.EditorID == "" {
		p.EditorID = "u-editor"
	}
	if p.LastEdited.IsZero() {
		p.LastEdited = s.stamp()
	}
	cp := p
	s.pages[p.ID] = &cp
	s.index(cp.ID, cp.Blocks)
	return p.ID
}

func (s *Server) index(pageID string, blocks []*Block) {
	for _, b := range blocks {
		if b.ID == "" {
			b.ID = s.newID()
		}
		s.blocks[b.ID] = b
		s.owner[b.ID] = pageID
		for _, c := range b.Children {
			if c.ID == "" {
				c.ID = s.newID()
			}
			s.holder[c.ID] = b.ID
		}
		s.index(pageID, b.Children)
	}
}

// Edit changes a page (fn edits it) as an edit made now.
func (s *Server) Edit(id string, fn func(*Page)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.pages[id]
	fn(p)
	s.index(p.ID, p.Blocks)
	p.LastEdited = s.stamp()
}

// SetLastEdited dates a page's last edit (an edit search shows late).
func (s *Server) SetLastEdited(id string, t time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pages[id].LastEdited = t
}

// Page returns a copy of a page.
func (s *Server) Page(id string) Page {
	s.mu.Lock()
	defer s.mu.Unlock()
	return *s.pages[id]
}

// Delete removes pages for good.
func (s *Server) Delete(ids ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range ids {
		delete(s.pages, id)
	}
}

// Unshare takes a page away from the integration (on) or shares it again.
func (s *Server) Unshare(id string, on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pages[id].Unshared = on
}

// FailPage makes requests for a page's blocks answer status, times times
// (< 0: until FailPage(id, 0, 0)).
func (s *Server) FailPage(id string, status, times int) { s.Fail(id, status, times) }

// Fetched returns how many times each page's blocks were asked for.
func (s *Server) Fetched() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.fetched)
}

// ResetCounts zeroes the request counts.
func (s *Server) ResetCounts() {
	s.Reset()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fetched = map[string]int{}
}

// Text is one plain rich text run, as the API writes it.
func Text(s string) map[string]any {
	return map[string]any{"type": "text", "text": map[string]any{"content": s, "link": nil},
		"annotations": map[string]any{"bold": false, "italic": false, "strikethrough": false, "underline": false,
			"code": false, "color": "default"}, "plain_text": s, "href": nil}
}

// Paragraph is a paragraph block of plain text.
func Paragraph(text string) *Block {
	return &Block{Type: "paragraph", Payload: map[string]any{"rich_text": []any{Text(text)}, "color": "default"}}
}

// Heading is a heading block (level 1 to 3).
func Heading(level int, text string) *Block {
	return &Block{Type: fmt.Sprintf("heading_%d", level), Payload: map[string]any{"rich_text": []any{Text(text)},
		"is_toggleable": false, "color": "default"}}
}

// BlocksFromJSON reads blocks in the API's shape with their children
// inline under "children" (the notion package's test fixtures).
func BlocksFromJSON(data []byte) ([]*Block, error) {
	var raw []map[string]any
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, err
	}
	var conv func([]map[string]any) []*Block
	conv = func(raw []map[string]any) []*Block {
		var out []*Block
		for _, r := range raw {
			b := &Block{Type: fmt.Sprint(r["type"])}
			b.ID, _ = r["id"].(string)
			b.Payload, _ = r[b.Type].(map[string]any)
			if kids, ok := r["children"].([]any); ok {
				var ms []map[string]any
				for _, k := range kids {
					if m, ok := k.(map[string]any); ok {
						ms = append(ms, m)
					}
				}
				b.Children = conv(ms)
			}
			out = append(out, b)
		}
		return out
	}
	return conv(raw), nil
}

// ServeHTTP routes a request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a, ok := s.Next(); ok {
		for k, v := range a.Header {
			w.Header()[k] = v
		}
		apiError(w, a.Status, errorCode(a.Status), "scripted failure")
		return
	}
	if r.Header.Get("Authorization") != "Bearer "+Token {
		s.Count("unauthorized")
		apiError(w, http.StatusUnauthorized, "unauthorized", "API token is invalid.")
		return
	}
	if r.Header.Get("Notion-Version") == "" {
		apiError(w, http.StatusBadRequest, "missing_version", "Notion-Version header failed validation: Notion-Version header should be defined.")
		return
	}
	parts := strings.Split(strings.Trim(strings.TrimPrefix(r.URL.Path, "/v1"), "/"), "/")
	switch {
	case r.Method == http.MethodPost && len(parts) == 1 && parts[0] == "search":
		s.Count("search")
		s.search(w, r)
	case r.Method == http.MethodGet && len(parts) == 3 && parts[0] == "blocks" && parts[2] == "children":
		s.Count("children")
		s.children(w, r, parts[1])
	case r.Method == http.MethodGet && len(parts) == 2 && parts[0] == "blocks":
		s.Count("block")
		b, ok := s.blocks[parts[1]]
		if !ok || !s.sharedPage(s.owner[b.ID]) {
			notFound(w, parts[1])
			return
		}
		writeJSON(w, s.blockJSON(b))
	case r.Method == http.MethodGet && len(parts) == 2 && parts[0] == "pages":
		s.Count("page")
		if !s.sharedPage(parts[1]) {
			notFound(w, parts[1])
			return
		}
		writeJSON(w, s.pageJSON(s.pages[parts[1]]))
	case r.Method == http.MethodGet && len(parts) == 2 && parts[0] == "databases":
		s.Count("database")
		d, ok := s.databases[parts[1]]
		if !ok || d.Unshared {
			notFound(w, parts[1])
			return
		}
		writeJSON(w, s.databaseJSON(d))
	case r.Method == http.MethodPost && len(parts) == 3 && parts[0] == "databases" && parts[2] == "query":
		s.Count("query")
		d, ok := s.databases[parts[1]]
		if !ok || d.Unshared {
			notFound(w, parts[1])
			return
		}
		var body struct {
			StartCursor string `json:"start_cursor"`
			PageSize    int    `json:"page_size"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			apiError(w, http.StatusBadRequest, "invalid_json", "Error parsing JSON body.")
			return
		}
		var rows []any
		for _, p := range s.sortedPages(false) {
			if p.Parent.Type == "database_id" && p.Parent.ID == d.ID && !p.Archived && !p.Unshared {
				rows = append(rows, s.pageJSON(p))
			}
		}
		s.listPage(w, rows, body.StartCursor, body.PageSize, "page_or_database")
	case r.Method == http.MethodGet && len(parts) == 2 && parts[0] == "users":
		s.Count("user")
		name, ok := s.users[parts[1]]
		if !ok {
			notFound(w, parts[1])
			return
		}
		writeJSON(w, map[string]any{"object": "user", "id": parts[1], "type": "person", "name": name,
			"avatar_url": nil, "person": map[string]any{}})
	default:
		apiError(w, http.StatusBadRequest, "invalid_request_url", "Invalid request URL.")
	}
}

func (s *Server) sharedPage(id string) bool {
	p, ok := s.pages[id]
	return ok && !p.Unshared
}

func (s *Server) sortedPages(newestFirst bool) []*Page {
	var out []*Page
	for _, p := range s.pages {
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b *Page) int {
		if newestFirst {
			if c := b.LastEdited.Compare(a.LastEdited); c != 0 {
				return c
			}
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out
}

func (s *Server) search(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Query  string `json:"query"`
		Filter struct {
			Property string `json:"property"`
			Value    string `json:"value"`
		} `json:"filter"`
		Sort struct {
			Direction string `json:"direction"`
			Timestamp string `json:"timestamp"`
		} `json:"sort"`
		StartCursor string `json:"start_cursor"`
		PageSize    int    `json:"page_size"`
	}
	data, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(data, &body); err != nil {
		apiError(w, http.StatusBadRequest, "invalid_json", "Error parsing JSON body.")
		return
	}
	if body.Filter.Value != "" && (body.Filter.Property != "object" || (body.Filter.Value != "page" && body.Filter.Value != "database")) {
		apiError(w, http.StatusBadRequest, "validation_error", "body.filter.value should be `page` or `database`.")
		return
	}
	newest := body.Sort.Timestamp == "last_edited_time" && body.Sort.Direction == "descending"
	var results []any
	if body.Filter.Value != "page" {
		var dbs []*Database
		for _, d := range s.databases {
			if !d.Unshared {
				dbs = append(dbs, d)
			}
		}
		slices.SortFunc(dbs, func(a, b *Database) int { return strings.Compare(a.ID, b.ID) })
		for _, d := range dbs {
			results = append(results, s.databaseJSON(d))
		}
	}
	if body.Filter.Value != "database" {
		for _, p := range s.sortedPages(newest) {
			if !p.Unshared && !p.Archived && !p.Unsearchable {
				results = append(results, s.pageJSON(p))
			}
		}
	}
	s.listPage(w, results, body.StartCursor, body.PageSize, "page_or_database")
}

func (s *Server) children(w http.ResponseWriter, r *http.Request, id string) {
	var kids []*Block
	page := ""
	if p, ok := s.pages[id]; ok {
		page = id
		kids = p.Blocks
		s.fetched[id]++
	} else if b, ok := s.blocks[id]; ok {
		page = s.owner[id]
		kids = b.Children
	} else {
		notFound(w, id)
		return
	}
	if !s.sharedPage(page) {
		notFound(w, id)
		return
	}
	if status, ok := s.Failing(page); ok {
		apiError(w, status, errorCode(status), "injected failure")
		return
	}
	q := r.URL.Query()
	size := 100
	if v := q.Get("page_size"); v != "" {
		size, _ = strconv.Atoi(v)
	}
	var results []any
	for _, b := range kids {
		results = append(results, s.blockJSON(b))
	}
	s.listPage(w, results, q.Get("start_cursor"), size, "block")
}

// listPage writes one page of a list, with Notion's opaque cursors.
func (s *Server) listPage(w http.ResponseWriter, items []any, cursor string, size int, typ string) {
	if size == 0 {
		size = 100
	}
	if size < 1 || size > 100 {
		apiError(w, http.StatusBadRequest, "validation_error", "body failed validation: body.page_size should be ≤ `100`.")
		return
	}
	off := 0
	if cursor != "" {
		n, err := strconv.Atoi(strings.TrimPrefix(cursor, "cursor-"))
		if err != nil || !strings.HasPrefix(cursor, "cursor-") {
			apiError(w, http.StatusBadRequest, "validation_error", "start_cursor is not a valid cursor.")
			return
		}
		off = n
	}
	end := min(len(items), off+size)
	results := []any{}
	if off < len(items) {
		results = items[off:end]
	}
	var next any
	if end < len(items) {
		next = "cursor-" + strconv.Itoa(end)
	}
	writeJSON(w, map[string]any{"object": "list", "results": results, "next_cursor": next,
		"has_more": end < len(items), "type": typ, typ: map[string]any{}})
}

func (s *Server) blockJSON(b *Block) map[string]any {
	payload := b.Payload
	if payload == nil {
		payload = map[string]any{}
	}
	parent := map[string]any{"type": "page_id", "page_id": s.owner[b.ID]}
	if h, ok := s.holder[b.ID]; ok {
		parent = map[string]any{"type": "block_id", "block_id": h}
	}
	return map[string]any{"object": "block", "id": b.ID, "parent": parent,
		"created_time": Start.Format(time.RFC3339), "last_edited_time": Start.Format(time.RFC3339),
		"created_by": map[string]any{"object": "user", "id": "u-editor"}, "last_edited_by": map[string]any{"object": "user", "id": "u-editor"},
		"has_children": len(b.Children) > 0, "archived": false, "in_trash": false, "type": b.Type, b.Type: payload}
}

func (s *Server) pageJSON(p *Page) map[string]any {
	props := map[string]any{p.TitleProperty: map[string]any{"id": "title", "type": "title", "title": []any{Text(p.Title)}}}
	for k, v := range p.Properties {
		props[k] = v
	}
	return map[string]any{"object": "page", "id": p.ID, "created_time": Start.Format(time.RFC3339),
		"last_edited_time": p.LastEdited.Format("2006-01-02T15:04:05.000Z"),
		"created_by":       map[string]any{"object": "user", "id": p.EditorID},
		"last_edited_by":   map[string]any{"object": "user", "id": p.EditorID},
		"cover":            nil, "icon": nil, "parent": parentJSON(p.Parent), "archived": p.Archived, "in_trash": p.Archived,
		"properties": props, "url": pageURL(p.Title, p.ID), "public_url": nil}
}

func (s *Server) databaseJSON(d *Database) map[string]any {
	return map[string]any{"object": "database", "id": d.ID, "created_time": Start.Format(time.RFC3339),
		"last_edited_time": d.LastEdited.Format("2006-01-02T15:04:05.000Z"), "title": []any{Text(d.Title)},
		"description": []any{}, "parent": parentJSON(d.Parent), "url": pageURL("", d.ID), "archived": false, "in_trash": false,
		"is_inline": false, "properties": map[string]any{"Name": map[string]any{"id": "title", "name": "Name", "type": "title", "title": map[string]any{}},
			"Status": map[string]any{"id": "st", "name": "Status", "type": "status", "status": map[string]any{"options": []any{}}},
			"Done":   map[string]any{"id": "dn", "name": "Done", "type": "checkbox", "checkbox": map[string]any{}}}}
}

func parentJSON(p Parent) map[string]any {
	switch p.Type {
	case "page_id", "database_id", "block_id":
		return map[string]any{"type": p.Type, p.Type: p.ID}
	}
	return map[string]any{"type": "workspace", "workspace": true}
}

// pageURL is a page's notion.so URL: its title as a slug and its ID.
func pageURL(title, id string) string {
	slug := strings.Join(strings.FieldsFunc(title, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	}), "-")
	compact := strings.ReplaceAll(id, "-", "")
	if slug == "" {
		return "https://www.notion.so/" + compact
	}
	return "https://www.notion.so/" + slug + "-" + compact
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

func apiError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"object": "error", "status": status, "code": code, "message": msg})
}

// errorCode is Notion's error code for a status.
func errorCode(status int) string {
	if c, ok := map[int]string{400: "validation_error", 401: "unauthorized", 403: "restricted_resource",
		404: "object_not_found", 409: "conflict_error", 429: "rate_limited", 500: "internal_server_error",
		502: "bad_gateway", 503: "service_unavailable", 504: "gateway_timeout"}[status]; ok {
		return c
	}
	return "internal_server_error"
}

func notFound(w http.ResponseWriter, id string) {
	apiError(w, http.StatusNotFound, "object_not_found",
		"Could not find block with ID: "+id+". Make sure the relevant pages and databases are shared with your integration.")
}
