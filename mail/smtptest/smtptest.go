// Package smtptest runs an in-process SMTP server for tests: it listens on
// 127.0.0.1, captures every message it accepts and can be switched "down" to
// exercise retries. Only for tests; it keeps everything in memory.
package smtptest

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log"
	"math/big"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net"
	netmail "net/mail"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// Captured is one message the server accepted.
type Captured struct {
	From      string   // envelope sender (MAIL FROM)
	To        []string // envelope recipients (RCPT TO)
	Subject   string   // decoded (RFC 2047 encoded-words resolved)
	Body      string   // text/plain content, transfer encoding decoded, line endings "\n"
	MessageID string   // Message-ID header without the angle brackets
	Raw       string   // the message as received, for assertions on other headers
}

// Server is an SMTP server on 127.0.0.1 that captures messages.
type Server struct {
	srv  *smtp.Server
	ln   net.Listener
	url  string
	user string // non-empty: AUTH PLAIN with user/pass is required
	pass string
	pool *x509.CertPool

	mu   sync.Mutex
	msgs []Captured
	down bool
}

// Start starts a plain (no TLS, no auth) server on 127.0.0.1:0. t.Cleanup
// closes it.
func Start(t testing.TB) *Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("smtptest: listen: %v", err)
	}
	s := &Server{ln: ln, url: "smtp://" + ln.Addr().String()}
	s.serve(t, nil)
	return s
}

// StartImplicitTLS starts a server that speaks TLS from the first byte (the
// smtps:// of RFC 8314) with a throw-away self-signed certificate for
// 127.0.0.1, and requires AUTH PLAIN with user and pass. Clients must trust
// CertPool(). t.Cleanup closes it.
func StartImplicitTLS(t testing.TB, user, pass string) *Server {
	t.Helper()
	if user == "" {
		t.Fatalf("smtptest: StartImplicitTLS needs a user name")
	}
	cert, pool, err := selfSigned()
	if err != nil {
		t.Fatalf("smtptest: certificate: %v", err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("smtptest: listen: %v", err)
	}
	u := url.URL{Scheme: "smtps", User: url.UserPassword(user, pass), Host: raw.Addr().String()}
	s := &Server{
		ln:   tls.NewListener(raw, cfg),
		url:  u.String(),
		user: user,
		pass: pass,
		pool: pool,
	}
	s.serve(t, cfg)
	return s
}

func (s *Server) serve(t testing.TB, tlsCfg *tls.Config) {
	srv := smtp.NewServer(backend{s})
	srv.Domain = "smtptest.localhost"
	srv.TLSConfig = tlsCfg
	srv.ReadTimeout = 10 * time.Second
	srv.WriteTimeout = 10 * time.Second
	srv.MaxMessageBytes = 10 << 20
	srv.MaxRecipients = 100
	// go-smtp logs to stderr by default; per-connection noise (clients that
	// hang up, as the cancellation tests do on purpose) would clutter test
	// output, and t.Logf cannot be used from goroutines that may outlive t.
	srv.ErrorLog = log.New(io.Discard, "", 0)
	s.srv = srv

	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(s.ln) // returns once Close is called
	}()
	t.Cleanup(func() {
		_ = srv.Close()
		// Close only closes listeners Serve has registered; if the test
		// ends before the goroutine above got that far, Serve would block
		// in Accept for ever. Closing the listener here covers that race.
		_ = s.ln.Close()
		<-done
	})
}

// URL is the address to give the mail package: "smtp://127.0.0.1:PORT", or
// "smtps://user:pass@127.0.0.1:PORT" for StartImplicitTLS.
func (s *Server) URL() string { return s.url }

// CertPool holds the certificate of a StartImplicitTLS server (nil for
// Start).
func (s *Server) CertPool() *x509.CertPool { return s.pool }

// Messages returns a copy of every captured message, oldest first.
func (s *Server) Messages() []Captured {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Captured, len(s.msgs))
	for i, m := range s.msgs {
		m.To = append([]string(nil), m.To...)
		out[i] = m
	}
	return out
}

