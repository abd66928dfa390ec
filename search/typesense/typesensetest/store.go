package typesensetest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/kljensen/snowball/english"
)

// apiError is a request the server refuses, with the status and message
// the real server answers with.
type apiError struct {
	status int
	msg    string
}

func (e *apiError) Error() string { return fmt.Sprintf("%d: %s", e.status, e.msg) }

func errorf(status int, format string, args ...any) *apiError {
	return &apiError{status: status, msg: fmt.Sprintf(format, args...)}
}

// field is one declared field of a collection schema.
type field struct {
	Name     string `json:"name"`
	Type     string `json:"type"`
	Facet    bool   `json:"facet"`
	Optional bool   `json:"optional"`
	Index    *bool  `json:"index,omitempty"`
	Sort     bool   `json:"sort"`
	Stem     bool   `json:"stem"`
	Infix    bool   `json:"infix"`
	Locale   string `json:"locale"`
	NumDim   int    `json:"num_dim,omitempty"`
	VecDist  string `json:"vec_dist,omitempty"`
	Embed    *struct {
		From        []string `json:"from"`
		ModelConfig struct {
			ModelName string `json:"model_name"`
		} `json:"model_config"`
	} `json:"embed,omitempty"`
}

func (f *field) indexed() bool { return f.Index == nil || *f.Index }

// schema is a collection as created.
type schema struct {
	Name            string         `json:"name"`
	Fields          []field        `json:"fields"`
	TokenSeparators []string       `json:"token_separators,omitempty"`
	SymbolsToIndex  []string       `json:"symbols_to_index,omitempty"`
	Metadata        map[string]any `json:"metadata,omitempty"`
	DefaultSorting  string         `json:"default_sorting_field,omitempty"`
}

// supportedTypes are the field types this server implements; the real
// server has more, which docent does not use.
var supportedTypes = []string{"string", "string[]", "int32", "int64", "float", "bool", "float[]"}

// collection holds the documents of one collection.
type collection struct {
	schema
	created int64
	fields  map[string]*field
	seps    []rune
	docs    map[string]*document
	seq     int64
	stems   map[string]string // memo of the stemmer
}

// document is a stored document with its analysed fields.
type document struct {
	id     string
	seq    int64
	raw    map[string]any            // as imported (json.Number for numbers)
	tokens map[string]map[string]int // term frequencies by field
	length map[string]int            // tokens by field
	vec    []float32                 // normalized, for the float[] field
}

func (d *document) setTokens(field string, toks []string) {
	tf := make(map[string]int, len(toks))
	for _, t := range toks {
		tf[t]++
	}
	d.tokens[field] = tf
	d.length[field] = len(toks)
}

