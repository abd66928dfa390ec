// Package notion is a documentation source over a Notion workspace: the
// pages and database rows shared with an integration (or those below
// configured root pages and databases) become markdown documents (see
// Convert), each with its breadcrumb, web link, last editor and date, and
// database rows with their properties as labels, owner and a property
// list.
//
// Every run lists the shared pages through the search API (their titles,
// parents and last-edited times, no content) and names the unchanged ones
// with Listing.Present; only pages edited since the cursor (less an
// overlap window: Notion rounds edit times to the minute) have their
// blocks fetched, recursively. Pages deleted, archived or no longer shared
// are gone from the next run's listing and so from the index. Requests
// keep under Notion's average of three a second, and 429s wait as long
// as Retry-After says.
package notion

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/connectors"
	"github.com/docent-hq/docent/connectors/webapi"
)

// Version is the Notion-Version header every request carries: the API
// version whose shapes this package reads.
const Version = "2022-06-28"

// Defaults of Options.
const (
	DefaultAPIURL            = "https://api.notion.com"
	DefaultOverlap           = 10 * time.Minute
	DefaultRequestsPerSecond = 3
	// maxDepth bounds how deep nested blocks are fetched.
	maxDepth = 16
)

// Options configure a Notion source.
type Options struct {
	// APIURL is the API's base URL; DefaultAPIURL when empty (a proxy or
	// a test server otherwise).
	APIURL string
	// Token is the integration's secret.
	Token string
	// Roots, when set, limit the source to these pages and databases (by
	// ID) and what lies below them.
	Roots []string
	// Overlap is how far before the last run's newest edit an incremental
	// listing looks again. Default DefaultOverlap; negative means none.
	Overlap time.Duration
	// MaxBytes is the largest page (as markdown) indexed;
	// connectors.DefaultMaxBytes when 0.
	MaxBytes int
	// RequestsPerSecond limits the request rate; DefaultRequestsPerSecond
	// when 0, no limit when negative.
	RequestsPerSecond float64
	// HTTPClient, Clock and MaxRetries tune the HTTP client (see webapi).
	HTTPClient *http.Client
	Clock      webapi.Clock
	MaxRetries int
	// Logger receives progress and warnings.
	Logger *slog.Logger
}

// Source lists the pages of a Notion workspace.
type Source struct {
	name string
	opts Options
	c    *webapi.Client
	log  *slog.Logger

	// anchors are the headings of the page being handed over, by heading
	// key, for Anchor.
	mu      sync.Mutex
	anchors map[string]map[string]string
}

var (
	_ connectors.Source   = (*Source)(nil)
	_ connectors.Anchorer = (*Source)(nil)
)

// ErrAuth is wrapped by List's error when Notion refuses the token: the
// run fails at once, naming the source, never the token.
var ErrAuth = errors.New("notion: authentication failed")

// New returns a source named name. It fails without a token or with an
// API URL that is not http(s).
func New(name string, opts Options) (*Source, error) {
	if opts.Token == "" {
		return nil, fmt.Errorf("notion: source %q: no token", name)
	}
	if opts.APIURL == "" {
		opts.APIURL = DefaultAPIURL
	}
	if u, err := url.Parse(opts.APIURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("notion: source %q: api_url must be an http(s) URL", name)
	}
	opts.APIURL = strings.TrimRight(opts.APIURL, "/")
	switch {
	case opts.Overlap == 0:
		opts.Overlap = DefaultOverlap
	case opts.Overlap < 0:
		opts.Overlap = 0
	}
	if opts.MaxBytes == 0 {
		opts.MaxBytes = connectors.DefaultMaxBytes
	}
	switch {
	case opts.RequestsPerSecond == 0:
		opts.RequestsPerSecond = DefaultRequestsPerSecond
	case opts.RequestsPerSecond < 0:
		opts.RequestsPerSecond = 0
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	for i, r := range opts.Roots {
		opts.Roots[i] = normalizeID(r)
	}
	token := opts.Token
	c := webapi.New(webapi.Options{
		Name: "notion", HTTPClient: opts.HTTPClient, Clock: opts.Clock, MaxRetries: opts.MaxRetries,
		Authorize: func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+token) },
		Header:    http.Header{"Notion-Version": {Version}},
		// Notion allows bursts a little above the average.
		RequestsPerSecond: opts.RequestsPerSecond, Burst: 3,
		Secrets: []string{token},
	})
	return &Source{name: name, opts: opts, c: c, log: opts.Logger, anchors: map[string]map[string]string{}}, nil
}

