package config

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/robfig/cron/v3"

	"github.com/docent-hq/docent/internal/redact"
)

var sourceName = regexp.MustCompile(`^[a-z0-9_-]+$`)

// Validate checks option values and their combinations. It returns every
// problem found, joined, each an *Error naming the key.
func (c Config) Validate() error {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, &Error{Key: key, Msg: fmt.Sprintf(format, args...)})
	}

	if c.DataDir == "" {
		bad("data_dir", "must not be empty")
	}

	if c.Server.Addr == "" {
		bad("server.addr", "must not be empty")
	}
	if u, err := url.Parse(c.Server.PublicURL); err != nil || u.Scheme == "" || u.Host == "" {
		bad("server.public_url", "must be an absolute URL like https://docent.example.com, got %q", c.Server.PublicURL)
	}
	if c.Server.ShutdownTimeout <= 0 {
		bad("server.shutdown_timeout", "must be a positive duration like 10s")
	}

	if len(c.Sources) == 0 {
		bad("sources", "no sources configured")
	}
	seen := map[string]int{}
	for i, s := range c.Sources {
		key := fmt.Sprintf("sources[%d]", i)
		switch {
		case s.Name == "":
			bad(key+".name", "must not be empty")
		case !sourceName.MatchString(s.Name):
			bad(key+".name", "%q may contain only a-z, 0-9, _ and -", s.Name)
		default:
			if j, dup := seen[s.Name]; dup {
				bad(key+".name", "%q is already used by sources[%d]", s.Name, j)
			} else {
				seen[s.Name] = i
			}
		}
		if !ScheduleOff(s.Schedule) {
			if _, err := cron.ParseStandard(s.Schedule); err != nil {
				bad(key+".schedule", "invalid cron spec %q: %v", s.Schedule, err)
			}
		}
		switch s.Type {
		case SourceBundled:
			if s.Dir != nil || s.Git != nil {
				bad(key, "a bundled source takes no dir or git section")
			}
		case SourceDir:
			switch {
			case s.Dir == nil:
				bad(key+".dir", "type dir needs a dir section with a path")
			case s.Dir.Path == "":
				bad(key+".dir.path", "must not be empty")
			}
			if s.Git != nil {
				bad(key+".git", "not allowed for type dir")
			}
		case SourceGit:
			switch {
			case s.Git == nil:
				bad(key+".git", "type git needs a git section with url or path")
			case (s.Git.URL == "") == (s.Git.Path == ""):
				bad(key+".git", "set exactly one of url (a remote) or path (a local repository)")
			}
			if s.Dir != nil {
				bad(key+".dir", "not allowed for type git")
			}
		case "":
			bad(key+".type", "must be one of bundled, dir, git")
		default:
			bad(key+".type", "unknown source type %q (want bundled, dir or git)", s.Type)
		}
	}

	ix := c.Index
	switch ix.Backend {
	case BackendLocal:
	case BackendTypesense:
		if ix.Typesense.URL == "" {
			bad("index.typesense.url", "required when index.backend is typesense")
		}
		if ix.Typesense.APIKey == "" {
			bad("index.typesense.api_key", "required when index.backend is typesense")
		}
		if ix.Typesense.Collection == "" {
			bad("index.typesense.collection", "must not be empty")
		}
	default:
		bad("index.backend", "unknown backend %q (want local or typesense)", ix.Backend)
	}
	switch ix.Fusion {
	case FusionScore, FusionRRF:
	default:
		bad("index.fusion", "unknown fusion %q (want score or rrf)", ix.Fusion)
	}
	if ix.RRFK <= 0 {
		bad("index.rrf_k", "must be positive, got %d", ix.RRFK)
	}
	if ix.KeywordWeight < 0 {
		bad("index.keyword_weight", "must be >= 0, got %g", ix.KeywordWeight)
	}
	if ix.VectorWeight < 0 {
		bad("index.vector_weight", "must be >= 0, got %g", ix.VectorWeight)
	}
	if ix.KeywordWeight == 0 && ix.VectorWeight == 0 {
		bad("index", "keyword_weight and vector_weight cannot both be 0")
	}
	if ix.Candidates <= 0 {
		bad("index.candidates", "must be positive, got %d", ix.Candidates)
	}

	checkProvider := func(section, provider, apiKey, baseURL string) {
		switch provider {
		case ProviderOffline:
		case ProviderGemini:
			if apiKey == "" {
				bad(section+".api_key", "required for provider gemini")
			}
		case ProviderOpenAI:
			if apiKey == "" && baseURL == "" {
				bad(section+".api_key", "required for provider openai unless base_url points at a compatible server that needs none")
			}
		default:
			bad(section+".provider", "unknown provider %q (want offline, gemini or openai)", provider)
		}
		if baseURL != "" {
			if u, err := url.Parse(baseURL); err != nil || u.Scheme == "" || u.Host == "" {
				bad(section+".base_url", "must be an absolute URL, got %q", redact.URL(baseURL))
			}
		}
	}
	checkProvider("embedder", c.Embedder.Provider, c.Embedder.APIKey, c.Embedder.BaseURL)
	if c.Embedder.Dim < 0 {
		bad("embedder.dim", "must be >= 0, got %d", c.Embedder.Dim)
	}
	checkProvider("answerer", c.Answerer.Provider, c.Answerer.APIKey, c.Answerer.BaseURL)
	if c.Answerer.MinScore < 0 {
		bad("answerer.min_score", "must be >= 0, got %g", c.Answerer.MinScore)
	}
	if c.Answerer.MaxSources < 1 {
		bad("answerer.max_sources", "must be at least 1, got %d", c.Answerer.MaxSources)
	}

	if c.Chunker.TargetTokens <= 0 {
		bad("chunker.target_tokens", "must be positive, got %d", c.Chunker.TargetTokens)
	}
	if c.Chunker.OverlapTokens < 0 {
		bad("chunker.overlap_tokens", "must be >= 0, got %d", c.Chunker.OverlapTokens)
	}
	if c.Chunker.TargetTokens <= c.Chunker.OverlapTokens {
		bad("chunker.overlap_tokens", "must be smaller than chunker.target_tokens (%d), got %d", c.Chunker.TargetTokens, c.Chunker.OverlapTokens)
	}

	if !ScheduleOff(c.Sync.Schedule) {
		if _, err := cron.ParseStandard(c.Sync.Schedule); err != nil {
			bad("sync.schedule", "invalid cron spec %q: %v", c.Sync.Schedule, err)
		}
	}
	if c.Sync.MaxDocBytes <= 0 {
		bad("sync.max_doc_bytes", "must be positive, got %d", c.Sync.MaxDocBytes)
	}
	if c.Sync.Workers < 1 {
		bad("sync.workers", "must be at least 1, got %d", c.Sync.Workers)
	}

	switch strings.ToLower(c.Log.Level) {
	case "debug", "info", "warn", "error":
	default:
		bad("log.level", "unknown level %q (want debug, info, warn or error)", c.Log.Level)
	}
	switch c.Log.Format {
	case "text", "json":
	default:
		bad("log.format", "unknown format %q (want text or json)", c.Log.Format)
	}
	return errors.Join(errs...)
}
