// Package confluence is a documentation source over Confluence: Cloud
// through REST API v2 (email and API token, basic auth) and Data Center or
// Server through REST API v1 (a personal access token, bearer auth), behind
// one source type. Pages become markdown documents (see Converter) with
// their space, labels, ancestors (as the document path), last editor and
// web link; chunk links deep-link to headings the way Confluence names
// them.
//
// Every run lists the pages of each configured space without their bodies
// (the cheap listing: IDs, titles, parents, versions), names the ones that
// did not change with Listing.Present, and fetches the bodies of the ones
// that changed since the cursor (last modified at or after the newest
// version the previous run saw, less an overlap window), so deletions and
// lost permissions are seen on every run without fetching every body. A
// listing from an empty or unrecognised cursor fetches every body, a page
// of pages at a time.
package confluence

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/connectors"
	"github.com/docent-hq/docent/connectors/webapi"
)

// Flavor is the kind of Confluence a source talks to.
type Flavor string

// Flavors.
const (
	// Cloud is Confluence Cloud (REST API v2, email + API token).
	Cloud Flavor = "cloud"
	// DataCenter is Confluence Data Center or Server (REST API v1,
	// personal access token).
	DataCenter Flavor = "datacenter"
)

// Defaults of Options.
const (
	DefaultOverlap      = 10 * time.Minute
	DefaultPageSize     = 250
	DefaultBodyPageSize = 50
)

// Options configure a Confluence source.
type Options struct {
	// BaseURL is the wiki's address: "https://acme.atlassian.net/wiki" for
	// Cloud, the base URL (with any context path) for Data Center.
	BaseURL string
	// Flavor is Cloud or DataCenter.
	Flavor Flavor
	// Email and Token authenticate: Cloud takes the account's email and
	// an API token; Data Center takes a personal access token (Email
	// unused).
	Email, Token string
	// Spaces are the keys of the spaces to index (at least one).
	Spaces []string
	// ExcludeLabels drops pages carrying any of these labels.
	ExcludeLabels []string
	// Roots, when set, limit the source to these pages (by ID) and the
	// pages below them.
	Roots []string
	// Overlap is how far before the last run's newest change an
	// incremental listing looks again, for changes the API shows late.
	// Default DefaultOverlap; negative means none (pages modified after
	// the newest change seen, only).
	Overlap time.Duration
	// MaxBytes is the largest page (as markdown) indexed; larger ones are
	// reported as too large. connectors.DefaultMaxBytes when 0.
	MaxBytes int
	// PageSize is how many pages a listing request asks for without
	// bodies (default DefaultPageSize); BodyPageSize with bodies (default
	// DefaultBodyPageSize).
	PageSize, BodyPageSize int
	// HTTPClient, Clock and MaxRetries tune the HTTP client (see webapi).
	HTTPClient *http.Client
	Clock      webapi.Clock
	MaxRetries int
	// RequestsPerSecond limits the request rate (0: no limit).
	RequestsPerSecond float64
	// Logger receives progress and warnings.
	Logger *slog.Logger
}

// Source lists the pages of Confluence spaces.
type Source struct {
	name string
	opts Options
	api  api
	conv *Converter
	log  *slog.Logger
}

var (
	_ connectors.Source   = (*Source)(nil)
	_ connectors.Anchorer = (*Source)(nil)
)

// ErrAuth is wrapped by List's error when Confluence refuses the
// credentials: the run fails at once, naming the source, never the token.
var ErrAuth = errors.New("confluence: authentication failed")

