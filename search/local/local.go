// Package local is the embedded search.Index: one SQLite file (FTS5 BM25
// for keywords, chunk metadata, label table for filters and facets) plus
// every vector held in memory for an exact dot-product scan, switching to an
// inverted-file approximate index above Options.ANNThreshold chunks.
//
// Vectors are stored in the database as little-endian float32 blobs and
// loaded once by Open, so a restart needs neither the embedder nor a
// rebuild from it.
package local

import (
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/search"
	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// Options configure an Index. Zero fields take the defaults documented on
// each field.
type Options struct {
	// TitleWeight, SectionWeight and TextWeight weight the BM25 columns;
	// defaults 2, 1.5 and 1.
	TitleWeight, SectionWeight, TextWeight float64
	// ANNThreshold is the chunk count from which vector search uses the
	// approximate index instead of an exact scan; default 20000, negative
	// means always exact.
	ANNThreshold int
	// NProbe is how many inverted lists an approximate query scans at
	// least; default 24.
	NProbe int
}

func (o Options) withDefaults() Options {
	if o.TitleWeight == 0 && o.SectionWeight == 0 && o.TextWeight == 0 {
		o.TitleWeight, o.SectionWeight, o.TextWeight = 2, 1.5, 1
	}
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

	mu      sync.RWMutex // guards vectors and serializes writes
	vectors *vectorStore
}

var _ search.Index = (*Index)(nil)

const schema = `
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
	vector     BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS chunks_doc ON chunks(doc_id, ord);
CREATE INDEX IF NOT EXISTS chunks_source ON chunks(source);
CREATE INDEX IF NOT EXISTS chunks_updated ON chunks(updated_at);
CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(
	title, section, text,
	content='', contentless_delete=1,
	tokenize='porter unicode61 remove_diacritics 2'
);
CREATE TABLE IF NOT EXISTS labels (
	chunk_rowid INTEGER NOT NULL,
	label       TEXT NOT NULL,
	PRIMARY KEY (chunk_rowid, label)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS labels_label ON labels(label, chunk_rowid);
CREATE TABLE IF NOT EXISTS meta (
	key   TEXT PRIMARY KEY,
	value TEXT NOT NULL
);
`

// Open opens (creating if needed) the index database at path, or an
// in-memory one for ":memory:", and loads every stored vector.
func Open(ctx context.Context, path string, opts Options) (*Index, error) {
	opts = opts.withDefaults()
	dsn := "file:" + path + "?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)"
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
	ix := &Index{db: db, opts: opts, vectors: newVectorStore(opts.ANNThreshold, opts.NProbe)}
	if err := ix.load(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return ix, nil
}

// load reads every vector and its filter metadata into memory.
func (ix *Index) load(ctx context.Context) error {
	dim, err := ix.metaValue(ctx, "dim")
	if err != nil {
		return err
	}
	if dim != "" {
		if _, err := fmt.Sscan(dim, &ix.vectors.dim); err != nil {
			return fmt.Errorf("local: bad stored dim %q: %w", dim, err)
		}
	}
	var n int
	if err := ix.db.QueryRowContext(ctx, `SELECT count(*) FROM chunks`).Scan(&n); err != nil {
		return fmt.Errorf("local: count chunks: %w", err)
	}
	vs := ix.vectors
	vs.vecs = make([]float32, 0, n*vs.dim)
	vs.meta = make([]slotMeta, 0, n)
	rows, err := ix.db.QueryContext(ctx, `SELECT rowid, id, doc_id, source, space, labels, updated_at, vector FROM chunks ORDER BY rowid`)
	if err != nil {
		return fmt.Errorf("local: load vectors: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			c      docent.Chunk
			rowid  int64
			labels string
			upd    int64
			blob   []byte
		)
		if err := rows.Scan(&rowid, &c.ID, &c.DocID, &c.Source, &c.Space, &labels, &upd, &blob); err != nil {
			return fmt.Errorf("local: load vectors: %w", err)
		}
		if err := json.Unmarshal([]byte(labels), &c.Labels); err != nil {
			return fmt.Errorf("local: chunk %s labels: %w", c.ID, err)
		}
		c.UpdatedAt = fromUnixNano(upd)
		if len(blob) != 4*vs.dim {
			return fmt.Errorf("local: chunk %s: %w: stored %d bytes, dim %d", c.ID, search.ErrDimension, len(blob), vs.dim)
		}
		slot := len(vs.meta)
		vs.vecs = slices.Grow(vs.vecs, vs.dim)[:(slot+1)*vs.dim]
		decodeVector(vs.vec(slot), blob)
		m := vs.metaOf(c)
		m.rowid = rowid
		vs.meta = append(vs.meta, m)
		vs.slotOf[c.ID] = slot
		vs.ofRow[rowid] = slot
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("local: load vectors: %w", err)
	}
	vs.reindex()
	return nil
}

// Close releases the database.
func (ix *Index) Close() error {
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
	ix.mu.Lock()
	defer ix.mu.Unlock()

	dim := ix.vectors.dim
	if ix.vectors.len() == 0 {
		dim = len(chunks[0].Vector)
	}
	for _, c := range chunks {
		if c.ID == "" || c.DocID == "" {
			return fmt.Errorf("local: upsert: chunk %q of doc %q: %w", c.ID, c.DocID, search.ErrEmptyID)
		}
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
	var docIDs []string
	for _, c := range chunks {
		if !docs[c.DocID] {
			docs[c.DocID] = true
			docIDs = append(docIDs, c.DocID)
		}
	}
	removed, err := deleteDocsTx(ctx, tx, docIDs)
	if err != nil {
		return fmt.Errorf("local: upsert: %w", err)
	}
	ins, err := tx.PrepareContext(ctx, `INSERT INTO chunks
		(id, doc_id, ord, source, space, labels, updated_at, title, section, url, text, vector)
		VALUES (?,?,?,?,?,?,?,?,?,?,?,?)`)
	if err != nil {
		return fmt.Errorf("local: upsert: %w", err)
	}
	defer ins.Close()
	insFTS, err := tx.PrepareContext(ctx, `INSERT INTO fts(rowid, title, section, text) VALUES (?,?,?,?)`)
	if err != nil {
		return fmt.Errorf("local: upsert: %w", err)
	}
	defer insFTS.Close()
	insLabel, err := tx.PrepareContext(ctx, `INSERT OR IGNORE INTO labels(chunk_rowid, label) VALUES (?,?)`)
	if err != nil {
		return fmt.Errorf("local: upsert: %w", err)
	}
	defer insLabel.Close()

	blob := make([]byte, 4*dim)
	rowids := make([]int64, len(chunks))
	for i, c := range chunks {
		// A chunk ID held by a document outside this batch moves here.
		if _, err := deleteChunksTx(ctx, tx, `id = ?`, c.ID); err != nil {
			return fmt.Errorf("local: upsert: %w", err)
		}
		labels, _ := json.Marshal(nonNil(c.Labels))
		section, _ := json.Marshal(nonNil(c.Section))
		encodeVector(blob, c.Vector)
		res, err := ins.ExecContext(ctx, c.ID, c.DocID, c.Ord, c.Source, c.Space, string(labels),
			unixNano(c.UpdatedAt), c.Title, string(section), c.URL, c.Text, blob)
		if err != nil {
			return fmt.Errorf("local: upsert chunk %s: %w", c.ID, err)
		}
		rowid, err := res.LastInsertId()
		if err != nil {
			return fmt.Errorf("local: upsert chunk %s: %w", c.ID, err)
		}
		rowids[i] = rowid
		if _, err := insFTS.ExecContext(ctx, rowid, c.Title, strings.Join(c.Section, " > "), c.Text); err != nil {
			return fmt.Errorf("local: upsert chunk %s: index text: %w", c.ID, err)
		}
		for _, l := range c.Labels {
			if _, err := insLabel.ExecContext(ctx, rowid, l); err != nil {
				return fmt.Errorf("local: upsert chunk %s: label: %w", c.ID, err)
			}
		}
	}
	if dim != ix.vectors.dim {
		if err := setMetaTx(ctx, tx, "dim", fmt.Sprint(dim)); err != nil {
			return fmt.Errorf("local: upsert: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("local: upsert: commit: %w", err)
	}

	vs := ix.vectors
	vs.dim = dim
	for _, id := range removed {
		vs.delete(id)
	}
	for i, c := range chunks {
		vs.add(c, rowids[i])
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
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("local: delete: commit: %w", err)
	}
	for _, id := range removed {
		ix.vectors.delete(id)
	}
	ix.vectors.reindex()
	return nil
}

func deleteDocsTx(ctx context.Context, tx *sql.Tx, docIDs []string) ([]string, error) {
	var removed []string
	for _, d := range docIDs {
		ids, err := deleteChunksTx(ctx, tx, `doc_id = ?`, d)
		if err != nil {
			return nil, err
		}
		removed = append(removed, ids...)
	}
	return removed, nil
}

// deleteChunksTx deletes the chunks matching where (with one argument) from
// every table and returns their IDs.
func deleteChunksTx(ctx context.Context, tx *sql.Tx, where string, arg any) ([]string, error) {
	rows, err := tx.QueryContext(ctx, `SELECT rowid, id FROM chunks WHERE `+where, arg)
	if err != nil {
		return nil, fmt.Errorf("find chunks: %w", err)
	}
	var (
		rowids []int64
		ids    []string
	)
	for rows.Next() {
		var (
			r  int64
			id string
		)
		if err := rows.Scan(&r, &id); err != nil {
			rows.Close()
			return nil, fmt.Errorf("find chunks: %w", err)
		}
		rowids = append(rowids, r)
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("find chunks: %w", err)
	}
	for _, r := range rowids {
		for _, q := range []string{
			`DELETE FROM fts WHERE rowid = ?`,
			`DELETE FROM labels WHERE chunk_rowid = ?`,
			`DELETE FROM chunks WHERE rowid = ?`,
		} {
			if _, err := tx.ExecContext(ctx, q, r); err != nil {
				return nil, fmt.Errorf("delete chunk: %w", err)
			}
		}
	}
	return ids, nil
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

const chunkColumns = `id, doc_id, ord, source, space, labels, updated_at, title, section, url, text`

func scanChunk(sc interface{ Scan(...any) error }) (docent.Chunk, error) {
	var (
		c               docent.Chunk
		labels, section string
		upd             int64
	)
	if err := sc.Scan(&c.ID, &c.DocID, &c.Ord, &c.Source, &c.Space, &labels, &upd, &c.Title, &section, &c.URL, &c.Text); err != nil {
		return c, err
	}
	c.UpdatedAt = fromUnixNano(upd)
	if err := json.Unmarshal([]byte(labels), &c.Labels); err != nil {
		return c, fmt.Errorf("chunk %s labels: %w", c.ID, err)
	}
	if err := json.Unmarshal([]byte(section), &c.Section); err != nil {
		return c, fmt.Errorf("chunk %s section: %w", c.ID, err)
	}
	if len(c.Labels) == 0 {
		c.Labels = nil
	}
	if len(c.Section) == 0 {
		c.Section = nil
	}
	return c, nil
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
	if _, err := ix.db.ExecContext(ctx, `INSERT INTO meta(key, value) VALUES ('embedder', ?)
		ON CONFLICT(key) DO UPDATE SET value = excluded.value`, name); err != nil {
		return fmt.Errorf("local: set embedder name: %w", err)
	}
	return nil
}

func (ix *Index) metaValue(ctx context.Context, key string) (string, error) {
	var v string
	err := ix.db.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = ?`, key).Scan(&v)
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
