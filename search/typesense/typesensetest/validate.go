package typesensetest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
)

// SpecEnv names the environment variable that may point at the official
// Typesense OpenAPI spec; otherwise FindSpec looks for
// shared/reference/typesense-openapi.yml in the working directory's
// parents (CI checks the repository out beside shared/).
const SpecEnv = "TYPESENSE_OPENAPI"

// FindSpec returns the path of the official API spec, or "" when it is
// not on this machine.
func FindSpec() string {
	if p := os.Getenv(SpecEnv); p != "" {
		if _, err := os.Stat(p); err == nil {
			return p
		}
		return ""
	}
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		p := filepath.Join(dir, "shared", "reference", "typesense-openapi.yml")
		if _, err := os.Stat(p); err == nil {
			return p
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// specValidator checks requests against the official OpenAPI document:
// the operation exists, path and query parameters have their declared
// types and enums, and JSON bodies match their schemas.
type specValidator struct {
	router routers.Router
}

var (
	specMu    sync.Mutex
	specCache = map[string]*specValidator{}
)

// loadSpec parses the spec at path once per process.
func loadSpec(path string) (*specValidator, error) {
	specMu.Lock()
	defer specMu.Unlock()
	if v, ok := specCache[path]; ok {
		return v, nil
	}
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromFile(path)
	if err != nil {
		return nil, fmt.Errorf("typesensetest: load spec %s: %w", path, err)
	}
	doc.Servers = nil // match paths on any host
	r, err := legacy.NewRouter(doc, openapi3.DisableExamplesValidation())
	if err != nil {
		return nil, fmt.Errorf("typesensetest: spec %s: %w", path, err)
	}
	v := &specValidator{router: r}
	specCache[path] = v
	return v, nil
}

// validate checks r, whose body has been read into body.
func (v *specValidator) validate(r *http.Request, body []byte) error {
	req := r.Clone(context.Background())
	req.Body = io.NopCloser(bytes.NewReader(body))
	route, params, err := v.router.FindRoute(req)
	if err != nil {
		return fmt.Errorf("no such operation in the API spec: %w", err)
	}
	in := &openapi3filter.RequestValidationInput{
		Request: req, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, MultiError: true},
	}
	return openapi3filter.ValidateRequest(context.Background(), in)
}