// New returns a source named name. It fails for options that cannot work
// (no base URL, no spaces, no token, an unknown flavor).
func New(name string, opts Options) (*Source, error) {
	if opts.Flavor == "" {
		opts.Flavor = Cloud
	}
	switch {
	case opts.BaseURL == "":
		return nil, fmt.Errorf("confluence: source %q: no base URL", name)
	case len(opts.Spaces) == 0:
		return nil, fmt.Errorf("confluence: source %q: no spaces", name)
	case opts.Token == "":
		return nil, fmt.Errorf("confluence: source %q: no token", name)
	case opts.Flavor == Cloud && opts.Email == "":
		return nil, fmt.Errorf("confluence: source %q: Cloud needs the account's email with the API token", name)
	case opts.Flavor != Cloud && opts.Flavor != DataCenter:
		return nil, fmt.Errorf("confluence: source %q: unknown flavor %q (want cloud or datacenter)", name, opts.Flavor)
	}
	opts.BaseURL = strings.TrimRight(opts.BaseURL, "/")
	switch {
	case opts.Overlap == 0:
		opts.Overlap = DefaultOverlap
	case opts.Overlap < 0:
		opts.Overlap = 0
	}
	if opts.MaxBytes == 0 {
		opts.MaxBytes = connectors.DefaultMaxBytes
	}
	if opts.PageSize <= 0 {
		opts.PageSize = DefaultPageSize
	}
	if opts.BodyPageSize <= 0 {
		opts.BodyPageSize = DefaultBodyPageSize
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	authorize := func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+opts.Token) }
	secrets := []string{opts.Token}
	if opts.Flavor == Cloud {
		basic := base64.StdEncoding.EncodeToString([]byte(opts.Email + ":" + opts.Token))
		authorize = func(r *http.Request) { r.Header.Set("Authorization", "Basic "+basic) }
		secrets = append(secrets, basic)
	}
	client := webapi.New(webapi.Options{
		Name: "confluence", HTTPClient: opts.HTTPClient, Authorize: authorize, Clock: opts.Clock,
		MaxRetries: opts.MaxRetries, RequestsPerSecond: opts.RequestsPerSecond, Secrets: secrets,
	})
	s := &Source{name: name, opts: opts, conv: NewConverter(), log: opts.Logger}
	if opts.Flavor == Cloud {
		s.api = &cloudAPI{c: client, base: opts.BaseURL, pageSize: opts.PageSize, bodyPageSize: opts.BodyPageSize}
	} else {
		s.api = &dcAPI{c: client, base: opts.BaseURL, pageSize: opts.PageSize, bodyPageSize: opts.BodyPageSize}
	}
	return s, nil
}

// Name returns the configured source name.
func (s *Source) Name() string { return s.name }

// page is a Confluence page as either API describes it.
type page struct {
	ID, Title, SpaceKey string
	// ParentID is the parent page ("" at the top of the space).
	ParentID string
	// Ancestors, when the API gives them (Data Center), root first.
	Ancestors []ref
	// Version and Modified are the current version's number and date.
	Version  int
	Modified time.Time
	// Author is the name of whoever made the current version, if known.
	Author string
	// Labels, once LabelsKnown (Data Center lists them with the page;
	// Cloud needs a request per page).
	Labels      []string
	LabelsKnown bool
	// WebUI is the page's web link, relative to the base URL.
	WebUI string
	// Body is the storage-format body; HasBody is false when the request
	// did not ask for it.
	Body    string
	HasBody bool
}

// ref is a page named by an ancestor list.
type ref struct{ ID, Title string }

// space is a Confluence space.
type space struct{ ID, Key, Name string }

// api is what the source needs of a Confluence REST API.
type api interface {
	// spaces returns the spaces with these keys, in order; a key that
	// does not exist or is not visible is an error.
	spaces(ctx context.Context, keys []string) ([]space, error)
	// pages lists the current pages of sp, bodies included when bodies
	// is set, and calls fn with each; fn returning errStop ends the
	// listing early without error. newestFirst reports whether the
	// listing with bodies comes in order of last modification, newest
	// first.
	pages(ctx context.Context, sp space, bodies bool, limit int, fn func(page) error) error
	newestFirst() bool
	// page returns one page with its body.
	page(ctx context.Context, sp space, id string) (page, error)
	// labels fills in p's labels when the listing did not give them.
	labels(ctx context.Context, p *page) error
	// excluded returns the IDs of the pages in sp that carry one of the
	// labels, when the listing does not say (Cloud); nil otherwise.
	excluded(ctx context.Context, sp space, labels []string) (map[string]bool, error)
	// spaceLabels returns the labels of every labelled page in sp, in a
	// few requests per label, when the listing does not give them
	// (Cloud); nil otherwise.
	spaceLabels(ctx context.Context, sp space) (map[string][]string, error)
}

