// Package local is the embedded search.Index: one SQLite file holds every
// chunk (fields, metadata, its vector and its analyzed terms), and memory
// holds what the retrievers read: a BM25 inverted index (search/bm25) for
// keywords, every vector for an exact dot-product scan (an inverted-file
// approximate index above Options.ANNThreshold chunks), and the metadata
// that filters and facets use.
//
// The database is the source of truth. Vectors are stored as little-endian
// float32 blobs and terms in bm25's encoding, both loaded once by Open, so
// a restart needs neither the embedder nor the analyzer. Every write is one
// SQLite transaction and memory is updated only after it commits: a process
// killed mid-write reopens to the last committed state.
package local

import (
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/search"
	"github.com/docent-hq/docent/search/bm25"
	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// Options configure an Index. Zero fields take the defaults documented on
// each field.
type Options struct {
	// Keyword tunes the BM25 ranking; zero fields take bm25's defaults
	// (field weights title 2, section 1.5, text 1, code 1).
	Keyword bm25.Params
	// ANNThreshold is the chunk count from which vector search uses the
	// approximate index instead of an exact scan; default 20000, negative
	// means always exact.
	ANNThreshold int
	// NProbe is how many inverted lists an approximate query scans at
	// least; default 24.
	NProbe int
}

func (o Options) withDefaults() Options {
	if o.ANNThreshold == 0 {
		o.ANNThreshold = 20000
	}
	if o.NProbe <= 0 {
		o.NProbe = 24
	}
	return o
}

// Index is a search.Index over a SQLite file and in-memory vectors. It is
// safe for concurrent use.
type Index struct {
	db   *sql.DB
	opts Options

	insert *sql.Stmt // prepared chunk insert
	byRow  *sql.Stmt // prepared load of the chunks whose rowids a JSON array lists

	mu      sync.RWMutex // guards vectors, keyword and gen, serializes writes
	vectors *vectorStore
	keyword *bm25.Index // keyed by chunks.rowid
	gen     int64       // the database generation memory holds

	refreshMu sync.Mutex // one Refresh reloads at a time
}

var (
	_ search.Index     = (*Index)(nil)
	_ search.TermStats = (*Index)(nil)
	_ search.Folder    = (*Index)(nil)
)

// schema is the current layout; schemaVersion is recorded in meta. Version
// 1 (before the in-memory keyword index) had an FTS5 table and a labels
// table and no terms column; version 2 had no injection column (the
// passage of the text that addresses an AI assistant, search.InjectionOf,
// derived on upsert). Open migrates both.
const (
	schema = `
CREATE TABLE IF NOT EXISTS chunks (
	rowid      INTEGER PRIMARY KEY,
	id         TEXT NOT NULL UNIQUE,
	doc_id     TEXT NOT NULL,
	ord        INTEGER NOT NULL,
	source     TEXT NOT NULL,
	space      TEXT NOT NULL,
	labels     TEXT NOT NULL,
	updated_at INTEGER NOT NULL,
	title      TEXT NOT NULL,
	section    TEXT NOT NULL,
	url        TEXT NOT NULL,
	text       TEXT NOT NULL,
	vector     BLOB NOT NULL,
	terms      BLOB NOT NULL DEFAULT x'',
	injection  TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS chunks_doc ON chunks(doc_id, ord);
CREATE INDEX IF NOT EXISTS chunks_source ON chunks(source);
CREATE TABLE IF NOT EXISTS meta (
	key   TEXT PRIMARY KEY,
	value TEXT NOT NULL
);
`
	schemaVersion = "3"
	// termsVersion names how the terms column was analyzed (bm25's fields
	// and search.AnalyzeKeywords); Open re-analyzes every stored chunk
	// when it differs. "" (before it was recorded): title, section, text
	// with its heading line; "2": the body's fenced code a field of its
	// own, camel-case compounds split into their words too.
	termsVersion = "2"
)

// mmapSize is how much of the database file SQLite reads through a
// memory map. The mapped pages are the system's page cache, shared and
// reclaimable, not the process's heap.
const mmapSize = 256 << 20

// Open opens (creating if needed) the index database at path, or an
// in-memory one for ":memory:", and loads every stored vector.
func Open(ctx context.Context, path string, opts Options) (*Index, error) {
	opts = opts.withDefaults()
	// Reads go through a memory map of the file (up to mmapSize), not a
	// read call per page: loading a query's chunks was most of its time.
	dsn := "file:" + path + "?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)" +
		fmt.Sprintf("&_pragma=mmap_size(%d)", mmapSize)
	if path == ":memory:" {
		dsn = ":memory:"
	}
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("local: open %s: %w", path, err)
	}
	if path == ":memory:" {
		// Every connection to ":memory:" is its own database.
		db.SetMaxOpenConns(1)
	} else {
		// Connections a burst of searches opened close once idle. SQLite
		// keeps the file descriptor of a connection closed while others
		// are open until the last one closes, so the pool must drain.
		db.SetConnMaxIdleTime(30 * time.Second)
	}
	if _, err := db.ExecContext(ctx, schema); err != nil {
		db.Close()
		return nil, fmt.Errorf("local: create schema: %w", err)
	}
	ix := &Index{db: db, opts: opts}
	if err := ix.migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	if ix.vectors, ix.keyword, ix.gen, err = ix.load(ctx); err != nil {
		db.Close()
		return nil, err
	}
	if ix.insert, err = db.PrepareContext(ctx, `INSERT INTO chunks
		(id, doc_id, ord, source, space, labels, updated_at, title, section, url, text, vector, terms, injection)
		VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)`); err != nil {
		db.Close()
		return nil, fmt.Errorf("local: prepare: %w", err)
	}
	if ix.byRow, err = db.PrepareContext(ctx, `SELECT `+chunkColumns+` FROM chunks WHERE rowid IN (SELECT value FROM json_each(?))`); err != nil {
		ix.insert.Close()
		db.Close()
		return nil, fmt.Errorf("local: prepare: %w", err)
	}
	return ix, nil
}

