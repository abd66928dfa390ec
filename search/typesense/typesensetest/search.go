package typesensetest

import (
	"bytes"
	"cmp"
	"encoding/json"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// searchParams are the search parameters this server implements. Any
// other parameter is refused (400), so a misspelt or unsupported one fails
// the test instead of being silently ignored; every name here is a
// parameter of the official API.
type searchParams struct {
	Collection           string  `json:"collection"`
	Q                    *string `json:"q"`
	QueryBy              string  `json:"query_by"`
	QueryByWeights       string  `json:"query_by_weights"`
	FilterBy             string  `json:"filter_by"`
	FacetBy              string  `json:"facet_by"`
	MaxFacetValues       *int    `json:"max_facet_values"`
	SortBy               string  `json:"sort_by"`
	Page                 *int    `json:"page"`
	PerPage              *int    `json:"per_page"`
	IncludeFields        string  `json:"include_fields"`
	ExcludeFields        string  `json:"exclude_fields"`
	VectorQuery          string  `json:"vector_query"`
	NumTypos             *string `json:"num_typos"`
	Prefix               *string `json:"prefix"`
	DropTokensThreshold  *int    `json:"drop_tokens_threshold"`
	DropTokensMode       string  `json:"drop_tokens_mode"`
	TypoTokensThreshold  *int    `json:"typo_tokens_threshold"`
	UseCache             *bool   `json:"use_cache"`
	ExhaustiveSearch     *bool   `json:"exhaustive_search"`
	PrioritizeExactMatch *bool   `json:"prioritize_exact_match"`
	HighlightFields      *string `json:"highlight_fields"`
	APIKey               string  `json:"x-typesense-api-key"`
}

var intParams = []string{"max_facet_values", "page", "per_page", "drop_tokens_threshold", "typo_tokens_threshold"}
var boolParams = []string{"use_cache", "exhaustive_search", "prioritize_exact_match"}

// queryParams turns URL query values into the JSON shape of searchParams.
func queryParams(q url.Values) (map[string]any, *apiError) {
	out := map[string]any{}
	for k, vs := range q {
		v := vs[len(vs)-1]
		switch {
		case slices.Contains(intParams, k):
			n, err := strconv.Atoi(v)
			if err != nil {
				return nil, errorf(http.StatusBadRequest, "Parameter `%s` must be an integer.", k)
			}
			out[k] = n
		case slices.Contains(boolParams, k):
			b, err := strconv.ParseBool(v)
			if err != nil {
				return nil, errorf(http.StatusBadRequest, "Parameter `%s` must be a boolean.", k)
			}
			out[k] = b
		default:
			out[k] = v
		}
	}
	return out, nil
}

// decodeParams merges common (URL) parameters under one search's own and
// decodes them strictly.
func decodeParams(common, own map[string]any) (searchParams, *apiError) {
	merged := map[string]any{}
	for k, v := range common {
		merged[k] = v
	}
	for k, v := range own {
		merged[k] = v
	}
	b, _ := json.Marshal(merged)
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var p searchParams
	if err := dec.Decode(&p); err != nil {
		return p, errorf(http.StatusBadRequest, "Bad search parameters: %v", err)
	}
	return p, nil
}

// vectorQuery is a parsed vector_query parameter.
type vectorQuery struct {
	field string
	vec   []float32
	k     int
}

// parseVectorQuery parses "field:([v1, v2, ...], k: N)" against c.
func (c *collection) parseVectorQuery(s string) (*vectorQuery, *apiError) {
	bad := func(why string) *apiError {
		return errorf(http.StatusBadRequest, "Malformed vector query string: %s", why)
	}
	i := strings.IndexByte(s, ':')
	if i <= 0 {
		return nil, bad("`:` is missing after the vector field name.")
	}
	vq := &vectorQuery{field: strings.TrimSpace(s[:i])}
	rest := strings.TrimSpace(s[i+1:])
	if !strings.HasPrefix(rest, "(") || !strings.HasSuffix(rest, ")") {
		return nil, bad("parameters must be enclosed in parentheses.")
	}
	rest = strings.TrimSpace(rest[1 : len(rest)-1])
	if !strings.HasPrefix(rest, "[") {
		return nil, bad("the query vector must come first, in brackets.")
	}
	end := strings.IndexByte(rest, ']')
	if end < 0 {
		return nil, bad("unclosed query vector.")
	}
	for _, p := range strings.Split(rest[1:end], ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		f, err := strconv.ParseFloat(p, 32)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, bad("the query vector holds a value that is not a number.")
		}
		vq.vec = append(vq.vec, float32(f))
	}
	rest = strings.TrimSpace(rest[end+1:])
	for rest != "" {
		if !strings.HasPrefix(rest, ",") {
			return nil, bad("parameters must be separated by commas.")
		}
		rest = strings.TrimSpace(rest[1:])
		j := strings.IndexByte(rest, ',')
		if j < 0 {
			j = len(rest)
		}
		kv := strings.SplitN(rest[:j], ":", 2)
		rest = strings.TrimSpace(rest[j:])
		if len(kv) != 2 {
			return nil, bad("a parameter has no value.")
		}
		key, val := strings.TrimSpace(kv[0]), strings.TrimSpace(kv[1])
		switch key {
		case "k":
			n, err := strconv.Atoi(val)
			if err != nil || n <= 0 {
				return nil, bad("`k` must be a positive integer.")
			}
			vq.k = n
		default:
			return nil, bad("unknown parameter `" + key + "` (this test server supports k).")
		}
	}
	f := c.vectorField(vq.field)
	if f == nil {
		return nil, errorf(http.StatusBadRequest, "Field `%s` does not have a vector query index.", vq.field)
	}
	if len(vq.vec) == 0 {
		return nil, bad("the query vector is empty (this test server embeds no text).")
	}
	if f.NumDim > 0 && len(vq.vec) != f.NumDim {
		return nil, errorf(http.StatusBadRequest, "Query field `%s` must have %d dimensions.", vq.field, f.NumDim)
	}
	return vq, nil
}