// errStop ends a page listing early.
var errStop = errors.New("stop listing")

// scope fingerprints what the source covers (see connectors.DateCursor).
func (s *Source) scope() string {
	return connectors.Fingerprint([]string{string(s.opts.Flavor), s.opts.BaseURL},
		s.opts.Spaces, s.opts.Roots, s.opts.ExcludeLabels)
}

// List hands over the pages of the configured spaces: from an empty or
// unknown cursor every page with its body; from a cursor, the pages
// modified after it (less the overlap window) and any page the engine does
// not hold, with the others named by Listing.Present. Every listing is
// complete, so pages deleted, moved out of scope, labelled out or no
// longer visible to the account are removed within one run. A page that
// cannot be fetched is reported to Listing.Failed (retried next run) and
// the listing goes on; a page that is gone or forbidden (404, 403) when
// its body is fetched is left out. List fails for credentials Confluence
// refuses (ErrAuth, at once), a space that does not exist, a listing
// request that keeps failing, a cancelled context, or an error from l.
func (s *Source) List(ctx context.Context, from string, l connectors.Listing) (connectors.Listed, error) {
	var stats webapi.Stats
	ctx = webapi.WithStats(ctx, &stats)
	defer func() { connectors.ReportRequests(l, stats.Get()) }()

	cur, incremental := connectors.ParseDateCursor(from)
	if incremental && cur.Scope != s.scope() {
		s.log.Info("confluence: the source's spaces, roots or labels changed: listing everything",
			slog.String("source", s.name))
		incremental = false
	}
	next := connectors.DateCursor{Scope: s.scope()}
	var threshold time.Time
	if incremental {
		next.Since = cur.Since
		threshold = cur.Since.Add(-s.opts.Overlap)
	}
	spaces, err := s.api.spaces(ctx, s.opts.Spaces)
	if err != nil {
		return connectors.Listed{}, s.fail(err)
	}
	for _, sp := range spaces {
		newest, err := s.listSpace(ctx, sp, incremental, threshold, l)
		if err != nil {
			return connectors.Listed{}, s.fail(err)
		}
		if newest.After(next.Since) {
			next.Since = newest
		}
	}
	return connectors.Listed{Cursor: next.String(), Complete: true}, nil
}

// fail wraps a listing error: refused credentials become ErrAuth with a
// plain message.
func (s *Source) fail(err error) error {
	if errors.Is(err, webapi.ErrUnauthorized) {
		return fmt.Errorf("%w: source %q: Confluence refused the credentials (401); check the %s: %w",
			ErrAuth, s.name, map[Flavor]string{Cloud: "email and API token", DataCenter: "personal access token"}[s.opts.Flavor], err)
	}
	return fmt.Errorf("confluence: source %q: %w", s.name, err)
}

// node is a page of the cheap listing: enough to place it in its tree and
// to decide whether to fetch it.
type node struct {
	title, parent string
	modified      time.Time
	excluded      bool
	// listed is false for an ancestor known only from another page's
	// ancestor list so far.
	listed bool
}

