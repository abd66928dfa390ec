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
	// BatchSize is how many chunk texts go to the embedder per call. Default 64.
	BatchSize int
	// Clock returns the current time. Default time.Now.
	Clock func() time.Time
}

func (o EngineOptions) withDefaults() EngineOptions {
	if o.MaxDocBytes <= 0 {
		o.MaxDocBytes = 5 << 20
	}
	if o.BatchSize <= 0 {
		o.BatchSize = 64
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
	// Done documents out of Total (listed documents plus deletions).
	Done, Total int
	// Elapsed is the time since the run started.
	Elapsed time.Duration
}

// Engine applies source changes to the index and the registry. One Engine
// serves every source; syncs of different sources may run concurrently
// (with a Trainable embedder they take turns, since a run may retrain the
// model and re-embed the whole index).
//
// Writes are ordered so that a run stopped at any point, even by a crash
// between an index write and the registry write that follows it, converges
// on the next run: the index is written before the registry, the cursor is
// stored last, and every run starts by reconciling the index with the
// registry.
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
}

// NewEngine returns an engine that records documents and runs in reg,
// writes chunks to idx, embeds them with emb and splits documents with ch.
func NewEngine(reg Registry, idx search.Index, emb search.Embedder, ch Chunker, log *slog.Logger, opts EngineOptions) *Engine {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Engine{reg: reg, idx: idx, emb: emb, ch: ch, log: log, opts: opts.withDefaults()}
}

// pendingDoc is a document to (re-)index in this run.
type pendingDoc struct {
	doc    docent.Document
	hash   string
	chunks []docent.Chunk
	exists bool // live in the registry before the run
}

// run is the state of one Sync call.
type run struct {
	e        *Engine
	src      Source
	name     string
	id       int64
	res      docent.RunResult
	progress func(Progress)
	done     int
	total    int
	// retry is set when a listed document failed in the engine (chunking
	// or embedding) rather than in the source: the cursor must then stay
	// where it was, so that the next run lists the document again.
	retry bool
}

// Sync brings the index and the registry up to date with src and records
// the run. It returns an error, with the run recorded as failed, when the
// source cannot be read (the index is left as it was), when the registry
// or the index fails, or when ctx is cancelled (ErrInterrupted). Documents
// that cannot be indexed are skipped and listed in docent.RunResult.Errors; they
// do not fail the run, but when one failed to chunk or embed the source's
// cursor is not advanced, so the next run lists it again. progress, if
// not nil, is called after each document.
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
			return docent.RunResult{Source: name}, fmt.Errorf("connectors: sync %s: %w", name, err)
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
		return r.res, fmt.Errorf("connectors: sync %s: %w", name, err)
	}
	r.id = id
	err = r.sync(ctx)
	return r.finish(ctx, err)
}

// finish records the run's outcome and returns it.
func (r *run) finish(ctx context.Context, err error) (docent.RunResult, error) {
	e := r.e
	r.res.Finished = e.opts.Clock().UTC()
	r.res.Failed = len(r.res.Errors)
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
	attrs := []any{slog.String("source", r.name), slog.Int("added", r.res.Added), slog.Int("updated", r.res.Updated),
		slog.Int("unchanged", r.res.Unchanged), slog.Int("deleted", r.res.Deleted), slog.Int("failed", r.res.Failed),
		slog.Duration("duration", r.res.Duration())}
	if err != nil {
		e.log.Error("sync failed", append(attrs, slog.Any("error", err))...)
	} else {
		e.log.Info("sync finished", attrs...)
	}
	return r.res, err
}

