// Package config loads docent's configuration: one typed Config filled in
// order from the built-in defaults (the embedded demo: the bundled handbook,
// the local index, offline embedder and answerer), then a YAML file, then
// environment overrides, and finally checked by Validate.
//
// The YAML file may reference environment variables as ${VAR}; they are
// expanded on the raw text before parsing, so error line numbers refer to
// the file as written. An unset variable is an error; $$ is a literal dollar.
// Full-line and trailing comments are not expanded, so a commented-out
// "# token: ${GITHUB_TOKEN}" needs no variable. Inside a quoted scalar the
// value is escaped for that quote style; in a plain scalar it is inserted
// as-is, so quote the placeholder ("${VAR}") when a value may contain YAML
// syntax such as ": " or " #".
//
// Secrets (fields tagged secret:"true": API keys, tokens) never appear when
// a Config is printed: Redacted, String and LogValue replace them with
// "REDACTED", and passwords inside URLs are masked too.
package config

import (
	"fmt"
	"net"
	"net/netip"
	"strings"
	"time"
)

// Config is the whole docent configuration. Each package receives only its
// own section.
type Config struct {
	// DataDir holds the SQLite store, the local index and model files.
	// DOCENT_DATA overrides it.
	DataDir string `yaml:"data_dir"`
	// Server is the HTTP listener and public address of the console.
	Server ServerConfig `yaml:"server"`
	// Sources are the documentation sources to sync. A file that lists
	// sources replaces the default (the bundled handbook).
	Sources []SourceConfig `yaml:"sources"`
	// Index selects and tunes the search backend and fusion.
	Index IndexConfig `yaml:"index"`
	// LLM holds the settings of each model provider (endpoints, keys,
	// models); Embedder and Answerer pick which provider serves them.
	LLM LLMConfig `yaml:"llm"`
	// Embedder selects the embedding provider.
	Embedder EmbedderConfig `yaml:"embedder"`
	// Answerer selects the answer provider and its thresholds.
	Answerer AnswererConfig `yaml:"answerer"`
	// Chunker sizes the chunks documents are split into.
	Chunker ChunkerConfig `yaml:"chunker"`
	// Sync schedules and bounds source synchronisation.
	Sync SyncConfig `yaml:"sync"`
	// Log sets the log level and format.
	Log LogConfig `yaml:"log"`
	// Slack connects the bot to a Slack workspace (off without a token).
	Slack SlackConfig `yaml:"slack"`
	// Discord connects the bot to Discord (off without a token).
	Discord DiscordConfig `yaml:"discord"`
	// Auth protects the admin console and the JSON API.
	Auth AuthConfig `yaml:"auth"`
	// Console tunes the admin console.
	Console ConsoleConfig `yaml:"console"`
}

// Auth modes.
const (
	// AuthPassword (the default, also written "") requires a console
	// login and, beyond localhost, API tokens.
	AuthPassword = "password"
	// AuthNone leaves the console and the API open to anyone who can
	// reach the address: only for a network that is itself private.
	AuthNone = "none"
)

// API token policies.
const (
	// TokensAuto requires API tokens when serving beyond localhost and
	// leaves the API open on localhost (the demo).
	TokensAuto = "auto"
	// TokensRequired requires a token on every /api/ request.
	TokensRequired = "required"
)

// AuthConfig is who may use the console and the API.
type AuthConfig struct {
	// Mode is AuthPassword (default) or AuthNone.
	Mode string `yaml:"mode,omitempty"`
	// Admins may log in to the console; `docent admin hash-password`
	// makes a password_hash.
	Admins []AdminConfig `yaml:"admins,omitempty"`
	// TrustedHeader signs people in from a header an SSO proxy sets.
	TrustedHeader TrustedHeaderConfig `yaml:"trusted_header,omitempty"`
	// SessionIdle logs a console session out after this long unused.
	SessionIdle time.Duration `yaml:"session_idle"`
	// APITokens is TokensAuto (default) or TokensRequired.
	APITokens string `yaml:"api_tokens,omitempty"`
	// APIRatePerMinute bounds each API token's requests per minute,
	// unless the token sets its own.
	APIRatePerMinute int `yaml:"api_rate_per_minute"`
	// DocLinkTTL is how long the signed /docs links in chat answers work
	// when /docs needs a token (api_tokens required, or beyond localhost).
	DocLinkTTL time.Duration `yaml:"doc_link_ttl"`
}

