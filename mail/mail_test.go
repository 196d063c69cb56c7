package mail_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/subprov/subprov/mail"
	"github.com/subprov/subprov/mail/smtptest"
)

const secret = "s3cr3tPW"

func discardLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func TestNewTransport(t *testing.T) {
	tests := []struct {
		name     string
		url      string
		from     string
		wantName string // transport Name() on success
		wantErr  string // substring of the error; "" means success
	}{
		{name: "unset", url: "", wantName: "log"},
		{name: "blank", url: "  ", wantName: "log"},
		{name: "plain loopback", url: "smtp://127.0.0.1:2525", wantName: "smtp"},
		{name: "plain default port", url: "smtp://localhost", wantName: "smtp"},
		{name: "smtps with auth", url: "smtps://mailer:" + secret + "@mail.example.net:465", wantName: "smtps"},
		{name: "smtps escaped password", url: "smtps://mailer:p%40ss%2F" + secret + "@mail.example.net:465", wantName: "smtps"},
		{name: "smtps no auth", url: "smtps://mail.example.net", wantName: "smtps"},
		{name: "upper-case scheme", url: "SMTPS://mailer:" + secret + "@mail.example.net:465", wantName: "smtps"},
		{name: "display-name from", url: "", from: "Subprov <no-reply@subprov.example>", wantName: "log"},

		{name: "bad scheme", url: "http://mailer:" + secret + "@mail.example.net:25", wantErr: `unsupported scheme "http"`},
		{name: "no scheme", url: "//mailer:" + secret + "@mail.example.net:25", wantErr: "missing scheme"},
		{name: "host:port only", url: "mail.example.net:25", wantErr: "unsupported scheme"},
		{name: "port zero", url: "smtp://127.0.0.1:0", wantErr: "out of range"},
		{name: "port too big", url: "smtps://mailer:" + secret + "@mail.example.net:70000", wantErr: "out of range"},
		{name: "port not a number", url: "smtps://mailer:" + secret + "@mail.example.net:smtp", wantErr: "not a valid URL"},
		{name: "empty port", url: "smtp://127.0.0.1:", wantErr: "empty port"},
		{name: "unescaped slash in password", url: "smtps://mailer:ab/" + secret + "@mail.example.net:465", wantErr: "not a valid URL"},
		{name: "missing host", url: "smtps://mailer:" + secret + "@:465", wantErr: "missing host"},
		{name: "opaque", url: "smtp:mail.example.net", wantErr: "missing host"},
		{name: "credentials on plain smtp", url: "smtp://mailer:" + secret + "@127.0.0.1:25", wantErr: "only allowed with smtps"},
		{name: "user without password", url: "smtps://mailer@mail.example.net:465", wantErr: "without a password"},
		{name: "path and query", url: "smtps://mailer:x@mail.example.net:465/x?pw=" + secret, wantErr: "unexpected path"},
		{name: "bad from", url: "", from: "not an address", wantErr: "MAIL_FROM"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr, err := mail.NewTransport(tt.url, tt.from, discardLogger())
			if tt.wantErr != "" {
				if err == nil {
					t.Fatalf("NewTransport(%q) succeeded (%s), want error containing %q", tt.url, tr.Name(), tt.wantErr)
				}
				if !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("error %q does not contain %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), secret) {
					t.Errorf("error %q echoes the password", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("NewTransport(%q): %v", tt.url, err)
			}
			if got := tr.Name(); got != tt.wantName {
				t.Errorf("Name() = %q, want %q", got, tt.wantName)
			}
		})
	}
}

// longLink is a realistic reset link: longer than a 76-column
// quoted-printable line and full of characters ("=", "%", "&") that the
// encoding must round-trip.
var longLink = "https://subprov.example.net/account/password-reset/confirm?token=" +
	strings.Repeat("AbC123-_xyz=", 20) + "&next=%2Faccount%3Ftab%3Dsecurity&lang=fr"

func TestSMTPDelivers(t *testing.T) {
	srv := smtptest.Start(t)
	tr, err := mail.NewTransport(srv.URL(), "Subprov <no-reply@subprov.example.net>", discardLogger())
	if err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name string
		id   string
		msg  mail.Message
	}{
		{
			name: "reset link, non-ASCII subject",
			id:   "0190f3a2-7c1e-7d4b-9a55-3f2f1c0b9e11",
			msg: mail.Message{
				To:      "jane@example.net",
				Subject: "Réinitialisation de votre mot de passe",
				Body:    "Bonjour,\n\nPour choisir un nouveau mot de passe, ouvrez ce lien :\n" + longLink + "\n\nÀ bientôt ✓\n",
				Links:   []string{longLink},
			},
		},
		{
			name: "verification code",
			id:   "code-42",
			msg: mail.Message{
				To:      "Bob <bob@example.org>",
				Subject: "Your verification code",
				Body:    "Your code is 493817.\n",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tr.Send(context.Background(), tt.id, tt.msg); err != nil {
				t.Fatalf("Send: %v", err)
			}
			addr := tt.msg.To
			if i := strings.IndexByte(addr, '<'); i >= 0 {
				addr = strings.Trim(addr[i:], "<>")
			}
			got := srv.WaitFor(t, addr, 5*time.Second)
			if len(got.To) != 1 || got.To[0] != addr {
				t.Errorf("To = %q, want [%q]", got.To, addr)
			}
			if got.From != "no-reply@subprov.example.net" {
				t.Errorf("From = %q", got.From)
			}
			if got.Subject != tt.msg.Subject {
				t.Errorf("Subject = %q, want %q", got.Subject, tt.msg.Subject)
			}
			if strings.TrimRight(got.Body, "\n") != strings.TrimRight(tt.msg.Body, "\n") {
				t.Errorf("Body = %q, want %q", got.Body, tt.msg.Body)
			}
			if want := tt.id + "@subprov.example.net"; got.MessageID != want {
				t.Errorf("MessageID = %q, want %q", got.MessageID, want)
			}
			for _, link := range tt.msg.Links {
				if !strings.Contains(got.Body, link) {
					t.Errorf("link %q not found intact in body", link)
				}
			}
			if !strings.Contains(got.Raw, "Auto-Submitted: auto-generated") {
				t.Errorf("Auto-Submitted header missing:\n%s", got.Raw)
			}
		})
	}
}