// migrate brings a version 1 or 2 database to the current schema in one
// transaction: it adds the terms column, analyzes every stored chunk into
// it, and drops the FTS5 and labels tables (version 1), and adds the
// injection column with every stored chunk's flag (versions 1 and 2). A
// database whose terms were analyzed another way (termsVersion) has them
// analyzed again.
func (ix *Index) migrate(ctx context.Context) error {
	v, err := ix.metaValue(ctx, "schema")
	if err != nil {
		return err
	}
	tv, err := ix.metaValue(ctx, "terms")
	if err != nil || (v == schemaVersion && tv == termsVersion) {
		return err
	}
	tx, err := ix.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("local: migrate: %w", err)
	}
	defer tx.Rollback()
	var hasTerms bool
	if err := tx.QueryRowContext(ctx, `SELECT count(*) > 0 FROM pragma_table_info('chunks') WHERE name = 'terms'`).Scan(&hasTerms); err != nil {
		return fmt.Errorf("local: migrate: %w", err)
	}
	if !hasTerms {
		if _, err := tx.ExecContext(ctx, `ALTER TABLE chunks ADD COLUMN terms BLOB NOT NULL DEFAULT x''`); err != nil {
			return fmt.Errorf("local: migrate: %w", err)
		}
	} else if tv != termsVersion {
		if _, err := tx.ExecContext(ctx, `UPDATE chunks SET terms = x''`); err != nil {
			return fmt.Errorf("local: migrate: %w", err)
		}
	}
	type row struct {
		rowid                int64
		title, section, text string
	}
	var todo []row
	rows, err := tx.QueryContext(ctx, `SELECT rowid, title, section, text FROM chunks WHERE length(terms) = 0`)
	if err != nil {
		return fmt.Errorf("local: migrate: %w", err)
	}
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.rowid, &r.title, &r.section, &r.text); err != nil {
			rows.Close()
			return fmt.Errorf("local: migrate: %w", err)
		}
		todo = append(todo, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("local: migrate: %w", err)
	}
	for _, r := range todo {
		var section []string
		if err := json.Unmarshal([]byte(r.section), &section); err != nil {
			return fmt.Errorf("local: migrate: chunk row %d section: %w", r.rowid, err)
		}
		enc := bm25.AppendDoc(nil, keywordDoc(r.title, section, r.text))
		if _, err := tx.ExecContext(ctx, `UPDATE chunks SET terms = ? WHERE rowid = ?`, enc, r.rowid); err != nil {
			return fmt.Errorf("local: migrate: %w", err)
		}
	}
	if err := addInjectionTx(ctx, tx); err != nil {
		return fmt.Errorf("local: migrate: %w", err)
	}
	for _, q := range []string{
		`DROP TABLE IF EXISTS fts`,
		`DROP TABLE IF EXISTS labels`,
		`DROP INDEX IF EXISTS chunks_updated`,
	} {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("local: migrate: %w", err)
		}
	}
	if err := setMetaTx(ctx, tx, "schema", schemaVersion); err != nil {
		return fmt.Errorf("local: migrate: %w", err)
	}
	if err := setMetaTx(ctx, tx, "terms", termsVersion); err != nil {
		return fmt.Errorf("local: migrate: %w", err)
	}
	if _, err := bumpGeneration(ctx, tx); err != nil {
		return fmt.Errorf("local: migrate: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("local: migrate: commit: %w", err)
	}
	return nil
}

