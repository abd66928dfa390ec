// Package typesense is the search.Index backend over a Typesense cluster
// (github.com/typesense/typesense-go/v2), for when one machine is not
// enough: it behaves like search/local from the caller's side and runs
// the same contract suite (search/searchtest).
//
// # Layout in the cluster
//
// One document per chunk in a versioned collection (docent_chunks_v1,
// _v2, ...) behind an alias (docent_chunks); queries always go through
// the alias. Reindex builds the next version, moves the alias in one call
// and drops the old collection, so a query sees either the old index or
// the new one, never a half-built one. A first upsert with another vector
// length into an empty index does the same. The embedder name lives in
// docent_chunks_meta.
//
// Each document carries the chunk's fields (title, section path and text
// stemmed for keyword search; source, source type, space and labels as
// facets; URL; updated_at as Unix nanoseconds), its embedding (float[],
// num_dim from the embedder, cosine distance), and bookkeeping: hashed
// copies of every value a filter compares (Typesense's filter_by cannot
// escape every value, so filters compare hashes, see key), the document's
// head flag (one chunk per document, for facet counts by document), the
// generation tag of the upsert that wrote it, and a content hash.
//
// # Writes
//
// Upsert sends JSONL imports with action=upsert in batches and then
// deletes the document's chunks of older generations by filter. A line
// the server refuses is reported per document and chunk in a
// *search.PartialError; the sync engine then leaves that document out of
// the registry and retries it next run. Deletes go by doc_key filter,
// 100 documents per request.
//
// # Queries
//
// KeywordSearch and VectorSearch are one multi_search each; SearchBoth,
// which the Retriever uses, sends both in one round trip, so the shared
// fusion code gets both rankings with their raw scores and the trace
// keeps each retriever's rank. Keyword search matches exact words (no
// typos, no prefixes), drops English stopwords and query syntax on the
// client, and lets Typesense drop words right to left while fewer than K
// chunks hold them all.
//
// Typesense's native hybrid search (q and vector_query in one search,
// ranked by rank_fusion_score) could replace the two lists, but it
// returns one fused ranking: each retriever's rank and raw score for
// every candidate would be lost from the trace, docent's score fusion,
// weights and vector feedback would be replaced by Typesense's fixed RRF
// with one alpha, and the evaluation tooling could no longer compare
// backends on the same fusion code. So docent fuses.
//
// # Transport
//
// Requests go through typesense-go's generated client over a transport
// of our own (nodeDoer) that tries the nearest node, then the others in
// turn, and replays request bodies on retries; typesense-go v2.0.0's own
// node rotation loses a POST body when it retries and is not safe for
// concurrent use. Where typesense-go lags the server (no stem in its
// Field type, no per-search errors in multi_search results, no filter on
// export), the generated client's raw calls are used; each such place
// says so.
//
// # Testing
//
// The contract suite runs against typesensetest, an in-repo cluster that
// validates every request against the official OpenAPI document, and
// against a real cluster when TYPESENSE_URL is set:
//
//	TYPESENSE_URL=http://localhost:8108 TYPESENSE_API_KEY=xyz go test ./search/typesense/ -run Real
//
// (one node: the suite reads right after it writes, and followers apply
// writes a moment after the leader).
package typesense
