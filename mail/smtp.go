package mail

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	netmail "net/mail"
	"strconv"
	"strings"
	"time"

	gomail "github.com/wneessen/go-mail"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/subprov/subprov/tracing"
)

// SMTP delivers messages through an SMTP relay with github.com/wneessen/go-mail.
//
// smtp:// is plain SMTP without TLS (TLSPolicy NoTLS), meant for a relay on
// loopback; smtps:// is implicit TLS (RFC 8314) with PLAIN or LOGIN auth from
// the URL's userinfo. Each Send opens its own connection: mail volume is low
// (resets, set-up links, codes, invoices), and a fresh connection per message
// means no pooled connection can go stale between sends and concurrent Sends
// need no locking.
//
// Create it with NewTransport.
type SMTP struct {
	cfg         smtpConfig
	from        *netmail.Address
	log         *slog.Logger
	dialTimeout time.Duration // connect, greeting, EHLO, auth; also go-mail's per-I/O deadline
	sendTimeout time.Duration // the mail transaction after the dial
	rootCAs     *x509.CertPool
}

// Name implements Transport.
func (s *SMTP) Name() string {
	if s.cfg.implicitTLS {
		return "smtps"
	}
	return "smtp"
}

// Send implements Transport. The message's Message-ID is derived from id
// alone, so a retried Send produces the same header and receivers can drop
// the duplicate. If the relay accepted the message but closing the session
// failed afterwards, Send reports success: reporting an error would only make
// the caller send the message again.
//
// Failures to reach or talk to the relay, 4xx replies, timeouts and
// cancellation wrap ErrUnavailable. A 5xx refusal of the message or a
// malformed address does not: retrying cannot help.
//
// With tracing on, the send is a span, "smtp.send", naming the message id (never the
// recipient).
func (s *SMTP) Send(ctx context.Context, id string, m Message) (err error) {
	if !tracing.Enabled() {
		return s.send(ctx, id, m)
	}
	ctx, span := tracing.Start(ctx, "smtp.send", trace.SpanKindClient,
		attribute.String("subprov.mail.id", id), attribute.String("subprov.mail.transport", s.Name()))
	defer func() { tracing.End(span, err) }()
	return s.send(ctx, id, m)
}

// send is Send.
func (s *SMTP) send(ctx context.Context, id string, m Message) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%w: smtp send not started: %w", ErrUnavailable, err)
	}
	msg, err := s.buildMsg(id, m)
	if err != nil {
		return err
	}

	// Overall bound on top of go-mail's per-operation deadlines, so a relay
	// that trickles bytes cannot hold the caller indefinitely.
	ctx, cancel := context.WithTimeout(ctx, s.dialTimeout+s.sendTimeout)
	defer cancel()

	// go-mail uses the context only while dialling. Closing the connection
	// when ctx ends is what makes cancellation interrupt a session that
	// is already under way (a hung greeting, a stalled DATA).
	var stopClose func() bool
	dial := func(dctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := s.dialConn(dctx, network, addr)
		if err != nil {
			return nil, err
		}
		stopClose = context.AfterFunc(ctx, func() { _ = conn.Close() })
		return conn, nil
	}

	client, err := gomail.NewClient(s.cfg.host, s.clientOptions(dial)...)
	if err != nil {
		return fmt.Errorf("mail: configure smtp client: %w", err)
	}
	sendErr := client.DialAndSendWithContext(ctx, msg)
	if stopClose != nil {
		stopClose()
	}

	if msg.IsDelivered() {
		if sendErr != nil {
			s.log.DebugContext(ctx, "mail: smtp session ended with an error after the message was accepted",
				"id", id, "to", maskAddress(m.To), "error", sendErr)
		}
		return nil
	}
	if sendErr == nil {
		// Not expected from go-mail, but a message that was not accepted must
		// not be reported as sent.
		return fmt.Errorf("%w: smtp relay %s did not confirm delivery", ErrUnavailable, s.addr())
	}
	return s.classify(ctx, sendErr, m.To)
}

// classify decides whether a failed send is worth retrying.
func (s *SMTP) classify(ctx context.Context, err error, to string) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		// The connection was closed under go-mail, so its own error ("use of
		// closed network connection") would only hide the reason.
		return fmt.Errorf("%w: smtp send to %s via %s interrupted: %w",
			ErrUnavailable, maskAddress(to), s.addr(), ctxErr)
	}
	var se *gomail.SendError
	if errors.As(err, &se) {
		if code := se.ErrorCode(); code >= 500 && code < 600 {
			return fmt.Errorf("mail: smtp relay %s refused message to %s: %w", s.addr(), maskAddress(to), err)
		}
	}
	return fmt.Errorf("%w: smtp send to %s via %s: %w", ErrUnavailable, maskAddress(to), s.addr(), err)
}