// AdminConfig is one console administrator.
type AdminConfig struct {
	// User is the login name (an email works well).
	User string `yaml:"user"`
	// PasswordHash is the bcrypt hash of the password (secret).
	PasswordHash string `yaml:"password_hash" secret:"true"`
}

// TrustedHeaderConfig signs people in from a header set by an
// authenticating proxy in front of docent. Only use it when every request
// reaches docent through that proxy.
type TrustedHeaderConfig struct {
	// Header carries the signed-in person's email, e.g. X-Forwarded-Email.
	Header string `yaml:"header,omitempty"`
	// Allowed are the emails that may use the console.
	Allowed []string `yaml:"allowed,omitempty"`
	// Proxies are the addresses or CIDRs (10.0.0.0/8, 192.0.2.7,
	// ::1) the header is accepted from: the proxy's own address as
	// docent sees it. From any other peer the header is ignored; with
	// none listed it is ignored altogether, and serving beyond localhost
	// with a trusted header requires them.
	Proxies []string `yaml:"proxies,omitempty"`
}

// Prefixes parses Proxies: a CIDR as is, a bare address as a one-address
// prefix.
func (t TrustedHeaderConfig) Prefixes() ([]netip.Prefix, error) {
	var out []netip.Prefix
	for i, p := range t.Proxies {
		p = strings.TrimSpace(p)
		if pf, err := netip.ParsePrefix(p); err == nil {
			out = append(out, pf.Masked())
			continue
		}
		a, err := netip.ParseAddr(p)
		if err != nil {
			return nil, fmt.Errorf("proxies[%d]: %q is not an address or a CIDR", i, p)
		}
		a = a.Unmap()
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out, nil
}

// Loopback reports whether a listen address (host:port) binds this
// machine only: localhost or a loopback IP. ":8080" and "0.0.0.0:8080"
// bind every interface.
func Loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// ConsoleConfig tunes the admin console.
type ConsoleConfig struct {
	// StaleAfterDays is the default stale policy: a document not updated
	// for longer is flagged. A source may set its own (stale_after_days).
	StaleAfterDays int `yaml:"stale_after_days"`
}

// StaleAfterDays is the stale policy of the named source: its own
// stale_after_days, else console.stale_after_days.
func (c Config) StaleAfterDays(source string) int {
	for _, s := range c.Sources {
		if s.Name == source && s.StaleAfterDays > 0 {
			return s.StaleAfterDays
		}
	}
	return c.Console.StaleAfterDays
}

// ServerConfig is the HTTP server section.
type ServerConfig struct {
	// Addr is the listen address, for example ":8080". The default,
	// localhost:8080, is the demo: reachable from this machine only.
	Addr string `yaml:"addr"`
	// PublicURL is the absolute URL people reach the console at; links in
	// chat replies point to it. Unset, it follows Addr (and serve's
	// --addr): http://localhost:PORT, or the host Addr names.
	PublicURL string `yaml:"public_url"`
	// ShutdownTimeout bounds graceful shutdown, written as a duration ("10s").
	ShutdownTimeout time.Duration `yaml:"shutdown_timeout"`
	// MetricsAddr, when set, serves /metrics on this address instead of Addr.
	MetricsAddr string `yaml:"metrics_addr,omitempty"`

	// publicURLFromAddr: PublicURL was not configured and follows Addr.
	publicURLFromAddr bool
}

// Listen sets the listen address; a PublicURL that was not configured
// follows it.
func (s *ServerConfig) Listen(addr string) {
	s.Addr = addr
	if s.publicURLFromAddr {
		s.PublicURL = AddrURL(addr)
	}
}

// PublicURLFromAddr reports whether PublicURL was not configured and
// follows Addr.
func (s ServerConfig) PublicURLFromAddr() bool { return s.publicURLFromAddr }

// AddrURL is the URL a server listening on addr is reached at:
// http://localhost:PORT when addr names no host or every interface
// (":8080", "0.0.0.0:8080", "[::]:8080"), and http://HOST:PORT otherwise.
func AddrURL(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "http://" + addr
	}
	if ip, err := netip.ParseAddr(host); host == "" || (err == nil && ip.IsUnspecified()) {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port)
}