type scored struct {
	d         *document
	textMatch int64
	dist      float64
}

// search runs one search on c.
func (c *collection) search(p searchParams) (map[string]any, *apiError) {
	if p.Q == nil {
		return nil, errorf(http.StatusBadRequest, "Parameter `q` is required.")
	}
	q := *p.Q
	page, perPage := 1, 10
	if p.Page != nil {
		page = *p.Page
	}
	if p.PerPage != nil {
		perPage = *p.PerPage
	}
	if page < 1 || perPage < 0 {
		return nil, errorf(http.StatusBadRequest, "Parameters `page` and `per_page` must be positive.")
	}
	if perPage > 250 {
		return nil, errorf(http.StatusUnprocessableEntity, "Only upto 250 hits can be fetched per page.")
	}
	fl, err := c.parseFilter(p.FilterBy)
	if err != nil {
		return nil, err
	}
	var vq *vectorQuery
	if p.VectorQuery != "" {
		if vq, err = c.parseVectorQuery(p.VectorQuery); err != nil {
			return nil, err
		}
	}
	queryBy := splitList(p.QueryBy)
	if q != "*" {
		if len(queryBy) == 0 {
			return nil, errorf(http.StatusBadRequest, "No search fields specified for the query.")
		}
		if vq != nil {
			return nil, errorf(http.StatusBadRequest, "Hybrid search (q and vector_query together) is not implemented by this test server.")
		}
		if p.NumTypos == nil || *p.NumTypos != "0" || p.Prefix == nil || *p.Prefix != "false" {
			return nil, errorf(http.StatusBadRequest, "This test server implements exact token search only: send num_typos=0 and prefix=false.")
		}
	}
	var weights []float64
	for _, w := range splitList(p.QueryByWeights) {
		x, err := strconv.ParseFloat(w, 64)
		if err != nil || x < 0 {
			return nil, errorf(http.StatusBadRequest, "Parameter `query_by_weights` must be a list of numbers.")
		}
		weights = append(weights, x)
	}
	if len(weights) > 0 && len(weights) != len(queryBy) {
		return nil, errorf(http.StatusBadRequest, "Number of weights in `query_by_weights` does not match number of `query_by` fields.")
	}
	for i, name := range queryBy {
		f := c.fields[name]
		if f == nil || !strings.HasPrefix(f.Type, "string") || !f.indexed() {
			return nil, errorf(http.StatusBadRequest, "Could not find a field named `%s` in the schema.", name)
		}
		if len(weights) <= i {
			weights = append(weights, 1)
		}
	}
	facetBy := splitList(p.FacetBy)
	for _, name := range facetBy {
		if f := c.fields[name]; f == nil || !f.Facet {
			return nil, errorf(http.StatusNotFound, "Could not find a facet field named `%s` in the schema.", name)
		}
	}
	if err := c.checkSort(p.SortBy); err != nil {
		return nil, err
	}
	include, exclude := splitList(p.IncludeFields), splitList(p.ExcludeFields)

	var hits []scored
	switch {
	case vq != nil:
		qv := normalize(vq.vec)
		for _, d := range c.docs {
			if d.vec == nil || !c.match(fl, d) {
				continue
			}
			hits = append(hits, scored{d: d, dist: 1 - dot(qv, d.vec)})
		}
		slices.SortFunc(hits, func(a, b scored) int {
			return cmp.Or(cmp.Compare(a.dist, b.dist), cmp.Compare(a.d.seq, b.d.seq))
		})
		k := vq.k
		if k == 0 {
			k = perPage * page
		}
		if len(hits) > k {
			hits = hits[:k]
		}
	case q == "*":
		for _, d := range c.docs {
			if c.match(fl, d) {
				hits = append(hits, scored{d: d})
			}
		}
		c.sortBy(hits, p.SortBy)
	default:
		threshold := 1
		if p.DropTokensThreshold != nil {
			threshold = *p.DropTokensThreshold
		}
		hits = c.keyword(q, queryBy, weights, fl, threshold, p.DropTokensMode)
	}

	facets := []any{}
	for _, name := range facetBy {
		facets = append(facets, c.facet(name, hits, p.MaxFacetValues))
	}
	found := len(hits)
	from := min((page-1)*perPage, len(hits))
	to := min(from+perPage, len(hits))
	out := []any{}
	for _, h := range hits[from:to] {
		hit := map[string]any{"document": h.d.view(include, exclude), "highlight": map[string]any{}, "highlights": []any{}}
		if vq != nil {
			hit["vector_distance"] = h.dist
		} else if q != "*" {
			hit["text_match"] = h.textMatch
			hit["text_match_info"] = map[string]any{"score": strconv.FormatInt(h.textMatch, 10)}
		}
		out = append(out, hit)
	}
	return map[string]any{
		"found": found, "out_of": len(c.docs), "page": page, "hits": out, "facet_counts": facets,
		"search_time_ms": 0, "search_cutoff": false,
		"request_params": map[string]any{"collection_name": c.Name, "per_page": perPage, "q": q},
	}, nil
}

