// Package llmtest holds what the provider and pipeline tests share:
// local HTTP servers that speak the Gemini REST API (generateContent,
// streamGenerateContent with server-sent events, batchEmbedContents,
// embedContent) and the OpenAI-compatible API (/v1/chat/completions with
// and without stream, /v1/embeddings) in their documented shapes, with
// injectable faults; and Scripted, a stand-in model that answers from
// the prompt it is sent as a grounded model would.
//
// The servers reject requests the real APIs would reject: unknown JSON
// fields, wrong paths and methods, a missing or wrong key, an embedding
// batch over the limit. Tests point the real vendor clients at them
// (genai's HTTPOptions.BaseURL, the OpenAI client's base URL), so the
// client code under test is the code that runs in production.
package llmtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Call is one request as a server read it.
type Call struct {
	// Endpoint is the API method: generateContent, streamGenerateContent,
	// batchEmbedContents, embedContent, chat/completions or embeddings.
	Endpoint string
	// Model is the model named by the path or body.
	Model string
	// System and Prompt are the system instruction and the user text of
	// a generation call.
	System, Prompt string
	// JSON is set when the call asked for a JSON reply.
	JSON bool
	// Stream is set for a streamed generation.
	Stream bool
	// Temperature is the temperature asked for, nil when none was sent.
	Temperature *float64
	// MaxTokens is the reply length asked for, 0 when none.
	MaxTokens int
	// Texts are the texts of an embedding call; TaskType and Dimensions
	// what it asked for (Gemini task type, output dimensionality).
	Texts      []string
	TaskType   string
	Dimensions int
	// Header holds the request headers.
	Header http.Header
	// Status is the HTTP status the server answered with.
	Status int
}

// Reply is a model's answer to a generation call.
type Reply struct {
	// Text is the reply text.
	Text string
	// Pieces, when set, are the chunks a streamed reply is sent in;
	// otherwise Text is cut into about four pieces at spaces.
	Pieces []string
}

// Fault makes the server fail one request (or every request).
type Fault struct {
	// Status is the HTTP status to answer with.
	Status int
	// Body is the raw body; "" means the provider's documented error body
	// for Status.
	Body string
	// RetryAfter, when set, asks the client to wait: Gemini's RetryInfo
	// retryDelay detail, or OpenAI's Retry-After header.
	RetryAfter time.Duration
}

// Malformed is a 200 reply whose body is not the documented JSON (cut off
// mid-object).
var Malformed = Fault{Status: http.StatusOK, Body: `{"candidates": [{"content": {"parts": [{"text": "cut`}

// Server is a local model server. Its fields may be set before the first
// request.
type Server struct {
	*httptest.Server
	// Chat answers generation calls; nil means Scripted.
	Chat func(Call) Reply
	// Embed returns one vector per text of an embedding call; nil means
	// HashVectors at the asked dimension (default 64).
	Embed func(Call) [][]float32
	// Key, when set, is the API key every request must carry.
	Key string

	flavor string
	mu     sync.Mutex
	calls  []Call
	queue  []Fault
	always *Fault
}

// NewGemini starts a server speaking the Gemini API under /v1beta/ and
// stops it when the test ends. Point genai at it with
// HTTPOptions.BaseURL = s.URL.
func NewGemini(tb testing.TB) *Server {
	s := &Server{flavor: "gemini"}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serveGemini))
	tb.Cleanup(s.Close)
	return s
}

// NewOpenAI starts a server speaking the OpenAI API under /v1/ and stops
// it when the test ends. Its base URL for clients is s.URL + "/v1".
func NewOpenAI(tb testing.TB) *Server {
	s := &Server{flavor: "openai"}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serveOpenAI))
	tb.Cleanup(s.Close)
	return s
}

// Fail makes the next requests fail, one fault each, in order.
func (s *Server) Fail(faults ...Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, faults...)
}

// FailAlways makes every request fail with f until Heal.
func (s *Server) FailAlways(f Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.always = &f
}

// Heal clears every pending fault.
func (s *Server) Heal() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue, s.always = nil, nil
}

// Calls returns the requests served so far, in order.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.calls...)
}

// CallsTo returns the requests to one endpoint.
func (s *Server) CallsTo(endpoint string) []Call {
	var out []Call
	for _, c := range s.Calls() {
		if c.Endpoint == endpoint {
			out = append(out, c)
		}
	}
	return out
}

func (s *Server) record(c Call) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, c)
}

// nextFault returns the fault for this request, if any.
func (s *Server) nextFault() *Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.queue) > 0 {
		f := s.queue[0]
		s.queue = s.queue[1:]
		return &f
	}
	return s.always
}

