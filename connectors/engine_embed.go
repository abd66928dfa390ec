package connectors

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/search"
)

// plainNeedsReembed reports whether a non-trainable embedder must re-embed
// the index: it holds vectors made by another embedder, or a re-embedding
// did not finish.
func (e *Engine) plainNeedsReembed(ctx context.Context) (bool, error) {
	name, err := e.idx.EmbedderName(ctx)
	if err != nil {
		return false, fmt.Errorf("index: %w", err)
	}
	if name == e.emb.Name() {
		return false, nil
	}
	n, err := e.idx.Count(ctx)
	if err != nil {
		return false, fmt.Errorf("index: %w", err)
	}
	return n > 0, nil
}

// preparePlain readies a plain (not Trainable) embedder before the listing,
// so that documents can be indexed as they are listed. When the index holds
// another embedder's vectors, or a re-embedding did not finish, every
// stored chunk is re-embedded first: a document this run changes is then
// embedded twice, which is cheaper than holding the whole listing back for
// a rare event. An empty index is named after the embedder.
func (r *run) preparePlain(ctx context.Context) error {
	e := r.e
	reembed, err := e.plainNeedsReembed(ctx)
	if err != nil {
		return err
	}
	if rb, ok := e.idx.(search.Rebuilder); reembed && ok {
		if err := e.rebuild(ctx, rb); err != nil {
			return err
		}
		e.log.Info("re-embedded the index into a new version", slog.String("embedder", e.emb.Name()))
	} else if reembed {
		// Until every vector is remade, the index holds mixed vectors.
		if err := e.idx.SetEmbedderName(ctx, ""); err != nil {
			return fmt.Errorf("index: %w", err)
		}
		if err := e.reembedAll(ctx, nil); err != nil {
			return err
		}
		e.log.Info("re-embedded the index", slog.String("embedder", e.emb.Name()))
	}
	name, err := e.idx.EmbedderName(ctx)
	if err != nil {
		return fmt.Errorf("index: %w", err)
	}
	if name != e.emb.Name() { // empty, or just re-embedded
		if err := e.idx.SetEmbedderName(ctx, e.emb.Name()); err != nil {
			return fmt.Errorf("index: %w", err)
		}
	}
	// Every stored vector is now the embedder's, and stays so while this
	// run holds the model lock: a changed document's unchanged chunks
	// keep theirs.
	r.reuse = true
	return nil
}

// stageDoc keeps a changed document on disk until the listing ends.
func (r *run) stageDoc(p *pendingDoc) error {
	if r.stage == nil {
		st, err := newStage(r.e.opts.StageDir)
		if err != nil {
			return err
		}
		r.stage, r.stagedIDs = st, map[string]bool{}
	}
	r.stagedIDs[p.Doc.ID] = true
	return r.stage.add(p)
}

// indexStaged ends a run with a Trainable embedder. The embedder is fitted
// to the corpus the index will hold after the run (the staged documents'
// chunks, and the stored chunks of every other document not gone) before
// any chunk is embedded; when the model changed, every stored chunk of the
// documents this run neither rewrites nor deletes is re-embedded. Then the
// staged documents are read back, embedded and written a batch at a time.
// On an index that can build a new version of itself (search.Rebuilder)
// and holds chunks, a changed model re-embeds all of it, stored and staged
// chunks, into a new version instead (rebuildStaged), so that searches
// never see two models' vectors.
//
// Staging on disk, rather than holding the changed documents or listing the
// source twice, keeps memory flat while the source lists and costs the
// source nothing: the one thing held in memory is Fit's corpus, a slice of
// chunk texts, because search.Trainable takes one.
func (r *run) indexStaged(ctx context.Context, gone []string) error {
	e := r.e
	tr := e.emb.(search.Trainable)
	name, err := e.idx.EmbedderName(ctx)
	if err != nil {
		return fmt.Errorf("index: %w", err)
	}
	if r.stage == nil && len(gone) == 0 && name == tr.Name() {
		// The corpus is the one the model was fitted to after the last
		// run that changed it: nothing to learn.
		return nil
	}
	goneSet := make(map[string]bool, len(gone))
	for _, id := range gone {
		goneSet[id] = true
	}
	corpus, err := r.corpus(ctx, goneSet)
	if err != nil {
		return err
	}
	changed, err := tr.Fit(ctx, corpus)
	if err != nil {
		return fmt.Errorf("fit embedder: %w", err)
	}
	corpus = nil
	if changed || name != tr.Name() {
		skip := make(map[string]bool, len(r.stagedIDs)+len(gone))
		for id := range r.stagedIDs {
			skip[id] = true
		}
		for id := range goneSet {
			skip[id] = true
		}
		if rb, ok := e.idx.(search.Rebuilder); ok {
			n, err := e.idx.Count(ctx)
			if err != nil {
				return fmt.Errorf("index: %w", err)
			}
			if n > 0 {
				return r.rebuildStaged(ctx, rb, skip)
			}
		}
		// Until every vector is remade, the index holds mixed vectors.
		if err := e.idx.SetEmbedderName(ctx, ""); err != nil {
			return fmt.Errorf("index: %w", err)
		}
		if err := e.reembedAll(ctx, skip); err != nil {
			return err
		}
		r.reembedded = true
	} else {
		// The model the stored vectors were made with is the one that
		// embeds this run's chunks.
		r.reuse = true
	}
	if r.stage == nil {
		return nil
	}
	b := batcher{size: e.opts.BatchSize}
	err = r.stage.each(func(p *pendingDoc) error {
		r.passStaged(p)
		return r.flush(ctx, b.add(p))
	})
	if err != nil {
		return err
	}
	return r.flush(ctx, b.rest())
}

