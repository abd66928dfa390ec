// Package llm holds what every language-model provider shares: the small
// Model contract the model-backed answer stages call, retries with
// backoff, the grounded prompt, and the stages themselves — a Generator,
// a Rewriter, a Reranker and a Judge — that implement the answer and eval
// contracts over any Model.
//
// Providers are thin packages that implement Model (and search.Embedder)
// on a vendor client: llm/gemini on google.golang.org/genai, llm/openai on
// an OpenAI-compatible client (OpenAI, Ollama, vLLM, LM Studio). Nothing
// here talks HTTP.
package llm

import (
	"context"
	"errors"

	"github.com/docent-hq/docent/answer"
)

// Model is a chat model the stages send one prompt to. Implementations
// retry transient failures themselves (see Retry) and wrap what they give
// up on in ErrUnavailable or ErrRateLimited.
type Model interface {
	// Name is the configured model name, for traces ("gemini-flash-latest").
	Name() string
	// Complete returns the model's whole reply to req.
	Complete(ctx context.Context, req Request) (Response, error)
	// Stream is Complete, calling onText with each piece of the reply as it
	// arrives; the pieces concatenate to Response.Text. A failure before
	// the first piece is retried like Complete; once a piece has been
	// handed out the call is not repeated.
	Stream(ctx context.Context, req Request, onText func(string)) (Response, error)
}

// Request is one prompt.
type Request struct {
	// System is the system instruction: the rules the reply follows.
	System string
	// Prompt is the user message.
	Prompt string
	// JSON asks for a JSON object as the reply (structured output where the
	// provider has it). Callers still parse the reply defensively.
	JSON bool
	// Temperature overrides the provider's configured temperature when not
	// nil (the JSON stages ask for 0).
	Temperature *float64
	// MaxTokens overrides the configured reply length when positive.
	MaxTokens int
}

// Response is a model's reply.
type Response struct {
	// Text is the reply text.
	Text string
	// Model is the model that replied: the version the provider reports,
	// else the configured name.
	Model string
	// Usage counts the call's tokens.
	Usage answer.Usage
}

// Sentinel errors providers wrap, so that callers can tell an outage from
// a bad request. Both outage errors wrap answer.ErrUnavailable, so the
// answer pipeline degrades around them instead of failing.
var (
	// ErrRateLimited means the provider kept refusing for rate or quota
	// (HTTP 429, Gemini's RESOURCE_EXHAUSTED) after every retry.
	ErrRateLimited error = &outage{"rate limited or out of quota"}
	// ErrUnavailable means the provider kept failing (5xx, timeouts,
	// refused connections) after every retry.
	ErrUnavailable error = &outage{"provider unavailable"}
	// ErrMalformed means the provider answered with a body that does not
	// have the documented shape.
	ErrMalformed = errors.New("llm: malformed provider reply")
)

// outage is an outage sentinel: its own message, answer.ErrUnavailable
// underneath.
type outage struct{ msg string }

func (o *outage) Error() string { return o.msg }
func (o *outage) Unwrap() error { return answer.ErrUnavailable }

// zero is a temperature of 0, for the stages that want repeatable JSON.
func zero() *float64 { z := 0.0; return &z }