func (s *SMTP) addr() string {
	return net.JoinHostPort(s.cfg.host, strconv.Itoa(s.cfg.port))
}

func (s *SMTP) clientOptions(dial gomail.DialContextFunc) []gomail.Option {
	opts := []gomail.Option{
		gomail.WithPort(s.cfg.port),
		gomail.WithTimeout(s.dialTimeout),
		gomail.WithDialContextFunc(dial),
	}
	if !s.cfg.implicitTLS {
		// Plain relay on loopback: never attempt STARTTLS, which such relays
		// (and test servers) usually cannot do.
		return append(opts, gomail.WithTLSPolicy(gomail.NoTLS))
	}
	// WithSSL tells go-mail the session is already encrypted so it skips
	// STARTTLS; the TLS handshake itself happens in dialConn.
	opts = append(opts, gomail.WithSSL(), gomail.WithTLSPolicy(gomail.NoTLS))
	if s.cfg.user != "" {
		opts = append(opts,
			gomail.WithOpportunisticSMTPAuth(gomail.SMTPAuthPlain, gomail.SMTPAuthLogin),
			gomail.WithUsername(s.cfg.user),
			gomail.WithPassword(s.cfg.pass),
		)
	}
	return opts
}

// dialConn opens the TCP connection, doing the implicit-TLS handshake here
// rather than in go-mail: go-mail skips its own TLS dialler when a custom
// dial function is set, and we need the custom function to get hold of the
// connection for cancellation. The *tls.Conn is returned as is, because
// go-mail's SMTP client recognises TLS by that type and refuses PLAIN/LOGIN
// auth on anything else.
func (s *SMTP) dialConn(ctx context.Context, network, addr string) (net.Conn, error) {
	nd := &net.Dialer{}
	if !s.cfg.implicitTLS {
		return nd.DialContext(ctx, network, addr)
	}
	td := &tls.Dialer{
		NetDialer: nd,
		Config: &tls.Config{
			ServerName: s.cfg.host,
			MinVersion: tls.VersionTLS12,
			RootCAs:    s.rootCAs, // nil: system roots
		},
	}
	return td.DialContext(ctx, network, addr)
}

// buildMsg turns m into a go-mail message. Its errors are permanent (bad
// addresses or id), so they do not wrap ErrUnavailable.
func (s *SMTP) buildMsg(id string, m Message) (*gomail.Msg, error) {
	msgID, err := messageID(id, s.from.Address)
	if err != nil {
		return nil, err
	}
	msg := gomail.NewMsg()
	msg.FromMailAddress(s.from)
	if err := msg.To(m.To); err != nil {
		return nil, fmt.Errorf("mail: recipient %s: %w", maskAddress(m.To), err)
	}
	msg.Subject(m.Subject)
	msg.SetMessageIDWithValue(msgID)
	msg.SetDate()
	// RFC 3834: these are machine-generated, so vacation responders and
	// the like should not answer them.
	msg.SetGenHeader(gomail.Header("Auto-Submitted"), "auto-generated")
	msg.SetUserAgent("subprov")
	msg.SetBodyString(gomail.TypeTextPlain, m.Body)
	return msg, nil
}

// messageID builds the Message-ID value (without angle brackets) for id. An
// id without "@" gets the sender's domain appended, since RFC 5322 requires
// "left@right"; the result depends only on id and the sender, so a retry
// carries the same header. Characters are restricted to RFC 5322 atext plus
// "." and "@", which also rules out header injection through id.
func messageID(id, from string) (string, error) {
	if id == "" {
		return "", errors.New("mail: empty message id")
	}
	for _, r := range id {
		if !isAtext(r) && r != '.' && r != '@' {
			return "", fmt.Errorf("mail: message id %q contains %q (allowed: letters, digits, .@ and !#$%%&'*+-/=?^_`{|}~)", id, r)
		}
	}
	switch strings.Count(id, "@") {
	case 0:
		domain := from[strings.LastIndexByte(from, '@')+1:]
		if domain == "" {
			domain = "localhost"
		}
		return id + "@" + domain, nil
	case 1:
		if strings.HasPrefix(id, "@") || strings.HasSuffix(id, "@") {
			return "", fmt.Errorf("mail: message id %q has an empty side of \"@\"", id)
		}
		return id, nil
	default:
		return "", fmt.Errorf("mail: message id %q has more than one \"@\"", id)
	}
}

// isAtext reports whether r is an RFC 5322 atext character.
func isAtext(r rune) bool {
	switch {
	case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		return true
	}
	return strings.ContainsRune("!#$%&'*+-/=?^_`{|}~", r)
}
