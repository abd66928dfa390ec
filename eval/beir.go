package eval

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/docent-hq/docent"
)

// BEIRSource is the Document.Source of every BEIR corpus document, and
// BEIRPrefix the prefix of its Document.ID ("beir:" + corpus _id).
const (
	BEIRSource = "beir"
	BEIRPrefix = BEIRSource + ":"
)

// BEIR is a BEIR-format dataset loaded for one qrels split.
type BEIR struct {
	// Name is the dataset directory's base name, for example "scifact".
	Name string
	// Split is the qrels split that was loaded, for example "test".
	Split string
	// Corpus holds every corpus document, in file order: ID "beir:"+_id,
	// Source "beir", Path _id, Title title, Body text, URL "".
	Corpus []docent.Document
	// Queries are the queries that have judgments in the split, sorted by
	// id (numeric ids numerically, before any non-numeric ids).
	Queries []Query
	// Qrels maps a query id to the judged corpus ids (without the "beir:"
	// prefix) and their graded relevance.
	Qrels map[string]map[string]int
}

// Query is one BEIR query.
type Query struct {
	// ID is the query's _id.
	ID string `json:"id"`
	// Text is the query text.
	Text string `json:"text"`
}

// LoadBEIR reads a BEIR dataset from dir: corpus.jsonl, queries.jsonl and
// qrels/<split>.tsv (tab-separated "query-id corpus-id score", with an
// optional header line). Malformed input is an error naming the file and
// line; so are duplicate corpus ids, duplicate judgments, an empty split
// and judged queries missing from queries.jsonl. Judged corpus ids that
// are missing from the corpus are kept: they can never be retrieved and
// so lower recall and nDCG, as in BEIR.
func LoadBEIR(dir, split string) (*BEIR, error) {
	if split == "" {
		return nil, errors.New("eval: beir: empty split")
	}
	qrels, err := readQrels(filepath.Join(dir, "qrels", split+".tsv"))
	if err != nil {
		return nil, err
	}
	corpus, err := readCorpus(filepath.Join(dir, "corpus.jsonl"))
	if err != nil {
		return nil, err
	}
	queriesPath := filepath.Join(dir, "queries.jsonl")
	queries, err := readQueries(queriesPath, qrels)
	if err != nil {
		return nil, err
	}
	return &BEIR{
		Name:    filepath.Base(filepath.Clean(dir)),
		Split:   split,
		Corpus:  corpus,
		Queries: queries,
		Qrels:   qrels,
	}, nil
}

// jsonlRecord is the part of a corpus or query line that docent reads;
// other keys (metadata) are ignored.
type jsonlRecord struct {
	ID    json.RawMessage `json:"_id"`
	Title string          `json:"title"`
	Text  *string         `json:"text"`
}

// forEachLine calls fn with each non-blank line of the file at path and
// its 1-based line number. Lines may be of any length.
func forEachLine(path string, fn func(n int, line []byte) error) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("eval: beir: %w", err)
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	for n := 1; ; n++ {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			line = bytes.TrimSpace(line)
			if len(line) > 0 {
				if ferr := fn(n, line); ferr != nil {
					return ferr
				}
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("eval: beir: read %s: %w", path, err)
		}
	}
}

// parseRecord decodes one JSONL line; the _id may be a string or a number.
func parseRecord(path string, n int, line []byte) (id string, rec jsonlRecord, err error) {
	if err := json.Unmarshal(line, &rec); err != nil {
		return "", rec, fmt.Errorf("eval: beir: %s:%d: %w", path, n, err)
	}
	raw := bytes.TrimSpace(rec.ID)
	switch {
	case len(raw) == 0 || bytes.Equal(raw, []byte("null")):
		return "", rec, fmt.Errorf("eval: beir: %s:%d: missing _id", path, n)
	case raw[0] == '"':
		if err := json.Unmarshal(raw, &id); err != nil {
			return "", rec, fmt.Errorf("eval: beir: %s:%d: _id: %w", path, n, err)
		}
	default:
		var num json.Number
		if err := json.Unmarshal(raw, &num); err != nil {
			return "", rec, fmt.Errorf("eval: beir: %s:%d: _id must be a string or number, got %s", path, n, raw)
		}
		id = num.String()
	}
	if strings.TrimSpace(id) == "" {
		return "", rec, fmt.Errorf("eval: beir: %s:%d: empty _id", path, n)
	}
	if rec.Text == nil {
		return "", rec, fmt.Errorf("eval: beir: %s:%d: missing text", path, n)
	}
	return id, rec, nil
}

