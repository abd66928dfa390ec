package typesense

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/typesense/typesense-go/v2/typesense/api"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/search"
)

// maxPerPage is Typesense's largest page.
const maxPerPage = 250

// queryText turns free text into the q Typesense gets: the words
// search.Analyze keeps (runs of letters and digits, English stopwords and
// one-letter words dropped), unstemmed, joined by spaces. No character of
// Typesense's query syntax (-exclusion, "phrase", *) survives, so the text
// never changes what the query means; the fields are stemmed at both ends
// by the server.
func queryText(text string) string {
	var words []string
	search.Words(text, func(w string) { words = append(words, w) })
	return strings.Join(words, " ")
}

// filterBy maps a docent.Filter to filter_by. Values are compared through
// their hashed keys (see key), so no value needs escaping.
func filterBy(f docent.Filter, extra ...string) string {
	var parts []string
	list := func(field string, vs []string) {
		if len(vs) > 0 {
			parts = append(parts, field+":=["+strings.Join(keys(vs), ",")+"]")
		}
	}
	list("source_key", f.Sources)
	list("space_key", f.Spaces)
	list("label_keys", f.Labels)
	if !f.UpdatedAfter.IsZero() {
		parts = append(parts, "updated_at:>="+strconv.FormatInt(f.UpdatedAfter.UnixNano(), 10))
	}
	if !f.UpdatedBefore.IsZero() {
		parts = append(parts, "updated_at:<"+strconv.FormatInt(f.UpdatedBefore.UnixNano(), 10))
	}
	return strings.Join(append(parts, extra...), " && ")
}

func strp(s string) *string { return &s }
func intp(i int) *int       { return &i }

// keywordSearch is the multi_search entry of a keyword query.
func (x *Index) keywordSearch(q search.KeywordQuery, text string, page, perPage int) api.MultiSearchCollectionParameters {
	w := x.opts.Weights
	s := api.MultiSearchCollectionParameters{
		Collection:          x.opts.Alias,
		Q:                   strp(text),
		QueryBy:             strp("title,section,text"),
		QueryByWeights:      strp(fmt.Sprintf("%d,%d,%d", w[0], w[1], w[2])),
		NumTypos:            strp("0"),
		Prefix:              strp("false"),
		DropTokensThreshold: intp(q.K),
		IncludeFields:       strp(fieldsLean),
		Page:                intp(page),
		PerPage:             intp(perPage),
	}
	return withFilter(s, q.Filter)
}

// withFilter sets s's filter_by from f, when f restricts anything.
func withFilter(s api.MultiSearchCollectionParameters, f docent.Filter) api.MultiSearchCollectionParameters {
	if fb := filterBy(f); fb != "" {
		s.FilterBy = strp(fb)
	}
	return s
}

// vectorSearch is the multi_search entry of a vector query.
func (x *Index) vectorSearch(q search.VectorQuery, page, perPage int) api.MultiSearchCollectionParameters {
	var b strings.Builder
	b.WriteString(fieldEmbedding + ":([")
	for i, v := range q.Vector {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatFloat(float64(v), 'g', -1, 32))
	}
	fmt.Fprintf(&b, "], k:%d)", q.K)
	s := api.MultiSearchCollectionParameters{
		Collection:    x.opts.Alias,
		Q:             strp("*"),
		VectorQuery:   strp(b.String()),
		IncludeFields: strp(fieldsLean),
		Page:          intp(page),
		PerPage:       intp(perPage),
	}
	return withFilter(s, q.Filter)
}

// result is one search's answer inside a multi_search response. It is
// decoded here rather than through typesense-go's api.SearchResult, which
// drops the per-search code and error.
type result struct {
	Code        int    `json:"code"`
	Error       string `json:"error"`
	Found       int    `json:"found"`
	FacetCounts []struct {
		FieldName string `json:"field_name"`
		Counts    []struct {
			Value string `json:"value"`
			Count int    `json:"count"`
		} `json:"counts"`
	} `json:"facet_counts"`
	Hits []struct {
		Document       chunkDoc `json:"document"`
		TextMatch      int64    `json:"text_match"`
		VectorDistance *float64 `json:"vector_distance"`
	} `json:"hits"`
}