// WaitFor polls until a message addressed to to (case-insensitive) has been
// captured and returns the most recent one, so a test that triggers a mail
// twice gets the newer link or code. It fails the test after timeout.
func (s *Server) WaitFor(t testing.TB, to string, timeout time.Duration) Captured {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		msgs := s.Messages()
		for i := len(msgs) - 1; i >= 0; i-- {
			for _, rcpt := range msgs[i].To {
				if strings.EqualFold(rcpt, to) {
					return msgs[i]
				}
			}
		}
		if time.Now().After(deadline) {
			var seen []string
			for _, m := range msgs {
				seen = append(seen, m.To...)
			}
			t.Fatalf("smtptest: no message to %q within %v (recipients seen: %q)", to, timeout, seen)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// SetDown switches the server between accepting mail and rejecting every
// transaction with a 451 temporary failure, which a correct client treats
// as "retry later".
func (s *Server) SetDown(down bool) {
	s.mu.Lock()
	s.down = down
	s.mu.Unlock()
}

func (s *Server) isDown() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.down
}

func (s *Server) capture(c Captured) {
	s.mu.Lock()
	s.msgs = append(s.msgs, c)
	s.mu.Unlock()
}

type backend struct{ s *Server }

func (b backend) NewSession(*smtp.Conn) (smtp.Session, error) {
	return &session{s: b.s}, nil
}

// session is one SMTP connection.
type session struct {
	s      *Server
	authed bool
	from   string
	to     []string
}

var errDown = &smtp.SMTPError{
	Code:         451,
	EnhancedCode: smtp.EnhancedCode{4, 3, 0},
	Message:      "smtptest: server is down, try again later",
}

func (ss *session) AuthMechanisms() []string {
	if ss.s.user == "" {
		return nil
	}
	return []string{sasl.Plain}
}

func (ss *session) Auth(mech string) (sasl.Server, error) {
	if mech != sasl.Plain || ss.s.user == "" {
		return nil, smtp.ErrAuthUnknownMechanism
	}
	return sasl.NewPlainServer(func(identity, user, pass string) error {
		if (identity != "" && identity != user) || user != ss.s.user || pass != ss.s.pass {
			return smtp.ErrAuthFailed
		}
		ss.authed = true
		return nil
	}), nil
}

func (ss *session) Mail(from string, _ *smtp.MailOptions) error {
	if ss.s.isDown() {
		return errDown
	}
	if ss.s.user != "" && !ss.authed {
		return smtp.ErrAuthRequired
	}
	ss.from = from
	return nil
}

func (ss *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	if ss.s.isDown() {
		return errDown
	}
	ss.to = append(ss.to, to)
	return nil
}

func (ss *session) Data(r io.Reader) error {
	raw, err := io.ReadAll(r)
	if err != nil {
		return fmt.Errorf("smtptest: read DATA: %w", err)
	}
	if ss.s.isDown() {
		return errDown
	}
	c, err := parse(raw)
	if err != nil {
		return &smtp.SMTPError{
			Code:         554,
			EnhancedCode: smtp.EnhancedCode{5, 6, 0},
			Message:      "smtptest: cannot parse message: " + err.Error(),
		}
	}
	c.From = ss.from
	c.To = append([]string(nil), ss.to...)
	ss.s.capture(c)
	return nil
}

func (ss *session) Reset() {
	ss.from = ""
	ss.to = nil
}

func (ss *session) Logout() error { return nil }

// parse decodes the parts of a message tests look at.
func parse(raw []byte) (Captured, error) {
	msg, err := netmail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		return Captured{}, fmt.Errorf("read message: %w", err)
	}
	subject, err := new(mime.WordDecoder).DecodeHeader(msg.Header.Get("Subject"))
	if err != nil {
		return Captured{}, fmt.Errorf("decode subject: %w", err)
	}
	body, err := textBody(msg.Header.Get("Content-Type"), msg.Header.Get("Content-Transfer-Encoding"), msg.Body)
	if err != nil {
		return Captured{}, fmt.Errorf("decode body: %w", err)
	}
	return Captured{
		Subject:   subject,
		Body:      strings.ReplaceAll(body, "\r\n", "\n"),
		MessageID: strings.Trim(strings.TrimSpace(msg.Header.Get("Message-Id")), "<>"),
		Raw:       string(raw),
	}, nil
}

// textBody returns the decoded text of a single-part body, or the
// concatenated text/plain parts of a multipart one.
func textBody(contentType, cte string, r io.Reader) (string, error) {
	mediaType, params, err := mime.ParseMediaType(contentType)
	if contentType == "" || err != nil {
		mediaType = "text/plain"
	}
	if strings.HasPrefix(mediaType, "multipart/") {
		mr := multipart.NewReader(r, params["boundary"])
		var out []string
		for {
			p, err := mr.NextRawPart() // raw: the transfer encoding is undone below
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return "", fmt.Errorf("multipart: %w", err)
			}
			text, err := textBody(p.Header.Get("Content-Type"), p.Header.Get("Content-Transfer-Encoding"), p)
			if err != nil {
				return "", err
			}
			pt, _, _ := mime.ParseMediaType(p.Header.Get("Content-Type"))
			if text != "" && (pt == "" || pt == "text/plain" || strings.HasPrefix(pt, "multipart/")) {
				out = append(out, text)
			}
		}
		return strings.Join(out, "\n"), nil
	}
	switch strings.ToLower(strings.TrimSpace(cte)) {
	case "quoted-printable":
		r = quotedprintable.NewReader(r)
	case "base64":
		r = base64.NewDecoder(base64.StdEncoding, r) // skips the CRLFs between lines
	}
	b, err := io.ReadAll(r)
	if err != nil {
		return "", fmt.Errorf("%s: %w", cte, err)
	}
	return string(b), nil
}

// selfSigned makes a short-lived certificate for 127.0.0.1 and localhost and
// a pool that trusts it.
func selfSigned() (tls.Certificate, *x509.CertPool, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "smtptest"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		DNSNames:              []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool, nil
}