func newCollection(s schema, now int64) (*collection, *apiError) {
	if s.Name == "" {
		return nil, errorf(http.StatusBadRequest, "Parameter `name` is required.")
	}
	if len(s.Fields) == 0 {
		return nil, errorf(http.StatusBadRequest, "Parameter `fields` is required.")
	}
	c := &collection{schema: s, created: now, fields: map[string]*field{}, docs: map[string]*document{}, stems: map[string]string{}}
	for i := range c.Fields {
		f := &c.Fields[i]
		if f.Name == "" {
			return nil, errorf(http.StatusBadRequest, "Field name cannot be empty.")
		}
		if _, dup := c.fields[f.Name]; dup {
			return nil, errorf(http.StatusBadRequest, "There are duplicate field names in the schema.")
		}
		if !slices.Contains(supportedTypes, f.Type) {
			return nil, errorf(http.StatusBadRequest, "Field `%s` has an invalid data type `%s`.", f.Name, f.Type)
		}
		switch {
		case f.Type == "float[]" && f.NumDim == 0 && f.Embed == nil:
			// A plain float array field: allowed, not a vector.
		case f.NumDim < 0:
			return nil, errorf(http.StatusBadRequest, "Property `num_dim` must be a positive integer.")
		case f.NumDim > 0 && f.Type != "float[]":
			return nil, errorf(http.StatusBadRequest, "Property `num_dim` is only allowed on a float array field.")
		}
		if f.Type == "float[]" && (f.NumDim > 0 || f.Embed != nil) && (f.Facet || f.Sort) {
			return nil, errorf(http.StatusBadRequest, "Vector field `%s` cannot be a facet or sort field.", f.Name)
		}
		if f.VecDist != "" && f.VecDist != "cosine" && f.VecDist != "ip" {
			return nil, errorf(http.StatusBadRequest, "Property `vec_dist` must be `cosine` or `ip`.")
		}
		if f.Stem && !strings.HasPrefix(f.Type, "string") {
			return nil, errorf(http.StatusBadRequest, "Property `stem` is only allowed on string fields.")
		}
		if f.Sort && strings.HasSuffix(f.Type, "[]") {
			return nil, errorf(http.StatusBadRequest, "Property `sort` is not allowed on an array field.")
		}
		if f.Embed != nil {
			for _, from := range f.Embed.From {
				if src := c.fields[from]; src == nil || !strings.HasPrefix(src.Type, "string") {
					return nil, errorf(http.StatusBadRequest, "Property `embed.from` can only refer to string fields declared before it.")
				}
			}
			if f.Embed.ModelConfig.ModelName == "" {
				return nil, errorf(http.StatusBadRequest, "Property `model_config.model_name` is required.")
			}
		}
		c.fields[f.Name] = f
	}
	for _, s := range s.TokenSeparators {
		r := []rune(s)
		if len(r) != 1 {
			return nil, errorf(http.StatusBadRequest, "Token separators must be single characters.")
		}
		c.seps = append(c.seps, r[0])
	}
	return c, nil
}

// vectorField returns the collection's vector field, or nil.
func (c *collection) vectorField(name string) *field {
	f := c.fields[name]
	if f == nil || f.Type != "float[]" || (f.NumDim == 0 && f.Embed == nil) {
		return nil
	}
	return f
}

// put validates raw and stores it (action create, upsert, update or
// emplace), returning the stored document's id.
func (c *collection) put(raw map[string]any, action string) (string, *apiError) {
	id := ""
	if v, ok := raw["id"]; ok {
		s, ok := v.(string)
		if !ok {
			return "", errorf(http.StatusBadRequest, "Document's `id` field should be a string.")
		}
		id = s
	}
	if id == "" {
		if action == "update" {
			return "", errorf(http.StatusBadRequest, "For update, the `id` key must be provided.")
		}
		c.seq++
		id = strconv.FormatInt(c.seq, 10)
		raw["id"] = id
	}
	old := c.docs[id]
	switch action {
	case "create":
		if old != nil {
			return id, errorf(http.StatusConflict, "A document with id %s already exists.", id)
		}
	case "update":
		if old == nil {
			return id, errorf(http.StatusNotFound, "Could not find a document with id: %s", id)
		}
	}
	if (action == "update" || action == "emplace") && old != nil {
		merged := make(map[string]any, len(old.raw))
		for k, v := range old.raw {
			merged[k] = v
		}
		for k, v := range raw {
			merged[k] = v
		}
		raw = merged
	}
	d := &document{id: id, raw: raw, tokens: map[string]map[string]int{}, length: map[string]int{}}
	for _, f := range c.Fields {
		v, ok := raw[f.Name]
		if !ok || v == nil {
			if f.Embed != nil {
				continue // the server's model would fill it in
			}
			if !f.Optional {
				return id, errorf(http.StatusBadRequest, "Field `%s` has been declared in the schema, but is not found in the document.", f.Name)
			}
			continue
		}
		if err := c.checkValue(&f, v, d); err != nil {
			return id, err
		}
	}
	if old != nil {
		d.seq = old.seq
	} else {
		c.seq++
		d.seq = c.seq
	}
	c.docs[id] = d
	return id, nil
}

