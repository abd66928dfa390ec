// Package typesensetest is an in-process Typesense cluster for tests: a
// few HTTP nodes sharing one store, implementing the endpoints docent's
// Typesense backend calls (collections, aliases, JSONL import, delete and
// export by filter, document lookup, search and multi_search with
// filter_by, facet_by, sort_by and vector_query, health) with the real
// server's request and response shapes.
//
// Every request is checked twice. First against the official OpenAPI
// document (../shared/reference/typesense-openapi.yml, found by FindSpec;
// that layer is off when the file is absent), then by the server itself
// as the real one would: API key, unknown collection or field, value
// types against the schema, vector dimensions, filter syntax, page size.
// A refused request answers with the real status and message and is
// recorded as a violation, so a test can assert that its client never
// sends one (Violations).
//
// Ranking is deterministic, not Typesense's: keyword search matches exact
// tokens (after the collection's token separators and per-field Snowball
// stemming) with the real token-dropping rounds and a BM25-like score
// inside a round; vector search is an exact cosine scan. Faults can be
// injected per node (503s, closed connections), cluster-wide (no leader)
// and per imported document.
package typesensetest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// DefaultAPIKey is the admin key a cluster accepts unless Options say otherwise.
const DefaultAPIKey = "typesensetest-admin-key"

// Options configure a Cluster.
type Options struct {
	// APIKey is the admin key requests must carry; DefaultAPIKey when empty.
	APIKey string
	// SpecPath is the official OpenAPI document to validate requests
	// against; FindSpec() when empty; SpecOff for none. When no spec is
	// found the schema layer is off and the server's own checks remain.
	SpecPath string
}

// SpecOff as Options.SpecPath turns the schema layer off.
const SpecOff = "off"

// Fault is what a node does with the requests it receives.
type Fault int

// Faults a node can be given.
const (
	// Healthy nodes serve every request.
	Healthy Fault = iota
	// Unavailable nodes answer every request with 503, as a node that lost
	// its peers does.
	Unavailable
	// Hangup nodes read the whole request, body included, and then close
	// the connection without answering.
	Hangup
)

// Stats count the requests a cluster served.
type Stats struct {
	// Requests counts every request that reached a node, BytesIn their
	// bodies and BytesOut the response bodies.
	Requests int
	BytesIn  int64
	BytesOut int64
	// ByOp counts requests by route ("POST /multi_search").
	ByOp map[string]int
}

// Cluster is a set of nodes over one shared store.
type Cluster struct {
	opts   Options
	spec   *specValidator
	nodes  []*node
	mu     sync.Mutex
	cols   map[string]*collection
	alias  map[string]string
	noLead bool
	reject func(doc map[string]any) string
	viol   []string
	stats  Stats
}

type node struct {
	c      *Cluster
	srv    *httptest.Server
	mu     sync.Mutex
	fault  Fault
	served int
	// limitNext, when positive, refuses the next request with 429 and
	// this Retry-After.
	limitNext time.Duration
}

// New starts a cluster of n nodes (at least one).
func New(n int, opts Options) (*Cluster, error) {
	if n < 1 {
		n = 1
	}
	if opts.APIKey == "" {
		opts.APIKey = DefaultAPIKey
	}
	if opts.SpecPath == "" {
		opts.SpecPath = FindSpec()
	}
	c := &Cluster{opts: opts, cols: map[string]*collection{}, alias: map[string]string{}, stats: Stats{ByOp: map[string]int{}}}
	if opts.SpecPath != "" && opts.SpecPath != SpecOff {
		v, err := loadSpec(opts.SpecPath)
		if err != nil {
			return nil, err
		}
		c.spec = v
	}
	mux := c.routes()
	for range n {
		nd := &node{c: c}
		nd.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { nd.serve(mux, w, r) }))
		c.nodes = append(c.nodes, nd)
	}
	return c, nil
}

// Close stops every node.
func (c *Cluster) Close() {
	for _, n := range c.nodes {
		n.srv.CloseClientConnections()
		n.srv.Close()
	}
}

// URLs are the nodes' base URLs, in node order.
func (c *Cluster) URLs() []string {
	out := make([]string, len(c.nodes))
	for i, n := range c.nodes {
		out[i] = n.srv.URL
	}
	return out
}