// corpus returns the chunk texts the index will hold after the run, in a
// canonical order (by document ID, then position) so that the same corpus
// always fits the same model.
func (r *run) corpus(ctx context.Context, gone map[string]bool) ([]string, error) {
	type piece struct {
		doc  string
		ord  int
		text string
	}
	var pieces []piece
	// The scan is the run's corpus pass too (endPass decides whether the
	// index turned out as it saw it).
	r.e.passMu.Lock()
	r.pass = r.e.beginPass()
	if r.pass == nil {
		r.e.passMu.Unlock()
	}
	// The staged chunks join the pass when they are read back to be
	// embedded (passStaged), after the fit: the derivers' state then does
	// not sit in memory beside the training matrices.
	if r.stage != nil {
		err := r.stage.each(func(p *pendingDoc) error {
			for _, c := range p.Chunks {
				pieces = append(pieces, piece{c.DocID, c.Ord, c.Text})
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	err := r.e.idx.Scan(ctx, func(c docent.Chunk) error {
		if !r.stagedIDs[c.DocID] && !gone[c.DocID] {
			pieces = append(pieces, piece{c.DocID, c.Ord, c.Text})
			if r.pass != nil {
				r.pass.add(c)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("index: %w", err)
	}
	slices.SortStableFunc(pieces, func(a, b piece) int {
		return cmp.Or(cmp.Compare(a.doc, b.doc), cmp.Compare(a.ord, b.ord))
	})
	corpus := make([]string, len(pieces))
	for i, p := range pieces {
		corpus[i] = p.text
	}
	return corpus, nil
}

// passStaged adds a staged document's chunks to the run's corpus pass (see
// corpus), as the document is read back to be embedded. A document that
// then fails to land fails the pass (endPass scans the index instead).
func (r *run) passStaged(p *pendingDoc) {
	if r.pass == nil {
		return
	}
	for _, c := range p.Chunks {
		r.pass.add(c)
	}
}

// batcher groups documents so that each group's chunks fill about one
// embedding call; a document larger than size is a group of its own.
type batcher struct {
	size int
	cur  []*pendingDoc
	n    int
}

// add adds p and returns the group that was full before it joined, if any.
func (b *batcher) add(p *pendingDoc) []*pendingDoc {
	var full []*pendingDoc
	if len(b.cur) > 0 && b.n+len(p.Chunks) > b.size {
		full, b.cur, b.n = b.cur, nil, 0
	}
	b.cur = append(b.cur, p)
	b.n += len(p.Chunks)
	return full
}

// rest returns the last, partial group and empties the batcher.
func (b *batcher) rest() []*pendingDoc {
	rest := b.cur
	b.cur, b.n = nil, 0
	return rest
}

// reuseVectors gives the chunks of the group's documents that the index
// already holds under the same ID their stored vector, so that only new
// chunks reach the embedder. A chunk ID hashes the document, the section
// path and the embedded text (search.Chunker), so a stored vector under
// that ID is the embedding of the same text; it is only reused while the
// index's vectors are the engine embedder's (the caller checks
// EmbedderName), and only when it has the embedder's length. It returns
// how many chunks kept their vector.
func (e *Engine) reuseVectors(ctx context.Context, group []*pendingDoc) (int, error) {
	var ids []string
	for _, p := range group {
		if !p.Exists { // a new document has no stored chunk
			continue
		}
		for _, c := range p.Chunks {
			if len(c.Vector) == 0 {
				ids = append(ids, c.ID)
			}
		}
	}
	if len(ids) == 0 {
		return 0, nil
	}
	stored, err := e.idx.Vectors(ctx, ids)
	if err != nil {
		return 0, fmt.Errorf("index: stored vectors: %w", err)
	}
	dim, n := e.emb.Dim(), 0
	for _, p := range group {
		if !p.Exists {
			continue
		}
		for i := range p.Chunks {
			c := &p.Chunks[i]
			v, ok := stored[c.ID]
			if !ok || len(c.Vector) > 0 || len(v) == 0 || (dim > 0 && len(v) != dim) {
				continue
			}
			c.Vector = slices.Clone(v) // the index's slices are not ours
			p.reused++
			n++
		}
	}
	return n, nil
}

// embedGroup fills in the vectors of the group's chunks that have none
// (reuseVectors may have set some). When a batched
// call fails it retries document by document, so one bad document does not
// fail the others: errs[i] is document i's error. The returned error is
// the context's, when it was cancelled.
func (e *Engine) embedGroup(ctx context.Context, group []*pendingDoc) (errs []error, err error) {
	errs = make([]error, len(group))
	var chunks []*docent.Chunk
	for _, p := range group {
		chunks = append(chunks, p.unembedded()...)
	}
	if err := e.embedChunks(ctx, chunks); err == nil {
		return errs, nil
	} else if ctx.Err() != nil {
		return nil, ctx.Err()
	} else if len(group) == 1 {
		errs[0] = err
		return errs, nil
	}
	for i, p := range group {
		errs[i] = e.embedChunks(ctx, p.unembedded())
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
	return errs, nil
}

// unembedded returns the chunks of p without a vector: those a group's
// embedding fills in (the others kept their stored vector).
func (p *pendingDoc) unembedded() []*docent.Chunk {
	var out []*docent.Chunk
	for i := range p.Chunks {
		if len(p.Chunks[i].Vector) == 0 {
			out = append(out, &p.Chunks[i])
		}
	}
	return out
}

// embedChunks sets the Vector of every chunk, BatchSize texts per call.
func (e *Engine) embedChunks(ctx context.Context, chunks []*docent.Chunk) error {
	for start := 0; start < len(chunks); start += e.opts.BatchSize {
		part := chunks[start:min(start+e.opts.BatchSize, len(chunks))]
		texts := make([]string, len(part))
		for i, c := range part {
			texts[i] = c.Text
		}
		vecs, err := e.emb.EmbedDocuments(ctx, texts)
		if err != nil {
			return err
		}
		if len(vecs) != len(texts) {
			return fmt.Errorf("embedder returned %d vectors for %d texts", len(vecs), len(texts))
		}
		for i, v := range vecs {
			if len(v) != e.emb.Dim() {
				return fmt.Errorf("embedder returned a %d-dimensional vector, want %d", len(v), e.emb.Dim())
			}
			part[i].Vector = v
		}
	}
	return nil
}

// reembedAll remakes the vector of every chunk in the index except those of
// the documents in skip (which this run rewrites or deletes). The chunks are
// first copied to a stage file (Scan's callback must not write to the
// index), then read back, embedded and upserted a batch at a time, so
// memory does not grow with the index. Any failure fails the run: the
// index keeps an empty embedder name, so the next run starts the
// re-embedding over.
//
// When the index refuses the first remade document because the new vectors
// have another length than the stored ones, it is emptied and the remade
// chunks are written into it: the documents in skip are then missing from
// the index until this run or, if it stops early, a later one re-indexes
// them (the registry still lists their chunks).
func (e *Engine) reembedAll(ctx context.Context, skip map[string]bool) (err error) {
	st, err := newStage(e.opts.StageDir)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := st.close(); err == nil {
			err = cerr
		}
	}()
	var all []string // every document in the index, in Scan's DocID order
	err = stageIndex(ctx, e.idx, st, func(id string) bool {
		if len(all) == 0 || all[len(all)-1] != id {
			all = append(all, id)
		}
		return !skip[id]
	})
	if err != nil {
		return err
	}
	e.log.Info("re-embedding the index", slog.String("embedder", e.emb.Name()), slog.Int("documents", st.n))

	upserted := 0
	remake := func(group []*pendingDoc) error {
		if len(group) == 0 {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		errs, err := e.embedGroup(ctx, group)
		if err != nil {
			return err
		}
		for i, p := range group {
			if errs[i] != nil {
				return fmt.Errorf("re-embed %s: %w", p.Doc.ID, errs[i])
			}
			err := e.idx.Upsert(ctx, p.Chunks)
			if errors.Is(err, search.ErrDimension) && upserted == 0 {
				e.log.Warn("index refused re-embedded vectors; rebuilding it",
					slog.String("embedder", e.emb.Name()), slog.Any("error", err))
				if err := e.idx.DeleteDocs(ctx, all...); err != nil {
					return fmt.Errorf("index: %w", err)
				}
				err = e.idx.Upsert(ctx, p.Chunks)
			}
			if err != nil {
				return fmt.Errorf("index: %w", err)
			}
			upserted++
		}
		return nil
	}
	b := batcher{size: e.opts.BatchSize}
	if err := st.each(func(p *pendingDoc) error { return remake(b.add(p)) }); err != nil {
		return err
	}
	return remake(b.rest())
}

// rebuild re-embeds every stored chunk into a new version of an index that
// can build one beside the version it serves: until the switch, searches
// see the previous embedder's vectors whole; if the run fails, the new
// version is dropped and the next run starts over.
func (e *Engine) rebuild(ctx context.Context, rb search.Rebuilder) (err error) {
	st, err := newStage(e.opts.StageDir)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := st.close(); err == nil {
			err = cerr
		}
	}()
	if err := stageIndex(ctx, e.idx, st, func(string) bool { return true }); err != nil {
		return err
	}
	dim, err := e.embedDim(ctx)
	if err != nil {
		return err
	}
	e.log.Info("re-embedding the index into a new version", slog.String("embedder", e.emb.Name()), slog.Int("documents", st.n))
	return rb.Reindex(ctx, dim, e.emb.Name(), func(write func([]docent.Chunk) error) error {
		return e.remakeInto(ctx, st, write)
	})
}

// embedDim returns the length of the embedder's vectors: Dim, or when
// that is not known before the first call (a model's native length), the
// length of one embedded text.
func (e *Engine) embedDim(ctx context.Context) (int, error) {
	if dim := e.emb.Dim(); dim > 0 {
		return dim, nil
	}
	vs, err := e.emb.EmbedDocuments(ctx, []string{"dimension"})
	if err != nil {
		return 0, fmt.Errorf("embed: %w", err)
	}
	if len(vs) != 1 || len(vs[0]) == 0 {
		return 0, fmt.Errorf("embed: %w", search.ErrDimension)
	}
	return len(vs[0]), nil
}

// remakeInto re-embeds the staged stored chunks of st and writes them
// through write, a batch at a time. Any failure is the error: a new
// version must hold every stored chunk.
func (e *Engine) remakeInto(ctx context.Context, st *stage, write func([]docent.Chunk) error) error {
	remake := func(group []*pendingDoc) error {
		if len(group) == 0 {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		errs, err := e.embedGroup(ctx, group)
		if err != nil {
			return err
		}
		var chunks []docent.Chunk
		for i, p := range group {
			if errs[i] != nil {
				return fmt.Errorf("re-embed %s: %w", p.Doc.ID, errs[i])
			}
			chunks = append(chunks, p.Chunks...)
		}
		if err := write(chunks); err != nil {
			return fmt.Errorf("index: %w", err)
		}
		return nil
	}
	b := batcher{size: e.opts.BatchSize}
	if err := st.each(func(p *pendingDoc) error { return remake(b.add(p)) }); err != nil {
		return err
	}
	return remake(b.rest())
}

// rebuildStaged ends a run with a Trainable embedder whose model changed,
// on an index that can build a new version of itself (search.Rebuilder):
// the stored chunks of the documents not in skip (which this run rewrites
// or deletes) and the staged documents are embedded with the new model
// into a new version, which then replaces the served one in one step.
// Until then searches see the previous model's vectors whole; if the run
// fails, the new version is dropped and the served one is left as it was.
//
// A staged document that fails to embed is skipped and left out of the new
// version; one the new version refuses is skipped too (the chunks it did
// take stay, as after a refused Upsert). Either way its registry record,
// if any, is left as it was, so the next run finds it out of step or
// changed and retries it.
// The registry records of the staged documents that landed are written
// once the new version serves, so that the registry never describes
// chunks the served index does not hold.
func (r *run) rebuildStaged(ctx context.Context, rb search.Rebuilder, skip map[string]bool) (err error) {
	e := r.e
	st, err := newStage(e.opts.StageDir)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := st.close(); err == nil {
			err = cerr
		}
	}()
	if err := stageIndex(ctx, e.idx, st, func(id string) bool { return !skip[id] }); err != nil {
		return err
	}
	dim, err := e.embedDim(ctx)
	if err != nil {
		return err
	}
	e.log.Info("re-embedding the index into a new version", slog.String("embedder", e.emb.Name()),
		slog.Int("documents", st.n), slog.Int("changed", len(r.stagedIDs)))
	landed := map[string]bool{}
	err = rb.Reindex(ctx, dim, e.emb.Name(), func(write func([]docent.Chunk) error) error {
		if err := e.remakeInto(ctx, st, write); err != nil {
			return err
		}
		if r.stage == nil {
			return nil
		}
		b := batcher{size: e.opts.BatchSize}
		add := func(group []*pendingDoc) error { return r.writeInto(ctx, group, write, landed) }
		if err := r.stage.each(func(p *pendingDoc) error { r.passStaged(p); return add(b.add(p)) }); err != nil {
			return err
		}
		return add(b.rest())
	})
	if err != nil {
		return err
	}
	e.log.Info("re-embedded the index into a new version", slog.String("embedder", e.emb.Name()))
	if r.stage == nil {
		return nil
	}
	var group []*pendingDoc
	err = r.stage.each(func(p *pendingDoc) error {
		if !landed[p.Doc.ID] {
			return nil
		}
		if group = append(group, p); len(group) < e.opts.BatchSize {
			return nil
		}
		err := r.landed(ctx, group)
		group = nil
		return err
	})
	if err != nil {
		return err
	}
	return r.landed(ctx, group)
}

// writeInto embeds a group of staged documents and writes their chunks
// through a new version's write, adding the documents that landed to
// landed. A document that fails to embed or that the version refuses
// (search.PartialError) is skipped and retried next run.
func (r *run) writeInto(ctx context.Context, group []*pendingDoc, write func([]docent.Chunk) error, landed map[string]bool) error {
	if len(group) == 0 {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	errs, err := r.e.embedGroup(ctx, group)
	if err != nil {
		return err
	}
	var chunks []docent.Chunk
	var embedded []*pendingDoc
	for i, p := range group {
		if errs[i] != nil {
			r.skip(p.Doc.ID, fmt.Errorf("embed: %w", errs[i]), true)
			continue
		}
		embedded = append(embedded, p)
		chunks = append(chunks, p.Chunks...)
	}
	var refused map[string]error
	if len(chunks) > 0 {
		if err := write(chunks); err != nil {
			var pe *search.PartialError
			if !errors.As(err, &pe) {
				return fmt.Errorf("index: %w", err)
			}
			refused = pe.Failed
		}
	}
	for _, p := range embedded {
		if err := refused[p.Doc.ID]; err != nil {
			r.skip(p.Doc.ID, fmt.Errorf("index: %w", err), true)
			continue
		}
		landed[p.Doc.ID] = true
		r.res.Content.Embedded += len(p.Chunks)
	}
	return nil
}

// stageIndex writes the index's documents to st, one pendingDoc of its
// chunks each, for the documents keep accepts (keep sees every chunk's
// document ID, in Scan's order).
func stageIndex(ctx context.Context, idx search.Index, st *stage, keep func(docID string) bool) error {
	var cur *pendingDoc
	err := idx.Scan(ctx, func(c docent.Chunk) error {
		if !keep(c.DocID) {
			return nil
		}
		if cur != nil && cur.Doc.ID != c.DocID {
			if err := st.add(cur); err != nil {
				return err
			}
			cur = nil
		}
		if cur == nil {
			cur = &pendingDoc{Doc: docent.Document{ID: c.DocID}}
		}
		cur.Chunks = append(cur.Chunks, c)
		return nil
	})
	if err == nil && cur != nil {
		err = st.add(cur)
	}
	if err != nil {
		return fmt.Errorf("index: %w", err)
	}
	return nil
}