// A retried Send must carry the same Message-ID so the receiver can drop the
// duplicate.
func TestSMTPRetrySameMessageID(t *testing.T) {
	srv := smtptest.Start(t)
	tr, err := mail.NewTransport(srv.URL(), "", discardLogger())
	if err != nil {
		t.Fatal(err)
	}
	m := mail.Message{To: "jane@example.net", Subject: "Invoice", Body: "Attached."}
	for range 2 {
		if err := tr.Send(context.Background(), "inv-2024-0001", m); err != nil {
			t.Fatalf("Send: %v", err)
		}
	}
	msgs := srv.Messages()
	if len(msgs) != 2 {
		t.Fatalf("got %d messages, want 2", len(msgs))
	}
	if msgs[0].MessageID != msgs[1].MessageID || msgs[0].MessageID != "inv-2024-0001@localhost" {
		t.Errorf("Message-IDs %q and %q, want both %q", msgs[0].MessageID, msgs[1].MessageID, "inv-2024-0001@localhost")
	}
}

func TestSMTPServerDown(t *testing.T) {
	srv := smtptest.Start(t)
	tr, err := mail.NewTransport(srv.URL(), "", discardLogger())
	if err != nil {
		t.Fatal(err)
	}
	m := mail.Message{To: "jane@example.net", Subject: "Code", Body: "123456"}

	srv.SetDown(true)
	err = tr.Send(context.Background(), "id-1", m)
	if !errors.Is(err, mail.ErrUnavailable) {
		t.Fatalf("Send while down: err = %v, want ErrUnavailable", err)
	}
	if strings.Contains(err.Error(), "123456") {
		t.Errorf("error %q leaks the body", err)
	}
	if n := len(srv.Messages()); n != 0 {
		t.Fatalf("%d messages captured while down", n)
	}

	// The retry the caller would make once the relay is back.
	srv.SetDown(false)
	if err := tr.Send(context.Background(), "id-1", m); err != nil {
		t.Fatalf("Send after recovery: %v", err)
	}
	srv.WaitFor(t, "jane@example.net", 5*time.Second)
}

