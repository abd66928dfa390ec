package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
)

// maxAskBody is the largest POST /api/ask body read.
const maxAskBody = 64 << 10

// readAsk reads and decodes the body of POST /api/ask.
func readAsk(w http.ResponseWriter, r *http.Request) (AskRequest, *apiError) {
	body, aerr := readBody(w, r, maxAskBody)
	if aerr != nil {
		return AskRequest{}, aerr
	}
	return parseAsk(body, r.Header.Get("Content-Type"))
}

// parseAsk decodes exactly one JSON object with only AskRequest's fields.
func parseAsk(body []byte, contentType string) (AskRequest, *apiError) {
	req, aerr := decodeStrict[AskRequest](body, contentType, `{"question": "..."}`)
	if aerr != nil {
		return req, aerr
	}
	if strings.TrimSpace(req.Question) == "" {
		return req, &apiError{status: http.StatusBadRequest, code: CodeEmptyQuestion, msg: "question is empty"}
	}
	return req, nil
}

// readBody reads a request body of at most limit bytes.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, *apiError) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return nil, &apiError{status: http.StatusRequestEntityTooLarge, code: CodeBodyTooLarge,
			msg: "request body is over the limit of " + strconv.FormatInt(limit>>10, 10) + " KiB"}
	}
	if err != nil {
		return nil, &apiError{status: http.StatusBadRequest, code: CodeInvalidJSON, msg: "cannot read request body"}
	}
	return body, nil
}

// decodeStrict decodes exactly one JSON object with only T's fields. A
// body that is not JSON at all is a 415 when the Content-Type does not
// say JSON either (a form post, say), and a 400 when it does; a JSON body
// is accepted whatever the Content-Type (curl -d sends a form type).
// example is the shape the error messages suggest.
func decodeStrict[T any](body []byte, contentType, example string) (T, *apiError) {
	var req T
	bad := func(code, msg string) (T, *apiError) {
		return req, &apiError{status: http.StatusBadRequest, code: code, msg: msg}
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		var syntax *json.SyntaxError
		notJSON := errors.As(err, &syntax) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
		switch {
		case notJSON && !isJSONType(contentType):
			return req, &apiError{status: http.StatusUnsupportedMediaType, code: CodeUnsupportedMediaType,
				msg: "send a JSON object such as " + example + " with Content-Type: application/json"}
		case errors.Is(err, io.EOF):
			return bad(CodeInvalidJSON, "invalid request body: empty; send "+example)
		case strings.HasPrefix(err.Error(), "json: unknown field "):
			return bad(CodeUnknownField, "invalid request body: "+err.Error())
		}
		return bad(CodeInvalidJSON, "invalid request body: "+err.Error())
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return bad(CodeTrailingData, "invalid request body: data after the JSON object")
	}
	return req, nil
}

// isJSONType reports whether a Content-Type names JSON
// (application/json or a +json type).
func isJSONType(contentType string) bool {
	t, _, err := mime.ParseMediaType(contentType)
	return err == nil && (t == "application/json" || strings.HasSuffix(t, "+json"))
}
