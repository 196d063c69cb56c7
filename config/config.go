// Package config reads the service's configuration from the environment (README.md, Configuration). The
// result is a plain value passed to whatever needs it; nothing reads the environment later.
package config

import (
	"fmt"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/subprov/subprov/identity"
	"github.com/subprov/subprov/tracing"
)

// Config is the whole configuration of one process.
type Config struct {
	Addr        string // SUBPROV_ADDR
	DatabaseURL string // DATABASE_URL
	RedisURL    string // REDIS_URL
	SMTPURL     string // SMTP_URL
	MailFrom    string // MAIL_FROM
	Secret      string // SUBPROV_SECRET ("" = generate and store on first start)
	// PreviousSecret is SUBPROV_SECRET_PREVIOUS: during a rotation of SUBPROV_SECRET, what was
	// sealed under the secret before still opens (switch passwords, second-factor keys).
	PreviousSecret string
	PublicURL      string // SUBPROV_PUBLIC_URL
	Dev            bool   // SUBPROV_DEV
	SeedFile       string // SUBPROV_SEED
	SwitchDriver   string // SUBPROV_SWITCH_DRIVER
	// ReconcileEvery is SUBPROV_RECONCILE_INTERVAL: how often each switch is read and compared
	// with its lines (docs/network.md, Reconciliation).
	ReconcileEvery time.Duration
	// CountersEvery is SUBPROV_COUNTERS_INTERVAL: how often the interface counters of each
	// switch that reads them are sampled (docs/network.md, Counters and outages).
	CountersEvery time.Duration
	LogFormat     string // SUBPROV_LOG_FORMAT: text or json
	NoRateLimits  bool   // SUBPROV_RATE_LIMITS=0: load tests only
	Workers       bool   // run job workers in this process (serve without --no-workers, worker)
	StripeAPIKey  string // STRIPE_API_KEY: enables the Stripe adapter for providers with payment_processor stripe
	StripeAPIBase string // STRIPE_API_BASE: Stripe API base URL (stripe-mock in tests)
	SMSAPIURL     string // SUBPROV_SMS_API_URL: base of the Twilio-compatible SMS API
	SMSAccountSID string // SUBPROV_SMS_ACCOUNT_SID
	SMSAuthToken  string // SUBPROV_SMS_AUTH_TOKEN
	SMSFrom       string // SUBPROV_SMS_FROM: sender number
	CPEACSURL     string // SUBPROV_CPE_ACS_URL: GenieACS NBI base URL ("" = CPE status unknown)
	AgentAPIKey   string // SUBPROV_AGENT_API_KEY: the key subprov mcp acts with
	PprofAddr     string // SUBPROV_PPROF_ADDR: loopback address of the pprof endpoints ("" = off)
	// TrustedProxies (SUBPROV_TRUSTED_PROXIES) are the load balancers and proxies whose
	// X-Forwarded-For is believed; none by default.
	TrustedProxies []netip.Prefix
	// RedisPrefix namespaces rate-limit keys in a shared Redis (tests use a random one).
	RedisPrefix string
	// PasswordCost is the argon2id cost of new password hashes. No variable sets it: the zero
	// value is the production cost, and only tests, in dev mode, ask for a cheaper one.
	PasswordCost identity.PasswordCost
	// Tracing is OpenTelemetry tracing as the standard OTEL_* variables set it; off unless
	// they name an exporter.
	Tracing tracing.Config
}

// Var documents one environment variable; the list drives --help and the README table.
type Var struct {
	Name, Default, Meaning string
}