// Source types.
const (
	// SourceBundled is the example handbook embedded in the binary.
	SourceBundled = "bundled"
	// SourceDir is a local folder of documents.
	SourceDir = "dir"
	// SourceGit is a git repository, remote (cloned) or local.
	SourceGit = "git"
	// SourceConfluence is a Confluence Cloud or Data Center site.
	SourceConfluence = "confluence"
	// SourceNotion is a Notion workspace, through an integration.
	SourceNotion = "notion"
)

// SourceConfig is one documentation source. Each source type that takes
// settings has its own section: a pointer field tagged source:"TYPE" whose
// YAML key is the type name; a source sets only the section of its type.
// A new source type is a package, one line of wiring in cmd/docent, and
// its section here (with a validate method when it has rules).
type SourceConfig struct {
	// Name identifies the source: unique, [a-z0-9_-]. It prefixes document IDs.
	Name string `yaml:"name"`
	// Type is the source type: SourceBundled, SourceDir, SourceGit, or any
	// other type this build has.
	Type string `yaml:"type"`
	// Schedule optionally overrides sync.schedule for this source (a cron
	// spec; "off" disables scheduled syncs of this source).
	Schedule string `yaml:"schedule,omitempty"`
	// StaleAfterDays overrides console.stale_after_days for this source's
	// documents; 0 keeps the default.
	StaleAfterDays int `yaml:"stale_after_days,omitempty"`
	// Dir configures a "dir" source.
	Dir *DirConfig `yaml:"dir,omitempty" source:"dir"`
	// Git configures a "git" source.
	Git *GitConfig `yaml:"git,omitempty" source:"git"`
	// Confluence configures a "confluence" source.
	Confluence *ConfluenceConfig `yaml:"confluence,omitempty" source:"confluence"`
	// Notion configures a "notion" source.
	Notion *NotionConfig `yaml:"notion,omitempty" source:"notion"`
}

// DefaultInclude are the include globs a dir or git source gets when it
// lists none.
var DefaultInclude = []string{"**/*.md", "**/*.mdx", "**/*.rst", "**/*.txt"}

// DirConfig is a local folder source.
type DirConfig struct {
	// Path is the folder to read; a relative path is relative to the
	// config file's folder.
	Path string `yaml:"path"`
	// Include and Exclude are doublestar globs relative to Path. Include
	// defaults to DefaultInclude.
	Include []string `yaml:"include,omitempty"`
	Exclude []string `yaml:"exclude,omitempty"`
	// WebURL is a template for citation links: {path} is replaced by the
	// file's path inside Path (it must be there). Empty means file paths
	// are shown without links.
	WebURL string `yaml:"web_url,omitempty"`
}

// GitConfig is a git repository source: exactly one of URL and Path.
type GitConfig struct {
	// URL is a remote to clone and fetch.
	URL string `yaml:"url,omitempty"`
	// Path is an existing local repository; a relative path is relative
	// to the config file's folder.
	Path string `yaml:"path,omitempty"`
	// Branch to read; empty means the remote HEAD (or the checked-out branch).
	Branch string `yaml:"branch,omitempty"`
	// Subdir limits the source to one folder of the repository.
	Subdir string `yaml:"subdir,omitempty"`
	// Include and Exclude are doublestar globs relative to Subdir. Include
	// defaults to DefaultInclude.
	Include []string `yaml:"include,omitempty"`
	Exclude []string `yaml:"exclude,omitempty"`
	// WebURL is a template for citation links with {repo}, {branch} and
	// {path} placeholders; {path} must be there.
	WebURL string `yaml:"web_url,omitempty"`
	// Token authenticates https fetches (secret).
	Token string `yaml:"token,omitempty" secret:"true"`
	// Username goes with Token for https auth; providers that ignore it
	// accept any non-empty value.
	Username string `yaml:"username,omitempty"`
}

