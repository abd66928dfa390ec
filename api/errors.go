package api

import (
	"net/http"
	"strconv"
	"time"
)

// Error codes: the stable "error" field of every error response. Clients
// branch on the code; the message is for people and may change.
const (
	// CodeInvalidJSON: the body is not one JSON object of the right shape.
	CodeInvalidJSON = "invalid_json"
	// CodeUnknownField: the object has a field the endpoint does not take.
	CodeUnknownField = "unknown_field"
	// CodeTrailingData: more follows the JSON object.
	CodeTrailingData = "trailing_data"
	// CodeEmptyQuestion: the question is blank.
	CodeEmptyQuestion = "empty_question"
	// CodeBodyTooLarge: the body is over the limit (413).
	CodeBodyTooLarge = "body_too_large"
	// CodeUnsupportedMediaType: a body that is not JSON, sent without a
	// JSON Content-Type (415).
	CodeUnsupportedMediaType = "unsupported_media_type"
	// CodeNotReady: the first sync of an empty index is still running
	// (503 with Retry-After).
	CodeNotReady = "not_ready"
	// CodeOverloaded: too many questions are waiting; the request was
	// refused before any work was done (503 with Retry-After).
	CodeOverloaded = "overloaded"
	// CodeOutOfScope: the filter names a source or label outside the
	// token's scope (403).
	CodeOutOfScope = "out_of_scope"
	// CodeNotFound: no such route (404).
	CodeNotFound = "not_found"
	// CodeMethodNotAllowed: the route exists for other methods (405).
	CodeMethodNotAllowed = "method_not_allowed"
	// CodeAnswerFailed: making the answer failed (500); the body is an
	// AskFailure naming the stage and the stored turn, never internals.
	CodeAnswerFailed = "answer_failed"
	// CodeStorageUnavailable: the answer could not be stored (a full
	// disk, an I/O error), so none is given (503 with Retry-After); the
	// body is an AskFailure with stage "store". /readyz fails too once
	// writes keep failing.
	CodeStorageUnavailable = "storage_unavailable"
)

// ErrorResponse is the JSON body of every error response.
type ErrorResponse struct {
	// Code is one of the Code constants.
	Code string `json:"error"`
	// Message says what went wrong, for people.
	Message string `json:"message"`
}

// apiError is an error response to send.
type apiError struct {
	status     int
	code       string
	msg        string
	retryAfter time.Duration // sets Retry-After when positive
}

func (e *apiError) write(w http.ResponseWriter) {
	if e.retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int((e.retryAfter+time.Second-1)/time.Second)))
	}
	writeJSON(w, e.status, ErrorResponse{Code: e.code, Message: e.msg})
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	(&apiError{status: status, code: code, msg: msg}).write(w)
}

// routeErrors answers requests that match no route (404, or 405 with the
// Allow header) with a JSON error instead of the mux's plain text.
func routeErrors(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h, pattern := mux.Handler(r)
		if pattern != "" {
			mux.ServeHTTP(w, r)
			return
		}
		// Ask the mux's own fallback which status it would send.
		probe := &statusProbe{header: http.Header{}}
		h.ServeHTTP(probe, r)
		if allow := probe.header.Get("Allow"); allow != "" {
			w.Header().Set("Allow", allow)
		}
		switch probe.status {
		case http.StatusMethodNotAllowed:
			writeError(w, probe.status, CodeMethodNotAllowed, r.Method+" is not allowed here")
		case http.StatusNotFound:
			writeError(w, probe.status, CodeNotFound, "no such endpoint")
		default: // a redirect to the cleaned path
			for k, v := range probe.header {
				w.Header()[k] = v
			}
			w.WriteHeader(probe.status)
		}
	})
}

// statusProbe records the status and headers a handler sends.
type statusProbe struct {
	header http.Header
	status int
}

func (p *statusProbe) Header() http.Header { return p.header }
func (p *statusProbe) Write(b []byte) (int, error) {
	if p.status == 0 {
		p.status = http.StatusOK
	}
	return len(b), nil
}
func (p *statusProbe) WriteHeader(status int) {
	if p.status == 0 {
		p.status = status
	}
}
