package connectors

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/search"
)

// ErrInterrupted is returned by Sync (wrapped with the context's error) when
// its context is cancelled mid-run. The run is recorded as failed and the
// cursor is not advanced, so the next run picks up what was left.
var ErrInterrupted = errors.New("connectors: sync interrupted")

// EngineOptions tune the sync engine. Zero fields take the defaults.
type EngineOptions struct {
	// MaxDocBytes is the largest document body indexed; larger documents
	// are skipped and reported. Default 5 MiB.
	MaxDocBytes int
	// MaxChunksPerDoc is the most chunks a document is indexed as; a
	// document that would make more is indexed as its first
	// MaxChunksPerDoc chunks and reported in the run (a DocError with
	// Truncated set). Default DefaultMaxChunksPerDoc.
	MaxChunksPerDoc int
	// BatchSize is how many chunk texts go to the embedder per call. Default 64.
	BatchSize int
	// StageDir holds the temporary file in which a run with a Trainable
	// embedder keeps changed documents until the model is fitted; the
	// operating system's temporary directory when empty. The file is
	// unlinked as soon as it is made (where the system allows), so a
	// killed process leaves nothing behind.
	StageDir string
	// Clock returns the current time. Default time.Now.
	Clock func() time.Time
	// OnChange, when set, is called after each run that added, updated
	// or deleted documents (a run that failed part way too), before Sync
	// returns, once the run's corpus pass (Derive) is through.
	OnChange func()
}

var _ LimitedChunker = search.Chunker{}

// DefaultMaxChunksPerDoc is the default cap on chunks per document: a
// long manual of a few hundred sections is far below it, a generated page
// of a hundred thousand headings is cut at it.
const DefaultMaxChunksPerDoc = 2000

