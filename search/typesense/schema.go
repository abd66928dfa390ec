package typesense

import (
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"math"
	"slices"
	"time"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/search"
)

// Field names of a chunk document.
const (
	fieldEmbedding = "embedding"
	fieldsLean     = "chunk_id,doc_id"
)

// fieldSpec is one field of the collection schema, as sent to the server
// (a superset of typesense-go v2.0.0's api.Field: stem).
type fieldSpec struct {
	Name     string `json:"name"`
	Type     string `json:"type"`
	Facet    bool   `json:"facet,omitempty"`
	Optional bool   `json:"optional,omitempty"`
	Index    *bool  `json:"index,omitempty"`
	Sort     bool   `json:"sort,omitempty"`
	Stem     bool   `json:"stem,omitempty"`
	NumDim   int    `json:"num_dim,omitempty"`
}

type schemaSpec struct {
	Name            string      `json:"name"`
	Fields          []fieldSpec `json:"fields"`
	TokenSeparators []string    `json:"token_separators"`
}

// tokenSeparators split words at punctuation, as search.Analyze and the
// local index do ("GK-409" is "gk" and "409"; "api.example.com" three
// words), instead of Typesense's default of dropping the character and
// gluing the word together.
var tokenSeparators = []string{"-", "_", ".", "/", "\\", ":", "@", "#", "&", "+", ",", ";", "!", "?", "'", "\"",
	"(", ")", "[", "]", "{", "}", "<", ">", "|", "~", "*", "=", "$", "%", "^", "`"}

// collectionSchema is one document per chunk: the keyword fields (title,
// section path, text: stemmed), the metadata shown and faceted (source,
// source type, space, labels), the hashed copies filters compare (see
// key), the document's order and head flag, updated_at as Unix
// nanoseconds, and the embedding.
func collectionSchema(name string, dim int) schemaSpec {
	no := false
	return schemaSpec{
		Name: name,
		Fields: []fieldSpec{
			{Name: "chunk_id", Type: "string", Sort: true},
			{Name: "chunk_key", Type: "string"},
			{Name: "doc_id", Type: "string", Index: &no, Optional: true},
			{Name: "doc_key", Type: "string"},
			{Name: "ord", Type: "int32"},
			{Name: "doc_head", Type: "bool"},
			{Name: "source", Type: "string", Facet: true},
			{Name: "source_key", Type: "string"},
			{Name: "source_type", Type: "string", Facet: true, Optional: true},
			{Name: "space", Type: "string", Facet: true},
			{Name: "space_key", Type: "string"},
			{Name: "labels", Type: "string[]", Facet: true, Optional: true},
			{Name: "label_keys", Type: "string[]", Optional: true},
			{Name: "title", Type: "string", Stem: true},
			{Name: "section", Type: "string[]", Stem: true, Optional: true},
			{Name: "url", Type: "string", Index: &no, Optional: true},
			{Name: "text", Type: "string", Stem: true},
			{Name: "updated_at", Type: "int64"},
			{Name: "gen", Type: "string"},
			{Name: "content_hash", Type: "string", Index: &no, Optional: true},
			{Name: "injection", Type: "string", Index: &no, Optional: true},
			{Name: fieldEmbedding, Type: "float[]", NumDim: dim},
		},
		TokenSeparators: tokenSeparators,
	}
}

// chunkDoc is a chunk as a Typesense document.
type chunkDoc struct {
	ID          string   `json:"id"`
	ChunkID     string   `json:"chunk_id"`
	ChunkKey    string   `json:"chunk_key"`
	DocID       string   `json:"doc_id"`
	DocKey      string   `json:"doc_key"`
	Ord         int      `json:"ord"`
	DocHead     bool     `json:"doc_head"`
	Source      string   `json:"source"`
	SourceKey   string   `json:"source_key"`
	SourceType  string   `json:"source_type,omitempty"`
	Space       string   `json:"space"`
	SpaceKey    string   `json:"space_key"`
	Labels      []string `json:"labels"`
	LabelKeys   []string `json:"label_keys"`
	Title       string   `json:"title"`
	Section     []string `json:"section"`
	URL         string   `json:"url"`
	Text        string   `json:"text"`
	UpdatedAt   int64    `json:"updated_at"`
	Gen         string   `json:"gen"`
	ContentHash string   `json:"content_hash"`
	// Injection is search.InjectionOf the chunk, derived on upsert; nil
	// on a document written before the field existed, whose flag is then
	// derived as it is read.
	Injection *string   `json:"injection,omitempty"`
	Embedding []float32 `json:"embedding,omitempty"`
}