// addInjectionTx adds the injection column to a table made before it (the
// schema's CREATE TABLE IF NOT EXISTS leaves an old table as it is) and
// fills it in from every stored chunk's text.
func addInjectionTx(ctx context.Context, tx *sql.Tx) error {
	var has bool
	if err := tx.QueryRowContext(ctx, `SELECT count(*) > 0 FROM pragma_table_info('chunks') WHERE name = 'injection'`).Scan(&has); err != nil {
		return err
	}
	if has {
		return nil
	}
	if _, err := tx.ExecContext(ctx, `ALTER TABLE chunks ADD COLUMN injection TEXT NOT NULL DEFAULT ''`); err != nil {
		return err
	}
	type flag struct {
		rowid int64
		text  string
	}
	var flags []flag
	rows, err := tx.QueryContext(ctx, `SELECT rowid, text FROM chunks`)
	if err != nil {
		return err
	}
	for rows.Next() {
		var rowid int64
		var text string
		if err := rows.Scan(&rowid, &text); err != nil {
			rows.Close()
			return err
		}
		if f := search.InjectionOf(docent.Chunk{Text: text}); f != "" {
			flags = append(flags, flag{rowid, f})
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, f := range flags {
		if _, err := tx.ExecContext(ctx, `UPDATE chunks SET injection = ? WHERE rowid = ?`, f.text, f.rowid); err != nil {
			return err
		}
	}
	return nil
}

// keywordDoc analyzes a chunk's keyword fields: its title, its section
// path, its text (the heading line and the body's prose) and the body's
// fenced code.
func keywordDoc(title string, section []string, text string) bm25.Doc {
	body := docent.Chunk{Title: title, Section: section, Text: text}.Body()
	prose, code := search.SplitCode(body)
	return bm25.NewDoc([bm25.NumFields]string{title, strings.Join(section, " > "), strings.TrimSuffix(text, body) + prose, code})
}

// load reads every vector, its filter metadata and its terms into new
// in-memory indexes, in one read transaction, so that they hold one
// committed state of the database, and returns the generation of that
// state.
func (ix *Index) load(ctx context.Context) (*vectorStore, *bm25.Index, int64, error) {
	tx, err := ix.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("local: load: %w", err)
	}
	defer tx.Rollback() // read only
	gen, err := generation(ctx, tx)
	if err != nil {
		return nil, nil, 0, err
	}
	vs := newVectorStore(ix.opts.ANNThreshold, ix.opts.NProbe)
	keyword := bm25.New(ix.opts.Keyword)
	dim, err := metaValue(ctx, tx, "dim")
	if err != nil {
		return nil, nil, 0, err
	}
	if dim != "" {
		if _, err := fmt.Sscan(dim, &vs.dim); err != nil {
			return nil, nil, 0, fmt.Errorf("local: bad stored dim %q: %w", dim, err)
		}
	}
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM chunks`).Scan(&n); err != nil {
		return nil, nil, 0, fmt.Errorf("local: count chunks: %w", err)
	}
	vs.vecs = make([]float32, 0, n*vs.dim)
	vs.meta = make([]slotMeta, 0, n)
	rows, err := tx.QueryContext(ctx, `SELECT rowid, id, doc_id, source, space, labels, updated_at, title, section, text, vector, terms FROM chunks ORDER BY rowid`)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("local: load vectors: %w", err)
	}
	defer rows.Close()
	var ids []uint32 // term IDs, reused
	for rows.Next() {
		var (
			c       docent.Chunk
			rowid   int64
			labels  string
			section string
			upd     int64
			blob    []byte
			terms   []byte
		)
		if err := rows.Scan(&rowid, &c.ID, &c.DocID, &c.Source, &c.Space, &labels, &upd, &c.Title, &section, &c.Text, &blob, &terms); err != nil {
			return nil, nil, 0, fmt.Errorf("local: load vectors: %w", err)
		}
		if c.Labels, err = decodeStrings(labels); err != nil {
			return nil, nil, 0, fmt.Errorf("local: chunk %s labels: %w", c.ID, err)
		}
		if c.Section, err = decodeStrings(section); err != nil {
			return nil, nil, 0, fmt.Errorf("local: chunk %s section: %w", c.ID, err)
		}
		c.UpdatedAt = fromUnixNano(upd)
		if len(blob) != 4*vs.dim {
			return nil, nil, 0, fmt.Errorf("local: chunk %s: %w: stored %d bytes, dim %d", c.ID, search.ErrDimension, len(blob), vs.dim)
		}
		slot := len(vs.meta)
		vs.vecs = slices.Grow(vs.vecs, vs.dim)[:(slot+1)*vs.dim]
		decodeVector(vs.vec(slot), blob)
		m := vs.metaOf(c)
		m.rowid = rowid
		vs.meta = append(vs.meta, m)
		vs.slotOf[c.ID] = slot
		vs.ofRow[rowid] = slot
		vs.chunks[m.doc]++
		in := factsInputOf(c)
		key, ok := foldKey(in.hash, c)
		// A copy is indexed once, under the first of its group.
		if ids, err = vs.index(slot, vs.join(slot, key, ok), in, rowid, terms, keyword, ids); err != nil {
			return nil, nil, 0, fmt.Errorf("local: chunk %s terms: %w", c.ID, err)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, nil, 0, fmt.Errorf("local: load vectors: %w", err)
	}
	vs.reindex()
	return vs, keyword, gen, nil
}

// Refresh brings memory up to date with the database when another
// process has written to it since memory was loaded (each write
// transaction moves the database's generation on), and reports whether it
// reloaded. A process that reads an index another process syncs (`docent
// mcp` beside `docent serve`) calls it before it searches; the process
// that writes never needs it, since its own writes update its memory. The
// new state is read whole, in one read transaction, and swapped in at
// once: a search sees either the old state or the new one.
func (ix *Index) Refresh(ctx context.Context) (bool, error) {
	ix.refreshMu.Lock()
	defer ix.refreshMu.Unlock()
	gen, err := generation(ctx, ix.db)
	if err != nil {
		return false, err
	}
	ix.mu.RLock()
	current := ix.gen
	ix.mu.RUnlock()
	if gen == current {
		return false, nil
	}
	vs, keyword, gen, err := ix.load(ctx)
	if err != nil {
		return false, err
	}
	ix.mu.Lock()
	ix.vectors, ix.keyword, ix.gen = vs, keyword, gen
	ix.mu.Unlock()
	return true, nil
}

// querier is a *sql.DB or a *sql.Tx.
type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// generation is the database's write generation: 0 for a database no
// write has bumped yet.
func generation(ctx context.Context, q querier) (int64, error) {
	v, err := metaValue(ctx, q, "generation")
	if err != nil || v == "" {
		return 0, err
	}
	var gen int64
	if _, err := fmt.Sscan(v, &gen); err != nil {
		return 0, fmt.Errorf("local: bad stored generation %q: %w", v, err)
	}
	return gen, nil
}

// bumpGeneration moves the generation on inside a write transaction and
// returns the new one.
func bumpGeneration(ctx context.Context, tx *sql.Tx) (int64, error) {
	var gen int64
	err := tx.QueryRowContext(ctx, `INSERT INTO meta(key, value) VALUES ('generation', '1')
		ON CONFLICT(key) DO UPDATE SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT) RETURNING CAST(value AS INTEGER)`).Scan(&gen)
	if err != nil {
		return 0, fmt.Errorf("bump generation: %w", err)
	}
	return gen, nil
}

// Close releases the database.
func (ix *Index) Close() error {
	ix.insert.Close()
	ix.byRow.Close()
	if err := ix.db.Close(); err != nil {
		return fmt.Errorf("local: close: %w", err)
	}
	return nil
}

// Upsert replaces every chunk of the documents named by the chunks' DocIDs
// with the given chunks, in one transaction. A chunk ID already stored
// under another document moves to the new one. It returns ErrDimension when
// a vector is missing or its length differs from the stored vectors'.
func (ix *Index) Upsert(ctx context.Context, chunks []docent.Chunk) error {
	if len(chunks) == 0 {
		return nil
	}
	for _, c := range chunks {
		if c.ID == "" || c.DocID == "" {
			return fmt.Errorf("local: upsert: chunk %q of doc %q: %w", c.ID, c.DocID, search.ErrEmptyID)
		}
	}
	chunks = lastOfEachID(chunks)
	// Analysis needs no lock, and each chunk's is its own: it runs on
	// every core while the sync engine waits for the write.
	terms := make([][]byte, len(chunks))
	flags := make([]string, len(chunks))
	facts := make([]factsInput, len(chunks))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), (len(chunks)+15)/16) {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < len(chunks); i = int(next.Add(1)) - 1 {
				c := chunks[i]
				terms[i] = bm25.AppendDoc(nil, keywordDoc(c.Title, c.Section, c.Text))
				flags[i] = search.InjectionOf(c)
				facts[i] = factsInputOf(c)
			}
		})
	}
	wg.Wait()

	ix.mu.Lock()
	defer ix.mu.Unlock()
	vs := ix.vectors
	dim := vs.dim
	if vs.len() == 0 {
		dim = len(chunks[0].Vector)
	}
	for _, c := range chunks {
		if len(c.Vector) == 0 || len(c.Vector) != dim {
			return fmt.Errorf("local: upsert chunk %s: %w: got %d, want %d", c.ID, search.ErrDimension, len(c.Vector), dim)
		}
	}

	tx, err := ix.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("local: upsert: %w", err)
	}
	defer tx.Rollback()

	docs := map[string]bool{}
	var stored []string // documents of the batch that have chunks to replace
	for _, c := range chunks {
		if !docs[c.DocID] {
			docs[c.DocID] = true
			if vs.hasDoc(c.DocID) {
				stored = append(stored, c.DocID)
			}
		}
	}
	removed, err := deleteDocsTx(ctx, tx, stored)
	if err != nil {
		return fmt.Errorf("local: upsert: %w", err)
	}
	ins := tx.StmtContext(ctx, ix.insert)
	defer ins.Close()

	blob := make([]byte, 4*dim)
	rowids := make([]int64, len(chunks))
	for i, c := range chunks {
		// A chunk ID held by a document outside this batch moves here.
		if slot, ok := vs.slotOf[c.ID]; ok && !docs[vs.names[vs.meta[slot].doc]] {
			moved, err := deleteChunksTx(ctx, tx, `id = ?`, c.ID)
			if err != nil {
				return fmt.Errorf("local: upsert: %w", err)
			}
			removed = append(removed, moved...)
		}
		labels, _ := json.Marshal(nonNil(c.Labels))
		section, _ := json.Marshal(nonNil(c.Section))
		encodeVector(blob, c.Vector)
		res, err := ins.ExecContext(ctx, c.ID, c.DocID, c.Ord, c.Source, c.Space, string(labels),
			unixNano(c.UpdatedAt), c.Title, string(section), c.URL, c.Text, blob, terms[i], flags[i])
		if err != nil {
			return fmt.Errorf("local: upsert chunk %s: %w", c.ID, err)
		}
		rowid, err := res.LastInsertId()
		if err != nil {
			return fmt.Errorf("local: upsert chunk %s: %w", c.ID, err)
		}
		rowids[i] = rowid
	}
	if dim != vs.dim {
		if err := setMetaTx(ctx, tx, "dim", fmt.Sprint(dim)); err != nil {
			return fmt.Errorf("local: upsert: %w", err)
		}
	}
	gen, err := bumpGeneration(ctx, tx)
	if err != nil {
		return fmt.Errorf("local: upsert: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("local: upsert: commit: %w", err)
	}

	ix.gen = gen
	vs.dim = dim
	if err := ix.forget(removed); err != nil {
		return err
	}
	var ids []uint32 // term IDs, reused
	for i, c := range chunks {
		// A copy is indexed once, under the first of its group.
		slot, searched := vs.add(c, rowids[i], facts[i].hash)
		if ids, err = vs.index(slot, searched, facts[i], rowids[i], terms[i], ix.keyword, ids); err != nil {
			return fmt.Errorf("local: upsert chunk %s: %w", c.ID, err)
		}
	}
	if err := ix.promote(ctx); err != nil {
		return err
	}
	vs.reindex()
	return nil
}