// APIKey is the admin key the cluster accepts.
func (c *Cluster) APIKey() string { return c.opts.APIKey }

// SpecChecked reports whether requests are validated against the
// official OpenAPI document.
func (c *Cluster) SpecChecked() bool { return c.spec != nil }

// SetFault sets what node i does with requests.
func (c *Cluster) SetFault(i int, f Fault) {
	n := c.nodes[i]
	n.mu.Lock()
	n.fault = f
	n.mu.Unlock()
}

// RateLimitNext makes node i refuse its next request with 429 and a
// Retry-After of after (whole seconds), as Typesense's rate limiting
// behind a proxy does.
func (c *Cluster) RateLimitNext(i int, after time.Duration) {
	n := c.nodes[i]
	n.mu.Lock()
	defer n.mu.Unlock()
	n.limitNext = after
}

// Served returns how many requests node i answered itself (faulty or not).
func (c *Cluster) Served(i int) int {
	n := c.nodes[i]
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.served
}

// SetLeader sets whether the cluster has a leader. Without one, /health
// answers 503 {"ok": false} and every other request 503.
func (c *Cluster) SetLeader(ok bool) {
	c.mu.Lock()
	c.noLead = !ok
	c.mu.Unlock()
}

// RejectDocuments makes import refuse documents: fn returns a non-empty
// message for a document to fail its line with (nil: accept all).
func (c *Cluster) RejectDocuments(fn func(doc map[string]any) string) {
	c.mu.Lock()
	c.reject = fn
	c.mu.Unlock()
}

// Violations returns every refused request so far ("METHOD path: status
// message"), lookups of missing aliases and documents excepted.
func (c *Cluster) Violations() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.viol)
}

// Stats returns the request counts so far.
func (c *Cluster) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.stats
	s.ByOp = map[string]int{}
	for k, v := range c.stats.ByOp {
		s.ByOp[k] = v
	}
	return s
}

// ResetStats zeroes the request counts.
func (c *Cluster) ResetStats() {
	c.mu.Lock()
	c.stats = Stats{ByOp: map[string]int{}}
	c.mu.Unlock()
}

// Collections returns the names of the collections that exist, sorted.
func (c *Cluster) Collections() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for n := range c.cols {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// countingWriter counts the bytes of a response.
type countingWriter struct {
	http.ResponseWriter
	status int
	n      int64
	body   bytes.Buffer // kept for error responses
}

func (w *countingWriter) WriteHeader(s int) { w.status = s; w.ResponseWriter.WriteHeader(s) }
func (w *countingWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if w.status >= 400 && w.body.Len() < 512 {
		w.body.Write(b)
	}
	w.n += int64(len(b))
	return w.ResponseWriter.Write(b)
}

func (n *node) serve(mux *http.ServeMux, w http.ResponseWriter, r *http.Request) {
	c := n.c
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, "read body", http.StatusBadRequest)
		return
	}
	n.mu.Lock()
	n.served++
	fault := n.fault
	limit := n.limitNext
	n.limitNext = 0
	n.mu.Unlock()
	if limit > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(limit.Seconds()))))
		writeJSON(w, http.StatusTooManyRequests, msg("Rate limit exceeded or blocked"))
		return
	}
	switch fault {
	case Unavailable:
		writeJSON(w, http.StatusServiceUnavailable, msg("Not Ready or Lagging"))
		return
	case Hangup:
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				conn.Close()
				return
			}
		}
		panic(http.ErrAbortHandler)
	}
	_, pattern := mux.Handler(r)
	cw := &countingWriter{ResponseWriter: w}
	defer func() {
		c.mu.Lock()
		c.stats.Requests++
		c.stats.BytesIn += int64(len(body))
		c.stats.BytesOut += cw.n
		c.stats.ByOp[pattern]++
		if cw.status >= 400 && cw.status != http.StatusServiceUnavailable && !lookup(r, cw.status) {
			c.viol = append(c.viol, fmt.Sprintf("%s %s: %d %s", r.Method, r.URL.Path, cw.status, strings.TrimSpace(cw.body.String())))
		}
		c.mu.Unlock()
	}()
	if c.spec != nil && pattern != "" {
		if err := c.spec.validate(r, body); err != nil {
			writeJSON(cw, http.StatusBadRequest, msg("Request does not match the API spec: "+err.Error()))
			return
		}
	}
	if r.Header.Get("X-TYPESENSE-API-KEY") != c.opts.APIKey {
		writeJSON(cw, http.StatusUnauthorized, msg("Forbidden - a valid `x-typesense-api-key` header must be sent."))
		return
	}
	c.mu.Lock()
	noLead := c.noLead
	c.mu.Unlock()
	if noLead {
		if r.URL.Path == "/health" {
			writeJSON(cw, http.StatusServiceUnavailable, map[string]any{"ok": false})
		} else {
			writeJSON(cw, http.StatusServiceUnavailable, msg("Not Ready or Lagging"))
		}
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	mux.ServeHTTP(cw, r)
}