// listSpace lists one space and returns the newest modification it saw.
func (s *Source) listSpace(ctx context.Context, sp space, incremental bool, threshold time.Time, l connectors.Listing) (time.Time, error) {
	var excluded map[string]bool
	if len(s.opts.ExcludeLabels) > 0 {
		var err error
		if excluded, err = s.api.excluded(ctx, sp, s.opts.ExcludeLabels); err != nil {
			return time.Time{}, fmt.Errorf("space %s: pages with excluded labels: %w", sp.Key, err)
		}
	}
	// The cheap listing: every page's place in the tree and its date.
	tree := map[string]*node{}
	var order []string
	var newest time.Time
	fresh := 0 // pages modified after the threshold, in scope or not
	err := s.api.pages(ctx, sp, false, s.opts.PageSize, func(p page) error {
		if n, ok := tree[p.ID]; ok && n.listed {
			return nil // listed twice (the listing shifted under us)
		}
		n := &node{title: p.Title, parent: p.ParentID, modified: p.Modified, excluded: excluded[p.ID], listed: true}
		if p.LabelsKnown && s.excludedByLabel(p.Labels) {
			n.excluded = true
		}
		for i, a := range p.Ancestors { // Data Center: the ancestors come along
			if _, ok := tree[a.ID]; !ok {
				parent := ""
				if i > 0 {
					parent = p.Ancestors[i-1].ID
				}
				tree[a.ID] = &node{title: a.Title, parent: parent}
			}
			if i == len(p.Ancestors)-1 && n.parent == "" {
				n.parent = a.ID
			}
		}
		tree[p.ID] = n
		order = append(order, p.ID)
		if p.Modified.After(newest) {
			newest = p.Modified
		}
		if p.Modified.After(threshold) {
			fresh++
		}
		return nil
	})
	if err != nil {
		return time.Time{}, fmt.Errorf("space %s: list pages: %w", sp.Key, err)
	}

	// What to fetch: changed pages in scope; the others are present.
	want := map[string]bool{}
	old := 0 // wanted pages dated before the threshold (not held yet)
	present := connectors.NewPresenter(l)
	for _, id := range order {
		n := tree[id]
		if n.excluded || !s.inScope(tree, id) {
			continue
		}
		docID := s.docID(id)
		if !incremental || n.modified.After(threshold) || !connectors.Holds(l, docID) {
			want[id] = true
			if incremental && !n.modified.After(threshold) {
				old++
			}
			continue
		}
		if err := present.Add(ctx, docID); err != nil {
			return time.Time{}, err
		}
	}
	if err := present.Flush(ctx); err != nil {
		return time.Time{}, err
	}
	if len(want) == 0 {
		return newest, nil
	}

	// Many changes (a first sync): every page's labels at once, by label,
	// rather than a request per page.
	var labels map[string][]string
	if len(want) > s.opts.BodyPageSize {
		var err error
		if labels, err = s.api.spaceLabels(ctx, sp); err != nil {
			return time.Time{}, fmt.Errorf("space %s: labels: %w", sp.Key, err)
		}
	}
	hand := func(p page) error {
		delete(want, p.ID)
		if labels != nil && !p.LabelsKnown {
			p.Labels, p.LabelsKnown = labels[p.ID], true
		}
		return s.hand(ctx, sp, tree, p, l)
	}
	// Bodies by the page listing (every page, or the newest first until
	// the changes are in), else one request per page. Old pages the
	// engine lacks come one by one, unless there are many.
	if !incremental || s.api.newestFirst() || len(want) > s.opts.BodyPageSize {
		limit := s.opts.BodyPageSize
		early := incremental && s.api.newestFirst() && old <= s.opts.BodyPageSize
		if early {
			// The fresh pages come first: ask for no more than them.
			limit = min(limit, max(fresh, 1))
		}
		err := s.api.pages(ctx, sp, true, limit, func(p page) error {
			if want[p.ID] {
				if err := hand(p); err != nil {
					return err
				}
			}
			if len(want) == 0 || (early && !p.Modified.After(threshold)) {
				return errStop
			}
			return nil
		})
		if err != nil {
			return time.Time{}, fmt.Errorf("space %s: list pages with bodies: %w", sp.Key, err)
		}
	}
	for _, id := range order { // in listing order, for stable runs
		if !want[id] {
			continue
		}
		p, err := s.api.page(ctx, sp, id)
		switch code := webapi.StatusCode(err); {
		case err == nil:
			err = hand(p)
		case code == http.StatusNotFound || code == http.StatusForbidden:
			// Deleted or restricted since the listing: not named, so gone.
			s.log.Info("confluence: page gone or restricted since the listing", slog.String("source", s.name),
				slog.String("page", id), slog.Int("status", code))
			delete(want, id)
			continue
		case errors.Is(err, webapi.ErrUnauthorized) || ctx.Err() != nil:
			return time.Time{}, err
		default:
			delete(want, id)
			err = l.Failed(ctx, s.docID(id), err)
		}
		if err != nil {
			return time.Time{}, err
		}
	}
	return newest, nil
}