// sync is the body of a run; a non-nil error fails the run.
func (r *run) sync(ctx context.Context) error {
	e, name := r.e, r.name
	prefix := name + ":"

	// Reconcile: read what the registry and the index hold for this source.
	known, err := e.reg.Documents(ctx, name)
	if err != nil {
		return err
	}
	indexed, err := e.idx.ChunkIDs(ctx, name)
	if err != nil {
		return fmt.Errorf("read index: %w", err)
	}
	var orphans []string // in the index but not live in the registry
	for id := range indexed {
		if _, ok := known[id]; !ok && strings.HasPrefix(id, prefix) {
			orphans = append(orphans, id)
		}
	}
	slices.Sort(orphans)
	dirty := map[string]bool{} // registry and index disagree: re-index
	for id, rec := range known {
		if !sameIDs(rec.ChunkIDs, indexed[id]) {
			dirty[id] = true
		}
	}
	cursor, err := e.reg.Cursor(ctx, name)
	if err != nil {
		return err
	}
	if len(dirty) > 0 && cursor != "" {
		// An incremental listing may not include the dirty documents.
		e.log.Warn("index and registry disagree; asking for a full listing",
			slog.String("source", name), slog.Int("documents", len(dirty)))
		cursor = ""
	}

	changes, err := r.src.Changes(ctx, cursor)
	if err != nil {
		return fmt.Errorf("list changes: %w", err)
	}
	if len(orphans) > 0 {
		e.log.Warn("removing index documents unknown to the registry",
			slog.String("source", name), slog.Int("documents", len(orphans)))
		if err := e.idx.DeleteDocs(ctx, orphans...); err != nil {
			return fmt.Errorf("index: %w", err)
		}
	}

	// Classify the listed documents.
	listed := map[string]bool{}
	for _, f := range changes.Failed {
		listed[f.ID] = true
		r.fail(f.ID, f.Err)
	}
	var todo []*pendingDoc
	for _, doc := range changes.Docs {
		if listed[doc.ID] && doc.ID != "" {
			r.fail(doc.ID, "listed twice")
			continue
		}
		listed[doc.ID] = true
		if msg := e.check(name, &doc); msg != "" {
			r.fail(doc.ID, msg)
			continue
		}
		h := docHash(doc)
		rec, exists := known[doc.ID]
		if exists && rec.ContentHash == h && !dirty[doc.ID] {
			r.res.Unchanged++
			continue
		}
		todo = append(todo, &pendingDoc{doc: doc, hash: h, exists: exists})
	}

	// Documents gone from the source.
	var gone []string
	if changes.Full {
		for id := range known {
			if !listed[id] {
				gone = append(gone, id)
			}
		}
	} else {
		for _, id := range changes.Deleted {
			if _, ok := known[id]; ok && !listed[id] {
				gone = append(gone, id)
			}
		}
	}
	slices.Sort(gone)
	goneSet := make(map[string]bool, len(gone))
	for _, id := range gone {
		goneSet[id] = true
	}

	r.total = len(changes.Docs) + len(changes.Failed) + len(gone)
	r.done = r.res.Unchanged + len(r.res.Errors)
	r.report()

	// Chunk every changed document (cheap, and Fit needs the new texts).
	var ready []*pendingDoc
	for _, p := range todo {
		chunks, err := e.ch.Chunk(p.doc)
		if err == nil {
			err = checkChunks(p.doc.ID, chunks)
		}
		if err != nil {
			r.fail(p.doc.ID, "chunk: "+err.Error())
			r.retry = true
			r.done++
			r.report()
			continue
		}
		p.chunks = chunks
		ready = append(ready, p)
	}

	reembed, err := r.prepareModel(ctx, ready, goneSet)
	if err != nil {
		return err
	}
	if reembed {
		// Until every vector is remade, the index holds mixed vectors.
		if err := e.idx.SetEmbedderName(ctx, ""); err != nil {
			return fmt.Errorf("index: %w", err)
		}
		// Remake the vectors of every document this run does not rewrite
		// first: if the new vectors have another length, the index must
		// be emptied before it takes any of them.
		skip := make(map[string]bool, len(ready)+len(gone))
		for _, p := range ready {
			skip[p.doc.ID] = true
		}
		for _, id := range gone {
			skip[id] = true
		}
		if err := e.reembedAll(ctx, skip); err != nil {
			return err
		}
	}

	// Index changed documents: index first, then the registry.
	for _, group := range batches(ready, e.opts.BatchSize) {
		if err := ctx.Err(); err != nil {
			return err
		}
		errs, err := e.embedGroup(ctx, group)
		if err != nil {
			return err
		}
		for i, p := range group {
			if errs[i] != nil {
				r.fail(p.doc.ID, "embed: "+errs[i].Error())
				r.retry = true
				if reembed {
					// Its stored vectors are the old model's: drop them.
					// The registry still lists the chunks, so the next
					// run finds the document out of step and retries it.
					if err := e.idx.DeleteDocs(ctx, p.doc.ID); err != nil {
						return fmt.Errorf("index: %w", err)
					}
				}
				r.done++
				r.report()
				continue
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := r.write(ctx, p); err != nil {
				return err
			}
			if p.exists {
				r.res.Updated++
			} else {
				r.res.Added++
			}
			r.done++
			r.report()
		}
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

	if reembed {
		if err := e.idx.SetEmbedderName(ctx, e.emb.Name()); err != nil {
			return fmt.Errorf("index: %w", err)
		}
		e.log.Info("re-embedded the index", slog.String("embedder", e.emb.Name()))
	}

	if err := ctx.Err(); err != nil {
		return err
	}
	if r.retry {
		// A document failed to chunk or embed: keep the old cursor so the
		// next run lists it again (what this run wrote is then skipped as
		// unchanged). Failures the source reported (Changes.Failed) and
		// documents the engine rejects as binary or oversized are content
		// problems that a retry would not fix; they do not hold the cursor.
		e.log.Info("cursor not advanced: documents that failed to chunk or embed are retried next run",
			slog.String("source", name))
		return nil
	}
	return e.reg.SetCursor(ctx, name, changes.Cursor)
}

// write stores one embedded document: chunks in the index, then its record.
func (r *run) write(ctx context.Context, p *pendingDoc) error {
	e := r.e
	if len(p.chunks) == 0 {
		// Upsert of nothing would leave the old chunks in place.
		if err := e.idx.DeleteDocs(ctx, p.doc.ID); err != nil {
			return fmt.Errorf("index: %w", err)
		}
	} else if err := e.idx.Upsert(ctx, p.chunks); err != nil {
		return fmt.Errorf("index: %w", err)
	}
	ids := make([]string, len(p.chunks))
	for i, c := range p.chunks {
		ids[i] = c.ID
	}
	d := p.doc
	return e.reg.PutDocument(ctx, docent.DocRecord{
		ID: d.ID, Source: r.name, Path: d.Path, URL: d.URL, Title: d.Title, Space: d.Space,
		Labels: d.Labels, Owner: d.Owner, Author: d.Author, ContentHash: p.hash,
		UpdatedAt: d.UpdatedAt.UTC(), ChunkIDs: ids,
	})
}

// fail records a skipped document.
func (r *run) fail(id, msg string) {
	r.res.Errors = append(r.res.Errors, docent.DocError{ID: id, Err: msg})
	r.e.log.Warn("document skipped", slog.String("source", r.name), slog.String("id", id), slog.String("error", msg))
}

func (r *run) report() {
	if r.progress != nil {
		r.progress(Progress{Source: r.name, Done: r.done, Total: r.total,
			Elapsed: r.e.opts.Clock().Sub(r.res.Started)})
	}
}

// check validates a listed document and returns why it cannot be indexed,
// or "". It fills in Source when the source left it empty.
func (e *Engine) check(source string, d *docent.Document) string {
	switch {
	case !strings.HasPrefix(d.ID, source+":") || len(d.ID) == len(source)+1:
		return fmt.Sprintf("document ID must start with %q", source+":")
	case d.Source != "" && d.Source != source:
		return fmt.Sprintf("document source %q is not %q", d.Source, source)
	case len(d.Body) > e.opts.MaxDocBytes:
		return fmt.Sprintf("document is %d bytes, over the %d byte limit", len(d.Body), e.opts.MaxDocBytes)
	case !utf8.ValidString(d.Body) || strings.IndexByte(d.Body, 0) >= 0:
		return "document is binary (not UTF-8 text)"
	}
	d.Source = source
	return ""
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