// lookup reports whether a 404 answers a lookup (an alias, collection
// or document asked for by name), which is how clients find out that it
// does not exist, rather than a request the server refused.
func lookup(r *http.Request, status int) bool {
	if status != http.StatusNotFound || r.Method != http.MethodGet {
		return false
	}
	p := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	return (len(p) == 2 && (p[0] == "aliases" || p[0] == "collections")) ||
		(len(p) == 4 && p[0] == "collections" && p[2] == "documents" && p[3] != "search" && p[3] != "export")
}

func msg(s string) map[string]any { return map[string]any{"message": s} }

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeErr(w http.ResponseWriter, err *apiError) { writeJSON(w, err.status, msg(err.msg)) }

func (c *Cluster) routes() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"ok": true})
	})
	mux.HandleFunc("POST /collections", c.createCollection)
	mux.HandleFunc("GET /collections", c.listCollections)
	mux.HandleFunc("GET /collections/{name}", c.withCollection(c.getCollection))
	mux.HandleFunc("DELETE /collections/{name}", c.deleteCollection)
	mux.HandleFunc("GET /aliases", c.listAliases)
	mux.HandleFunc("GET /aliases/{name}", c.alias1(false))
	mux.HandleFunc("PUT /aliases/{name}", c.putAlias)
	mux.HandleFunc("DELETE /aliases/{name}", c.alias1(true))
	mux.HandleFunc("POST /collections/{name}/documents/import", c.withCollection(c.importDocs))
	mux.HandleFunc("DELETE /collections/{name}/documents", c.withCollection(c.deleteDocs))
	mux.HandleFunc("GET /collections/{name}/documents/export", c.withCollection(c.exportDocs))
	mux.HandleFunc("GET /collections/{name}/documents/search", c.withCollection(c.searchOne))
	mux.HandleFunc("GET /collections/{name}/documents/{id}", c.withCollection(c.getDoc))
	mux.HandleFunc("POST /multi_search", c.multiSearch)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusNotFound, msg("Not Found"))
	})
	return mux
}

// withCollection serves fn under the store's lock with the collection the
// path names (directly or through an alias), or answers 404.
func (c *Cluster) withCollection(fn func(http.ResponseWriter, *http.Request, *collection)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		defer c.mu.Unlock()
		col, err := c.resolve(r.PathValue("name"))
		if err != nil {
			writeErr(w, err)
			return
		}
		fn(w, r, col)
	}
}

// resolve returns the collection called name, or that an alias names.
// The caller holds c.mu.
func (c *Cluster) resolve(name string) (*collection, *apiError) {
	if target, ok := c.alias[name]; ok {
		name = target
	}
	col := c.cols[name]
	if col == nil {
		return nil, errorf(http.StatusNotFound, "Could not find a collection named `%s`.", name)
	}
	return col, nil
}

func (c *Cluster) collectionView(col *collection) map[string]any {
	b, _ := json.Marshal(col.schema)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	m["num_documents"] = len(col.docs)
	m["created_at"] = col.created
	return m
}

func (c *Cluster) createCollection(w http.ResponseWriter, r *http.Request) {
	var s schema
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		writeErr(w, errorf(http.StatusBadRequest, "Bad JSON: %v", err))
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.cols[s.Name]; ok {
		writeErr(w, errorf(http.StatusConflict, "A collection with name `%s` already exists.", s.Name))
		return
	}
	col, err := newCollection(s, time.Now().Unix())
	if err != nil {
		writeErr(w, err)
		return
	}
	c.cols[s.Name] = col
	writeJSON(w, http.StatusCreated, c.collectionView(col))
}