func (x *Index) toDoc(c docent.Chunk, head bool, gen string) chunkDoc {
	labels, section := c.Labels, c.Section
	flag := search.InjectionOf(c)
	if labels == nil {
		labels = []string{}
	}
	if section == nil {
		section = []string{}
	}
	return chunkDoc{
		ID: key(c.ID), ChunkID: c.ID, ChunkKey: key(c.ID), DocID: c.DocID, DocKey: key(c.DocID), Ord: c.Ord, DocHead: head,
		Source: c.Source, SourceKey: key(c.Source), SourceType: x.opts.SourceTypes[c.Source],
		Space: c.Space, SpaceKey: key(c.Space), Labels: labels, LabelKeys: keys(labels),
		Title: c.Title, Section: section, URL: c.URL, Text: c.Text, UpdatedAt: c.UpdatedAt.UnixNano(),
		Gen: gen, ContentHash: ContentHash(c), Injection: &flag, Embedding: c.Vector,
	}
}

func (d chunkDoc) chunk() docent.Chunk {
	c := docent.Chunk{
		ID: d.ChunkID, DocID: d.DocID, Ord: d.Ord, Source: d.Source, Space: d.Space,
		UpdatedAt: time.Unix(0, d.UpdatedAt).UTC(), Title: d.Title, URL: d.URL, Text: d.Text, Vector: d.Embedding,
	}
	if len(d.Labels) > 0 {
		c.Labels = d.Labels
	}
	if len(d.Section) > 0 {
		c.Section = d.Section
	}
	if d.Injection != nil {
		c.Injection = *d.Injection
	} else {
		c.Injection = search.InjectionOf(c)
	}
	return c
}

// ContentHash is the hash stored with each chunk document: every field
// that reaches the index, vector included. Copying an index skips the
// copy when every chunk's hash already matches.
func ContentHash(c docent.Chunk) string {
	b, _ := json.Marshal(struct {
		ID, DocID, Source, Space, Title, URL, Text string
		Ord                                        int
		Labels, Section                            []string
		UpdatedAt                                  int64
	}{c.ID, c.DocID, c.Source, c.Space, c.Title, c.URL, c.Text, c.Ord, c.Labels, c.Section, c.UpdatedAt.UnixNano()})
	h := sha256.New()
	h.Write(b)
	var buf [4]byte
	for _, f := range c.Vector {
		binary.LittleEndian.PutUint32(buf[:], math.Float32bits(f))
		h.Write(buf[:])
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// heads returns, for each document in chunks, the ID of the chunk that
// carries the document's head flag (its lowest Ord): facet counts count
// head chunks, so each document once.
func heads(chunks []docent.Chunk) map[string]string {
	best := map[string]docent.Chunk{}
	for _, c := range chunks {
		b, ok := best[c.DocID]
		if !ok || cmp.Or(cmp.Compare(c.Ord, b.Ord), cmp.Compare(c.ID, b.ID)) < 0 {
			best[c.DocID] = c
		}
	}
	out := make(map[string]string, len(best))
	for doc, c := range best {
		out[doc] = c.ID
	}
	return out
}

// sortChunks orders chunks by DocID, Ord, ID (Scan's order).
func sortChunks(cs []docent.Chunk) {
	slices.SortFunc(cs, func(a, b docent.Chunk) int {
		return cmp.Or(cmp.Compare(a.DocID, b.DocID), cmp.Compare(a.Ord, b.Ord), cmp.Compare(a.ID, b.ID))
	})
}