// Confluence flavors.
const (
	// FlavorCloud is Confluence Cloud (REST API v2, email + API token).
	FlavorCloud = "cloud"
	// FlavorDataCenter is Confluence Data Center or Server (REST API v1,
	// personal access token).
	FlavorDataCenter = "datacenter"
)

// ConfluenceConfig is a Confluence source: the pages of some spaces.
type ConfluenceConfig struct {
	// BaseURL is the site: https://acme.atlassian.net/wiki for Cloud, the
	// base URL (with any context path) for Data Center.
	BaseURL string `yaml:"base_url"`
	// Flavor is FlavorCloud (the default) or FlavorDataCenter.
	Flavor string `yaml:"flavor,omitempty"`
	// Email is the Cloud account the API token belongs to.
	Email string `yaml:"email,omitempty"`
	// Token is the Cloud API token or the Data Center personal access
	// token (secret).
	Token string `yaml:"token,omitempty" secret:"true"`
	// Spaces are the keys of the spaces to index.
	Spaces []string `yaml:"spaces"`
	// ExcludeLabels drops pages with any of these labels.
	ExcludeLabels []string `yaml:"exclude_labels,omitempty"`
	// Roots, when set, limit the source to these page IDs and the pages
	// below them.
	Roots []string `yaml:"roots,omitempty"`
	// Overlap is how far before the last run's newest change a run looks
	// again, for changes the API shows late ("10m" when unset).
	Overlap time.Duration `yaml:"overlap,omitempty"`
	// RequestsPerSecond caps the request rate (0: no cap).
	RequestsPerSecond float64 `yaml:"requests_per_second,omitempty"`
}

// DefaultNotionAPIURL is the Notion API's address.
const DefaultNotionAPIURL = "https://api.notion.com"

// NotionConfig is a Notion source: the pages and databases shared with an
// integration.
type NotionConfig struct {
	// Token is the integration's secret (secret).
	Token string `yaml:"token,omitempty" secret:"true"`
	// Roots, when set, limit the source to these pages and databases (IDs
	// or URLs) and what lies below them.
	Roots []string `yaml:"roots,omitempty"`
	// APIURL is the API's address (DefaultNotionAPIURL), for a proxy or
	// a test server.
	APIURL string `yaml:"api_url,omitempty"`
	// Overlap is how far before the last run's newest edit a run looks
	// again ("10m" when unset; Notion rounds edit times to the minute).
	Overlap time.Duration `yaml:"overlap,omitempty"`
	// RequestsPerSecond caps the request rate (3, Notion's average limit,
	// when unset).
	RequestsPerSecond float64 `yaml:"requests_per_second,omitempty"`
}

// Index backends.
const (
	BackendLocal     = "local"
	BackendTypesense = "typesense"
)

// Fusion methods.
const (
	// FusionScore is weighted score fusion of normalized scores.
	FusionScore = "score"
	// FusionRRF is reciprocal rank fusion.
	FusionRRF = "rrf"
)

// IndexConfig is the search backend section.
type IndexConfig struct {
	// Backend is BackendLocal or BackendTypesense.
	Backend string `yaml:"backend"`
	// Fusion is FusionScore or FusionRRF.
	Fusion string `yaml:"fusion"`
	// RRFK is the k constant of reciprocal rank fusion.
	RRFK int `yaml:"rrf_k"`
	// KeywordWeight and VectorWeight weight the retrievers in fusion.
	KeywordWeight float64 `yaml:"keyword_weight"`
	VectorWeight  float64 `yaml:"vector_weight"`
	// Candidates is the per-retriever depth before fusion.
	Candidates int `yaml:"candidates"`
	// Typesense configures the typesense backend.
	Typesense TypesenseConfig `yaml:"typesense"`
}