// normalizeID turns a page ID as people copy it (a page URL, an ID with
// or without dashes) into the API's dashed, lower-case UUID form.
func normalizeID(id string) string {
	id = strings.TrimSpace(id)
	if i := strings.IndexAny(id, "?#"); i >= 0 {
		id = id[:i]
	}
	if i := strings.LastIndex(id, "/"); i >= 0 {
		id = id[i+1:]
	}
	compact := strings.ToLower(strings.ReplaceAll(id, "-", ""))
	if len(compact) >= 32 {
		if h := compact[len(compact)-32:]; strings.Trim(h, "0123456789abcdef") == "" {
			return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
		}
	}
	return strings.ToLower(id)
}

// Name returns the configured source name.
func (s *Source) Name() string { return s.name }

// node is a page or database of the listing: enough to place it, decide
// whether to fetch it and describe it.
type node struct {
	database   bool
	title      string
	parent     parent
	lastEdited time.Time
	url        string
	// author is the last editor's name, or editor their user ID when
	// the listing gave no name.
	author, editor string
	// Set on database rows: their database's property order, labels,
	// owner and property list.
	row    bool
	labels []string
	owner  string
	props  string
}

// scope fingerprints what the source covers (see connectors.DateCursor).
func (s *Source) scope() string {
	return connectors.Fingerprint([]string{s.opts.APIURL}, s.opts.Roots)
}

// List hands over the pages shared with the integration (or below the
// roots): from an empty or unknown cursor every page with its content;
// from a cursor, the pages edited after it (less the overlap window) and
// any page the engine does not hold, with the others named by
// Listing.Present. Every listing is complete: pages deleted, archived or
// no longer shared leave the index within one run. A page whose blocks
// cannot be fetched is reported to Listing.Failed (retried next run); a
// page gone or forbidden by then (404, 403) is left out. List fails for a
// token Notion refuses (ErrAuth, at once), a root that is not shared, a
// search that keeps failing, a cancelled context, or an error from l.
func (s *Source) List(ctx context.Context, from string, l connectors.Listing) (connectors.Listed, error) {
	var stats webapi.Stats
	ctx = webapi.WithStats(ctx, &stats)
	defer func() { connectors.ReportRequests(l, stats.Get()) }()

	cur, incremental := connectors.ParseDateCursor(from)
	if incremental && cur.Scope != s.scope() {
		s.log.Info("notion: the source's roots changed: listing everything", slog.String("source", s.name))
		incremental = false
	}
	next := connectors.DateCursor{Scope: s.scope()}
	var threshold time.Time
	if incremental {
		next.Since = cur.Since
		threshold = cur.Since.Add(-s.opts.Overlap)
	}

	nodes, order, err := s.enumerate(ctx)
	if err != nil {
		return connectors.Listed{}, s.fail(err)
	}
	// Search is not an exhaustive listing (Notion says so): a page the
	// engine holds that search did not return is asked for by ID before
	// it is left out, so it does not flap out of the index and back.
	if held, ok := connectors.Held(l); ok {
		if order, err = s.recheck(ctx, held, nodes, order, l); err != nil {
			return connectors.Listed{}, s.fail(err)
		}
	}
	ls := &listing{nodes: nodes, blockParents: map[string]parent{}, users: map[string]string{}}
	present := connectors.NewPresenter(l)
	var want []string
	for _, id := range order {
		n := nodes[id]
		if n.lastEdited.After(next.Since) {
			next.Since = n.lastEdited
		}
		if n.database {
			continue
		}
		in, err := s.inScope(ctx, ls, id)
		if err != nil {
			return connectors.Listed{}, s.fail(err)
		}
		if !in {
			continue
		}
		docID := s.name + ":" + id
		if incremental && !n.lastEdited.After(threshold) && connectors.Holds(l, docID) {
			if err := present.Add(ctx, docID); err != nil {
				return connectors.Listed{}, err
			}
			continue
		}
		want = append(want, id)
	}
	if err := present.Flush(ctx); err != nil {
		return connectors.Listed{}, err
	}
	for _, id := range want {
		if err := s.hand(ctx, ls, id, l); err != nil {
			return connectors.Listed{}, s.fail(err)
		}
	}
	return connectors.Listed{Cursor: next.String(), Complete: true}, nil
}

