package llmstage

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/docent-hq/docent/llm"
)

// errNoJSON is returned by decodeReply for a reply that holds no JSON value.
var errNoJSON = errors.New("no JSON in the reply")

// decodeReply decodes the first JSON object or array in a model reply
// into v. Models asked for JSON still wrap it in ```json fences or a
// sentence now and then; both are skipped. Trailing text after the value
// is ignored.
func decodeReply(text string, v any) error {
	for i := 0; i < len(text); i++ {
		if text[i] != '{' && text[i] != '[' {
			continue
		}
		dec := json.NewDecoder(strings.NewReader(text[i:]))
		err := dec.Decode(v)
		if err == nil {
			return nil
		}
		var syn *json.SyntaxError
		if !errors.As(err, &syn) {
			// Valid JSON of the wrong shape: say so rather than look further.
			return fmt.Errorf("%w: %w", llm.ErrMalformed, err)
		}
	}
	return errNoJSON
}
