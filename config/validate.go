package config

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/robfig/cron/v3"
	"golang.org/x/crypto/bcrypt"

	"github.com/docent-hq/docent/internal/redact"
)

var sourceName = regexp.MustCompile(`^[a-z0-9_-]+$`)

// Implementations names what this build can run at each seam. cmd/docent
// fills it from the constructor maps it wires, so a name in the config
// that no constructor serves is an error at its key and line, never a
// silent fallback to another implementation.
type Implementations struct {
	// Sources are the source types (bundled, dir, git, ...).
	Sources []string
	// Backends are the index backends (local, typesense, ...).
	Backends []string
	// Embedders are the embedding providers (offline, gemini, openai, ...).
	Embedders []string
	// Answerers are the answer providers (offline, gemini, openai, ...).
	Answerers []string
	// Features are the names of the evidence features a decision rule
	// may weigh (answerer.decision.weights), PassageFeatures those of the
	// passage model (answerer.passage.weights); nil checks none.
	Features, PassageFeatures []string
}

// Builtin is what the config package itself knows of: every source type
// with a section here, both index backends and the three model providers.
// Tests and tools that validate without a build's wiring use it.
func Builtin() Implementations {
	return Implementations{
		Sources:   append([]string{SourceBundled}, sectionTypes()...),
		Backends:  []string{BackendLocal, BackendTypesense},
		Embedders: []string{ProviderOffline, ProviderGemini, ProviderOpenAI},
		Answerers: []string{ProviderOffline, ProviderGemini, ProviderOpenAI},
	}
}

// sectionTypes lists the source types that have a settings section (the
// source:"TYPE" tags of SourceConfig).
func sectionTypes() []string {
	var out []string
	t := reflect.TypeFor[SourceConfig]()
	for i := range t.NumField() {
		if typ := t.Field(i).Tag.Get("source"); typ != "" {
			out = append(out, typ)
		}
	}
	return out
}

// sourceSection returns the settings section of type typ in s (nil when
// unset) and whether the type has a section at all.
func sourceSection(s SourceConfig, typ string) (reflect.Value, bool) {
	v := reflect.ValueOf(s)
	for i := range v.NumField() {
		if v.Type().Field(i).Tag.Get("source") == typ {
			return v.Field(i), true
		}
	}
	return reflect.Value{}, false
}

// sectionValidator is a source section with rules of its own.
type sectionValidator interface {
	validate(key string, bad func(key, format string, args ...any))
}