// fail wraps a listing error: a refused token becomes ErrAuth.
func (s *Source) fail(err error) error {
	if errors.Is(err, webapi.ErrUnauthorized) {
		return fmt.Errorf("%w: source %q: Notion refused the integration token (401); check the token and that the integration is installed: %w",
			ErrAuth, s.name, err)
	}
	return fmt.Errorf("notion: source %q: %w", s.name, err)
}

// enumerate lists every page and database shared with the integration
// (search), and the rows of root databases (query), newest first.
func (s *Source) enumerate(ctx context.Context) (map[string]*node, []string, error) {
	nodes := map[string]*node{}
	var order []string
	add := func(o object) {
		n := len(nodes)
		s.addObject(nodes, o)
		if len(nodes) > n {
			order = append(order, o.ID)
		}
	}
	for _, kind := range []string{"database", "page"} {
		err := s.paginate(ctx, s.opts.APIURL+"/v1/search", map[string]any{
			"filter": map[string]string{"property": "object", "value": kind},
			"sort":   map[string]string{"direction": "descending", "timestamp": "last_edited_time"},
		}, add)
		if err != nil {
			return nil, nil, fmt.Errorf("search %ss: %w", kind, err)
		}
	}
	for _, root := range s.opts.Roots {
		n, ok := nodes[root]
		if !ok {
			// Not in search (yet): ask for it by ID.
			o, err := s.object(ctx, root)
			if err != nil {
				return nil, nil, fmt.Errorf("root %s: %w", root, err)
			}
			add(o)
			if n = nodes[root]; n == nil {
				return nil, nil, fmt.Errorf("root %s is archived", root)
			}
		}
		if n.database {
			err := s.paginate(ctx, s.opts.APIURL+"/v1/databases/"+url.PathEscape(root)+"/query", map[string]any{}, add)
			if err != nil {
				return nil, nil, fmt.Errorf("query database %s: %w", root, err)
			}
		}
	}
	return nodes, order, nil
}

// recheck asks for each held page that search did not return: one that
// is still there (not archived, still shared) joins the listing; one
// that is gone stays out; one that cannot be checked now is reported as
// failed, which keeps it until the next run.
func (s *Source) recheck(ctx context.Context, held []string, nodes map[string]*node, order []string, l connectors.Listing) ([]string, error) {
	prefix := s.name + ":"
	for _, docID := range held {
		id := strings.TrimPrefix(docID, prefix)
		if _, seen := nodes[id]; seen || id == docID {
			continue
		}
		var o object
		_, err := s.c.GetJSON(ctx, s.opts.APIURL+"/v1/pages/"+url.PathEscape(id), &o)
		switch code := webapi.StatusCode(err); {
		case err == nil && !o.Archived && !o.InTrash && o.ID != "":
			s.log.Info("notion: a page search did not return is still there", slog.String("source", s.name),
				slog.String("page", id))
			n := len(nodes)
			s.addObject(nodes, o)
			if len(nodes) > n {
				order = append(order, o.ID)
			}
		case err == nil, code == http.StatusNotFound, code == http.StatusForbidden:
			// Archived, deleted or no longer shared: left out, so removed.
		case errors.Is(err, webapi.ErrUnauthorized) || ctx.Err() != nil:
			return nil, err
		default:
			if err := l.Failed(ctx, docID, fmt.Errorf("check a page search did not return: %w", err)); err != nil {
				return nil, err
			}
		}
	}
	return order, nil
}

// addObject adds a page or database of the listing to nodes, unless it is
// archived or already there.
func (s *Source) addObject(nodes map[string]*node, o object) {
	if o.Archived || o.InTrash || o.ID == "" {
		return
	}
	if _, dup := nodes[o.ID]; dup {
		return
	}
	n := &node{database: o.Object == "database", title: o.title(), parent: o.Parent,
		lastEdited: o.LastEditedTime, url: o.URL, author: o.LastEditedBy.Name, editor: o.LastEditedBy.ID}
	if o.Parent.Type == "database_id" {
		n.row = true
		names := make([]string, 0, len(o.Properties))
		for name := range o.Properties {
			names = append(names, name)
		}
		slices.Sort(names)
		n.labels, n.owner, n.props = o.rowMeta(names)
	}
	nodes[o.ID] = n
}

