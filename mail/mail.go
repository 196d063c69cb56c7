// Package mail handles outgoing e-mail: the message type and the transports
// that carry it (SMTP or the log).
package mail

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	netmail "net/mail"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// DefaultFrom is the sender used when MAIL_FROM is unset.
const DefaultFrom = "no-reply@localhost"

// Timeouts for one SMTP delivery. They bound how long a retrying caller (a
// job worker, a request handler) can be held up by a slow or dead relay.
const (
	dialTimeout = 10 * time.Second
	sendTimeout = 10 * time.Second
)

// ErrUnavailable wraps transport failures so callers can retry (use
// errors.Is). Errors that do not wrap it are permanent for that message
// (malformed address, the server refused it with a 5xx reply): sending the
// same message again will fail the same way.
var ErrUnavailable = errors.New("mail transport unavailable")

// Message is one outgoing e-mail.
type Message struct {
	To      string
	Subject string   // logged by the Log transport: never put a secret here
	Body    string   // plain text; may hold tokens or codes, so it is never logged
	Links   []string // links contained in Body, kept for the outbox/dev view
}

// Transport carries one message. Send must be safe to call twice for the
// same message id (the caller retries); id is passed as the Message-ID
// header so receivers can de-duplicate.
type Transport interface {
	Send(ctx context.Context, id string, m Message) error
	Name() string
}

// NewTransport picks the transport from SMTP_URL: "" → Log, smtp:// or
// smtps:// → SMTP. from is MAIL_FROM ("" means DefaultFrom); log receives the
// Log transport's lines and SMTP diagnostics (nil means slog.Default()).
//
// A malformed URL is an error that says what is wrong without echoing the
// password: the URL usually comes from the environment and the error ends up
// in logs.
func NewTransport(smtpURL, from string, log *slog.Logger) (Transport, error) {
	if log == nil {
		log = slog.Default()
	}
	if strings.TrimSpace(from) == "" {
		from = DefaultFrom
	}
	sender, err := netmail.ParseAddress(from)
	if err != nil {
		return nil, fmt.Errorf("mail: invalid MAIL_FROM %q: %w", from, err)
	}
	if strings.TrimSpace(smtpURL) == "" {
		return &Log{Logger: log}, nil
	}
	cfg, err := parseSMTPURL(smtpURL)
	if err != nil {
		return nil, fmt.Errorf("mail: invalid SMTP_URL: %w", err)
	}
	if !cfg.implicitTLS && !isLoopback(cfg.host) {
		// Allowed (a relay on a private network is a legitimate set-up) but
		// worth a line: everything, links and codes included, travels in clear.
		log.Warn("mail: SMTP_URL uses plain smtp:// to a non-loopback host; mail is sent unencrypted",
			"host", cfg.host)
	}
	return &SMTP{
		cfg:         cfg,
		from:        sender,
		log:         log,
		dialTimeout: dialTimeout,
		sendTimeout: sendTimeout,
	}, nil
}

// smtpConfig is SMTP_URL, parsed and checked.
type smtpConfig struct {
	implicitTLS bool
	host        string
	port        int
	user        string
	pass        string
}

// parseSMTPURL checks SMTP_URL. None of its errors include the raw URL or the
// result of url.Parse: both can contain the password (url.Error quotes the
// whole input, and an unescaped "/" in the password shifts it into the
// "port" that url.Parse complains about).
func parseSMTPURL(raw string) (smtpConfig, error) {
	var cfg smtpConfig
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return cfg, errors.New("not a valid URL (want smtp://host:port or smtps://user:pass@host:port; " +
			"percent-encode special characters in the user name and password)")
	}
	switch u.Scheme {
	case "smtp":
	case "smtps":
		cfg.implicitTLS = true
	case "":
		return cfg, errors.New("missing scheme (want smtp:// or smtps://)")
	default:
		return cfg, fmt.Errorf("unsupported scheme %q (want smtp or smtps)", u.Scheme)
	}
	if u.Opaque != "" || u.Host == "" {
		return cfg, fmt.Errorf("missing host (want %s://host:port)", u.Scheme)
	}
	cfg.host = u.Hostname()
	if cfg.host == "" {
		return cfg, fmt.Errorf("missing host (want %s://host:port)", u.Scheme)
	}
	if (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		// Not echoed: a misplaced password may have ended up there.
		return cfg, errors.New("unexpected path, query or fragment after host:port")
	}

	// The port is optional; the defaults are the registered ones.
	cfg.port = 25
	if cfg.implicitTLS {
		cfg.port = 465
	}
	if p := u.Port(); p != "" {
		// url.Parse has already checked that p is all digits, so it is safe
		// to quote.
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return cfg, fmt.Errorf("port %q out of range 1-65535", p)
		}
		cfg.port = n
	} else if strings.HasSuffix(u.Host, ":") {
		return cfg, errors.New("empty port after host")
	}

	if u.User != nil {
		if !cfg.implicitTLS {
			// Plain smtp:// is meant for a loopback relay; credentials on
			// it would cross the network unencrypted.
			return cfg, errors.New("credentials are only allowed with smtps:// (smtp:// is unencrypted)")
		}
		cfg.user = u.User.Username()
		pass, ok := u.User.Password()
		if cfg.user == "" {
			return cfg, errors.New("empty user name in smtps:// URL")
		}
		if !ok || pass == "" {
			return cfg, errors.New("user name given without a password")
		}
		cfg.pass = pass
	}
	return cfg, nil
}

// isLoopback reports whether host is a loopback name or address. No DNS
// lookup: this only decides whether to warn.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// maskAddress hides all but the first character of the local part
// ("jane@example.net" → "j***@example.net"), enough to tell messages apart
// in a log without recording who the subscriber is.
func maskAddress(addr string) string {
	if a, err := netmail.ParseAddress(addr); err == nil {
		addr = a.Address
	}
	at := strings.LastIndexByte(addr, '@')
	if at < 0 {
		return "***"
	}
	local, domain := addr[:at], addr[at+1:]
	r, size := utf8.DecodeRuneInString(local)
	if size == 0 || r == utf8.RuneError {
		return "***@" + domain
	}
	return string(r) + "***@" + domain
}