// fail answers the request with the pending fault, if any, and returns
// it: its raw body, or the provider's error body written by documented.
func (s *Server) fail(w http.ResponseWriter, documented func(*Fault)) *Fault {
	f := s.nextFault()
	switch {
	case f == nil:
	case f.Body != "":
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(f.Status)
		w.Write([]byte(f.Body))
	default:
		documented(f)
	}
	return f
}

func (s *Server) chat(c Call) Reply {
	if s.Chat != nil {
		return s.Chat(c)
	}
	return Scripted(c)
}

func (s *Server) embed(c Call) [][]float32 {
	if s.Embed != nil {
		return s.Embed(c)
	}
	dim := c.Dimensions
	if dim <= 0 {
		dim = 64
	}
	out := make([][]float32, len(c.Texts))
	for i, t := range c.Texts {
		out[i] = HashVector(t, dim)
	}
	return out
}

// pieces cuts a reply into stream chunks.
func pieces(r Reply) []string {
	if len(r.Pieces) > 0 {
		return r.Pieces
	}
	words := strings.SplitAfter(r.Text, " ")
	n := max(1, (len(words)+3)/4)
	var out []string
	for i := 0; i < len(words); i += n {
		out = append(out, strings.Join(words[i:min(i+n, len(words))], ""))
	}
	return out
}