// object fetches a page, or else a database, by ID; a root that is
// neither (or not shared) is an error.
func (s *Source) object(ctx context.Context, id string) (object, error) {
	var o object
	_, err := s.c.GetJSON(ctx, s.opts.APIURL+"/v1/pages/"+url.PathEscape(id), &o)
	if code := webapi.StatusCode(err); code == http.StatusNotFound || code == http.StatusBadRequest {
		_, err = s.c.GetJSON(ctx, s.opts.APIURL+"/v1/databases/"+url.PathEscape(id), &o)
	}
	if code := webapi.StatusCode(err); code == http.StatusNotFound || code == http.StatusForbidden {
		return object{}, fmt.Errorf("not found or not shared with the integration")
	}
	return o, err
}

// paginate POSTs body to u page after page (start_cursor, has_more) and
// calls fn with each result.
func (s *Source) paginate(ctx context.Context, u string, body map[string]any, fn func(object)) error {
	body["page_size"] = 100
	for {
		var res list[object]
		if err := s.c.PostJSON(ctx, u, body, &res); err != nil {
			return err
		}
		for _, o := range res.Results {
			fn(o)
		}
		if !res.HasMore || res.NextCursor == "" {
			return nil
		}
		body["start_cursor"] = res.NextCursor
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}

// listing is the state of one List call.
type listing struct {
	// nodes are the pages and databases the listing found.
	nodes map[string]*node
	// blockParents caches where blocks that hold pages live.
	blockParents map[string]parent
	// users caches user names by ID ("" when unknown).
	users map[string]string
}

// parentOf returns the ID of what holds id (a page, a database, or a
// block's page or block), "" at the top or when it cannot be told.
func (s *Source) parentOf(ctx context.Context, ls *listing, id string) (string, error) {
	if n, ok := ls.nodes[id]; ok {
		return n.parent.id(), nil
	}
	p, ok := ls.blockParents[id]
	if !ok {
		// A block holding a page (a column, a toggle): ask where it is.
		var b struct {
			Parent parent `json:"parent"`
		}
		_, err := s.c.GetJSON(ctx, s.opts.APIURL+"/v1/blocks/"+url.PathEscape(id), &b)
		switch code := webapi.StatusCode(err); {
		case code == http.StatusNotFound || code == http.StatusForbidden:
		case err != nil:
			return "", err
		}
		p = b.Parent
		ls.blockParents[id] = p
	}
	return p.id(), nil
}

// inScope reports whether page id is a root or below one (true without
// roots), following parents through pages, databases and blocks.
func (s *Source) inScope(ctx context.Context, ls *listing, id string) (bool, error) {
	if len(s.opts.Roots) == 0 {
		return true, nil
	}
	seen := map[string]bool{}
	for steps := 0; id != "" && !seen[id] && steps < 200; steps++ {
		if slices.Contains(s.opts.Roots, id) {
			return true, nil
		}
		seen[id] = true
		var err error
		if id, err = s.parentOf(ctx, ls, id); err != nil {
			return false, err
		}
	}
	return false, nil
}

// hand fetches a page's blocks, converts them and hands the document over
// (or reports why it cannot).
func (s *Source) hand(ctx context.Context, ls *listing, id string, l connectors.Listing) error {
	nodes := ls.nodes
	n := nodes[id]
	docID := s.name + ":" + id
	blocks, err := s.tree(ctx, id, 0)
	switch code := webapi.StatusCode(err); {
	case err == nil:
	case code == http.StatusNotFound || code == http.StatusForbidden:
		s.log.Info("notion: page gone or no longer shared since the listing", slog.String("source", s.name),
			slog.String("page", id), slog.Int("status", code))
		return nil // not named: gone
	case errors.Is(err, webapi.ErrUnauthorized) || ctx.Err() != nil:
		return err
	default:
		return l.Failed(ctx, docID, err)
	}
	conv := Convert(blocks, func(ref string) (string, string) {
		ref = normalizeID(ref)
		if m, ok := nodes[ref]; ok {
			return m.url, m.title
		}
		return "https://www.notion.so/" + strings.ReplaceAll(ref, "-", ""), ""
	})
	body := conv.Markdown
	if n.props != "" {
		body = n.props + "\n" + body
	}
	if err := connectors.CheckText([]byte(body), s.opts.MaxBytes); err != nil {
		return l.Failed(ctx, docID, err)
	}
	title := n.title
	if title == "" {
		title = "Untitled"
	}
	author := n.author
	if author == "" && n.editor != "" {
		if author, err = s.user(ctx, ls.users, n.editor); err != nil {
			return err
		}
	}
	path, err := s.breadcrumb(ctx, ls, id, title)
	if err != nil {
		return err
	}
	doc := docent.Document{
		ID: docID, Source: s.name, Path: path, URL: n.url, Title: title,
		Labels: uniqueSorted(n.labels), Owner: n.owner, Author: author, UpdatedAt: n.lastEdited.UTC(), Body: body,
	}
	if n.row {
		if db, ok := nodes[n.parent.DatabaseID]; ok {
			doc.Space = db.title
		}
	}
	// Anchor answers for this page while the engine takes it.
	heads := map[string]string{}
	for _, h := range conv.Headings {
		if k := headingKey(h.Text); k != "" {
			if _, dup := heads[k]; !dup {
				heads[k] = strings.ReplaceAll(h.BlockID, "-", "")
			}
		}
	}
	s.mu.Lock()
	s.anchors[docID] = heads
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.anchors, docID)
		s.mu.Unlock()
	}()
	return l.Document(ctx, doc)
}