// TypesenseConfig is the Typesense cluster connection.
type TypesenseConfig struct {
	// Nodes are the cluster's node URLs (or one load balancer URL).
	Nodes []string `yaml:"nodes,omitempty"`
	// NearestNode optionally names the node to try first.
	NearestNode string `yaml:"nearest_node,omitempty"`
	// APIKey is the admin API key (secret).
	APIKey string `yaml:"api_key,omitempty" secret:"true"`
	// Collection is the alias queries go through; versioned collections
	// behind it are named after it.
	Collection string `yaml:"collection"`
	// Timeout bounds one request ("2s").
	Timeout time.Duration `yaml:"timeout"`
	// Retries is how many times a failed request is retried on other nodes.
	Retries int `yaml:"retries"`
}

// Model providers. ProviderOffline needs no network, key or model files.
const (
	ProviderOffline = "offline"
	ProviderGemini  = "gemini"
	ProviderOpenAI  = "openai"
)

// LLMConfig holds each model provider's settings. Only the providers that
// embedder.provider or answerer.provider name are used and validated.
type LLMConfig struct {
	// Gemini is Google's Gemini API (google.golang.org/genai).
	Gemini GeminiConfig `yaml:"gemini"`
	// OpenAI is any OpenAI-compatible API: OpenAI, Ollama, vLLM, LM Studio.
	OpenAI OpenAIConfig `yaml:"openai"`
}

// GeminiConfig configures the Gemini provider.
type GeminiConfig struct {
	// APIKey authenticates with the Gemini API (secret).
	APIKey string `yaml:"api_key,omitempty" secret:"true"`
	// BaseURL overrides the API endpoint (a proxy, a test server).
	BaseURL string `yaml:"base_url,omitempty"`
	// Model generates answers; EmbeddingModel embeds chunks and queries.
	Model          string `yaml:"model"`
	EmbeddingModel string `yaml:"embedding_model"`
	// Dimensions is the embedding length asked for.
	Dimensions int `yaml:"dimensions"`
	// Temperature and MaxOutputTokens tune generation.
	Temperature     float64 `yaml:"temperature"`
	MaxOutputTokens int     `yaml:"max_output_tokens"`
	// Timeout bounds one API call ("30s").
	Timeout time.Duration `yaml:"timeout"`
}

// OpenAIConfig configures an OpenAI-compatible provider.
type OpenAIConfig struct {
	// BaseURL is the API base, e.g. https://api.openai.com/v1 or
	// http://localhost:11434/v1 for Ollama.
	BaseURL string `yaml:"base_url"`
	// APIKey authenticates with the API, when it needs one (secret).
	APIKey string `yaml:"api_key,omitempty" secret:"true"`
	// Model generates answers; EmbeddingModel embeds chunks and queries.
	Model          string `yaml:"model,omitempty"`
	EmbeddingModel string `yaml:"embedding_model,omitempty"`
	// Dimensions is the embedding length asked for; 0 means the model's own.
	Dimensions int `yaml:"dimensions,omitempty"`
	// Temperature and MaxOutputTokens tune generation.
	Temperature     float64 `yaml:"temperature"`
	MaxOutputTokens int     `yaml:"max_output_tokens"`
	// Timeout bounds one API call ("30s").
	Timeout time.Duration `yaml:"timeout"`
}

// EmbedderConfig selects the embedding provider.
type EmbedderConfig struct {
	// Provider is ProviderOffline or a provider configured under llm.
	Provider string `yaml:"provider"`
	// Dim is the offline embedder's vector length; 0 means its default.
	Dim int `yaml:"dim,omitempty"`
}

