// Package llm holds what every language-model provider shares: the small
// Model contract, its request and response, the errors that tell an
// outage from a bad request, and one retry policy with backoff.
//
// Providers are thin packages that implement Model (and search.Embedder)
// on a vendor client: llm/gemini on google.golang.org/genai, llm/openai on
// an OpenAI-compatible client (OpenAI, Ollama, vLLM, LM Studio);
// llm/offline is the offline embedder. The model-backed answer stages
// (rewriter, reranker, grounded generator, judge) live above, in
// answer/llmstage: providers sit below every feature package and import
// only the domain, search and internal helpers.
package llm

import (
	"context"
	"errors"
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
	Usage Usage
}

// Usage counts the tokens of one call.
type Usage struct {
	// InputTokens and OutputTokens are the prompt and reply token counts.
	InputTokens, OutputTokens int
}

// Sentinel errors providers wrap, so that callers can tell an outage from
// a bad request.
var (
	// ErrUnavailable means the provider kept failing (5xx, timeouts,
	// refused connections, rate limits) after every retry. The answer
	// pipeline answers around it instead of failing.
	ErrUnavailable = errors.New("provider unavailable")
	// ErrRateLimited means the provider kept refusing for rate or quota
	// (HTTP 429, Gemini's RESOURCE_EXHAUSTED) after every retry. It wraps
	// ErrUnavailable.
	ErrRateLimited error = &rateLimited{}
	// ErrMalformed means the provider answered with a body that does not
	// have the documented shape, or with no usable text.
	ErrMalformed = errors.New("llm: malformed provider reply")
)

type rateLimited struct{}

func (*rateLimited) Error() string { return "rate limited or out of quota" }
func (*rateLimited) Unwrap() error { return ErrUnavailable }