// Vars lists every variable the service reads.
var Vars = []Var{
	{"SUBPROV_ADDR", "127.0.0.1:8080", "listen address"},
	{"DATABASE_URL", "sqlite://./data/subprov.db", "sqlite://PATH or postgres://…; the scheme picks the store; on PostgreSQL pool_max_conns=N sizes the main pool (default 8), read_pool_max_conns=N the pool of reads outside transactions (default 4); a server on this host: postgres://USER@/DB?host=/var/run/postgresql (its Unix socket)"},
	{"REDIS_URL", "", "set: rate limits are shared through Redis; unset: in-process"},
	{"SMTP_URL", "", "smtp://host:port (plain, loopback) or smtps://user:pass@host:port; unset: mail goes to the log and the outbox table"},
	{"MAIL_FROM", "no-reply@localhost", "sender address"},
	{"SUBPROV_SECRET", "", "key for signing JWTs and tokens and for encrypting operators' second-factor keys; unset: generated and stored in the database on first start"},
	{"SUBPROV_SECRET_PREVIOUS", "", "the secret before SUBPROV_SECRET during a rotation: what it sealed (switch passwords, second-factor keys) still opens until `subprov switches rekey` seals it anew"},
	{"SUBPROV_PUBLIC_URL", "http:// + SUBPROV_ADDR", "base of links in e-mails (booking, set-up, reset)"},
	{"SUBPROV_DEV", "0", "1 turns on dev mode: /api/v1/dev/clock, /faults, /outbox"},
	{"SUBPROV_SEED", "", "fixture file loaded at start: creates missing rows, never changes one"},
	{"SUBPROV_SWITCH_DRIVER", "sim", "the driver of a switch whose inventory row names none (and of a switch a port names for the first time)"},
	{"SUBPROV_RECONCILE_INTERVAL", "15m", "how often each switch is reconciled: every port read and compared with its lines (a Go duration, at least 1m)"},
	{"SUBPROV_COUNTERS_INTERVAL", "5m", "how often the octet counters and link state of every port lines hold are sampled on each switch whose driver reads them (not the sim): the traffic series behind usage, and link-down periods as outages (a Go duration, at least 1m)"},
	{"SUBPROV_LOG_FORMAT", "text on a terminal, else json", "log format: text or json"},
	{"STRIPE_API_KEY", "", "Stripe secret key for providers whose payment_processor is stripe (connected accounts)"},
	{"STRIPE_API_BASE", "https://api.stripe.com", "Stripe API base URL (stripe-mock in tests)"},
	{"SUBPROV_SMS_API_URL", "https://api.twilio.com", "base URL of the Twilio-compatible SMS API (agent one-time codes by SMS)"},
	{"SUBPROV_SMS_ACCOUNT_SID", "", "SMS API account SID (basic-auth user); SMS is unconfigured unless SID, token and sender are all set (dev mode then writes texts to the outbox)"},
	{"SUBPROV_SMS_AUTH_TOKEN", "", "SMS API auth token (basic-auth password)"},
	{"SUBPROV_SMS_FROM", "", "SMS sender number"},
	{"SUBPROV_CPE_ACS_URL", "", "GenieACS NBI base URL for modem status in the agent's network health; unset: modem status unknown"},
	// Performance (issue 9): load tests on loopback measure the service, not the limiter.
	{"SUBPROV_TRUSTED_PROXIES", "", "comma-separated CIDRs or addresses of the load balancers and proxies in front of subprov; from them X-Forwarded-For is believed, and its right-most address that is not a trusted proxy is the client the rate limits and login limits count by; unset: the peer address is the client and X-Forwarded-For is ignored"},
	{"SUBPROV_RATE_LIMITS", "1", "0 turns off the per-route rate limits (load tests only; never in production)"},
	{"SUBPROV_PPROF_ADDR", "", "loopback host:port serving Go's /debug/pprof/ profiles (profiling only); unset: off"},
	{"SUBPROV_AGENT_API_KEY", "", "subprov mcp: the agent API key (feature agent_api_access) its tools act with; --api-key overrides"},
	{"OTEL_EXPORTER_OTLP_ENDPOINT", "", "set: OpenTelemetry tracing is on and spans go over OTLP/HTTP (protobuf) to this base URL + /v1/traces (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: the full URL); OTEL_SERVICE_NAME (default subprov), OTEL_RESOURCE_ATTRIBUTES, OTEL_EXPORTER_OTLP_HEADERS, OTEL_TRACES_SAMPLER apply; unset: tracing is off (docs/monitoring.md, Tracing)"},
	{"OTEL_TRACES_EXPORTER", "", "otlp turns tracing on (to http://localhost:4318 unless an endpoint is set); none turns it off, as OTEL_SDK_DISABLED=true does"},
	{"GOGC", "200 for serve, worker and demo", "Go's garbage-collection target (Go's own default is 100); unset or empty: 200 for the server commands; any other value, off included, is the runtime's"},
}