// AnswererConfig selects the answer provider and tunes the not-found gate.
type AnswererConfig struct {
	// Provider is ProviderOffline (extractive answers) or a provider
	// configured under llm, which then writes the answers.
	Provider string `yaml:"provider"`
	// Decision is the calibrated rule that maps the offline gate's
	// evidence to answered, uncertain or not found; `docent eval
	// --calibrate` prints it. Unset, the built-in rule
	// (offline.DefaultDecision) decides.
	Decision *DecisionConfig `yaml:"decision,omitempty"`
	// Passage is the offline answerer's passage model: how it ranks the
	// sentences, items and rows it may quote. `docent eval --calibrate`
	// prints it; unset, the built-in one (offline.DefaultPassage) ranks.
	Passage *PassageConfig `yaml:"passage,omitempty"`
	// Synonyms is a file of the deployment's synonyms (Solr format: "pto,
	// paid time off" or "2fa => mfa"), read at start; "" has none.
	Synonyms string `yaml:"synonyms,omitempty"`
	// MinCosine is, for a model answerer, the cosine under which a
	// candidate keyword search did not return is no evidence: a question
	// with no such evidence at all is not sent to the model. 0 means 0.2.
	MinCosine float64 `yaml:"min_cosine,omitempty"`
	// MaxSources is how many sources an answer may draw on: 0 means 4
	// for the offline answerer and 8 for a model, which reads them all.
	MaxSources int `yaml:"max_sources"`
	// Uncited is what becomes of a model answer left with no valid
	// citation: UncitedNotFound (the default) or UncitedUncertain (flagged
	// low confidence: no fact asserted, the closest page linked, a person
	// offered).
	Uncited string `yaml:"uncited,omitempty"`
	// Rerank is RerankModel (the default for a model answerer: the model
	// scores the top 20 candidates in one call and the best 3-6 are kept)
	// or RerankOff (fused order).
	Rerank string `yaml:"rerank,omitempty"`
	// HistoryTurns is how many earlier exchanges of a thread the model
	// sees to make a follow-up standalone; 0 means 3.
	HistoryTurns int `yaml:"history_turns,omitempty"`
	// HyDE also retrieves with a short passage the model writes as the
	// docs might answer (one more model call per question).
	HyDE bool `yaml:"hyde,omitempty"`
}

// Answerer options.
const (
	UncitedNotFound  = "not_found"
	UncitedUncertain = "uncertain"
	RerankModel      = "model"
	RerankOff        = "off"
)

// PassageConfig is the offline answerer's passage model (see
// offline.PassageModel): a passage's probability of answering is
// σ(bias + Σ weights[feature]·feature).
type PassageConfig struct {
	// Bias is the intercept.
	Bias float64 `yaml:"bias"`
	// Weights weigh the passage features by name (own, cover, heading,
	// chunk, rank, fused, keyword, cosine, kind, lacks, entry, keyed,
	// codes, meta, early, lead, length).
	Weights map[string]float64 `yaml:"weights"`
}

// DecisionConfig is the offline answerer's calibrated rule (see
// answer.Logistic): the probability that an answer is right is
// σ(bias + Σ weights[feature]·feature); at answer_at or above docent
// answers, under not_found_at it answers not found, in between uncertain.
type DecisionConfig struct {
	// Bias is the intercept.
	Bias float64 `yaml:"bias"`
	// Weights weigh the gate's features by name (coverage, chunk, page,
	// cosine, keyword, agreement, asks, kind, missing, unknown, length).
	Weights map[string]float64 `yaml:"weights"`
	// AnswerAt and NotFoundAt are the cut points, 0 <= not_found_at <=
	// answer_at <= 1.
	AnswerAt   float64 `yaml:"answer_at"`
	NotFoundAt float64 `yaml:"not_found_at"`
}

// ChunkerConfig sizes chunks, in estimated tokens.
type ChunkerConfig struct {
	// TargetTokens is the chunk size aimed for.
	TargetTokens int `yaml:"target_tokens"`
	// OverlapTokens is how much of a chunk the next one in the same
	// section repeats.
	OverlapTokens int `yaml:"overlap_tokens"`
}