func (c *collection) checkValue(f *field, v any, d *document) *apiError {
	bad := func(what string) *apiError {
		return errorf(http.StatusBadRequest, "Field `%s` must be %s.", f.Name, what)
	}
	switch f.Type {
	case "string":
		s, ok := v.(string)
		if !ok {
			return bad("a string")
		}
		if f.indexed() {
			d.setTokens(f.Name, c.tokenize(s, f.Stem))
		}
	case "string[]":
		arr, ok := v.([]any)
		if !ok {
			return bad("an array of strings")
		}
		var toks []string
		for _, x := range arr {
			s, ok := x.(string)
			if !ok {
				return bad("an array of strings")
			}
			if f.indexed() {
				toks = append(toks, c.tokenize(s, f.Stem)...)
			}
		}
		d.setTokens(f.Name, toks)
	case "int32", "int64":
		n, ok := v.(json.Number)
		if !ok {
			return bad("an " + f.Type)
		}
		i, err := strconv.ParseInt(n.String(), 10, 64)
		if err != nil || (f.Type == "int32" && (i > math.MaxInt32 || i < math.MinInt32)) {
			return bad("an " + f.Type)
		}
	case "float":
		if _, ok := v.(json.Number); !ok {
			return bad("a float")
		}
	case "bool":
		if _, ok := v.(bool); !ok {
			return bad("a bool")
		}
	case "float[]":
		arr, ok := v.([]any)
		if !ok {
			return bad("an array of floats")
		}
		vec := make([]float32, len(arr))
		for i, x := range arr {
			n, ok := x.(json.Number)
			if !ok {
				return bad("an array of floats")
			}
			fl, err := n.Float64()
			if err != nil {
				return bad("an array of floats")
			}
			vec[i] = float32(fl)
		}
		if f.NumDim > 0 {
			if len(vec) != f.NumDim {
				return errorf(http.StatusBadRequest, "Field `%s` must have %d dimensions.", f.Name, f.NumDim)
			}
			d.vec = normalize(vec)
		}
	}
	return nil
}

func normalize(v []float32) []float32 {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	out := make([]float32, len(v))
	if n == 0 {
		return out
	}
	s := 1 / math.Sqrt(n)
	for i, x := range v {
		out[i] = float32(float64(x) * s)
	}
	return out
}

// tokenize splits s the way the real server's default tokenizer does for
// docent's fields: lower-cased, split on white space and the collection's
// token separators, other special characters dropped from inside a token;
// stemmed with the Snowball English stemmer on fields declared stem.
func (c *collection) tokenize(s string, stem bool) []string {
	var out []string
	var cur strings.Builder
	flush := func() {
		if cur.Len() == 0 {
			return
		}
		t := cur.String()
		cur.Reset()
		if stem {
			t = c.stem(t)
		}
		out = append(out, t)
	}
	for _, r := range strings.ToLower(s) {
		switch {
		case unicode.IsSpace(r) || slices.Contains(c.seps, r):
			flush()
		case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r):
			cur.WriteRune(r)
		}
	}
	flush()
	return out
}

// stem is the Snowball English stem of t, memoized.
func (c *collection) stem(t string) string {
	s, ok := c.stems[t]
	if !ok {
		s = english.Stem(t, false)
		if len(c.stems) < 1<<20 {
			c.stems[t] = s
		}
	}
	return s
}

// view returns the document as the API shows it, with include/exclude
// fields applied.
func (d *document) view(include, exclude []string) map[string]any {
	if len(include) > 0 {
		out := make(map[string]any, len(include))
		for _, k := range include {
			if v, ok := d.raw[k]; ok && !slices.Contains(exclude, k) {
				out[k] = v
			}
		}
		return out
	}
	out := make(map[string]any, len(d.raw))
	for k, v := range d.raw {
		if len(include) > 0 && !slices.Contains(include, k) {
			continue
		}
		if slices.Contains(exclude, k) {
			continue
		}
		out[k] = v
	}
	return out
}

// decodeDoc parses one JSON document, keeping numbers exact.
func decodeDoc(line []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("trailing data")
	}
	if m == nil {
		return nil, fmt.Errorf("not an object")
	}
	return m, nil
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