func dot(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

// checkSort validates sort_by: at most three clauses of _text_match or a
// sortable field, each :asc or :desc.
func (c *collection) checkSort(s string) *apiError {
	parts := splitList(s)
	if len(parts) > 3 {
		return errorf(http.StatusBadRequest, "Only upto 3 sort_by fields can be specified.")
	}
	for _, p := range parts {
		name, dir, ok := strings.Cut(p, ":")
		if !ok || (dir != "asc" && dir != "desc") {
			return errorf(http.StatusBadRequest, "Order for sort_by field `%s` must be `asc` or `desc`.", name)
		}
		if name == "_text_match" || name == "_seq_id" {
			continue
		}
		f := c.fields[name]
		if f == nil || !(f.Sort || f.Type == "int32" || f.Type == "int64" || f.Type == "float") {
			return errorf(http.StatusNotFound, "Could not find a field named `%s` in the schema for sorting.", name)
		}
	}
	return nil
}

// sortBy orders wildcard hits by sort_by (insertion order by default).
func (c *collection) sortBy(hits []scored, s string) {
	parts := splitList(s)
	slices.SortFunc(hits, func(a, b scored) int {
		for _, p := range parts {
			name, dir, _ := strings.Cut(p, ":")
			var r int
			switch {
			case name == "_seq_id" || name == "_text_match":
				r = cmp.Compare(a.d.seq, b.d.seq)
			default:
				r = compareValues(a.d.raw[name], b.d.raw[name])
			}
			if dir == "desc" {
				r = -r
			}
			if r != 0 {
				return r
			}
		}
		return cmp.Compare(a.d.seq, b.d.seq)
	})
}

func compareValues(a, b any) int {
	switch x := a.(type) {
	case json.Number:
		y, _ := b.(json.Number)
		fa, _ := x.Float64()
		fb, _ := y.Float64()
		return cmp.Compare(fa, fb)
	case string:
		y, _ := b.(string)
		return cmp.Compare(x, y)
	}
	return 0
}

// keyword matches the query's tokens in the query_by fields. Like the
// real server it first wants documents holding every token and, while it
// has found fewer than threshold, drops tokens from the right (or the
// left) and searches again, ranking documents that matched more tokens
// first. Within a round, documents are ordered by a BM25-like score of
// term frequency and field weight, then by insertion.
//
// One pass does every round: a document first matches the round whose
// tokens are the longest run of the query (from the kept side) that it
// holds entirely.
func (c *collection) keyword(q string, queryBy []string, weights []float64, fl filter, threshold int, mode string) []scored {
	toks := c.tokenize(q, false)
	if len(toks) == 0 {
		return nil
	}
	if mode == "left_to_right" {
		slices.Reverse(toks) // keep the right end: drop from the left
	}
	// The query's tokens as each field indexes them.
	fieldToks := make([][]string, len(queryBy))
	for i, name := range queryBy {
		fieldToks[i] = make([]string, len(toks))
		for j, t := range toks {
			if c.fields[name].Stem {
				t = c.stem(t)
			}
			fieldToks[i][j] = t
		}
	}
	rounds := make([][]scored, len(toks)+1) // by tokens matched
	for _, d := range c.docs {
		n, score := 0, 0.0
		for j := range toks {
			found := false
			for i, name := range queryBy {
				if tf := d.tokens[name][fieldToks[i][j]]; tf > 0 {
					found = true
					l := float64(d.length[name])
					score += weights[i] * float64(tf) * 2.2 / (float64(tf) + 1.2*(0.25+0.75*l/20))
				}
			}
			if !found {
				break
			}
			n++
		}
		if n == 0 || !c.match(fl, d) {
			continue
		}
		rounds[n] = append(rounds[n], scored{d: d, textMatch: int64(n)<<40 | int64(math.Min(score*1e6, 1<<39))})
	}
	var out []scored
	for n := len(toks); n >= 1; n-- {
		slices.SortFunc(rounds[n], func(a, b scored) int {
			return cmp.Or(cmp.Compare(b.textMatch, a.textMatch), cmp.Compare(a.d.seq, b.d.seq))
		})
		out = append(out, rounds[n]...)
		if len(out) >= threshold {
			break
		}
	}
	return out
}

// facet counts the values of a facet field over every hit.
func (c *collection) facet(name string, hits []scored, maxValues *int) map[string]any {
	counts := map[string]int{}
	for _, h := range hits {
		switch v := h.d.raw[name].(type) {
		case string:
			counts[v]++
		case []any:
			for _, x := range v {
				if s, ok := x.(string); ok {
					counts[s]++
				}
			}
		case json.Number:
			counts[v.String()]++
		case bool:
			counts[strconv.FormatBool(v)]++
		}
	}
	type fc struct {
		v string
		n int
	}
	var list []fc
	for v, n := range counts {
		list = append(list, fc{v, n})
	}
	slices.SortFunc(list, func(a, b fc) int { return cmp.Or(cmp.Compare(b.n, a.n), cmp.Compare(a.v, b.v)) })
	limit := 10
	if maxValues != nil {
		limit = *maxValues
	}
	total := len(list)
	if len(list) > limit {
		list = list[:limit]
	}
	out := []any{}
	for _, x := range list {
		out = append(out, map[string]any{"value": x.v, "count": x.n, "highlighted": x.v})
	}
	return map[string]any{"field_name": name, "counts": out, "sampled": false, "stats": map[string]any{"total_values": total}}
}
