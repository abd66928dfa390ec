package api

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/store"
)

// FeedbackStore stores ratings of turns; *store.DB implements it.
type FeedbackStore interface {
	// Turn returns a stored turn, or an error wrapping store.ErrNotFound.
	Turn(ctx context.Context, id int64) (docent.Turn, error)
	// CreateFeedback stores a rating and sets its ID; an unknown turn is
	// an error wrapping store.ErrNotFound.
	CreateFeedback(ctx context.Context, f *docent.Feedback) error
}

// FeedbackRequest is the body of POST /api/feedback.
type FeedbackRequest struct {
	// TurnID is the turn rated: the turn_id /api/ask returned (required).
	TurnID int64 `json:"turn_id"`
	// Helpful is the verdict (required): false puts the turn in the
	// console's Misses inbox.
	Helpful *bool `json:"helpful"`
	// Reason is optional free text, at most MaxFeedbackReason characters.
	Reason string `json:"reason,omitempty"`
}

// FeedbackResponse is the reply of POST /api/feedback.
type FeedbackResponse struct {
	// ID is the stored rating; TurnID the turn rated; Rating helpful or
	// not_helpful.
	ID     int64         `json:"id"`
	TurnID int64         `json:"turn_id"`
	Rating docent.Rating `json:"rating"`
}

// MaxFeedbackReason is the longest reason taken, in characters.
const MaxFeedbackReason = 2000

// maxFeedbackBody is the largest POST /api/feedback body read.
const maxFeedbackBody = 16 << 10

// Error codes of POST /api/feedback.
const (
	// CodeInvalidFeedback: turn_id or helpful is missing, or the reason
	// is too long (400).
	CodeInvalidFeedback = "invalid_feedback"
	// CodeTurnNotFound: no such turn, or (with a token) not a turn this
	// token asked (404).
	CodeTurnNotFound = "turn_not_found"
)

// feedback answers POST /api/feedback: a rating of a turn, stored as a
// chat button's is. The token rules are /api/ask's (the guard in front
// checks the token and charges its rate); a token rates only the turns
// it asked, and another turn is a 404 as if it did not exist.
func (s *Server) feedback(w http.ResponseWriter, r *http.Request) {
	if s.fb == nil {
		writeError(w, http.StatusNotFound, CodeNotFound, "no such endpoint")
		return
	}
	body, aerr := readBody(w, r, maxFeedbackBody)
	if aerr != nil {
		aerr.write(w)
		return
	}
	req, aerr := decodeStrict[FeedbackRequest](body, r.Header.Get("Content-Type"), `{"turn_id": 12, "helpful": false}`)
	if aerr != nil {
		aerr.write(w)
		return
	}
	req.Reason = strings.TrimSpace(req.Reason)
	switch {
	case req.TurnID <= 0:
		writeError(w, http.StatusBadRequest, CodeInvalidFeedback, "turn_id is required: the turn_id /api/ask returned")
		return
	case req.Helpful == nil:
		writeError(w, http.StatusBadRequest, CodeInvalidFeedback, "helpful is required: true or false")
		return
	case utf8.RuneCountInString(req.Reason) > MaxFeedbackReason:
		writeError(w, http.StatusBadRequest, CodeInvalidFeedback, "reason is over "+strconv.Itoa(MaxFeedbackReason)+" characters")
		return
	}
	notFound := func() {
		writeError(w, http.StatusNotFound, CodeTurnNotFound, "no turn "+strconv.FormatInt(req.TurnID, 10)+" to rate")
	}
	turn, err := s.fb.Turn(r.Context(), req.TurnID)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			notFound()
			return
		}
		s.feedbackFailed(w, r, err)
		return
	}
	f := docent.Feedback{TurnID: req.TurnID, Rating: docent.RatingNotHelpful, Reason: req.Reason, Platform: "api"}
	if *req.Helpful {
		f.Rating = docent.RatingHelpful
	}
	if c, ok := docent.CallerFromContext(r.Context()); ok {
		if !askedBy(turn, c) {
			notFound()
			return
		}
		f.User = c.Name
	}
	if err := s.fb.CreateFeedback(r.Context(), &f); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			notFound() // the turn was pruned meanwhile
			return
		}
		s.feedbackFailed(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, FeedbackResponse{ID: f.ID, TurnID: f.TurnID, Rating: f.Rating})
}

// askedBy reports whether the turn was asked with the caller's token:
// through the API or MCP, under the token's name.
func askedBy(t docent.Turn, c docent.Caller) bool {
	return (t.Question.Platform == "api" || t.Question.Platform == "mcp") && t.Question.User == c.Name
}

// feedbackFailed answers a store failure: 503 when the database cannot
// take writes, 500 otherwise; the detail goes to the log.
func (s *Server) feedbackFailed(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, docent.ErrStorageUnavailable) {
		w.Header().Set("Retry-After", strconv.Itoa(int(retryStorage.Seconds())))
		writeError(w, http.StatusServiceUnavailable, CodeStorageUnavailable, "the rating could not be stored: the database cannot take writes; retry later")
		return
	}
	s.log.ErrorContext(r.Context(), "api: feedback", slog.Any("error", err))
	writeError(w, http.StatusInternalServerError, "internal", "Internal error.")
}