// FromEnv reads the configuration through getenv; isTerminal picks the default log format.
func FromEnv(getenv func(string) string, isTerminal bool) (Config, error) {
	get := func(name, def string) string {
		if v := strings.TrimSpace(getenv(name)); v != "" {
			return v
		}
		return def
	}
	c := Config{
		Addr:           get("SUBPROV_ADDR", "127.0.0.1:8080"),
		DatabaseURL:    get("DATABASE_URL", "sqlite://./data/subprov.db"),
		RedisURL:       get("REDIS_URL", ""),
		SMTPURL:        get("SMTP_URL", ""),
		MailFrom:       get("MAIL_FROM", "no-reply@localhost"),
		Secret:         getenv("SUBPROV_SECRET"),
		PreviousSecret: getenv("SUBPROV_SECRET_PREVIOUS"),
		SeedFile:       get("SUBPROV_SEED", ""),
		SwitchDriver:   get("SUBPROV_SWITCH_DRIVER", "sim"),
		Workers:        true,
		RedisPrefix:    "subprov:",
		StripeAPIKey:   getenv("STRIPE_API_KEY"),
		StripeAPIBase:  get("STRIPE_API_BASE", ""),
		SMSAPIURL:      get("SUBPROV_SMS_API_URL", "https://api.twilio.com"),
		SMSAccountSID:  get("SUBPROV_SMS_ACCOUNT_SID", ""),
		SMSAuthToken:   getenv("SUBPROV_SMS_AUTH_TOKEN"),
		SMSFrom:        get("SUBPROV_SMS_FROM", ""),
		CPEACSURL:      get("SUBPROV_CPE_ACS_URL", ""),
		AgentAPIKey:    getenv("SUBPROV_AGENT_API_KEY"),
		PprofAddr:      get("SUBPROV_PPROF_ADDR", ""),
	}
	if _, _, err := net.SplitHostPort(c.Addr); err != nil {
		return c, fmt.Errorf("SUBPROV_ADDR %q: want host:port", c.Addr)
	}
	if c.PprofAddr != "" {
		host, _, err := net.SplitHostPort(c.PprofAddr)
		if ip := net.ParseIP(host); err != nil || (host != "localhost" && (ip == nil || !ip.IsLoopback())) {
			return c, fmt.Errorf("SUBPROV_PPROF_ADDR %q: want a loopback host:port (profiles are never served on the network)", c.PprofAddr)
		}
	}
	proxies, err := ParsePrefixes(get("SUBPROV_TRUSTED_PROXIES", ""))
	if err != nil {
		return c, fmt.Errorf("SUBPROV_TRUSTED_PROXIES: %w", err)
	}
	c.TrustedProxies = proxies
	dev, err := parseBool(get("SUBPROV_DEV", "0"))
	if err != nil {
		return c, fmt.Errorf("SUBPROV_DEV: %w", err)
	}
	c.Dev = dev
	limits, err := parseBool(get("SUBPROV_RATE_LIMITS", "1"))
	if err != nil {
		return c, fmt.Errorf("SUBPROV_RATE_LIMITS: %w", err)
	}
	c.NoRateLimits = !limits
	c.PublicURL = strings.TrimRight(get("SUBPROV_PUBLIC_URL", "http://"+c.Addr), "/")
	def := "json"
	if isTerminal {
		def = "text"
	}
	c.LogFormat = get("SUBPROV_LOG_FORMAT", def)
	if c.LogFormat != "text" && c.LogFormat != "json" {
		return c, fmt.Errorf("SUBPROV_LOG_FORMAT %q: want text or json", c.LogFormat)
	}
	if c.Tracing, err = tracing.ConfigFromEnv(getenv); err != nil {
		return c, err
	}
	if c.ReconcileEvery, err = time.ParseDuration(get("SUBPROV_RECONCILE_INTERVAL", "15m")); err != nil || c.ReconcileEvery < time.Minute {
		return c, fmt.Errorf("SUBPROV_RECONCILE_INTERVAL %q: want a duration of at least 1m (15m, 1h)", get("SUBPROV_RECONCILE_INTERVAL", "15m"))
	}
	if c.CountersEvery, err = time.ParseDuration(get("SUBPROV_COUNTERS_INTERVAL", "5m")); err != nil || c.CountersEvery < time.Minute {
		return c, fmt.Errorf("SUBPROV_COUNTERS_INTERVAL %q: want a duration of at least 1m (5m, 15m)", get("SUBPROV_COUNTERS_INTERVAL", "5m"))
	}
	if c.SwitchDriver != "sim" {
		return c, fmt.Errorf("SUBPROV_SWITCH_DRIVER %q: the only driver built in is sim", c.SwitchDriver)
	}
	return c, nil
}

// ParsePrefixes reads a comma-separated list of CIDRs and addresses (an address is a prefix of
// its full length).
func ParsePrefixes(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if p, err := netip.ParsePrefix(f); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(f)
		if err != nil {
			return nil, fmt.Errorf("%q: want a CIDR (10.0.0.0/8) or an address", f)
		}
		a = a.Unmap()
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out, nil
}

func parseBool(s string) (bool, error) {
	switch strings.ToLower(s) {
	case "1", "true", "yes", "on":
		return true, nil
	case "0", "false", "no", "off", "":
		return false, nil
	}
	if _, err := strconv.ParseBool(s); err != nil {
		return false, fmt.Errorf("%q: want 1 or 0", s)
	}
	return false, nil
}

// IsTerminal reports whether f is a character device (a person is watching the logs).
func IsTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