func (c *Cluster) listCollections(w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := []any{}
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for n := range c.cols {
			if !yield(n) {
				return
			}
		}
	}) {
		out = append(out, c.collectionView(c.cols[name]))
	}
	writeJSON(w, http.StatusOK, out)
}

func (c *Cluster) getCollection(w http.ResponseWriter, r *http.Request, col *collection) {
	writeJSON(w, http.StatusOK, c.collectionView(col))
}

func (c *Cluster) deleteCollection(w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	defer c.mu.Unlock()
	name := r.PathValue("name")
	col := c.cols[name]
	if col == nil {
		writeErr(w, errorf(http.StatusNotFound, "No collection with name `%s` found.", name))
		return
	}
	for a, target := range c.alias {
		if target == name {
			delete(c.alias, a)
		}
	}
	delete(c.cols, name)
	writeJSON(w, http.StatusOK, c.collectionView(col))
}

func (c *Cluster) listAliases(w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := []any{}
	for a, t := range c.alias {
		out = append(out, map[string]any{"name": a, "collection_name": t})
	}
	writeJSON(w, http.StatusOK, map[string]any{"aliases": out})
}

// alias1 answers GET (and with remove, DELETE) /aliases/{name}.
func (c *Cluster) alias1(remove bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		defer c.mu.Unlock()
		name := r.PathValue("name")
		t, ok := c.alias[name]
		if !ok {
			writeErr(w, errorf(http.StatusNotFound, "Not Found"))
			return
		}
		if remove {
			delete(c.alias, name)
		}
		writeJSON(w, http.StatusOK, map[string]any{"name": name, "collection_name": t})
	}
}