// SyncConfig is the sync section.
type SyncConfig struct {
	// Schedule is a cron spec ("@every 1h", "0 * * * *"); "" or "off"
	// disables scheduled syncs.
	Schedule string `yaml:"schedule"`
	// MaxDocBytes skips documents larger than this.
	MaxDocBytes int64 `yaml:"max_doc_bytes"`
	// MaxChunksPerDoc is the most chunks one document is indexed as; a
	// document that would make more is indexed up to the cap and the
	// rest reported in the sync run.
	MaxChunksPerDoc int `yaml:"max_chunks_per_doc"`
	// Workers is how many sources sync at once.
	Workers int `yaml:"workers"`
}

// ScheduleOff reports whether a schedule spec disables scheduled syncs.
func ScheduleOff(spec string) bool { return spec == "" || spec == "off" }

// LogConfig is the logging section.
type LogConfig struct {
	// Level is debug, info, warn or error; empty (the default) is info
	// for serve and warn for the one-shot commands.
	Level string `yaml:"level,omitempty"`
	// Format is text or json.
	Format string `yaml:"format"`
}

// Default returns the built-in configuration: the embedded demo that runs
// on a fresh clone with no account, key or server.
func Default() Config {
	return Config{
		DataDir: "./data",
		Server: ServerConfig{
			Addr:              "localhost:8080",
			PublicURL:         "http://localhost:8080",
			ShutdownTimeout:   10 * time.Second,
			publicURLFromAddr: true,
		},
		Sources: []SourceConfig{{Name: "handbook", Type: SourceBundled}},
		Index: IndexConfig{
			Backend:       BackendLocal,
			Fusion:        FusionScore,
			RRFK:          60,
			KeywordWeight: 1.0,
			VectorWeight:  0.4,
			Candidates:    100,
			Typesense:     TypesenseConfig{Collection: "docent_chunks", Timeout: 5 * time.Second, Retries: 3},
		},
		LLM: LLMConfig{
			Gemini: GeminiConfig{Model: "gemini-flash-latest", EmbeddingModel: "gemini-embedding-001",
				Dimensions: 768, Temperature: 0.2, MaxOutputTokens: 1024, Timeout: 30 * time.Second},
			OpenAI: OpenAIConfig{BaseURL: "https://api.openai.com/v1", Temperature: 0.2, MaxOutputTokens: 1024,
				Timeout: 30 * time.Second},
		},
		Embedder: EmbedderConfig{Provider: ProviderOffline},
		Answerer: AnswererConfig{Provider: ProviderOffline},
		Chunker:  ChunkerConfig{TargetTokens: 512, OverlapTokens: 40},
		Sync:     SyncConfig{Schedule: "@every 1h", MaxDocBytes: 1 << 20, MaxChunksPerDoc: 2000, Workers: 2},
		Log:      LogConfig{Format: "text"},
		Slack:    defaultSlack(),
		Discord:  defaultDiscord(),
		Auth:     AuthConfig{SessionIdle: 2 * time.Hour, APIRatePerMinute: 60, DocLinkTTL: 24 * time.Hour},
		Console:  ConsoleConfig{StaleAfterDays: 365},
	}
}

// normalize fills defaults that depend on what the file set: include globs
// of dir and git sources, the Confluence flavor, the Notion API URL.
func (c *Config) normalize() {
	for i := range c.Sources {
		s := &c.Sources[i]
		if s.Dir != nil && len(s.Dir.Include) == 0 {
			s.Dir.Include = append([]string(nil), DefaultInclude...)
		}
		if s.Git != nil && len(s.Git.Include) == 0 {
			s.Git.Include = append([]string(nil), DefaultInclude...)
		}
		if s.Confluence != nil && s.Confluence.Flavor == "" {
			s.Confluence.Flavor = FlavorCloud
		}
		if s.Notion != nil && s.Notion.APIURL == "" {
			s.Notion.APIURL = DefaultNotionAPIURL
		}
	}
}
