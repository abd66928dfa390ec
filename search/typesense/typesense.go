package typesense

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/typesense/typesense-go/v2/typesense"
	"github.com/typesense/typesense-go/v2/typesense/api"

	"github.com/docent-hq/docent/internal/backoff"
	"github.com/docent-hq/docent/search"
)

// Options configure an Index. Zero fields take the defaults documented on
// each field.
type Options struct {
	// Nodes are the cluster's node URLs (or one load balancer's).
	Nodes []string
	// NearestNode, when set, is tried first (a node in the same zone).
	NearestNode string
	// APIKey is the admin key. It is sent in a header only: never logged
	// and never part of an error.
	APIKey string
	// Alias is the name queries go through; the versioned collections
	// behind it are called Alias_v1, Alias_v2, ... Default "docent_chunks".
	Alias string
	// Timeout bounds one HTTP request; default 5s.
	Timeout time.Duration
	// Retries is how many more nodes a failed request is tried on;
	// negative means none, zero means one per other node.
	Retries int
	// Dim, when positive, is the embedder's vector length: Open then
	// creates the first collection and the alias if they are missing, so
	// the cluster reports ready before the first sync. Otherwise the first
	// Upsert creates them with its vectors' length.
	Dim int
	// BatchSize is how many chunks one JSONL import request carries;
	// default 1000.
	BatchSize int
	// Weights are the query_by weights of title, section and text; default
	// 4, 3, 2 (integers, as Typesense wants them; the local index's 2 : 1.5 : 1).
	Weights [3]int
	// SourceTypes maps source names to their type (git, confluence, ...),
	// stored on each chunk as source_type.
	SourceTypes map[string]string
	// Logger receives retries and collection changes; nil discards.
	Logger *slog.Logger
	// Clock waits between retries; the wall clock when nil (tests pass a
	// fake one).
	Clock backoff.Clock
}