// hand converts a page and hands it to l (or reports why it cannot).
func (s *Source) hand(ctx context.Context, sp space, tree map[string]*node, p page, l connectors.Listing) error {
	id := s.docID(p.ID)
	if !p.LabelsKnown {
		if err := s.api.labels(ctx, &p); err != nil {
			switch code := webapi.StatusCode(err); {
			case code == http.StatusNotFound || code == http.StatusForbidden:
				return nil // gone since the listing
			case errors.Is(err, webapi.ErrUnauthorized) || ctx.Err() != nil:
				return err
			}
			return l.Failed(ctx, id, fmt.Errorf("labels: %w", err))
		}
	}
	if s.excludedByLabel(p.Labels) {
		return nil // labelled out since the listing: not named, so gone
	}
	if !p.HasBody {
		return l.Failed(ctx, id, fmt.Errorf("%w: the API returned the page without a storage-format body", connectors.ErrUnsupported))
	}
	md, err := s.conv.Convert(p.Body, Links{BaseURL: s.opts.BaseURL, SpaceKey: sp.Key})
	if err == nil {
		err = connectors.CheckText([]byte(md), s.opts.MaxBytes)
	}
	if err != nil {
		return l.Failed(ctx, id, err)
	}
	labels := slices.Clone(p.Labels)
	slices.Sort(labels)
	return l.Document(ctx, docent.Document{
		ID:        id,
		Source:    s.name,
		Path:      s.breadcrumb(tree, p),
		URL:       s.opts.BaseURL + p.WebUI,
		Title:     p.Title,
		Space:     sp.Key,
		Labels:    slices.Compact(labels),
		Author:    p.Author,
		UpdatedAt: p.Modified.UTC(),
		Body:      md,
	})
}

func (s *Source) docID(pageID string) string { return s.name + ":" + pageID }

func (s *Source) excludedByLabel(labels []string) bool {
	for _, l := range labels {
		for _, x := range s.opts.ExcludeLabels {
			if strings.EqualFold(l, x) {
				return true
			}
		}
	}
	return false
}

// inScope reports whether page id is one of the roots or below one (true
// without roots).
func (s *Source) inScope(tree map[string]*node, id string) bool {
	if len(s.opts.Roots) == 0 {
		return true
	}
	for steps := 0; id != "" && steps < 1000; steps++ {
		if slices.Contains(s.opts.Roots, id) {
			return true
		}
		n := tree[id]
		if n == nil {
			return false
		}
		id = n.parent
	}
	return false
}

// breadcrumb is the page's path: its ancestors' titles and its own,
// joined by " > ".
func (s *Source) breadcrumb(tree map[string]*node, p page) string {
	var titles []string
	if len(p.Ancestors) > 0 {
		for _, a := range p.Ancestors {
			titles = append(titles, a.Title)
		}
	} else {
		seen := map[string]bool{}
		for id := p.ParentID; id != "" && !seen[id]; {
			seen[id] = true
			n := tree[id]
			if n == nil {
				break
			}
			titles = append(titles, n.title)
			id = n.parent
		}
		slices.Reverse(titles)
	}
	return strings.Join(append(titles, p.Title), " > ")
}

// Anchor returns the heading ID Confluence gives the heading at the end of
// section: on Cloud the heading text with spaces as hyphens; on Data
// Center the page title and the heading, each without spaces, joined by a
// hyphen.
func (s *Source) Anchor(doc docent.Document, section []string) string {
	if len(section) == 0 {
		return ""
	}
	heading := strings.TrimSpace(section[len(section)-1])
	if s.opts.Flavor == DataCenter {
		return stripSpaces(doc.Title) + "-" + stripSpaces(heading)
	}
	return strings.Join(strings.Fields(heading), "-")
}

func stripSpaces(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) {
			return -1
		}
		return r
	}, s)
}