// multiSearch runs searches in one POST /multi_search. It goes through the
// generated client's raw call so that per-search errors are seen; the
// common use_cache=false is in the URL (the official spec requires the
// query parameter object, and results must reflect the latest writes).
func (x *Index) multiSearch(ctx context.Context, searches ...api.MultiSearchCollectionParameters) ([]result, error) {
	useCache := false
	b, err := check(x.api.MultiSearch(ctx, &api.MultiSearchParams{UseCache: &useCache},
		api.MultiSearchSearchesParameter{Searches: searches}))
	if err != nil {
		return nil, fmt.Errorf("typesense: multi_search: %w", err)
	}
	var resp struct {
		Results []result `json:"results"`
	}
	if err := json.Unmarshal(b, &resp); err != nil {
		return nil, fmt.Errorf("typesense: multi_search: decode: %w", err)
	}
	if len(resp.Results) != len(searches) {
		return nil, fmt.Errorf("typesense: multi_search: %d results for %d searches", len(resp.Results), len(searches))
	}
	for _, r := range resp.Results {
		if r.Code != 0 || r.Error != "" {
			if r.Code == http.StatusNotFound {
				x.forget()
			}
			return nil, fmt.Errorf("typesense: search: %w", &httpError{status: r.Code, msg: r.Error})
		}
	}
	return resp.Results, nil
}

// paged runs one search a page at a time (Typesense serves at most 250
// hits per page) until k hits, or fewer than a page came back.
func (x *Index) paged(ctx context.Context, k int, mk func(page, perPage int) api.MultiSearchCollectionParameters, add func(result)) error {
	perPage := min(k, maxPerPage)
	for page, got := 1, 0; got < k; page++ {
		res, err := x.multiSearch(ctx, mk(page, perPage))
		if err != nil {
			return err
		}
		add(res[0])
		got += len(res[0].Hits)
		if len(res[0].Hits) < perPage {
			break
		}
	}
	return nil
}

func kOf(k int) int {
	if k <= 0 {
		return 10
	}
	return k
}

// KeywordSearch ranks chunks by Typesense's text match over title,
// section and text (weights Options.Weights), with exact tokens (no typos,
// no prefixes) and Typesense's token dropping when fewer than K chunks hold
// every word. KeywordScore is the raw text_match.
func (x *Index) KeywordSearch(ctx context.Context, q search.KeywordQuery) ([]docent.Hit, error) {
	q.K = kOf(q.K)
	text := queryText(q.Text)
	if text == "" {
		return nil, nil
	}
	if cur, err := x.current(ctx); err != nil || cur == nil {
		return nil, err
	}
	var hits []docent.Hit
	err := x.paged(ctx, q.K, func(page, per int) api.MultiSearchCollectionParameters {
		return x.keywordSearch(q, text, page, per)
	}, func(r result) { hits = appendKeyword(hits, r) })
	return cutHits(hits, q.K), err
}

// VectorSearch ranks chunks by cosine similarity (Typesense's cosine
// distance, VectorScore = 1 - distance). The query vector's length is
// checked against the collection's before it is sent.
func (x *Index) VectorSearch(ctx context.Context, q search.VectorQuery) ([]docent.Hit, error) {
	q.K = kOf(q.K)
	if len(q.Vector) == 0 {
		return nil, fmt.Errorf("typesense: vector search: %w", search.ErrNoVector)
	}
	cur, err := x.current(ctx)
	if err != nil || cur == nil {
		return nil, err
	}
	if len(q.Vector) != cur.dim {
		return nil, fmt.Errorf("typesense: vector search: length %d, index %d: %w", len(q.Vector), cur.dim, search.ErrDimension)
	}
	var hits []docent.Hit
	err = x.paged(ctx, q.K, func(page, per int) api.MultiSearchCollectionParameters {
		return x.vectorSearch(q, page, per)
	}, func(r result) { hits = appendVector(hits, r) })
	return cutHits(hits, q.K), err
}