func TestSMTPUnreachable(t *testing.T) {
	// A port that was just free: connecting is refused.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()

	tr, err := mail.NewTransport("smtp://"+addr, "", discardLogger())
	if err != nil {
		t.Fatal(err)
	}
	err = tr.Send(context.Background(), "id-1", mail.Message{To: "jane@example.net", Subject: "x", Body: "y"})
	if !errors.Is(err, mail.ErrUnavailable) {
		t.Fatalf("err = %v, want ErrUnavailable", err)
	}
}

func TestSMTPBadRecipientIsPermanent(t *testing.T) {
	srv := smtptest.Start(t)
	tr, err := mail.NewTransport(srv.URL(), "", discardLogger())
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ name, id, to string }{
		{"bad address", "id-1", "not an address"},
		{"bad id", "id with spaces", "jane@example.net"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := tr.Send(context.Background(), tt.id, mail.Message{To: tt.to, Subject: "x", Body: "y"})
			if err == nil || errors.Is(err, mail.ErrUnavailable) {
				t.Fatalf("err = %v, want a permanent (non-ErrUnavailable) error", err)
			}
		})
	}
}

// hungServer accepts connections and never says a word, like a relay stuck
// behind a broken firewall.
func hungServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	conns := make(chan net.Conn, 16)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns <- c
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		for {
			select {
			case c := <-conns:
				c.Close()
			default:
				return
			}
		}
	})
	return "smtp://" + ln.Addr().String()
}

func TestSMTPContextCancelled(t *testing.T) {
	m := mail.Message{To: "jane@example.net", Subject: "x", Body: "y"}

	t.Run("during session", func(t *testing.T) {
		tr, err := mail.NewTransport(hungServer(t), "", discardLogger())
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(100*time.Millisecond, cancel)
		start := time.Now()
		err = tr.Send(ctx, "id-1", m)
		elapsed := time.Since(start)
		if !errors.Is(err, context.Canceled) || !errors.Is(err, mail.ErrUnavailable) {
			t.Errorf("err = %v, want context.Canceled and ErrUnavailable", err)
		}
		// Without cancellation this would sit out the 10 s timeout.
		if elapsed > 2*time.Second {
			t.Errorf("Send returned %v after cancellation, want promptly", elapsed)
		}
	})

	t.Run("before send", func(t *testing.T) {
		srv := smtptest.Start(t)
		tr, err := mail.NewTransport(srv.URL(), "", discardLogger())
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := tr.Send(ctx, "id-1", m); !errors.Is(err, context.Canceled) || !errors.Is(err, mail.ErrUnavailable) {
			t.Errorf("err = %v, want context.Canceled and ErrUnavailable", err)
		}
		if n := len(srv.Messages()); n != 0 {
			t.Errorf("%d messages sent with a cancelled context", n)
		}
	})

	t.Run("deadline", func(t *testing.T) {
		tr, err := mail.NewTransport(hungServer(t), "", discardLogger())
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
		defer cancel()
		start := time.Now()
		err = tr.Send(ctx, "id-1", m)
		if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, mail.ErrUnavailable) {
			t.Errorf("err = %v, want context.DeadlineExceeded and ErrUnavailable", err)
		}
		if elapsed := time.Since(start); elapsed > 2*time.Second {
			t.Errorf("Send returned after %v, want promptly", elapsed)
		}
	})
}

