package sshclient_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/subprov/subprov/switches"
	"github.com/subprov/subprov/switches/sshclient"
	"github.com/subprov/subprov/switches/sshclient/sshtest"
)

// server accepts logins with password "pw" on loopback; answer says whether it answers the
// connection's global requests (keepalives) or leaves them, as a switch gone silent does.
func server(t *testing.T, answer bool) (addr string, key ssh.PublicKey) {
	t.Helper()
	signer := sshtest.Signer(t)
	cfg := &ssh.ServerConfig{PasswordCallback: func(_ ssh.ConnMetadata, pw []byte) (*ssh.Permissions, error) {
		if string(pw) == "pw" {
			return nil, nil
		}
		return nil, errors.New("wrong password")
	}}
	cfg.AddHostKey(signer)
	addr = sshtest.Listen(t, func(c net.Conn) {
		_, chans, reqs, err := ssh.NewServerConn(c, cfg)
		if err != nil {
			return
		}
		go ssh.DiscardRequests(chans2reqs(chans))
		if answer {
			ssh.DiscardRequests(reqs)
		}
	})
	return addr, signer.PublicKey()
}

// chans2reqs rejects every channel; it returns a closed request channel for DiscardRequests.
func chans2reqs(chans <-chan ssh.NewChannel) <-chan *ssh.Request {
	go func() {
		for nc := range chans {
			_ = nc.Reject(ssh.Prohibited, "no channels")
		}
	}()
	out := make(chan *ssh.Request)
	close(out)
	return out
}

func TestDialClassifies(t *testing.T) {
	addr, key := server(t, true)
	otherSigner := sshtest.Signer(t)
	for _, tc := range []struct {
		name string
		cfg  sshclient.Config
		want error
	}{
		{"right", sshclient.Config{User: "u", Auth: sshclient.PasswordAuth("pw"), HostKey: key}, nil},
		{"wrong password", sshclient.Config{User: "u", Auth: sshclient.PasswordAuth("guess"), HostKey: key}, switches.ErrAuth},
		{"wrong host key", sshclient.Config{User: "u", Auth: sshclient.PasswordAuth("pw"), HostKey: otherSigner.PublicKey()}, switches.ErrHostKey},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _, err := sshclient.Dial(context.Background(), addr, tc.cfg)
			if c != nil {
				c.Close()
			}
			if tc.want == nil && err != nil || tc.want != nil && (!errors.Is(err, tc.want) || errors.Is(err, switches.ErrUnavailable)) {
				t.Fatalf("Dial: %v, want %v", err, tc.want)
			}
		})
	}
	if _, err := sshclient.ParseHostKey(""); !errors.Is(err, switches.ErrHostKey) {
		t.Errorf("no host key: %v, want ErrHostKey", err)
	}
	line := "[127.0.0.1]:22 " + strings.TrimSpace(string(ssh.MarshalAuthorizedKey(key)))
	if k, err := sshclient.ParseHostKey(line); err != nil || string(k.Marshal()) != string(key.Marshal()) {
		t.Errorf("known_hosts line: %v", err)
	}
}

// A connection whose keepalives go unanswered is closed within about two intervals; one whose
// keepalives are answered stays open.
func TestKeepAlive(t *testing.T) {
	for _, answer := range []bool{true, false} {
		addr, key := server(t, answer)
		c, _, err := sshclient.Dial(context.Background(), addr, sshclient.Config{User: "u", Auth: sshclient.PasswordAuth("pw"), HostKey: key})
		if err != nil {
			t.Fatal(err)
		}
		sshclient.KeepAlive(c, 100*time.Millisecond)
		closed := make(chan struct{})
		go func() {
			_ = c.Wait()
			close(closed)
		}()
		select {
		case <-closed:
			if answer {
				t.Error("a connection that answers its keepalives was closed")
			}
		case <-time.After(time.Second):
			if !answer {
				t.Error("a connection that does not answer its keepalives is still open after 1 s")
			}
		}
		c.Close()
	}
}