// SearchBoth serves the Retriever's keyword and vector queries in one
// multi_search round trip (when each fits in one page), each ranking with
// its own raw scores and ranks, exactly as the two separate calls.
func (x *Index) SearchBoth(ctx context.Context, kq search.KeywordQuery, vq search.VectorQuery) (kw, vs []docent.Hit, err error) {
	kq.K, vq.K = kOf(kq.K), kOf(vq.K)
	text := queryText(kq.Text)
	if text == "" || kq.K > maxPerPage || vq.K > maxPerPage {
		if kw, err = x.KeywordSearch(ctx, kq); err != nil {
			return nil, nil, err
		}
		vs, err = x.VectorSearch(ctx, vq)
		return kw, vs, err
	}
	if len(vq.Vector) == 0 {
		return nil, nil, fmt.Errorf("typesense: vector search: %w", search.ErrNoVector)
	}
	cur, err := x.current(ctx)
	if err != nil || cur == nil {
		return nil, nil, err
	}
	if len(vq.Vector) != cur.dim {
		return nil, nil, fmt.Errorf("typesense: vector search: length %d, index %d: %w", len(vq.Vector), cur.dim, search.ErrDimension)
	}
	res, err := x.multiSearch(ctx, x.keywordSearch(kq, text, 1, kq.K), x.vectorSearch(vq, 1, vq.K))
	if err != nil {
		return nil, nil, err
	}
	return cutHits(appendKeyword(nil, res[0]), kq.K), cutHits(appendVector(nil, res[1]), vq.K), nil
}

func appendKeyword(hits []docent.Hit, r result) []docent.Hit {
	for _, h := range r.Hits {
		hits = append(hits, docent.Hit{
			Chunk:        docent.Chunk{ID: h.Document.ChunkID, DocID: h.Document.DocID},
			KeywordScore: float64(h.TextMatch), KeywordRank: len(hits) + 1,
		})
	}
	return hits
}

func appendVector(hits []docent.Hit, r result) []docent.Hit {
	for _, h := range r.Hits {
		d := 1.0
		if h.VectorDistance != nil {
			d = *h.VectorDistance
		}
		hits = append(hits, docent.Hit{
			Chunk:       docent.Chunk{ID: h.Document.ChunkID, DocID: h.Document.DocID},
			VectorScore: 1 - d, VectorRank: len(hits) + 1,
		})
	}
	return hits
}

func cutHits(h []docent.Hit, k int) []docent.Hit {
	if len(h) > k {
		return h[:k]
	}
	return h
}

// byIDs fetches the chunk documents with the given chunk IDs, 250 per
// search, with the fields asked for.
func (x *Index) byIDs(ctx context.Context, ids []string, include, exclude string) (map[string]chunkDoc, error) {
	out := map[string]chunkDoc{}
	if len(ids) == 0 {
		return out, nil
	}
	if cur, err := x.current(ctx); err != nil || cur == nil {
		return out, err
	}
	for start := 0; start < len(ids); start += maxPerPage {
		part := ids[start:min(start+maxPerPage, len(ids))]
		s := api.MultiSearchCollectionParameters{
			Collection: x.opts.Alias, Q: strp("*"),
			FilterBy: strp("chunk_key:=[" + strings.Join(keys(part), ",") + "]"),
			PerPage:  intp(len(part)),
		}
		if include != "" {
			s.IncludeFields = strp(include)
		}
		if exclude != "" {
			s.ExcludeFields = strp(exclude)
		}
		res, err := x.multiSearch(ctx, s)
		if err != nil {
			return nil, err
		}
		for _, h := range res[0].Hits {
			out[h.Document.ChunkID] = h.Document
		}
	}
	return out, nil
}

// Chunks returns the stored chunks with the given IDs, in the order asked.
func (x *Index) Chunks(ctx context.Context, ids []string) ([]docent.Chunk, error) {
	docs, err := x.byIDs(ctx, ids, "", fieldEmbedding)
	if err != nil {
		return nil, err
	}
	var out []docent.Chunk
	for _, id := range ids {
		if d, ok := docs[id]; ok {
			c := d.chunk()
			c.Vector = nil
			out = append(out, c)
		}
	}
	return out, nil
}

// Vectors returns the stored vectors of the given chunk IDs.
func (x *Index) Vectors(ctx context.Context, ids []string) (map[string][]float32, error) {
	docs, err := x.byIDs(ctx, ids, "chunk_id,"+fieldEmbedding, "")
	if err != nil {
		return nil, err
	}
	out := make(map[string][]float32, len(docs))
	for id, d := range docs {
		if len(d.Embedding) > 0 {
			out[id] = d.Embedding
		}
	}
	return out, nil
}