func (o Options) withDefaults() Options {
	if o.Alias == "" {
		o.Alias = "docent_chunks"
	}
	if o.Timeout <= 0 {
		o.Timeout = 5 * time.Second
	}
	if o.Retries == 0 {
		o.Retries = max(len(o.Nodes)-1, 0)
		if o.NearestNode != "" {
			o.Retries++
		}
	}
	o.Retries = max(o.Retries, 0)
	if o.BatchSize <= 0 {
		o.BatchSize = 1000
	}
	if o.Weights == [3]int{} {
		o.Weights = [3]int{4, 3, 2}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// Index is a search.Index over a Typesense cluster. It is safe for
// concurrent use; writes (Upsert, DeleteDocs, Reindex) are meant to come
// from one process at a time, the one that syncs.
type Index struct {
	opts Options
	api  *api.ClientWithResponses // typesense-go's generated client, for calls the high-level one lacks
	ts   *typesense.Client
	log  *slog.Logger

	mu  sync.Mutex
	cur *current // what the alias points at; nil until known
}

// current is the collection the alias points at.
type current struct {
	collection string
	version    int
	dim        int
}

var (
	_ search.Index         = (*Index)(nil)
	_ search.BothSearcher  = (*Index)(nil)
	_ search.HealthChecker = (*Index)(nil)
)

var aliasName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,100}$`)

// Open connects to the cluster. It checks the alias (and, with
// Options.Dim, creates the first collection behind it) so that a wrong
// address or key fails here.
func Open(ctx context.Context, opts Options) (*Index, error) {
	opts = opts.withDefaults()
	if !aliasName.MatchString(opts.Alias) {
		return nil, fmt.Errorf("typesense: alias %q: use letters, digits, _ and -", opts.Alias)
	}
	doer, err := newNodeDoer(opts.Nodes, opts.NearestNode, opts.Timeout, opts.Retries, opts.Clock, opts.Logger)
	if err != nil {
		return nil, err
	}
	server := opts.NearestNode
	if server == "" {
		server = opts.Nodes[0]
	}
	client, err := api.NewClientWithResponses(server, api.WithAPIKey(opts.APIKey), api.WithHTTPClient(doer))
	if err != nil {
		return nil, fmt.Errorf("typesense: client: %w", err)
	}
	x := &Index{opts: opts, api: client, ts: typesense.NewClient(typesense.WithAPIClient(client)), log: opts.Logger}
	cur, err := x.current(ctx)
	if err != nil {
		return nil, err
	}
	if cur == nil && opts.Dim > 0 {
		if _, err := x.switchTo(ctx, opts.Dim); err != nil {
			return nil, err
		}
	}
	return x, nil
}

// Close releases idle connections.
func (x *Index) Close() error { return nil }

// Alias is the name queries go through.
func (x *Index) Alias() string { return x.opts.Alias }

// httpError turns a typesense-go error or a non-2xx response into an error
// with the status and the server's message.
type httpError struct {
	status int
	msg    string
}

func (e *httpError) Error() string { return fmt.Sprintf("HTTP %d: %s", e.status, e.msg) }

func statusOf(err error) int {
	var he *httpError
	if errors.As(err, &he) {
		return he.status
	}
	var te *typesense.HTTPError
	if errors.As(err, &te) {
		return te.Status
	}
	return 0
}

// check reads resp and returns its body when the status is 2xx, or an
// *httpError with the server's message.
func check(resp *http.Response, err error) ([]byte, error) {
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, rerr := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		var m struct {
			Message string `json:"message"`
		}
		_ = json.Unmarshal(b, &m)
		if m.Message == "" {
			m.Message = strings.TrimSpace(string(b))
		}
		return nil, &httpError{status: resp.StatusCode, msg: m.Message}
	}
	if rerr != nil {
		return nil, fmt.Errorf("read response: %w", rerr)
	}
	return b, nil
}

// current returns the collection behind the alias, nil when the alias
// does not exist. A known answer is cached; forget clears it.
func (x *Index) current(ctx context.Context) (*current, error) {
	x.mu.Lock()
	cur := x.cur
	x.mu.Unlock()
	if cur != nil {
		return cur, nil
	}
	al, err := x.ts.Alias(x.opts.Alias).Retrieve(ctx)
	if statusOf(err) == http.StatusNotFound {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("typesense: alias %s: %w", x.opts.Alias, err)
	}
	col, err := x.ts.Collection(al.CollectionName).Retrieve(ctx)
	if err != nil {
		return nil, fmt.Errorf("typesense: collection %s: %w", al.CollectionName, err)
	}
	cur = &current{collection: al.CollectionName, version: versionOf(x.opts.Alias, al.CollectionName)}
	for _, f := range col.Fields {
		if f.Name == fieldEmbedding && f.NumDim != nil {
			cur.dim = *f.NumDim
		}
	}
	x.mu.Lock()
	x.cur = cur
	x.mu.Unlock()
	return cur, nil
}

// forget drops the cached alias target (after a 404, or another
// process's reindex).
func (x *Index) forget() {
	x.mu.Lock()
	x.cur = nil
	x.mu.Unlock()
}

func versionOf(alias, collection string) int {
	n, err := strconv.Atoi(strings.TrimPrefix(collection, alias+"_v"))
	if err != nil || !strings.HasPrefix(collection, alias+"_v") {
		return 0
	}
	return n
}

// createCollection creates a new versioned collection for vectors of
// length dim, dropping a leftover of that name from an interrupted
// reindex (it was never behind the alias).
func (x *Index) createCollection(ctx context.Context, version, dim int) (string, error) {
	name := fmt.Sprintf("%s_v%d", x.opts.Alias, version)
	body, _ := json.Marshal(collectionSchema(name, dim))
	// The schema goes through the generated client's raw-body call:
	// typesense-go v2.0.0's Field type has no stem or vec_dist.
	_, err := check(x.api.CreateCollectionWithBody(ctx, "application/json", strings.NewReader(string(body))))
	if statusOf(err) == http.StatusConflict {
		x.log.Warn("typesense: dropping a collection left by an interrupted reindex", slog.String("collection", name))
		if _, derr := x.ts.Collection(name).Delete(ctx); derr != nil {
			return "", fmt.Errorf("typesense: drop leftover %s: %w", name, derr)
		}
		_, err = check(x.api.CreateCollectionWithBody(ctx, "application/json", strings.NewReader(string(body))))
	}
	if err != nil {
		return "", fmt.Errorf("typesense: create collection %s: %w", name, err)
	}
	return name, nil
}

// swap points the alias at collection in one call and drops the
// collection it pointed at before, if any.
func (x *Index) swap(ctx context.Context, old *current, collection string, version, dim int) error {
	if _, err := x.ts.Aliases().Upsert(ctx, x.opts.Alias, &api.CollectionAliasSchema{CollectionName: collection}); err != nil {
		return fmt.Errorf("typesense: move alias %s to %s: %w", x.opts.Alias, collection, err)
	}
	x.mu.Lock()
	x.cur = &current{collection: collection, version: version, dim: dim}
	x.mu.Unlock()
	x.log.Info("typesense: alias moved", slog.String("alias", x.opts.Alias), slog.String("collection", collection))
	if old != nil && old.collection != collection {
		if _, err := x.ts.Collection(old.collection).Delete(ctx); err != nil && statusOf(err) != http.StatusNotFound {
			return fmt.Errorf("typesense: drop previous collection %s: %w", old.collection, err)
		}
	}
	return nil
}

// switchTo creates an empty collection for vectors of length dim and
// moves the alias to it (an empty index taking another dimension).
func (x *Index) switchTo(ctx context.Context, dim int) (*current, error) {
	old, err := x.current(ctx)
	if err != nil {
		return nil, err
	}
	version := 1
	if old != nil {
		version = old.version + 1
	}
	name, err := x.createCollection(ctx, version, dim)
	if err != nil {
		return nil, err
	}
	if err := x.swap(ctx, old, name, version, dim); err != nil {
		return nil, err
	}
	return x.current(ctx)
}

// key is the filter-safe form of a metadata value: Typesense's filter_by
// has no escape that survives its parser for every value (a backtick
// inside a backtick-quoted value ends it early), so chunks carry hashed
// copies of the values filters compare (source, space, labels, document
// and chunk IDs) and filters compare hashes. Exact match of the hash is
// exact match of the value.
func key(v string) string {
	sum := sha256.Sum256([]byte(v))
	return "k" + hex.EncodeToString(sum[:16])
}

func keys(vs []string) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = key(v)
	}
	return out
}

// newGen returns a random generation tag for one Upsert call.
func newGen() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Health reports whether the cluster can serve queries: a node answers
// /health with ok (it has a leader) and the alias exists.
func (x *Index) Health(ctx context.Context) error {
	ok, err := x.ts.Health(ctx, x.opts.Timeout)
	if err != nil || !ok {
		return errors.New("typesense: cluster not ready (no node reports a leader)")
	}
	al, err := x.ts.Alias(x.opts.Alias).Retrieve(ctx)
	if statusOf(err) == http.StatusNotFound {
		x.forget()
		return fmt.Errorf("typesense: alias %s is missing", x.opts.Alias)
	}
	if err != nil {
		return fmt.Errorf("typesense: alias %s: %w", x.opts.Alias, err)
	}
	x.mu.Lock()
	if x.cur != nil && x.cur.collection != al.CollectionName {
		x.cur = nil // another process moved it
	}
	x.mu.Unlock()
	return nil
}
