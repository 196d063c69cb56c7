// Package sshclient is the SSH client the switch drivers share: the pinned host key, password
// (and keyboard-interactive) login, the host-key algorithms asked of the switch, a dial whose
// handshake honours the caller's context, keepalives, and one classification of what went
// wrong: a refused login or host key is final (switches.ErrAuth, switches.ErrHostKey, both
// switches.ErrCredentials), anything else switches.ErrUnavailable.
package sshclient

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/subprov/subprov/switches"
)

// ParseHostKey reads a public key in authorized_keys form ("ssh-ed25519 AAAA…") or as a
// known_hosts line ("host ssh-ed25519 AAAA…"). There is no trust on first use: an empty key is
// switches.ErrHostKey, as is a line that is neither form.
func ParseHostKey(s string) (ssh.PublicKey, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, fmt.Errorf("%w: no host key is pinned (an unknown host key is never accepted)", switches.ErrHostKey)
	}
	if k, _, _, _, err := ssh.ParseAuthorizedKey([]byte(s)); err == nil {
		return k, nil
	}
	if _, _, k, _, _, err := ssh.ParseKnownHosts([]byte(s)); err == nil {
		return k, nil
	}
	return nil, fmt.Errorf("%w: host key %q is neither an authorized_keys nor a known_hosts line", switches.ErrHostKey, s)
}

// PasswordAuth logs in with the password, answering every keyboard-interactive question with
// it too (what switches whose sshd only offers keyboard-interactive ask).
func PasswordAuth(password string) []ssh.AuthMethod {
	return []ssh.AuthMethod{ssh.Password(password), ssh.KeyboardInteractive(
		func(_, _ string, questions []string, _ []bool) ([]string, error) {
			answers := make([]string, len(questions))
			for i := range answers {
				answers[i] = password
			}
			return answers, nil
		})}
}

var errMismatch = errors.New("host key mismatch")

// Config is the client side of one switch's SSH connection.
type Config struct {
	User    string
	Auth    []ssh.AuthMethod
	HostKey ssh.PublicKey // the pinned key (ParseHostKey)
	// Timeout bounds the TCP connection and the handshake (default 10 s).
	Timeout time.Duration
}

// ClientConfig is the x/crypto/ssh configuration: only the pinned key is accepted, and only
// its type is asked for, so a switch with several host keys presents the one pinned.
func (c Config) ClientConfig() *ssh.ClientConfig {
	key := c.HostKey
	return &ssh.ClientConfig{
		User: c.User,
		Auth: c.Auth,
		HostKeyCallback: func(_ string, _ net.Addr, got ssh.PublicKey) error {
			if !bytes.Equal(got.Marshal(), key.Marshal()) {
				return fmt.Errorf("%w: presented %s %s", errMismatch, got.Type(), ssh.FingerprintSHA256(got))
			}
			return nil
		},
		HostKeyAlgorithms: HostKeyAlgorithms(key),
		Timeout:           c.timeout(),
	}
}

func (c Config) timeout() time.Duration {
	if c.Timeout <= 0 {
		return 10 * time.Second
	}
	return c.Timeout
}

// HostKeyAlgorithms asks the server for the pinned key's type only. An RSA key is asked for
// with SHA-2 signatures first: OpenSSH refuses SHA-1 ("ssh-rsa") signatures by default.
func HostKeyAlgorithms(key ssh.PublicKey) []string {
	if key.Type() == ssh.KeyAlgoRSA {
		return []string{ssh.KeyAlgoRSASHA512, ssh.KeyAlgoRSASHA256, ssh.KeyAlgoRSA}
	}
	return []string{key.Type()}
}

// Dial connects to addr and logs in. The dial and the handshake are bounded by the timeout and
// by ctx: a switch that accepts and then says nothing does not hold the caller. It returns the
// client and the TCP connection under it (closing the connection is what a network failure
// does). Errors are classified (Classify).
func Dial(ctx context.Context, addr string, c Config) (*ssh.Client, net.Conn, error) {
	d := net.Dialer{Timeout: c.timeout()}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: dial %s: %v", switches.ErrUnavailable, addr, err)
	}
	_ = conn.SetDeadline(time.Now().Add(c.timeout()))
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	cc, chans, reqs, err := ssh.NewClientConn(conn, addr, c.ClientConfig())
	if !stop() {
		if err == nil {
			cc.Close()
		}
		conn.Close()
		return nil, nil, fmt.Errorf("%w: ssh %s: %w", switches.ErrUnavailable, addr, ctx.Err())
	}
	if err != nil {
		conn.Close()
		return nil, nil, fmt.Errorf("ssh %s: %w", addr, Classify(err, c))
	}
	_ = conn.SetDeadline(time.Time{})
	return ssh.NewClient(cc, chans, reqs), conn, nil
}

// Classify maps a failed handshake: a host key other than the pinned one, or none of its type,
// is switches.ErrHostKey; refused credentials are switches.ErrAuth; anything else (reset,
// timeout, protocol) is switches.ErrUnavailable.
func Classify(err error, c Config) error {
	msg := err.Error()
	switch {
	case errors.Is(err, errMismatch):
		return fmt.Errorf("%w: want %s %s: %v", switches.ErrHostKey, c.HostKey.Type(), ssh.FingerprintSHA256(c.HostKey), err)
	case strings.Contains(msg, "no common algorithm for host key"):
		// The switch has no host key of the pinned key's type: not the pinned key either.
		return fmt.Errorf("%w: want %s %s, the switch offers no %s key: %v", switches.ErrHostKey,
			c.HostKey.Type(), ssh.FingerprintSHA256(c.HostKey), c.HostKey.Type(), err)
	case strings.Contains(msg, "unable to authenticate"):
		return fmt.Errorf("%w: user %q: %v", switches.ErrAuth, c.User, err)
	default:
		return fmt.Errorf("%w: handshake: %v", switches.ErrUnavailable, err)
	}
}

// KeepAlive asks the switch every interval whether the connection still carries (the
// keepalive@openssh.com request every sshd answers) and closes the client when it does not
// answer within an interval, so a connection to a switch that rebooted or went away is noticed
// and dropped instead of holding the next command. It stops when the client closes.
func KeepAlive(client *ssh.Client, every time.Duration) {
	done := make(chan struct{})
	go func() {
		_ = client.Wait()
		close(done)
	}()
	go func() {
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			answered := make(chan error, 1)
			go func() {
				_, _, err := client.SendRequest("keepalive@openssh.com", true, nil)
				answered <- err
			}()
			timer := time.NewTimer(every)
			select {
			case err := <-answered:
				timer.Stop()
				if err != nil {
					client.Close()
					return
				}
			case <-timer.C:
				client.Close()
				return
			case <-done:
				timer.Stop()
				return
			}
		}
	}()
}