// decodeStrict decodes a JSON body, rejecting unknown fields as the real
// APIs do.
func decodeStrict(body []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// HashVector is a deterministic bag-of-words embedding: the normalized sum
// of a pseudo-random vector per lower-cased word. Texts that share words
// get similar vectors, so retrieval over it behaves plausibly.
func HashVector(text string, dim int) []float32 {
	v := make([]float32, dim)
	for _, w := range wordRE.FindAllString(strings.ToLower(text), -1) {
		h := fnv.New64a()
		h.Write([]byte(w))
		r := rand.New(rand.NewPCG(h.Sum64(), 7))
		for i := range v {
			v[i] += float32(r.NormFloat64())
		}
	}
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	if s > 0 {
		inv := float32(1 / math.Sqrt(s))
		for i := range v {
			v[i] *= inv
		}
	}
	return v
}

var wordRE = regexp.MustCompile(`[\p{L}\p{N}]+(?:-[\p{L}\p{N}]+)*`)

// ---------------------------------------------------------------- Gemini

var geminiPath = regexp.MustCompile(`^/v1beta/models/([^/:]+):(generateContent|streamGenerateContent|batchEmbedContents|embedContent)$`)

type gPart struct {
	Text string `json:"text"`
}

type gContent struct {
	Role  string  `json:"role,omitempty"`
	Parts []gPart `json:"parts"`
}

// gGenerateRequest is a GenerateContentRequest with the fields docent's
// client may send; any other field is rejected.
type gGenerateRequest struct {
	Contents          []gContent `json:"contents"`
	SystemInstruction *gContent  `json:"systemInstruction,omitempty"`
	GenerationConfig  *struct {
		Temperature      *float64 `json:"temperature,omitempty"`
		MaxOutputTokens  int      `json:"maxOutputTokens,omitempty"`
		ResponseMIMEType string   `json:"responseMimeType,omitempty"`
		CandidateCount   int      `json:"candidateCount,omitempty"`
		TopP             *float64 `json:"topP,omitempty"`
		TopK             *float64 `json:"topK,omitempty"`
	} `json:"generationConfig,omitempty"`
	SafetySettings []json.RawMessage `json:"safetySettings,omitempty"`
}

type gEmbedRequest struct {
	Model                string   `json:"model,omitempty"`
	Content              gContent `json:"content"`
	TaskType             string   `json:"taskType,omitempty"`
	Title                string   `json:"title,omitempty"`
	OutputDimensionality int      `json:"outputDimensionality,omitempty"`
}

var geminiTaskTypes = map[string]bool{
	"": true, "TASK_TYPE_UNSPECIFIED": true, "RETRIEVAL_QUERY": true, "RETRIEVAL_DOCUMENT": true,
	"SEMANTIC_SIMILARITY": true, "CLASSIFICATION": true, "CLUSTERING": true, "QUESTION_ANSWERING": true,
	"FACT_VERIFICATION": true, "CODE_RETRIEVAL_QUERY": true,
}

// geminiStatus names the google.rpc status of an HTTP status.
func geminiStatus(code int) (string, string) {
	switch code {
	case 400:
		return "INVALID_ARGUMENT", "Request contains an invalid argument."
	case 403:
		return "PERMISSION_DENIED", "The caller does not have permission."
	case 404:
		return "NOT_FOUND", "Requested entity was not found."
	case 429:
		return "RESOURCE_EXHAUSTED", "Resource has been exhausted (e.g. check quota)."
	case 500:
		return "INTERNAL", "An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting"
	case 503:
		return "UNAVAILABLE", "The model is overloaded. Please try again later."
	case 504:
		return "DEADLINE_EXCEEDED", "The request timed out. Please try again."
	}
	return "UNKNOWN", http.StatusText(code)
}

func geminiError(w http.ResponseWriter, code int, msg string, retryAfter time.Duration) {
	status, def := geminiStatus(code)
	if msg == "" {
		msg = def
	}
	e := map[string]any{"code": code, "message": msg, "status": status}
	if retryAfter > 0 {
		e["details"] = []map[string]any{{
			"@type":      "type.googleapis.com/google.rpc.RetryInfo",
			"retryDelay": strconv.FormatFloat(retryAfter.Seconds(), 'f', -1, 64) + "s",
		}}
	}
	writeJSON(w, code, map[string]any{"error": e})
}

func (s *Server) serveGemini(w http.ResponseWriter, r *http.Request) {
	c := Call{Header: r.Header.Clone()}
	status := http.StatusOK
	defer func() { c.Status = status; s.record(c) }()
	m := geminiPath.FindStringSubmatch(r.URL.Path)
	if m == nil || r.Method != http.MethodPost {
		status = http.StatusNotFound
		geminiError(w, status, fmt.Sprintf("%s %s is not a Gemini API method", r.Method, r.URL.Path), 0)
		return
	}
	c.Model, c.Endpoint = m[1], m[2]
	if s.Key != "" && r.Header.Get("x-goog-api-key") != s.Key {
		status = http.StatusBadRequest
		geminiError(w, status, "API key not valid. Please pass a valid API key.", 0)
		return
	}
	if f := s.fail(w, func(f *Fault) { geminiError(w, f.Status, "", f.RetryAfter) }); f != nil {
		status = f.Status
		return
	}
	body := new(bytes.Buffer)
	body.ReadFrom(r.Body)
	switch c.Endpoint {
	case "generateContent", "streamGenerateContent":
		var req gGenerateRequest
		if err := decodeStrict(body.Bytes(), &req); err != nil {
			status = http.StatusBadRequest
			geminiError(w, status, "Invalid JSON payload received. "+err.Error(), 0)
			return
		}
		if len(req.Contents) == 0 {
			status = http.StatusBadRequest
			geminiError(w, status, "* GenerateContentRequest.contents: contents is not specified", 0)
			return
		}
		for _, p := range req.Contents[len(req.Contents)-1].Parts {
			c.Prompt += p.Text
		}
		if req.SystemInstruction != nil {
			for _, p := range req.SystemInstruction.Parts {
				c.System += p.Text
			}
		}
		if g := req.GenerationConfig; g != nil {
			c.Temperature, c.MaxTokens = g.Temperature, g.MaxOutputTokens
			c.JSON = g.ResponseMIMEType == "application/json"
		}
		c.Stream = c.Endpoint == "streamGenerateContent"
		reply := s.chat(c)
		usage := map[string]any{"promptTokenCount": tokens(c.System + c.Prompt), "candidatesTokenCount": tokens(reply.Text),
			"totalTokenCount": tokens(c.System+c.Prompt) + tokens(reply.Text)}
		cand := func(text, finish string) map[string]any {
			out := map[string]any{"content": map[string]any{"role": "model", "parts": []map[string]any{{"text": text}}}, "index": 0}
			if finish != "" {
				out["finishReason"] = finish
			}
			return out
		}
		if !c.Stream {
			writeJSON(w, http.StatusOK, map[string]any{"candidates": []any{cand(reply.Text, "STOP")},
				"usageMetadata": usage, "modelVersion": c.Model + "-001"})
			return
		}
		if r.URL.Query().Get("alt") != "sse" {
			status = http.StatusBadRequest
			geminiError(w, status, "this server streams only with alt=sse", 0)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		ps := pieces(reply)
		for i, p := range ps {
			ev := map[string]any{"candidates": []any{cand(p, "")}, "modelVersion": c.Model + "-001"}
			if i == len(ps)-1 {
				ev["candidates"] = []any{cand(p, "STOP")}
				ev["usageMetadata"] = usage
			}
			b, _ := json.Marshal(ev)
			fmt.Fprintf(w, "data: %s\r\n\r\n", b)
			w.(http.Flusher).Flush()
		}
	case "batchEmbedContents", "embedContent":
		var reqs []gEmbedRequest
		if c.Endpoint == "batchEmbedContents" {
			var req struct {
				Requests []gEmbedRequest `json:"requests"`
			}
			if err := decodeStrict(body.Bytes(), &req); err != nil {
				status = http.StatusBadRequest
				geminiError(w, status, "Invalid JSON payload received. "+err.Error(), 0)
				return
			}
			reqs = req.Requests
		} else {
			var req gEmbedRequest
			if err := decodeStrict(body.Bytes(), &req); err != nil {
				status = http.StatusBadRequest
				geminiError(w, status, "Invalid JSON payload received. "+err.Error(), 0)
				return
			}
			reqs = []gEmbedRequest{req}
		}
		if len(reqs) == 0 || len(reqs) > 100 {
			status = http.StatusBadRequest
			geminiError(w, status, fmt.Sprintf("* BatchEmbedContentsRequest.requests: at most 100 requests can be in one batch, got %d", len(reqs)), 0)
			return
		}
		for i, q := range reqs {
			if c.Endpoint == "batchEmbedContents" && q.Model != "models/"+c.Model {
				status = http.StatusBadRequest
				geminiError(w, status, fmt.Sprintf("* BatchEmbedContentsRequest.requests[%d].model: model %q differs from the batch's models/%s", i, q.Model, c.Model), 0)
				return
			}
			if !geminiTaskTypes[q.TaskType] {
				status = http.StatusBadRequest
				geminiError(w, status, fmt.Sprintf("Invalid value at 'requests[%d].task_type' (TYPE_ENUM), %q", i, q.TaskType), 0)
				return
			}
			text := ""
			for _, p := range q.Content.Parts {
				text += p.Text
			}
			c.Texts = append(c.Texts, text)
			c.TaskType, c.Dimensions = q.TaskType, q.OutputDimensionality
		}
		vecs := s.embed(c)
		if c.Endpoint == "embedContent" {
			writeJSON(w, http.StatusOK, map[string]any{"embedding": map[string]any{"values": vecs[0]}})
			return
		}
		embs := make([]map[string]any, len(vecs))
		for i, v := range vecs {
			embs[i] = map[string]any{"values": v}
		}
		writeJSON(w, http.StatusOK, map[string]any{"embeddings": embs})
	}
}

// tokens is a rough token count (words), for usage figures.
func tokens(s string) int { return len(strings.Fields(s)) }

// ---------------------------------------------------------------- OpenAI

// oChatRequest is a chat completion request with the fields an
// OpenAI-compatible client may send; any other field is rejected.
type oChatRequest struct {
	Model    string `json:"model"`
	Messages []struct {
		Role    string `json:"role"`
		Content string `json:"content"`
		Name    string `json:"name,omitempty"`
	} `json:"messages"`
	MaxTokens           int      `json:"max_tokens,omitempty"`
	MaxCompletionTokens int      `json:"max_completion_tokens,omitempty"`
	Temperature         *float64 `json:"temperature,omitempty"`
	TopP                *float64 `json:"top_p,omitempty"`
	N                   int      `json:"n,omitempty"`
	Stream              bool     `json:"stream"`
	StreamOptions       *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options,omitempty"`
	Stop           []string `json:"stop,omitempty"`
	Seed           *int     `json:"seed,omitempty"`
	User           string   `json:"user,omitempty"`
	ResponseFormat *struct {
		Type       string          `json:"type"`
		JSONSchema json.RawMessage `json:"json_schema,omitempty"`
	} `json:"response_format,omitempty"`
}

type oEmbedRequest struct {
	Model          string `json:"model"`
	Input          any    `json:"input"`
	EncodingFormat string `json:"encoding_format,omitempty"`
	Dimensions     int    `json:"dimensions,omitempty"`
	User           string `json:"user,omitempty"`
}

func openAIError(w http.ResponseWriter, code int, msg, typ string, retryAfter time.Duration) {
	if msg == "" {
		switch code {
		case 429:
			msg, typ = "Rate limit reached for requests. Please try again later.", "requests"
		case 500:
			msg, typ = "The server had an error while processing your request. Sorry about that!", "server_error"
		case 503:
			msg, typ = "The engine is currently overloaded, please try again later.", "server_error"
		default:
			msg, typ = http.StatusText(code), "server_error"
		}
	}
	if retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.FormatFloat(retryAfter.Seconds(), 'f', -1, 64))
	}
	writeJSON(w, code, map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": nil}})
}

func (s *Server) serveOpenAI(w http.ResponseWriter, r *http.Request) {
	c := Call{Header: r.Header.Clone()}
	status := http.StatusOK
	defer func() { c.Status = status; s.record(c) }()
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/chat/completions":
		c.Endpoint = "chat/completions"
	case r.Method == http.MethodPost && r.URL.Path == "/v1/embeddings":
		c.Endpoint = "embeddings"
	default:
		status = http.StatusNotFound
		openAIError(w, status, fmt.Sprintf("Invalid URL (%s %s)", r.Method, r.URL.Path), "invalid_request_error", 0)
		return
	}
	if s.Key != "" && r.Header.Get("Authorization") != "Bearer "+s.Key {
		status = http.StatusUnauthorized
		openAIError(w, status, "Incorrect API key provided.", "invalid_request_error", 0)
		return
	}
	if f := s.fail(w, func(f *Fault) { openAIError(w, f.Status, "", "", f.RetryAfter) }); f != nil {
		status = f.Status
		return
	}
	body := new(bytes.Buffer)
	body.ReadFrom(r.Body)
	if c.Endpoint == "embeddings" {
		var req oEmbedRequest
		if err := decodeStrict(body.Bytes(), &req); err != nil || req.Model == "" {
			status = http.StatusBadRequest
			openAIError(w, status, fmt.Sprintf("invalid embeddings request: %v", err), "invalid_request_error", 0)
			return
		}
		c.Model, c.Dimensions = req.Model, req.Dimensions
		switch in := req.Input.(type) {
		case string:
			c.Texts = []string{in}
		case []any:
			for _, x := range in {
				t, ok := x.(string)
				if !ok {
					status = http.StatusBadRequest
					openAIError(w, status, "'input' must be a string or an array of strings", "invalid_request_error", 0)
					return
				}
				c.Texts = append(c.Texts, t)
			}
		}
		if len(c.Texts) == 0 {
			status = http.StatusBadRequest
			openAIError(w, status, "'input' is empty", "invalid_request_error", 0)
			return
		}
		vecs := s.embed(c)
		data := make([]map[string]any, len(vecs))
		n := 0
		for i, v := range vecs {
			data[i] = map[string]any{"object": "embedding", "index": i, "embedding": v}
			n += tokens(c.Texts[i])
		}
		writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": data, "model": req.Model,
			"usage": map[string]any{"prompt_tokens": n, "total_tokens": n}})
		return
	}
	var req oChatRequest
	if err := decodeStrict(body.Bytes(), &req); err != nil || req.Model == "" || len(req.Messages) == 0 {
		status = http.StatusBadRequest
		openAIError(w, status, fmt.Sprintf("invalid chat request: %v", err), "invalid_request_error", 0)
		return
	}
	c.Model, c.Stream, c.Temperature = req.Model, req.Stream, req.Temperature
	c.MaxTokens = max(req.MaxTokens, req.MaxCompletionTokens)
	c.JSON = req.ResponseFormat != nil && (req.ResponseFormat.Type == "json_object" || req.ResponseFormat.Type == "json_schema")
	for _, m := range req.Messages {
		switch m.Role {
		case "system", "developer":
			c.System += m.Content
		case "user":
			c.Prompt = m.Content
		}
	}
	reply := s.chat(c)
	usage := map[string]any{"prompt_tokens": tokens(c.System + c.Prompt), "completion_tokens": tokens(reply.Text),
		"total_tokens": tokens(c.System+c.Prompt) + tokens(reply.Text)}
	created := time.Now().Unix()
	if !req.Stream {
		writeJSON(w, http.StatusOK, map[string]any{
			"id": "chatcmpl-test", "object": "chat.completion", "created": created, "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
				"message": map[string]any{"role": "assistant", "content": reply.Text}}},
			"usage": usage,
		})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	send := func(v any) {
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "data: %s\n\n", b)
		w.(http.Flusher).Flush()
	}
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{"id": "chatcmpl-test", "object": "chat.completion.chunk", "created": created, "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
	}
	send(chunk(map[string]any{"role": "assistant", "content": ""}, nil))
	for _, p := range pieces(reply) {
		send(chunk(map[string]any{"content": p}, nil))
	}
	send(chunk(map[string]any{}, "stop"))
	if req.StreamOptions != nil && req.StreamOptions.IncludeUsage {
		send(map[string]any{"id": "chatcmpl-test", "object": "chat.completion.chunk", "created": created,
			"model": req.Model, "choices": []any{}, "usage": usage})
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
}