func readCorpus(path string) ([]docent.Document, error) {
	var docs []docent.Document
	seen := make(map[string]int)
	err := forEachLine(path, func(n int, line []byte) error {
		id, rec, err := parseRecord(path, n, line)
		if err != nil {
			return err
		}
		if prev, ok := seen[id]; ok {
			return fmt.Errorf("eval: beir: %s:%d: duplicate _id %q (first on line %d)", path, n, id, prev)
		}
		seen[id] = n
		docs = append(docs, docent.Document{
			ID:     BEIRPrefix + id,
			Source: BEIRSource,
			Path:   id,
			Title:  rec.Title,
			Body:   *rec.Text,
		})
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(docs) == 0 {
		return nil, fmt.Errorf("eval: beir: %s: no documents", path)
	}
	return docs, nil
}

func readQueries(path string, qrels map[string]map[string]int) ([]Query, error) {
	var queries []Query
	seen := make(map[string]int)
	err := forEachLine(path, func(n int, line []byte) error {
		id, rec, err := parseRecord(path, n, line)
		if err != nil {
			return err
		}
		if prev, ok := seen[id]; ok {
			return fmt.Errorf("eval: beir: %s:%d: duplicate _id %q (first on line %d)", path, n, id, prev)
		}
		seen[id] = n
		if _, judged := qrels[id]; judged {
			queries = append(queries, Query{ID: id, Text: *rec.Text})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(queries) < len(qrels) {
		var missing []string
		for qid := range qrels {
			if _, ok := seen[qid]; !ok {
				missing = append(missing, qid)
			}
		}
		slices.SortFunc(missing, compareIDs)
		if len(missing) > 5 {
			missing = append(missing[:5], "...")
		}
		return nil, fmt.Errorf("eval: beir: %s: judged queries missing: %s", path, strings.Join(missing, ", "))
	}
	slices.SortFunc(queries, func(a, b Query) int { return compareIDs(a.ID, b.ID) })
	return queries, nil
}

// compareIDs orders ids that are integers numerically, before every
// non-integer id; non-integer ids compare as strings.
func compareIDs(a, b string) int {
	ai, aerr := strconv.ParseInt(a, 10, 64)
	bi, berr := strconv.ParseInt(b, 10, 64)
	switch {
	case aerr == nil && berr == nil:
		if c := cmpInt(ai, bi); c != 0 {
			return c
		}
		return strings.Compare(a, b) // "01" vs "1"
	case aerr == nil:
		return -1
	case berr == nil:
		return 1
	}
	return strings.Compare(a, b)
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func readQrels(path string) (map[string]map[string]int, error) {
	qrels := make(map[string]map[string]int)
	first := true
	err := forEachLine(path, func(n int, line []byte) error {
		fields := strings.Fields(string(line))
		isFirst := first
		first = false
		if isFirst && len(fields) > 0 && fields[0] == "query-id" {
			return nil // header
		}
		if len(fields) != 3 {
			return fmt.Errorf("eval: beir: %s:%d: want 3 columns (query-id corpus-id score), got %d", path, n, len(fields))
		}
		qid, did := fields[0], fields[1]
		score, err := strconv.Atoi(fields[2])
		if err != nil {
			return fmt.Errorf("eval: beir: %s:%d: score %q is not an integer", path, n, fields[2])
		}
		docs := qrels[qid]
		if docs == nil {
			docs = make(map[string]int)
			qrels[qid] = docs
		}
		if _, dup := docs[did]; dup {
			return fmt.Errorf("eval: beir: %s:%d: duplicate judgment for query %q, doc %q", path, n, qid, did)
		}
		docs[did] = score
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(qrels) == 0 {
		return nil, fmt.Errorf("eval: beir: %s: no judgments", path)
	}
	return qrels, nil
}

// Searcher retrieves chunks for a query text: in docent, the index plus
// the query embedder in one retrieval mode.
type Searcher interface {
	// Search returns at most k hits, best first. An error aborts the run.
	Search(ctx context.Context, query string, k int) ([]docent.Hit, error)
}

// SearcherFunc adapts a function to a Searcher.
type SearcherFunc func(ctx context.Context, query string, k int) ([]docent.Hit, error)

// Search calls f.
func (f SearcherFunc) Search(ctx context.Context, query string, k int) ([]docent.Hit, error) {
	return f(ctx, query, k)
}

// BEIROptions tunes RunBEIR.
type BEIROptions struct {
	// K is how many documents to rank per query (default 100). Recall@100
	// is measured on these K, so it needs K >= 100.
	K int
	// RunFile, when non-nil, receives a TREC run file: one line
	// "qid Q0 docid rank score tag" per ranked document.
	RunFile io.Writer
	// RunTag is the run file's last column (default "docent").
	RunTag string
}

// BEIRReport is the outcome of one BEIR run.
type BEIRReport struct {
	// Dataset and Split name what was run.
	Dataset string `json:"dataset"`
	Split   string `json:"split"`
	// Mode is the retrieval mode (bm25, vector, hybrid); the caller fills it.
	Mode string `json:"mode"`
	// K is the ranking depth, in documents.
	K int `json:"k"`
	// Queries is the number of queries scored.
	Queries int `json:"queries"`
	// NDCG10, Recall10, Recall100 and MRR10 are means over all queries;
	// a query with no results counts as 0.
	NDCG10    float64 `json:"ndcg_at_10"`
	Recall10  float64 `json:"recall_at_10"`
	Recall100 float64 `json:"recall_at_100"`
	MRR10     float64 `json:"mrr_at_10"`
	// QueryP50, QueryP95 and QueryP99 are query latency percentiles
	// (nearest rank), measured around the Searcher calls of each query.
	QueryP50 time.Duration `json:"query_p50_ns"`
	QueryP95 time.Duration `json:"query_p95_ns"`
	QueryP99 time.Duration `json:"query_p99_ns"`
	// IndexDocs, IndexDuration and IndexDocsPerSec describe indexing the
	// corpus; the caller fills them (see SetIndexing).
	IndexDocs       int           `json:"index_docs"`
	IndexDuration   time.Duration `json:"index_duration_ns"`
	IndexDocsPerSec float64       `json:"index_docs_per_sec"`
	// PerQuery holds each query's scores, in query order.
	PerQuery []BEIRQueryResult `json:"per_query"`
}

// BEIRQueryResult is one query's scores.
type BEIRQueryResult struct {
	// ID is the query id.
	ID string `json:"id"`
	// NDCG10, Recall10, Recall100 and MRR10 are the query's metrics.
	NDCG10    float64 `json:"ndcg_at_10"`
	Recall10  float64 `json:"recall_at_10"`
	Recall100 float64 `json:"recall_at_100"`
	MRR10     float64 `json:"mrr_at_10"`
	// FirstRelevant is the rank of the first relevant document within
	// the K ranked, 0 when none was found.
	FirstRelevant int `json:"first_relevant"`
	// Retrieved is the number of documents ranked (at most K).
	Retrieved int `json:"retrieved"`
	// Latency is the time spent in the Searcher for this query.
	Latency time.Duration `json:"latency_ns"`
}

// SetIndexing fills the indexing fields: docs indexed in d.
func (r *BEIRReport) SetIndexing(docs int, d time.Duration) {
	r.IndexDocs = docs
	r.IndexDuration = d
	r.IndexDocsPerSec = 0
	if d > 0 {
		r.IndexDocsPerSec = float64(docs) / d.Seconds()
	}
}

// rankedDoc is one document in a query's ranking, from its best chunk.
type rankedDoc struct {
	id    string
	score float64
}

// chunksPerDoc is how many chunks RunBEIR first asks for per document it
// needs; maxDepthFactor caps the deepening when documents have many chunks.
const (
	chunksPerDoc   = 3
	maxDepthFactor = 24
)

// RunBEIR runs every query of b through s, ranks documents and scores them.
//
// Hits are chunks: each hit maps to its document (Chunk.DocID without the
// "beir:" prefix) and a document ranks where its best (first) chunk does.
// RunBEIR asks for 3*K chunks and, when that many come back but they hold
// fewer than K documents, doubles the depth (up to 24*K chunks) and asks
// again. Documents whose id equals the query id are dropped (the BEIR
// convention for sets like ArguAna, where a query is also a document).
// Queries run one at a time, so latencies are not skewed by contention.
func RunBEIR(ctx context.Context, b *BEIR, s Searcher, opts BEIROptions) (BEIRReport, error) {
	k := opts.K
	if k <= 0 {
		k = 100
	}
	tag := opts.RunTag
	if tag == "" {
		tag = "docent"
	}
	var run *bufio.Writer
	if opts.RunFile != nil {
		run = bufio.NewWriter(opts.RunFile)
	}
	rep := BEIRReport{
		Dataset:  b.Name,
		Split:    b.Split,
		K:        k,
		Queries:  len(b.Queries),
		PerQuery: make([]BEIRQueryResult, 0, len(b.Queries)),
	}
	latencies := make([]time.Duration, 0, len(b.Queries))
	for _, q := range b.Queries {
		if err := ctx.Err(); err != nil {
			return rep, fmt.Errorf("eval: beir: %w", err)
		}
		start := time.Now()
		docs, err := searchDocs(ctx, s, q, k)
		lat := time.Since(start)
		if err != nil {
			return rep, fmt.Errorf("eval: beir: query %s: %w", q.ID, err)
		}
		latencies = append(latencies, lat)
		ranked := make([]string, len(docs))
		for i, d := range docs {
			ranked[i] = d.id
			if run != nil {
				fmt.Fprintf(run, "%s Q0 %s %d %s %s\n", q.ID, d.id, i+1,
					strconv.FormatFloat(d.score, 'g', -1, 64), tag)
			}
		}
		rel := b.Qrels[q.ID]
		res := BEIRQueryResult{
			ID:            q.ID,
			NDCG10:        NDCG(ranked, rel, 10),
			Recall10:      Recall(ranked, rel, 10),
			Recall100:     Recall(ranked, rel, 100),
			MRR10:         MRR(ranked, rel, 10),
			FirstRelevant: FirstRelevantRank(ranked, rel, 0),
			Retrieved:     len(ranked),
			Latency:       lat,
		}
		rep.PerQuery = append(rep.PerQuery, res)
		rep.NDCG10 += res.NDCG10
		rep.Recall10 += res.Recall10
		rep.Recall100 += res.Recall100
		rep.MRR10 += res.MRR10
	}
	if run != nil {
		if err := run.Flush(); err != nil {
			return rep, fmt.Errorf("eval: beir: write run file: %w", err)
		}
	}
	if n := float64(len(b.Queries)); n > 0 {
		rep.NDCG10 /= n
		rep.Recall10 /= n
		rep.Recall100 /= n
		rep.MRR10 /= n
	}
	rep.QueryP50 = Percentile(latencies, 50)
	rep.QueryP95 = Percentile(latencies, 95)
	rep.QueryP99 = Percentile(latencies, 99)
	return rep, nil
}

// searchDocs asks s for chunks until they hold k documents (or s has no
// more) and returns the document ranking.
func searchDocs(ctx context.Context, s Searcher, q Query, k int) ([]rankedDoc, error) {
	depth := chunksPerDoc * k
	for {
		hits, err := s.Search(ctx, q.Text, depth)
		if err != nil {
			return nil, err
		}
		docs := rankDocs(hits, q.ID, k)
		if len(docs) >= k || len(hits) < depth || depth >= maxDepthFactor*k {
			return docs, nil
		}
		depth *= 2
	}
}

// rankDocs maps chunk hits to at most k documents, each at its best
// chunk's position, dropping the document whose id is the query id.
func rankDocs(hits []docent.Hit, qid string, k int) []rankedDoc {
	seen := make(map[string]bool, len(hits))
	docs := make([]rankedDoc, 0, min(k, len(hits)))
	for _, h := range hits {
		id := strings.TrimPrefix(h.Chunk.DocID, BEIRPrefix)
		if id == qid || seen[id] {
			continue
		}
		seen[id] = true
		docs = append(docs, rankedDoc{id: id, score: h.Score})
		if len(docs) == k {
			break
		}
	}
	return docs
}

// Percentile returns the p-th percentile (0 < p <= 100) of ds by the
// nearest-rank method: the smallest value with at least p% of the values
// at or below it. It returns 0 for no values. ds is not modified.
func Percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	sorted := slices.Clone(ds)
	slices.Sort(sorted)
	i := int(math.Ceil(float64(len(sorted))*p/100)) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}
