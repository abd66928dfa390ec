package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"
)

// maxAskBody is the largest POST /api/ask body read.
const maxAskBody = 64 << 10

// readAsk reads and decodes the body of POST /api/ask.
func readAsk(w http.ResponseWriter, r *http.Request) (AskRequest, *apiError) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxAskBody))
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return AskRequest{}, &apiError{status: http.StatusRequestEntityTooLarge, code: CodeBodyTooLarge,
			msg: "request body is over the limit of 64 KiB"}
	}
	if err != nil {
		return AskRequest{}, &apiError{status: http.StatusBadRequest, code: CodeInvalidJSON, msg: "cannot read request body"}
	}
	return parseAsk(body, r.Header.Get("Content-Type"))
}

// parseAsk decodes exactly one JSON object with only AskRequest's fields.
// A body that is not JSON at all is a 415 when the Content-Type does not
// say JSON either (a form post, say), and a 400 when it does; a JSON body
// is accepted whatever the Content-Type (curl -d sends a form type).
func parseAsk(body []byte, contentType string) (AskRequest, *apiError) {
	bad := func(code, msg string) (AskRequest, *apiError) {
		return AskRequest{}, &apiError{status: http.StatusBadRequest, code: code, msg: msg}
	}
	var req AskRequest
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		var syntax *json.SyntaxError
		notJSON := errors.As(err, &syntax) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
		switch {
		case notJSON && !isJSONType(contentType):
			return AskRequest{}, &apiError{status: http.StatusUnsupportedMediaType, code: CodeUnsupportedMediaType,
				msg: `send a JSON object such as {"question": "..."} with Content-Type: application/json`}
		case errors.Is(err, io.EOF):
			return bad(CodeInvalidJSON, `invalid request body: empty; send {"question": "..."}`)
		case strings.HasPrefix(err.Error(), "json: unknown field "):
			return bad(CodeUnknownField, "invalid request body: "+err.Error())
		}
		return bad(CodeInvalidJSON, "invalid request body: "+err.Error())
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return bad(CodeTrailingData, "invalid request body: data after the JSON object")
	}
	if strings.TrimSpace(req.Question) == "" {
		return bad(CodeEmptyQuestion, "question is empty")
	}
	return req, nil
}

// isJSONType reports whether a Content-Type names JSON
// (application/json or a +json type).
func isJSONType(contentType string) bool {
	t, _, err := mime.ParseMediaType(contentType)
	return err == nil && (t == "application/json" || strings.HasSuffix(t, "+json"))
}