// user returns a user's name, asking the API once per run and user; ""
// when the integration may not read users (no user information
// capability) or the request fails for another passing reason.
func (s *Source) user(ctx context.Context, users map[string]string, id string) (string, error) {
	if name, ok := users[id]; ok {
		return name, nil
	}
	var u struct {
		Name string `json:"name"`
	}
	_, err := s.c.GetJSON(ctx, s.opts.APIURL+"/v1/users/"+url.PathEscape(id), &u)
	if errors.Is(err, webapi.ErrUnauthorized) || ctx.Err() != nil {
		return "", err
	}
	users[id] = u.Name // "" on failure: asked once
	return u.Name, nil
}

// tree returns the blocks under id, children attached, following synced
// blocks to their original.
func (s *Source) tree(ctx context.Context, id string, depth int) ([]*Block, error) {
	var out []*Block
	u := s.opts.APIURL + "/v1/blocks/" + url.PathEscape(id) + "/children?page_size=100"
	for next := u; next != ""; {
		var res list[*Block]
		if _, err := s.c.GetJSON(ctx, next, &res); err != nil {
			return nil, err
		}
		out = append(out, res.Results...)
		next = ""
		if res.HasMore && res.NextCursor != "" {
			next = u + "&start_cursor=" + url.QueryEscape(res.NextCursor)
		}
	}
	if depth >= maxDepth {
		return out, nil
	}
	for _, b := range out {
		if b == nil || !b.HasChildren || b.Type == "child_page" || b.Type == "child_database" {
			continue
		}
		from := b.ID
		if b.Type == "synced_block" && b.Data.SyncedFrom != nil && b.Data.SyncedFrom.BlockID != "" {
			from = b.Data.SyncedFrom.BlockID
		}
		children, err := s.tree(ctx, from, depth+1)
		if code := webapi.StatusCode(err); from != b.ID && (code == http.StatusNotFound || code == http.StatusForbidden) {
			continue // the original of a synced block is not shared: nothing to show
		}
		if err != nil {
			return nil, err
		}
		b.Children = children
	}
	return out, nil
}

// breadcrumb is the page's path: its ancestors' titles (pages and
// databases, through blocks that hold pages) and its own, joined by " > ".
func (s *Source) breadcrumb(ctx context.Context, ls *listing, id, title string) (string, error) {
	var titles []string
	seen := map[string]bool{id: true}
	for steps := 0; steps < 200; steps++ {
		p, err := s.parentOf(ctx, ls, id)
		if err != nil {
			return "", err
		}
		if p == "" || seen[p] {
			break
		}
		seen[p] = true
		if n, ok := ls.nodes[p]; ok && n.title != "" {
			titles = append(titles, n.title)
		}
		id = p
	}
	slices.Reverse(titles)
	return strings.Join(append(titles, title), " > "), nil
}

// Anchor returns the block ID (without dashes) of the heading at the end
// of section, for the page being handed over: Notion opens a page at a
// block with "#<block id>".
func (s *Source) Anchor(doc docent.Document, section []string) string {
	if len(section) == 0 {
		return ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.anchors[doc.ID][headingKey(section[len(section)-1])]
}

// headingKey compares heading texts as the chunker and Notion write them:
// letters and digits only, lower case.
func headingKey(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return unicode.ToLower(r)
		}
		return -1
	}, s)
}

func uniqueSorted(ss []string) []string {
	if len(ss) == 0 {
		return nil
	}
	out := slices.Clone(ss)
	slices.Sort(out)
	return slices.Compact(out)
}