func (c *Cluster) putAlias(w http.ResponseWriter, r *http.Request) {
	var body struct {
		CollectionName string `json:"collection_name"`
	}
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil || body.CollectionName == "" {
		writeErr(w, errorf(http.StatusBadRequest, "Parameter `collection_name` is required."))
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	name := r.PathValue("name")
	if _, ok := c.cols[body.CollectionName]; !ok {
		writeErr(w, errorf(http.StatusNotFound, "Could not find a collection named `%s`.", body.CollectionName))
		return
	}
	if _, ok := c.cols[name]; ok {
		writeErr(w, errorf(http.StatusConflict, "A collection named `%s` exists: an alias cannot have its name.", name))
		return
	}
	c.alias[name] = body.CollectionName
	writeJSON(w, http.StatusOK, map[string]any{"name": name, "collection_name": body.CollectionName})
}

func (c *Cluster) importDocs(w http.ResponseWriter, r *http.Request, col *collection) {
	q := r.URL.Query()
	action := q.Get("action")
	if action == "" {
		action = "create"
	}
	if !slices.Contains([]string{"create", "upsert", "update", "emplace"}, action) {
		writeErr(w, errorf(http.StatusBadRequest, "The `action` parameter must be one of create, upsert, update, emplace."))
		return
	}
	returnID := q.Get("return_id") == "true"
	body, _ := io.ReadAll(r.Body)
	if len(bytes.TrimSpace(body)) == 0 {
		writeErr(w, errorf(http.StatusBadRequest, "The request body was empty. So, no records were imported."))
		return
	}
	var out bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	failed := 0
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		res := map[string]any{"success": true}
		doc, derr := decodeDoc(line)
		var id string
		var perr *apiError
		switch {
		case derr != nil:
			perr = errorf(http.StatusBadRequest, "Bad JSON: %v", derr)
		case c.reject != nil && c.reject(doc) != "":
			id, _ = doc["id"].(string)
			perr = errorf(http.StatusBadRequest, "%s", c.reject(doc))
		default:
			id, perr = col.put(doc, action)
		}
		if perr != nil {
			failed++
			res = map[string]any{"success": false, "error": perr.msg, "code": perr.status, "document": string(line)}
		}
		if returnID && id != "" {
			res["id"] = id
		}
		b, _ := json.Marshal(res)
		out.Write(b)
		out.WriteByte('\n')
	}
	if failed > 0 {
		c.viol = append(c.viol, fmt.Sprintf("POST %s: %d document(s) refused", r.URL.Path, failed))
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write(bytes.TrimSuffix(out.Bytes(), []byte("\n")))
}

func (c *Cluster) deleteDocs(w http.ResponseWriter, r *http.Request, col *collection) {
	fs := r.URL.Query().Get("filter_by")
	if strings.TrimSpace(fs) == "" {
		writeErr(w, errorf(http.StatusBadRequest, "Parameter `filter_by` must be provided."))
		return
	}
	fl, err := col.parseFilter(fs)
	if err != nil {
		writeErr(w, err)
		return
	}
	n := 0
	for id, d := range col.docs {
		if col.match(fl, d) {
			delete(col.docs, id)
			n++
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"num_deleted": n})
}

func (c *Cluster) exportDocs(w http.ResponseWriter, r *http.Request, col *collection) {
	q := r.URL.Query()
	fl, err := col.parseFilter(q.Get("filter_by"))
	if err != nil {
		writeErr(w, err)
		return
	}
	include, exclude := splitList(q.Get("include_fields")), splitList(q.Get("exclude_fields"))
	docs := make([]*document, 0, len(col.docs))
	for _, d := range col.docs {
		if col.match(fl, d) {
			docs = append(docs, d)
		}
	}
	slices.SortFunc(docs, func(a, b *document) int { return int(a.seq - b.seq) })
	w.Header().Set("Content-Type", "application/octet-stream")
	for i, d := range docs {
		b, _ := json.Marshal(d.view(include, exclude))
		if i > 0 {
			_, _ = w.Write([]byte("\n"))
		}
		_, _ = w.Write(b)
	}
}

func (c *Cluster) getDoc(w http.ResponseWriter, r *http.Request, col *collection) {
	d := col.docs[r.PathValue("id")]
	if d == nil {
		writeErr(w, errorf(http.StatusNotFound, "Could not find a document with id: %s", r.PathValue("id")))
		return
	}
	writeJSON(w, http.StatusOK, d.view(nil, nil))
}

func (c *Cluster) searchOne(w http.ResponseWriter, r *http.Request, col *collection) {
	params, err := queryParams(r.URL.Query())
	if err != nil {
		writeErr(w, err)
		return
	}
	p, err := decodeParams(params, nil)
	if err != nil {
		writeErr(w, err)
		return
	}
	res, err := col.search(p)
	if err != nil {
		writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

func (c *Cluster) multiSearch(w http.ResponseWriter, r *http.Request) {
	common, aerr := queryParams(r.URL.Query())
	if aerr != nil {
		writeErr(w, aerr)
		return
	}
	var body struct {
		Searches []map[string]any `json:"searches"`
		Union    bool             `json:"union"`
	}
	dec := json.NewDecoder(r.Body)
	dec.UseNumber()
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil {
		writeErr(w, errorf(http.StatusBadRequest, "Bad JSON: %v", err))
		return
	}
	if body.Union {
		writeErr(w, errorf(http.StatusBadRequest, "Union search is not implemented by this test server."))
		return
	}
	if len(body.Searches) == 0 {
		writeErr(w, errorf(http.StatusBadRequest, "Parameter `searches` must be a non-empty array."))
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	results := []any{}
	for _, s := range body.Searches {
		res, err := c.runSearch(common, s)
		if err != nil {
			c.viol = append(c.viol, fmt.Sprintf("POST /multi_search: search refused: %d %s", err.status, err.msg))
			results = append(results, map[string]any{"code": err.status, "error": err.msg})
			continue
		}
		results = append(results, res)
	}
	writeJSON(w, http.StatusOK, map[string]any{"results": results})
}

// runSearch runs one search of a multi_search; the caller holds c.mu.
func (c *Cluster) runSearch(common, own map[string]any) (map[string]any, *apiError) {
	for k, v := range own {
		if n, ok := v.(json.Number); ok {
			i, err := n.Int64()
			if err != nil {
				return nil, errorf(http.StatusBadRequest, "Parameter `%s` must be an integer.", k)
			}
			own[k] = i
		}
	}
	p, err := decodeParams(common, own)
	if err != nil {
		return nil, err
	}
	if p.APIKey != "" && p.APIKey != c.opts.APIKey {
		return nil, errorf(http.StatusUnauthorized, "Forbidden - a valid `x-typesense-api-key` header must be sent.")
	}
	if p.Collection == "" {
		return nil, errorf(http.StatusBadRequest, "Parameter `collection` is required.")
	}
	col, err := c.resolve(p.Collection)
	if err != nil {
		return nil, err
	}
	return col.search(p)
}