// Validate checks option values and their combinations against what impl
// says this build can run. It returns every problem found, joined, each
// an *Error naming the key.
func (c Config) Validate(impl Implementations) error {
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

	c.validateSources(impl, bad)
	c.validateIndex(impl, bad)
	c.validateModels(impl, bad)
	c.validateSlack(bad)
	c.validateDiscord(bad)

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
	if c.Sync.MaxChunksPerDoc < 1 {
		bad("sync.max_chunks_per_doc", "must be at least 1, got %d", c.Sync.MaxChunksPerDoc)
	}
	if c.Sync.Workers < 1 {
		bad("sync.workers", "must be at least 1, got %d", c.Sync.Workers)
	}

	c.validateAuth(bad)
	if c.Console.StaleAfterDays <= 0 {
		bad("console.stale_after_days", "must be positive, got %d", c.Console.StaleAfterDays)
	}
	for i, s := range c.Sources {
		if s.StaleAfterDays < 0 {
			bad(fmt.Sprintf("sources[%d].stale_after_days", i), "must be >= 0, got %d", s.StaleAfterDays)
		}
	}

	switch strings.ToLower(c.Log.Level) {
	case "", "debug", "info", "warn", "error":
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

func (c Config) validateSources(impl Implementations, bad func(key, format string, args ...any)) {
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
		switch {
		case s.Type == "":
			bad(key+".type", "must be one of %s", strings.Join(impl.Sources, ", "))
			continue
		case !slices.Contains(impl.Sources, s.Type):
			bad(key+".type", "unknown source type %q (this build has: %s)", s.Type, strings.Join(impl.Sources, ", "))
			continue
		}
		// Only the section of the source's own type may be set.
		for _, other := range sectionTypes() {
			if v, _ := sourceSection(s, other); other != s.Type && !v.IsNil() {
				bad(key+"."+other, "not allowed for type %s", s.Type)
			}
		}
		sec, has := sourceSection(s, s.Type)
		if !has {
			continue // a type without settings (bundled)
		}
		if sec.IsNil() {
			bad(key+"."+s.Type, "type %s needs a %s section", s.Type, s.Type)
			continue
		}
		if v, ok := sec.Interface().(sectionValidator); ok {
			v.validate(key+"."+s.Type, bad)
		}
	}
}

func (d *DirConfig) validate(key string, bad func(key, format string, args ...any)) {
	if d.Path == "" {
		bad(key+".path", "must not be empty")
		return
	}
	checkPathTemplate(key+".web_url", d.WebURL, bad)
	switch st, err := os.Stat(d.Path); {
	case errors.Is(err, fs.ErrNotExist):
		if filepath.IsAbs(d.Path) {
			bad(key+".path", "no folder %s", d.Path)
		} else {
			bad(key+".path", "no folder %s (resolved against %s)", d.Path, workDir())
		}
	case err != nil:
		bad(key+".path", "%v", err)
	case !st.IsDir():
		bad(key+".path", "%s is a file, not a folder", d.Path)
	}
}

// workDir is the directory relative paths resolve against, for messages.
func workDir() string {
	wd, err := os.Getwd()
	if err != nil {
		return "the working directory"
	}
	return wd
}

func (g *GitConfig) validate(key string, bad func(key, format string, args ...any)) {
	if (g.URL == "") == (g.Path == "") {
		bad(key, "set exactly one of url (a remote) or path (a local repository)")
	}
	checkPathTemplate(key+".web_url", g.WebURL, bad)
}

// checkPathTemplate requires a file source's web_url, when set, to hold
// {path}: without it every citation would link the same page.
func checkPathTemplate(key, tmpl string, bad func(key, format string, args ...any)) {
	if tmpl != "" && !strings.Contains(tmpl, "{path}") {
		bad(key, "must contain {path}, where each file's path goes (for example https://github.com/acme/docs/blob/main/{path}); without it every citation links %q", tmpl)
	}
}

func (cf *ConfluenceConfig) validate(key string, bad func(key, format string, args ...any)) {
	checkURL(key+".base_url", cf.BaseURL, bad)
	switch cf.Flavor {
	case FlavorCloud:
		if cf.Email == "" {
			bad(key+".email", "required for Confluence Cloud (the account the API token belongs to)")
		}
	case FlavorDataCenter:
	default:
		bad(key+".flavor", "unknown flavor %q (want cloud or datacenter)", cf.Flavor)
	}
	if cf.Token == "" {
		bad(key+".token", "required (an API token for Cloud, a personal access token for Data Center; use ${ENV})")
	}
	if len(cf.Spaces) == 0 {
		bad(key+".spaces", "list at least one space key")
	}
	for i, sp := range cf.Spaces {
		if strings.TrimSpace(sp) == "" || strings.ContainsAny(sp, " ,/") {
			bad(fmt.Sprintf("%s.spaces[%d]", key, i), "%q is not a space key", sp)
		}
	}
	for i, r := range cf.Roots {
		if strings.Trim(r, "0123456789") != "" || r == "" {
			bad(fmt.Sprintf("%s.roots[%d]", key, i), "%q is not a page ID (digits)", r)
		}
	}
	if cf.Overlap < 0 {
		bad(key+".overlap", "must be >= 0, got %s", cf.Overlap)
	}
	if cf.RequestsPerSecond < 0 {
		bad(key+".requests_per_second", "must be >= 0, got %g", cf.RequestsPerSecond)
	}
}

func (n *NotionConfig) validate(key string, bad func(key, format string, args ...any)) {
	if n.Token == "" {
		bad(key+".token", "required (the integration's secret; use ${ENV})")
	}
	checkURL(key+".api_url", n.APIURL, bad)
	for i, r := range n.Roots {
		if strings.TrimSpace(r) == "" {
			bad(fmt.Sprintf("%s.roots[%d]", key, i), "must not be empty")
		}
	}
	if n.Overlap < 0 {
		bad(key+".overlap", "must be >= 0, got %s", n.Overlap)
	}
	if n.RequestsPerSecond < 0 {
		bad(key+".requests_per_second", "must be >= 0, got %g", n.RequestsPerSecond)
	}
}

func (c Config) validateIndex(impl Implementations, bad func(key, format string, args ...any)) {
	ix := c.Index
	if !slices.Contains(impl.Backends, ix.Backend) {
		bad("index.backend", "unknown backend %q (this build has: %s)", ix.Backend, strings.Join(impl.Backends, ", "))
	}
	if ix.Backend == BackendTypesense {
		ts := ix.Typesense
		if len(ts.Nodes) == 0 {
			bad("index.typesense.nodes", "required when index.backend is typesense (one or more node URLs)")
		}
		for i, n := range ts.Nodes {
			checkURL(fmt.Sprintf("index.typesense.nodes[%d]", i), n, bad)
		}
		if ts.NearestNode != "" {
			checkURL("index.typesense.nearest_node", ts.NearestNode, bad)
		}
		if ts.APIKey == "" {
			bad("index.typesense.api_key", "required when index.backend is typesense")
		}
		if ts.Collection == "" {
			bad("index.typesense.collection", "must not be empty")
		}
		if ts.Timeout <= 0 {
			bad("index.typesense.timeout", "must be a positive duration like 5s")
		}
		if ts.Retries < 0 {
			bad("index.typesense.retries", "must be >= 0, got %d", ts.Retries)
		}
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
}

func (c Config) validateModels(impl Implementations, bad func(key, format string, args ...any)) {
	used := map[string]string{} // provider -> the key that selects it first
	for _, sel := range []struct {
		key, provider string
		have          []string
	}{
		{"embedder.provider", c.Embedder.Provider, impl.Embedders},
		{"answerer.provider", c.Answerer.Provider, impl.Answerers},
	} {
		if !slices.Contains(sel.have, sel.provider) {
			bad(sel.key, "unknown provider %q (this build has: %s)", sel.provider, strings.Join(sel.have, ", "))
			continue
		}
		if _, ok := used[sel.provider]; !ok {
			used[sel.provider] = sel.key
		}
	}
	if by, ok := used[ProviderGemini]; ok {
		g := c.LLM.Gemini
		if g.APIKey == "" {
			bad("llm.gemini.api_key", "required when %s is gemini", by)
		}
		if g.BaseURL != "" {
			checkURL("llm.gemini.base_url", g.BaseURL, bad)
		}
		checkModel("llm.gemini", g.Model, g.EmbeddingModel, g.Dimensions, g.MaxOutputTokens, g.Timeout > 0, bad)
	}
	if _, ok := used[ProviderOpenAI]; ok {
		o := c.LLM.OpenAI
		checkURL("llm.openai.base_url", o.BaseURL, bad)
		if c.Embedder.Provider == ProviderOpenAI && o.EmbeddingModel == "" {
			bad("llm.openai.embedding_model", "required when embedder.provider is openai")
		}
		if c.Answerer.Provider == ProviderOpenAI && o.Model == "" {
			bad("llm.openai.model", "required when answerer.provider is openai")
		}
		checkModel("llm.openai", "-", "-", o.Dimensions, o.MaxOutputTokens, o.Timeout > 0, bad)
	}
	if c.Embedder.Dim < 0 {
		bad("embedder.dim", "must be >= 0, got %d", c.Embedder.Dim)
	}
	if c.Answerer.MaxSources < 0 {
		bad("answerer.max_sources", "must be at least 1 (or 0 for the default), got %d", c.Answerer.MaxSources)
	}
	if d := c.Answerer.Decision; d != nil {
		for _, name := range slices.Sorted(maps.Keys(d.Weights)) {
			if impl.Features != nil && !slices.Contains(impl.Features, name) {
				bad("answerer.decision.weights."+name, "unknown feature (want one of %s)", strings.Join(impl.Features, ", "))
			}
		}
		if d.AnswerAt < 0 || d.AnswerAt > 1 {
			bad("answerer.decision.answer_at", "must be between 0 and 1, got %g", d.AnswerAt)
		}
		if d.NotFoundAt < 0 || d.NotFoundAt > d.AnswerAt {
			bad("answerer.decision.not_found_at", "must be between 0 and answer_at (%g), got %g", d.AnswerAt, d.NotFoundAt)
		}
	}
	if p := c.Answerer.Passage; p != nil {
		for _, name := range slices.Sorted(maps.Keys(p.Weights)) {
			if impl.PassageFeatures != nil && !slices.Contains(impl.PassageFeatures, name) {
				bad("answerer.passage.weights."+name, "unknown feature (want one of %s)", strings.Join(impl.PassageFeatures, ", "))
			}
		}
	}
	if c.Answerer.MinCosine < 0 || c.Answerer.MinCosine > 1 {
		bad("answerer.min_cosine", "must be between 0 and 1, got %g", c.Answerer.MinCosine)
	}
	switch c.Answerer.Uncited {
	case "", UncitedNotFound, UncitedUncertain:
	default:
		bad("answerer.uncited", "unknown value %q (want %s or %s)", c.Answerer.Uncited, UncitedNotFound, UncitedUncertain)
	}
	switch c.Answerer.Rerank {
	case "", RerankModel, RerankOff:
	default:
		bad("answerer.rerank", "unknown value %q (want %s or %s)", c.Answerer.Rerank, RerankModel, RerankOff)
	}
	if c.Answerer.HistoryTurns < 0 {
		bad("answerer.history_turns", "must be >= 0, got %d", c.Answerer.HistoryTurns)
	}
}

// checkModel checks the settings every model provider shares.
func checkModel(key, model, embeddingModel string, dims, maxTokens int, timeoutOK bool, bad func(key, format string, args ...any)) {
	if model == "" {
		bad(key+".model", "must not be empty")
	}
	if embeddingModel == "" {
		bad(key+".embedding_model", "must not be empty")
	}
	if dims < 0 {
		bad(key+".dimensions", "must be >= 0, got %d", dims)
	}
	if maxTokens <= 0 {
		bad(key+".max_output_tokens", "must be positive, got %d", maxTokens)
	}
	if !timeoutOK {
		bad(key+".timeout", "must be a positive duration like 30s")
	}
}

// checkURL reports a value that is not an absolute http(s) URL.
func checkURL(key, s string, bad func(key, format string, args ...any)) {
	if u, err := url.Parse(s); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		bad(key, "must be an absolute http(s) URL, got %q", redact.URL(s))
	}
}

// maxAdminUserBytes is the longest admin user name; the console's
// sign-in form takes no longer one (console.MaxUserBytes).
const maxAdminUserBytes = 256

func (c Config) validateAuth(bad func(key, format string, args ...any)) {
	a := c.Auth
	switch a.Mode {
	case "", AuthPassword, AuthNone:
	default:
		bad("auth.mode", "unknown mode %q (want %s or %s)", a.Mode, AuthPassword, AuthNone)
	}
	switch a.APITokens {
	case "", TokensAuto, TokensRequired:
	default:
		bad("auth.api_tokens", "unknown value %q (want %s or %s)", a.APITokens, TokensAuto, TokensRequired)
	}
	users := map[string]int{}
	for i, ad := range a.Admins {
		key := fmt.Sprintf("auth.admins[%d]", i)
		if strings.TrimSpace(ad.User) == "" {
			bad(key+".user", "must not be empty")
		} else if len(ad.User) > maxAdminUserBytes {
			bad(key+".user", "must be at most %d bytes, got %d", maxAdminUserBytes, len(ad.User))
		} else if j, dup := users[ad.User]; dup {
			bad(key+".user", "%q is already used by auth.admins[%d]", ad.User, j)
		} else {
			users[ad.User] = i
		}
		// A redacted dump loads back; its admins cannot log in.
		if _, err := bcrypt.Cost([]byte(ad.PasswordHash)); err != nil && ad.PasswordHash != redactedValue {
			bad(key+".password_hash", "must be a bcrypt hash (make one with `docent admin hash-password`)")
		}
	}
	th := a.TrustedHeader
	if th.Header != "" && len(th.Allowed) == 0 {
		bad("auth.trusted_header.allowed", "list the emails that may sign in through %s", th.Header)
	}
	if th.Header == "" && len(th.Allowed) > 0 {
		bad("auth.trusted_header.header", "must name the header that carries the email")
	}
	for i, p := range th.Proxies {
		if _, err := (TrustedHeaderConfig{Proxies: []string{p}}).Prefixes(); err != nil {
			bad(fmt.Sprintf("auth.trusted_header.proxies[%d]", i), "%q is not an address or a CIDR like 10.0.0.0/8", p)
		}
	}
	if th.Header != "" && len(th.Proxies) == 0 && a.Mode != AuthNone && !Loopback(c.Server.Addr) {
		bad("auth.trusted_header.proxies", "list the addresses or CIDRs of the proxies that set %s: "+
			"server.addr %s is reachable beyond this machine, where anyone could send the header", th.Header, c.Server.Addr)
	}
	if a.DocLinkTTL <= 0 {
		bad("auth.doc_link_ttl", "must be a positive duration like 24h")
	}
	if a.SessionIdle <= 0 {
		bad("auth.session_idle", "must be a positive duration like 2h")
	}
	if a.APIRatePerMinute < 1 {
		bad("auth.api_rate_per_minute", "must be at least 1, got %d", a.APIRatePerMinute)
	}
}