func (o EngineOptions) withDefaults() EngineOptions {
	if o.MaxDocBytes <= 0 {
		o.MaxDocBytes = 5 << 20
	}
	if o.BatchSize <= 0 {
		o.BatchSize = 64
	}
	if o.MaxChunksPerDoc <= 0 {
		o.MaxChunksPerDoc = DefaultMaxChunksPerDoc
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	return o
}

// Progress reports how far a sync has come; the engine reports it after
// each document.
type Progress struct {
	// Source is the source being synced.
	Source string
	// Listing is true while the source is still listing: Total is not
	// known until the listing ends.
	Listing bool
	// Done documents out of Total (documents listed plus deletions; 0
	// while Listing).
	Done, Total int
	// Elapsed is the time since the run started.
	Elapsed time.Duration
}

// Engine applies source listings to the index and the registry. One Engine
// serves every source; syncs of different sources may run concurrently
// (with a Trainable embedder they take turns, since a run may retrain the
// model and re-embed the whole index).
//
// The engine streams: it indexes each document as the source hands it
// over, a batch of chunks at a time, and keeps only IDs and content hashes
// per document, never the listing's bodies. With a Trainable embedder,
// which must be fitted on the whole corpus before any chunk is embedded,
// changed documents are chunked as they arrive and staged in a temporary
// file until the listing ends (see stage).
//
// Writes are ordered so that a run stopped at any point, even by a crash
// between an index write and the registry write that follows it, converges
// on the next run: each document is written to the index before the
// registry, deletions are applied only after a listing that ended without
// error, the cursor is stored last, and every run starts by reconciling the
// index with the registry.
type Engine struct {
	reg  Registry
	idx  search.Index
	emb  search.Embedder
	ch   Chunker
	log  *slog.Logger
	opts EngineOptions

	// model is held shared by syncs that keep the embedding model and the
	// index's vectors as they are, and exclusively by syncs that may change
	// them (Trainable embedders, or a re-embedding after an embedder change).
	model sync.RWMutex

	// passMu orders corpus passes and guards derivers (engine_pass.go).
	passMu   sync.Mutex
	derivers []search.Deriver
}

// NewEngine returns an engine that records documents and runs in reg,
// writes chunks to idx, embeds them with emb and splits documents with ch.
func NewEngine(reg Registry, idx search.Index, emb search.Embedder, ch Chunker, log *slog.Logger, opts EngineOptions) *Engine {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Engine{reg: reg, idx: idx, emb: emb, ch: ch, log: log, opts: opts.withDefaults()}
}

// pendingDoc is a changed document to (re-)index in this run: its metadata
// (Body dropped once chunked), content hash and chunks. Its fields are
// exported for the stage file's encoding.
type pendingDoc struct {
	Doc    docent.Document
	Hash   string
	Chunks []docent.Chunk
	Exists bool // live in the registry before the run

	reused int // chunks that kept their stored vector (not staged)
}

// Flags of the IDs a listing named.
const (
	namedPresent uint8 = 1 << iota // by Listing.Present
	namedBody                      // by Listing.Document or Listing.Failed
)

// run is the state of one Sync call. It is the Listing the source hands
// its documents to.
type run struct {
	e        *Engine
	src      Source
	name     string
	id       int64
	res      docent.RunResult
	progress func(Progress)

	// known maps the source's live registry documents to their content
	// hashes; "" for a document whose index chunks disagree with the
	// registry, so that it is re-indexed whatever the listing says.
	known map[string]string
	// empty holds the registry documents that have no chunk.
	empty map[string]bool
	// named flags every ID the listing named; deleted are the IDs it
	// reported with Listing.Deleted.
	named   map[string]uint8
	deleted []string

	// batch collects changed documents until their chunks fill one
	// embedding call (a plain embedder: indexed during the listing).
	batch batcher
	// stage holds changed documents until the listing ends (a Trainable
	// embedder); staging is set for such runs, stage is made on first use.
	staging   bool
	stage     *stage
	stagedIDs map[string]bool
	// reembedded is set once a Trainable embedder's new model re-embedded
	// the index around this run's changes: a changed document that then
	// fails to embed still holds the old model's vectors, which must go,
	// and the index is named after the model once the run is through.
	reembedded bool
	// pass, when set, is the corpus pass gathered with a Trainable
	// embedder's fit corpus; e.passMu is held until it ends (endPass).
	pass *pass
	// reuse is set once the index's stored vectors are known to be the
	// embedder's for the rest of the run: a changed document's chunks
	// that the index holds under the same ID keep their vector.
	reuse bool

	listing     bool
	handed      int // Document and Failed calls
	done, total int
	// retry is set when a document failed in a way a retry may fix (a
	// transient source failure, chunking or embedding): the cursor must
	// then stay where it was, so that the next run lists the document again.
	retry bool
	// stopErr is the engine's own failure during the listing, returned
	// by every Listing call after it.
	stopErr error
}

var (
	_ Listing          = (*run)(nil)
	_ RequestReporter  = (*run)(nil)
	_ Holder           = (*run)(nil)
	_ FragmentReporter = (*run)(nil)
)

// Fragments counts the files the source left to the documents that
// include them.
func (r *run) Fragments(ids ...string) { r.res.Content.Fragments += len(ids) }

// Holds reports whether the registry held id, in step with the index,
// when the run started.
func (r *run) Holds(id string) bool {
	h, ok := r.known[id]
	return ok && h != ""
}

// Held returns the IDs of the documents the registry held when the run
// started, sorted.
func (r *run) Held() []string {
	out := make([]string, 0, len(r.known))
	for id := range r.known {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

// Requests adds what the listing cost a remote API to the run's record.
func (r *run) Requests(s RequestStats) {
	r.res.Requests += s.Requests
	r.res.Retries += s.Retries
	r.res.RateLimited += s.RateLimited
	r.res.Waited += s.Waited
}

// Sync brings the index and the registry up to date with src and records
// the run. It returns an error, with the run recorded as failed, when the
// source cannot be read or fails part way (documents it handed over before
// failing stay indexed; nothing is deleted), when the registry or the index
// fails, or when ctx is cancelled (ErrInterrupted). Documents that cannot
// be indexed are skipped and listed in docent.RunResult.Errors; they do not
// fail the run, but when a failure may heal by itself (Errors[i].Retry) the
// source's cursor is not advanced, so the next run lists the document
// again. progress, if not nil, is called after each document.
func (e *Engine) Sync(ctx context.Context, src Source, progress func(Progress)) (docent.RunResult, error) {
	name := src.Name()
	if name == "" {
		return docent.RunResult{}, errors.New("connectors: sync: source has no name")
	}
	if _, trainable := e.emb.(search.Trainable); trainable {
		e.model.Lock()
		defer e.model.Unlock()
	} else {
		e.model.RLock()
		reembed, err := e.plainNeedsReembed(ctx)
		if err != nil {
			e.model.RUnlock()
			return e.failed(docent.RunResult{Source: name}, fmt.Errorf("connectors: sync %s: %w", name, err))
		}
		if reembed {
			e.model.RUnlock()
			e.model.Lock()
			defer e.model.Unlock()
		} else {
			defer e.model.RUnlock()
		}
	}

	r := &run{e: e, src: src, name: name, progress: progress,
		res: docent.RunResult{Source: name, Started: e.opts.Clock().UTC()}}
	id, err := e.reg.StartRun(ctx, name)
	if err != nil {
		return e.failed(r.res, fmt.Errorf("connectors: sync %s: %w", name, err))
	}
	r.id = id
	defer func() {
		// A panic (a bug in a source, or a test's simulated crash) goes
		// on up, but the run is recorded as failed first, not left
		// "running" until the next start abandons it.
		if p := recover(); p != nil {
			if r.pass != nil {
				r.pass.done(errPassAbandoned)
				r.pass = nil
				e.passMu.Unlock()
			}
			r.res.Err = fmt.Sprintf("panic: %v", p)
			r.res.Finished = e.opts.Clock().UTC()
			r.res.Failed = failedCount(r.res.Errors)
			if ferr := e.reg.FinishRun(context.WithoutCancel(ctx), r.id, r.res); ferr != nil {
				e.log.Error("record panicked run", slog.String("source", name), slog.Any("error", ferr))
			}
			panic(p)
		}
	}()
	err = r.sync(ctx)
	if r.stage != nil {
		if cerr := r.stage.close(); cerr != nil && err == nil {
			err = cerr
		}
	}
	return r.finish(ctx, err)
}

// failed logs a run that failed before it was recorded and returns it.
// The engine logs every run's outcome once (finish, failed); its callers
// do not log it again.
func (e *Engine) failed(res docent.RunResult, err error) (docent.RunResult, error) {
	res.Err = err.Error()
	e.log.Error("sync failed", slog.String("source", res.Source), slog.Any("error", err))
	return res, err
}

// finish records the run's outcome and returns it.
func (r *run) finish(ctx context.Context, err error) (docent.RunResult, error) {
	e := r.e
	r.res.Finished = e.opts.Clock().UTC()
	r.res.Failed = failedCount(r.res.Errors)
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("%w: %w", ErrInterrupted, ctx.Err())
			r.res.Err = "interrupted"
		} else {
			r.res.Err = err.Error()
		}
		err = fmt.Errorf("connectors: sync %s: %w", r.name, err)
	}
	// The run is recorded even when ctx was cancelled.
	if ferr := e.reg.FinishRun(context.WithoutCancel(ctx), r.id, r.res); ferr != nil {
		err = errors.Join(err, fmt.Errorf("connectors: sync %s: %w", r.name, ferr))
	}
	attrs := []any{slog.String("source", r.name), slog.Int("seen", r.res.Seen), slog.Int("added", r.res.Added),
		slog.Int("updated", r.res.Updated), slog.Int("unchanged", r.res.Unchanged), slog.Int("deleted", r.res.Deleted),
		slog.Int("failed", r.res.Failed), slog.Duration("duration", r.res.Duration())}
	if r.res.Requests > 0 {
		attrs = append(attrs, slog.Int("requests", r.res.Requests), slog.Int("retries", r.res.Retries),
			slog.Int("rate_limited", r.res.RateLimited), slog.Duration("waited", r.res.Waited))
	}
	if err != nil {
		e.log.Error("sync failed", append(attrs, slog.Any("error", err))...)
	} else {
		e.log.Info("sync finished", attrs...)
	}
	if r.res.Added+r.res.Updated+r.res.Deleted > 0 {
		r.endPass(ctx, err)
		if e.opts.OnChange != nil {
			e.opts.OnChange()
		}
	} else if r.pass != nil {
		r.pass.done(errPassAbandoned)
		r.pass = nil
		e.passMu.Unlock()
	}
	return r.res, err
}

// sync is the body of a run; a non-nil error fails the run.
func (r *run) sync(ctx context.Context) error {
	e := r.e
	cursor, err := r.reconcile(ctx)
	if err != nil {
		return err
	}
	if _, ok := e.emb.(search.Trainable); ok {
		r.staging = true
	} else if err := r.preparePlain(ctx); err != nil {
		return err
	}
	r.batch = batcher{size: e.opts.BatchSize}
	r.named = map[string]uint8{}

	r.listing = true
	listed, err := r.src.List(ctx, cursor, r)
	r.listing = false
	if r.stopErr != nil {
		return r.stopErr
	}
	if err != nil {
		return fmt.Errorf("list: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	r.res.Seen = len(r.named)
	gone := r.gone(listed.Complete)
	r.total = r.handed + len(gone)
	r.report()

	if r.staging {
		if err := r.indexStaged(ctx, gone); err != nil {
			return err
		}
	} else if err := r.flush(ctx, r.batch.rest()); err != nil {
		return err
	}

	// Deletions: index first, then the registry.
	if len(gone) > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := e.idx.DeleteDocs(ctx, gone...); err != nil {
			return fmt.Errorf("index: %w", err)
		}
		if err := e.reg.MarkDeleted(ctx, gone); err != nil {
			return err
		}
		r.res.Deleted = len(gone)
		r.done += len(gone)
		r.report()
	}

	if r.reembedded {
		if err := e.idx.SetEmbedderName(ctx, e.emb.Name()); err != nil {
			return fmt.Errorf("index: %w", err)
		}
		e.log.Info("re-embedded the index", slog.String("embedder", e.emb.Name()))
	}

	if err := ctx.Err(); err != nil {
		return err
	}
	if r.retry {
		// A document failed in a way a retry may fix: keep the old cursor
		// so the next run lists it again (what this run wrote is then
		// skipped as unchanged). Content problems (binary, oversized,
		// malformed) do not hold the cursor: a retry would not fix them.
		e.log.Info("cursor not advanced: documents that failed are retried next run",
			slog.String("source", r.name))
		return nil
	}
	return e.reg.SetCursor(ctx, r.name, listed.Cursor)
}

// reconcile reads what the registry and the index hold for the source,
// removes index documents the registry does not know (written before a
// crash), marks documents whose chunks disagree, and returns the cursor to
// list from: "" (a complete listing) when any document disagrees, since an
// incremental listing may not include it.
func (r *run) reconcile(ctx context.Context) (string, error) {
	e, prefix := r.e, r.name+":"
	recs, err := e.reg.Documents(ctx, r.name)
	if err != nil {
		return "", err
	}
	indexed, err := e.idx.ChunkIDs(ctx, r.name)
	if err != nil {
		return "", fmt.Errorf("read index: %w", err)
	}
	var orphans []string // in the index but not live in the registry
	for id := range indexed {
		if _, ok := recs[id]; !ok && strings.HasPrefix(id, prefix) {
			orphans = append(orphans, id)
		}
	}
	slices.Sort(orphans)
	r.known = make(map[string]string, len(recs))
	r.empty = map[string]bool{}
	dirty := 0
	for id, rec := range recs {
		if len(rec.ChunkIDs) == 0 {
			r.empty[id] = true
		}
		h := rec.ContentHash
		if !sameIDs(rec.ChunkIDs, indexed[id]) {
			h, dirty = "", dirty+1
		}
		r.known[id] = h
	}
	cursor, err := e.reg.Cursor(ctx, r.name)
	if err != nil {
		return "", err
	}
	if dirty > 0 && cursor != "" {
		e.log.Warn("index and registry disagree; asking for a full listing",
			slog.String("source", r.name), slog.Int("documents", dirty))
		cursor = ""
	}
	if len(orphans) > 0 {
		e.log.Warn("removing index documents unknown to the registry",
			slog.String("source", r.name), slog.Int("documents", len(orphans)))
		if err := e.idx.DeleteDocs(ctx, orphans...); err != nil {
			return "", fmt.Errorf("index: %w", err)
		}
	}
	return cursor, nil
}

// gone returns the known documents the listing removed: those it named as
// deleted and, for a complete listing, those it did not name at all.
func (r *run) gone(complete bool) []string {
	set := map[string]bool{}
	for _, id := range r.deleted {
		if _, ok := r.known[id]; ok && r.named[id] == 0 {
			set[id] = true
		}
	}
	if complete {
		for id := range r.known {
			if r.named[id] == 0 {
				set[id] = true
			}
		}
	}
	out := make([]string, 0, len(set))
	for id := range set {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

// stopped returns the error that ends the listing, if any.
func (r *run) stopped(ctx context.Context) error {
	if r.stopErr != nil {
		return r.stopErr
	}
	return ctx.Err()
}

// stop records err (if any) as the engine's failure and returns it.
func (r *run) stop(err error) error {
	if err != nil && r.stopErr == nil {
		r.stopErr = err
	}
	return err
}

// Document takes one listed document: unchanged ones are counted, changed
// ones chunked and indexed (or staged).
func (r *run) Document(ctx context.Context, doc docent.Document) error {
	if err := r.stopped(ctx); err != nil {
		return err
	}
	r.handed++
	if doc.ID != "" && r.named[doc.ID]&namedBody != 0 {
		r.skip(doc.ID, errors.New("listed twice"), false)
		return nil
	}
	r.named[doc.ID] |= namedBody
	if msg, oversized := r.e.check(r.name, &doc); msg != "" {
		if oversized {
			r.res.Content.Oversized++
		}
		r.skip(doc.ID, errors.New(msg), false)
		return nil
	}
	r.noteContent(doc)
	h := docHash(doc)
	old, exists := r.known[doc.ID]
	if exists && old == h {
		if r.empty[doc.ID] {
			r.res.Content.Empty++
		}
		r.res.Unchanged++
		r.done++
		r.report()
		return nil
	}
	chunks, rest, err := r.e.chunk(doc)
	if err == nil {
		err = checkChunks(doc.ID, chunks)
	}
	if err == nil && rest > 0 {
		r.res.Content.Oversized++
		r.truncated(doc.ID, len(chunks), rest)
	}
	if a, ok := r.src.(Anchorer); ok && err == nil {
		anchor(a, doc, chunks)
	}
	if err != nil {
		r.skip(doc.ID, fmt.Errorf("chunk: %w", err), true)
		return nil
	}
	if len(chunks) == 0 {
		r.res.Content.Empty++
		r.e.log.Info("document gives no chunk", slog.String("source", r.name), slog.String("id", doc.ID))
	}
	doc.Body = "" // the chunks hold the text now
	p := &pendingDoc{Doc: doc, Hash: h, Chunks: chunks, Exists: exists}
	if r.staging {
		return r.stop(r.stageDoc(p))
	}
	if full := r.batch.add(p); full != nil {
		return r.stop(r.flush(ctx, full))
	}
	return nil
}

// Failed records a document the source could not read.
func (r *run) Failed(ctx context.Context, id string, err error) error {
	if err := r.stopped(ctx); err != nil {
		return err
	}
	r.handed++
	if err == nil {
		err = errors.New("the source reported a failure without a reason")
	}
	if id != "" && r.named[id]&namedBody != 0 {
		r.skip(id, errors.New("listed twice"), false)
		return nil
	}
	r.named[id] |= namedBody
	if errors.Is(err, ErrTooLarge) {
		r.res.Content.Oversized++
	}
	r.skip(id, err, Transient(err))
	return nil
}

// noteContent adds what normalising doc found to the run's counts: the
// markup it dropped, and a warning for a front matter block it could not
// use or an include it could not read (the document is indexed anyway).
func (r *run) noteContent(doc docent.Document) {
	n := doc.Normalized
	r.res.Content.Dropped += n.Dropped
	var msgs []string
	if n.FrontMatter != "" {
		msgs = append(msgs, "front matter not used ("+n.FrontMatter+"); the body is indexed")
	}
	if len(n.Missing) > 0 {
		msgs = append(msgs, "include not found: "+strings.Join(n.Missing, ", "))
	}
	if len(msgs) > 0 {
		r.res.Content.Warnings = append(r.res.Content.Warnings, docent.DocError{ID: doc.ID, Err: strings.Join(msgs, "; ")})
	}
}

// Deleted notes documents gone from the source; they are removed once the
// listing has ended without error.
func (r *run) Deleted(ctx context.Context, ids ...string) error {
	if err := r.stopped(ctx); err != nil {
		return err
	}
	r.deleted = append(r.deleted, ids...)
	return nil
}

// Present notes documents that exist.
func (r *run) Present(ctx context.Context, ids ...string) error {
	if err := r.stopped(ctx); err != nil {
		return err
	}
	for _, id := range ids {
		r.named[id] |= namedPresent
	}
	return nil
}

// flush embeds a group of changed documents and writes them: the index
// first (one upsert for the group), then each document's registry record.
// A document that fails to embed is skipped and retried next run.
func (r *run) flush(ctx context.Context, group []*pendingDoc) error {
	if len(group) == 0 {
		return nil
	}
	e := r.e
	if err := ctx.Err(); err != nil {
		return err
	}
	if r.reuse {
		if _, err := e.reuseVectors(ctx, group); err != nil {
			return err
		}
	}
	errs, err := e.embedGroup(ctx, group)
	if err != nil {
		return err
	}
	embedded := group[:0:0]
	for i, p := range group {
		if errs[i] == nil {
			embedded = append(embedded, p)
			r.res.Content.Reused += p.reused
			r.res.Content.Embedded += len(p.Chunks) - p.reused
			continue
		}
		r.skip(p.Doc.ID, fmt.Errorf("embed: %w", errs[i]), true)
		if r.reembedded {
			// Its stored vectors are the old model's: drop them. The
			// registry still lists the chunks, so the next run finds
			// the document out of step and retries it.
			if err := e.idx.DeleteDocs(ctx, p.Doc.ID); err != nil {
				return fmt.Errorf("index: %w", err)
			}
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	refused, err := r.writeIndex(ctx, embedded)
	if err != nil {
		return err
	}
	landed := embedded[:0:0]
	for _, p := range embedded {
		if err := refused[p.Doc.ID]; err != nil {
			// The index refused some of its chunks (a remote backend's
			// per-line import failure): no registry record, so the
			// registry and the index disagree and the next run, which
			// the held cursor makes list it again, re-indexes it.
			r.skip(p.Doc.ID, fmt.Errorf("index: %w", err), true)
			continue
		}
		landed = append(landed, p)
	}
	return r.landed(ctx, landed)
}

// landed records the documents, whose chunks the index holds, in the
// registry (one write) and counts each as added or updated.
func (r *run) landed(ctx context.Context, docs []*pendingDoc) error {
	if len(docs) == 0 {
		return nil
	}
	recs := make([]docent.DocRecord, len(docs))
	for i, p := range docs {
		recs[i] = r.record(p)
	}
	if err := r.e.reg.PutDocuments(ctx, recs); err != nil {
		return err
	}
	for _, p := range docs {
		if p.Exists {
			r.res.Updated++
		} else {
			r.res.Added++
		}
		r.done++
		r.report()
	}
	return nil
}

// writeIndex replaces the indexed chunks of the documents with theirs, in
// one upsert; a document left without chunks is deleted from the index
// (an upsert of nothing would keep its old chunks). It returns the
// documents the index refused (search.PartialError) with why; any other
// failure is the error.
func (r *run) writeIndex(ctx context.Context, docs []*pendingDoc) (map[string]error, error) {
	var chunks []docent.Chunk
	var empty []string
	for _, p := range docs {
		if len(p.Chunks) == 0 {
			empty = append(empty, p.Doc.ID)
		}
		chunks = append(chunks, p.Chunks...)
	}
	if len(empty) > 0 {
		if err := r.e.idx.DeleteDocs(ctx, empty...); err != nil {
			return nil, fmt.Errorf("index: %w", err)
		}
	}
	if len(chunks) > 0 {
		if err := r.e.idx.Upsert(ctx, chunks); err != nil {
			var pe *search.PartialError
			if errors.As(err, &pe) {
				return pe.Failed, nil
			}
			return nil, fmt.Errorf("index: %w", err)
		}
	}
	return nil, nil
}

// record is the registry record of a document whose chunks are in the
// index.
func (r *run) record(p *pendingDoc) docent.DocRecord {
	ids := make([]string, len(p.Chunks))
	for i, c := range p.Chunks {
		ids[i] = c.ID
	}
	d := p.Doc
	return docent.DocRecord{
		ID: d.ID, Source: r.name, Path: d.Path, URL: d.URL, Title: d.Title, Space: d.Space,
		Labels: d.Labels, Owner: d.Owner, Author: d.Author, ContentHash: p.Hash,
		UpdatedAt: d.UpdatedAt.UTC(), ChunkIDs: ids,
	}
}

// chunk splits doc into at most MaxChunksPerDoc chunks; rest is how many
// more it would have made at least.
func (e *Engine) chunk(doc docent.Document) ([]docent.Chunk, int, error) {
	limit := e.opts.MaxChunksPerDoc
	if lc, ok := e.ch.(LimitedChunker); ok {
		return lc.ChunkAtMost(doc, limit)
	}
	chunks, err := e.ch.Chunk(doc)
	if err != nil || len(chunks) <= limit {
		return chunks, 0, err
	}
	return chunks[:limit], len(chunks) - limit, nil
}

// truncated reports a document indexed as only its first n chunks.
func (r *run) truncated(id string, n, rest int) {
	de := docent.DocError{ID: id, Truncated: true, Err: fmt.Sprintf(
		"indexed as its first %d chunks, the cap per document; at least %d more were left out", n, rest)}
	r.res.Errors = append(r.res.Errors, de)
	r.e.log.Warn("document truncated", slog.String("source", r.name), slog.String("id", id),
		slog.Int("chunks", n), slog.Int("left_out", rest))
}

// failedCount is how many errors are documents skipped (a truncated one
// was indexed).
func failedCount(errs []docent.DocError) int {
	n := 0
	for _, e := range errs {
		if !e.Truncated {
			n++
		}
	}
	return n
}

// skip records a skipped document; retry holds the cursor back so the next
// run lists it again. It is logged at info: the run's record carries it to
// the console and the sync summary, and a skipped page is no failure of
// the run.
func (r *run) skip(id string, err error, retry bool) {
	de := docent.DocError{ID: id, Err: err.Error(), Retry: retry}
	r.res.Errors = append(r.res.Errors, de)
	r.retry = r.retry || retry
	r.done++
	r.e.log.Info("document skipped", slog.String("source", r.name), slog.String("id", id),
		slog.Bool("retry", retry), slog.String("error", de.Err))
	r.report()
}

func (r *run) report() {
	if r.progress == nil {
		return
	}
	p := Progress{Source: r.name, Listing: r.listing, Done: r.done,
		Elapsed: r.e.opts.Clock().Sub(r.res.Started)}
	if !r.listing {
		p.Total = r.total
	}
	r.progress(p)
}

// check validates a listed document and returns why it cannot be indexed,
// or "", and whether it is too large. It fills in Source when the source
// left it empty.
func (e *Engine) check(source string, d *docent.Document) (string, bool) {
	switch {
	case !strings.HasPrefix(d.ID, source+":") || len(d.ID) == len(source)+1:
		return fmt.Sprintf("document ID must start with %q", source+":"), false
	case d.Source != "" && d.Source != source:
		return fmt.Sprintf("document source %q is not %q", d.Source, source), false
	case len(d.Body) > e.opts.MaxDocBytes:
		return fmt.Sprintf("document is %d bytes, over the %d byte limit", len(d.Body), e.opts.MaxDocBytes), true
	case !utf8.ValidString(d.Body) || strings.IndexByte(d.Body, 0) >= 0:
		return "document is binary (not UTF-8 text)", false
	}
	d.Source = source
	return "", false
}

// anchor replaces the heading anchors of chunk URLs with the source's own
// (see Anchorer): a chunk whose URL carries an anchor for its section gets
// the source's anchor instead, or the document's URL when it has none.
func anchor(a Anchorer, doc docent.Document, chunks []docent.Chunk) {
	if doc.URL == "" {
		return
	}
	for i := range chunks {
		c := &chunks[i]
		if len(c.Section) == 0 || !strings.HasPrefix(c.URL, doc.URL+"#") {
			continue
		}
		if frag := a.Anchor(doc, c.Section); frag != "" {
			c.URL = doc.URL + "#" + frag
		} else {
			c.URL = doc.URL
		}
	}
}

// checkChunks verifies the chunker's output belongs to the document.
func checkChunks(docID string, chunks []docent.Chunk) error {
	seen := make(map[string]bool, len(chunks))
	for _, c := range chunks {
		if c.DocID != docID {
			return fmt.Errorf("chunk %q has doc ID %q", c.ID, c.DocID)
		}
		if c.ID == "" || seen[c.ID] {
			return fmt.Errorf("chunk ID %q is empty or repeated", c.ID)
		}
		seen[c.ID] = true
	}
	return nil
}

// docHash is the content hash the registry diffs against: every field
// that reaches the index or the registry.
func docHash(d docent.Document) string {
	b, _ := json.Marshal(struct {
		ID, Source, Path, URL, Title, Space, Owner, Author string
		Labels                                             []string
		UpdatedAt                                          string
		Body                                               string
	}{d.ID, d.Source, d.Path, d.URL, d.Title, d.Space, d.Owner, d.Author, d.Labels,
		d.UpdatedAt.UTC().Format(time.RFC3339Nano), d.Body})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// sameIDs reports whether a and b hold the same chunk IDs, in any order.
func sameIDs(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