// DeleteDocs removes every chunk of the given documents.
func (ix *Index) DeleteDocs(ctx context.Context, docIDs ...string) error {
	if len(docIDs) == 0 {
		return nil
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	tx, err := ix.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("local: delete: %w", err)
	}
	defer tx.Rollback()
	removed, err := deleteDocsTx(ctx, tx, docIDs)
	if err != nil {
		return fmt.Errorf("local: delete: %w", err)
	}
	gen, err := bumpGeneration(ctx, tx)
	if err != nil {
		return fmt.Errorf("local: delete: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("local: delete: commit: %w", err)
	}
	ix.gen = gen
	if err := ix.forget(removed); err != nil {
		return err
	}
	if err := ix.promote(ctx); err != nil {
		return err
	}
	ix.vectors.reindex()
	return nil
}

// lastOfEachID drops every chunk whose ID occurs again later in chunks:
// within one upsert, the last chunk with an ID wins.
func lastOfEachID(chunks []docent.Chunk) []docent.Chunk {
	last := make(map[string]int, len(chunks))
	for i, c := range chunks {
		last[c.ID] = i
	}
	if len(last) == len(chunks) {
		return chunks
	}
	out := make([]docent.Chunk, 0, len(last))
	for i, c := range chunks {
		if last[c.ID] == i {
			out = append(out, c)
		}
	}
	return out
}

// removedChunk is a deleted row, for the in-memory indexes to forget.
type removedChunk struct {
	rowid int64
	id    string
	terms []byte
}

// forget drops committed deletions from memory (a copy of another chunk
// was never in the keyword index, whose Remove ignores it); a deleted
// first of a fold group leaves its next copy queued for promote.
func (ix *Index) forget(removed []removedChunk) error {
	for _, r := range removed {
		ix.vectors.delete(r.id)
		if err := ix.keyword.Remove(r.rowid, r.terms); err != nil {
			return fmt.Errorf("local: chunk %s terms: %w", r.id, err)
		}
	}
	return nil
}

func deleteDocsTx(ctx context.Context, tx *sql.Tx, docIDs []string) ([]removedChunk, error) {
	var removed []removedChunk
	for _, d := range docIDs {
		rs, err := deleteChunksTx(ctx, tx, `doc_id = ?`, d)
		if err != nil {
			return nil, err
		}
		removed = append(removed, rs...)
	}
	return removed, nil
}

// deleteChunksTx deletes the chunks matching where (with one argument) and
// returns them.
func deleteChunksTx(ctx context.Context, tx *sql.Tx, where string, arg any) ([]removedChunk, error) {
	rows, err := tx.QueryContext(ctx, `DELETE FROM chunks WHERE `+where+` RETURNING rowid, id, terms`, arg)
	if err != nil {
		return nil, fmt.Errorf("delete chunks: %w", err)
	}
	defer rows.Close()
	var out []removedChunk
	for rows.Next() {
		var r removedChunk
		if err := rows.Scan(&r.rowid, &r.id, &r.terms); err != nil {
			return nil, fmt.Errorf("delete chunks: %w", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("delete chunks: %w", err)
	}
	return out, nil
}

// Count returns the number of chunks stored.
func (ix *Index) Count(ctx context.Context) (int, error) {
	var n int
	if err := ix.db.QueryRowContext(ctx, `SELECT count(*) FROM chunks`).Scan(&n); err != nil {
		return 0, fmt.Errorf("local: count: %w", err)
	}
	return n, nil
}

// ChunkIDs returns the chunk IDs stored per document of source, in Ord order.
func (ix *Index) ChunkIDs(ctx context.Context, source string) (map[string][]string, error) {
	rows, err := ix.db.QueryContext(ctx, `SELECT doc_id, id FROM chunks WHERE source = ? ORDER BY doc_id, ord, id`, source)
	if err != nil {
		return nil, fmt.Errorf("local: chunk ids: %w", err)
	}
	defer rows.Close()
	out := map[string][]string{}
	for rows.Next() {
		var doc, id string
		if err := rows.Scan(&doc, &id); err != nil {
			return nil, fmt.Errorf("local: chunk ids: %w", err)
		}
		out[doc] = append(out[doc], id)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("local: chunk ids: %w", err)
	}
	return out, nil
}

const chunkColumns = `id, doc_id, ord, source, space, labels, updated_at, title, section, url, text, injection`

func scanChunk(sc interface{ Scan(...any) error }) (docent.Chunk, error) {
	var (
		c               docent.Chunk
		labels, section string
		upd             int64
	)
	if err := sc.Scan(&c.ID, &c.DocID, &c.Ord, &c.Source, &c.Space, &labels, &upd, &c.Title, &section, &c.URL, &c.Text, &c.Injection); err != nil {
		return c, err
	}
	c.UpdatedAt = fromUnixNano(upd)
	var err error
	if c.Labels, err = decodeStrings(labels); err != nil {
		return c, fmt.Errorf("chunk %s labels: %w", c.ID, err)
	}
	if c.Section, err = decodeStrings(section); err != nil {
		return c, fmt.Errorf("chunk %s section: %w", c.ID, err)
	}
	return c, nil
}

// decodeStrings decodes a JSON array of strings as Upsert stores it
// (json.Marshal), nil when it is empty. An array with no backslash, which
// is every array json.Marshal writes of strings without quotes, control
// characters, <, >, & or invalid UTF-8, holds each string between two
// quotes as it is, and is read so; any other goes through json.Unmarshal.
// Rows are decoded per query hit, and Unmarshal was an eighth of loading
// them.
func decodeStrings(raw string) ([]string, error) {
	if raw == "[]" || raw == "null" {
		return nil, nil
	}
	if out, ok := plainStrings(raw); ok {
		return out, nil
	}
	var out []string
	if err := json.Unmarshal([]byte(raw), &out); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

// plainStrings reads raw as ["a","b",...] with no escape in it; ok is
// false for anything else.
func plainStrings(raw string) (out []string, ok bool) {
	if len(raw) < 4 || raw[0] != '[' || raw[len(raw)-1] != ']' || strings.IndexByte(raw, '\\') >= 0 {
		return nil, false
	}
	rest := raw[1 : len(raw)-1]
	for {
		if len(rest) < 2 || rest[0] != '"' {
			return nil, false
		}
		end := strings.IndexByte(rest[1:], '"')
		if end < 0 {
			return nil, false
		}
		s := rest[1 : 1+end]
		for i := 0; i < len(s); i++ {
			if s[i] < 0x20 {
				return nil, false // json.Marshal escapes these: not what Upsert wrote
			}
		}
		if !utf8.ValidString(s) {
			return nil, false
		}
		out = append(out, s)
		rest = rest[2+end:]
		if rest == "" {
			return out, true
		}
		if rest[0] != ',' {
			return nil, false
		}
		rest = rest[1:]
	}
}

// Scan calls fn for every stored chunk, without vectors, in DocID and Ord
// order; it stops at the first error fn returns and returns it unwrapped.
// Scan streams from the database: fn must not write to the index, and on a
// ":memory:" index (one connection) must not call it at all.
func (ix *Index) Scan(ctx context.Context, fn func(docent.Chunk) error) error {
	rows, err := ix.db.QueryContext(ctx, `SELECT `+chunkColumns+` FROM chunks ORDER BY doc_id, ord, id`)
	if err != nil {
		return fmt.Errorf("local: scan: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		c, err := scanChunk(rows)
		if err != nil {
			return fmt.Errorf("local: scan: %w", err)
		}
		if err := fn(c); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("local: scan: %w", err)
	}
	return nil
}

// EmbedderName returns the recorded embedder name, or "" when the index is
// empty or none was recorded.
func (ix *Index) EmbedderName(ctx context.Context) (string, error) {
	n, err := ix.Count(ctx)
	if err != nil {
		return "", err
	}
	if n == 0 {
		return "", nil
	}
	return ix.metaValue(ctx, "embedder")
}

// SetEmbedderName records the embedder of the stored vectors.
func (ix *Index) SetEmbedderName(ctx context.Context, name string) error {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	tx, err := ix.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("local: set embedder name: %w", err)
	}
	defer tx.Rollback()
	if err := setMetaTx(ctx, tx, "embedder", name); err != nil {
		return fmt.Errorf("local: set embedder name: %w", err)
	}
	gen, err := bumpGeneration(ctx, tx)
	if err != nil {
		return fmt.Errorf("local: set embedder name: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("local: set embedder name: commit: %w", err)
	}
	ix.gen = gen
	return nil
}

func (ix *Index) metaValue(ctx context.Context, key string) (string, error) {
	return metaValue(ctx, ix.db, key)
}

func metaValue(ctx context.Context, q querier, key string) (string, error) {
	var v string
	err := q.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = ?`, key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("local: read %s: %w", key, err)
	}
	return v, nil
}

func setMetaTx(ctx context.Context, tx *sql.Tx, key, value string) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO meta(key, value) VALUES (?, ?)
		ON CONFLICT(key) DO UPDATE SET value = excluded.value`, key, value)
	return err
}

func encodeVector(dst []byte, v []float32) {
	for i, x := range v {
		binary.LittleEndian.PutUint32(dst[4*i:], math.Float32bits(x))
	}
}

func decodeVector(dst []float32, b []byte) {
	for i := range dst {
		dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