// Facets counts documents by source and label under f: it facets the
// head chunk of each document (doc_head), so each document counts once.
func (x *Index) Facets(ctx context.Context, f docent.Filter) (search.Facets, error) {
	out := search.Facets{Sources: []search.Facet{}, Labels: []search.Facet{}}
	if cur, err := x.current(ctx); err != nil || cur == nil {
		return out, err
	}
	res, err := x.multiSearch(ctx, api.MultiSearchCollectionParameters{
		Collection: x.opts.Alias, Q: strp("*"), FilterBy: strp(filterBy(f, "doc_head:=true")),
		FacetBy: strp("source,labels"), MaxFacetValues: intp(1000), PerPage: intp(0),
	})
	if err != nil {
		return out, err
	}
	for _, fc := range res[0].FacetCounts {
		var list []search.Facet
		for _, c := range fc.Counts {
			if c.Count > 0 {
				list = append(list, search.Facet{Value: c.Value, Count: c.Count})
			}
		}
		slices.SortFunc(list, func(a, b search.Facet) int {
			return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Value, b.Value))
		})
		switch fc.FieldName {
		case "source":
			out.Sources = append(out.Sources, list...)
		case "labels":
			out.Labels = append(out.Labels, list...)
		}
	}
	return out, nil
}

// export streams the documents filter matches (every document for "").
func (x *Index) export(ctx context.Context, filter, include, exclude string, fn func(chunkDoc) error) error {
	if cur, err := x.current(ctx); err != nil || cur == nil {
		return err
	}
	params := &api.ExportDocumentsParams{}
	if filter != "" {
		params.FilterBy = &filter
	}
	if include != "" {
		params.IncludeFields = &include
	}
	if exclude != "" {
		params.ExcludeFields = &exclude
	}
	// The generated client's call: typesense-go v2.0.0's Documents().Export
	// takes no filter or field list.
	resp, err := x.api.ExportDocuments(ctx, x.opts.Alias, params)
	if err != nil {
		return fmt.Errorf("typesense: export: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, err := check(resp, nil)
		x.forgetOn404(err)
		return fmt.Errorf("typesense: export: %w", err)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var d chunkDoc
		if err := json.Unmarshal(line, &d); err != nil {
			return fmt.Errorf("typesense: export: %w", err)
		}
		if err := fn(d); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("typesense: export: %w", err)
	}
	return nil
}

// ChunkIDs lists the chunk IDs of source's documents in Ord order.
func (x *Index) ChunkIDs(ctx context.Context, source string) (map[string][]string, error) {
	var all []docent.Chunk
	err := x.export(ctx, "source_key:="+key(source), "chunk_id,doc_id,ord", "", func(d chunkDoc) error {
		all = append(all, docent.Chunk{ID: d.ChunkID, DocID: d.DocID, Ord: d.Ord})
		return nil
	})
	if err != nil {
		return nil, err
	}
	sortChunks(all)
	out := map[string][]string{}
	for _, c := range all {
		out[c.DocID] = append(out[c.DocID], c.ID)
	}
	return out, nil
}

// Count returns the number of chunks behind the alias.
func (x *Index) Count(ctx context.Context) (int, error) {
	if cur, err := x.current(ctx); err != nil || cur == nil {
		return 0, err
	}
	res, err := x.multiSearch(ctx, api.MultiSearchCollectionParameters{Collection: x.opts.Alias, Q: strp("*"), PerPage: intp(0)})
	if err != nil {
		return 0, err
	}
	return res[0].Found, nil
}

// Scan calls fn for every chunk, without vectors, in DocID and Ord order.
// It exports the collection (vectors excluded) and sorts in memory.
func (x *Index) Scan(ctx context.Context, fn func(docent.Chunk) error) error {
	var all []docent.Chunk
	err := x.export(ctx, "", "", fieldEmbedding+",content_hash,gen", func(d chunkDoc) error {
		all = append(all, d.chunk())
		return nil
	})
	if err != nil {
		return err
	}
	sortChunks(all)
	for _, c := range all {
		c.Vector = nil
		if err := fn(c); err != nil {
			return err
		}
	}
	return nil
}