func TestSMTPSImplicitTLSWithAuth(t *testing.T) {
	// Characters that must be percent-encoded in the URL, to prove the
	// password is unescaped before use.
	const pass = "p@ss:w/rd%" + secret
	srv := smtptest.StartImplicitTLS(t, "mailer", pass)
	m := mail.Message{To: "jane@example.net", Subject: "Réinitialisation", Body: "Lien : " + longLink}

	t.Run("delivers", func(t *testing.T) {
		tr, err := mail.NewTransport(srv.URL(), "", discardLogger())
		if err != nil {
			t.Fatal(err)
		}
		if tr.Name() != "smtps" {
			t.Errorf("Name() = %q, want smtps", tr.Name())
		}
		mail.SetRootCAs(tr, srv.CertPool())
		if err := tr.Send(context.Background(), "tls-1", m); err != nil {
			t.Fatalf("Send: %v", err)
		}
		got := srv.WaitFor(t, "jane@example.net", 5*time.Second)
		if got.Subject != m.Subject || !strings.Contains(got.Body, longLink) {
			t.Errorf("got subject %q body %q", got.Subject, got.Body)
		}
	})

	t.Run("wrong password", func(t *testing.T) {
		bad := strings.Replace(srv.URL(), "mailer:", "mailer:wrong", 1)
		tr, err := mail.NewTransport(bad, "", discardLogger())
		if err != nil {
			t.Fatal(err)
		}
		mail.SetRootCAs(tr, srv.CertPool())
		err = tr.Send(context.Background(), "tls-2", m)
		if !errors.Is(err, mail.ErrUnavailable) {
			t.Fatalf("err = %v, want ErrUnavailable", err)
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("error %q echoes the password", err)
		}
	})

	t.Run("untrusted certificate", func(t *testing.T) {
		tr, err := mail.NewTransport(srv.URL(), "", discardLogger())
		if err != nil {
			t.Fatal(err)
		}
		// No SetRootCAs: the system roots do not know the test certificate.
		err = tr.Send(context.Background(), "tls-3", m)
		if !errors.Is(err, mail.ErrUnavailable) {
			t.Fatalf("err = %v, want ErrUnavailable", err)
		}
	})
}

func TestLogTransportNeverLogsBody(t *testing.T) {
	const token = "tok_9f8e7d6c5b4a"
	var buf bytes.Buffer
	tr, err := mail.NewTransport("", "", slog.New(slog.NewJSONHandler(&buf, nil)))
	if err != nil {
		t.Fatal(err)
	}
	link := "https://subprov.example.net/reset?token=" + token
	m := mail.Message{
		To:      "jane@example.net",
		Subject: "Réinitialisation",
		Body:    "Open " + link + " — code " + token,
		Links:   []string{link},
	}
	if err := tr.Send(context.Background(), "log-1", m); err != nil {
		t.Fatalf("Send: %v", err)
	}

	out := buf.String()
	if strings.Contains(out, token) {
		t.Fatalf("log output contains the token: %s", out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 1 {
		t.Fatalf("got %d log lines, want 1: %s", len(lines), out)
	}
	var rec map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &rec); err != nil {
		t.Fatalf("log line is not JSON: %v", err)
	}
	for key, want := range map[string]any{"to": "j***@example.net", "subject": "Réinitialisation", "id": "log-1"} {
		if rec[key] != want {
			t.Errorf("log %s = %v, want %v", key, rec[key], want)
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	buf.Reset()
	if err := tr.Send(ctx, "log-2", m); !errors.Is(err, context.Canceled) {
		t.Errorf("Send with cancelled context: err = %v, want context.Canceled", err)
	}
	if buf.Len() != 0 {
		t.Errorf("cancelled Send still logged: %s", buf.String())
	}
}

// The zero Log is usable, so callers can build one without NewTransport.
func TestLogZeroValue(t *testing.T) {
	var l mail.Log
	if err := l.Send(context.Background(), "z", mail.Message{To: "a@b.c", Subject: "s"}); err != nil {
		t.Fatal(err)
	}
}
