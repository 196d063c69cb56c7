package linuxbridge

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/subprov/subprov/switches"
	"github.com/subprov/subprov/switches/sshclient/sshtest"
)

// fakeSSHD is an SSH server in the test process, on loopback, that logs in with a password and
// answers each command with its handler's output and exit status. It checks the SSH runner
// without root or a real sshd.
type fakeSSHD struct {
	addr, hostKey string

	// frozen, once set, leaves every new session request unanswered, as a switch that went
	// away without closing the connection does.
	frozen atomic.Bool

	mu       sync.Mutex
	commands []string
	stdins   []string
}

func startFakeSSHD(t *testing.T, password string, handle func(cmd string) (string, uint32)) *fakeSSHD {
	t.Helper()
	return startFakeSSHDKeys(t, password, handle, newSigner(t))
}

// startFakeSSHDKeys starts a server with the given host keys; the first is the one its hostKey
// names.
func startFakeSSHDKeys(t *testing.T, password string, handle func(cmd string) (string, uint32), signers ...ssh.Signer) *fakeSSHD {
	t.Helper()
	signer := signers[0]
	cfg := &ssh.ServerConfig{PasswordCallback: func(c ssh.ConnMetadata, pw []byte) (*ssh.Permissions, error) {
		if c.User() == "admin" && string(pw) == password {
			return nil, nil
		}
		return nil, errors.New("wrong password")
	}}
	for _, k := range signers {
		cfg.AddHostKey(k)
	}
	f := &fakeSSHD{hostKey: strings.TrimSpace(string(ssh.MarshalAuthorizedKey(signer.PublicKey())))}
	f.addr = sshtest.Listen(t, func(conn net.Conn) { f.serve(conn, cfg, handle) })
	return f
}

func (f *fakeSSHD) serve(conn net.Conn, cfg *ssh.ServerConfig, handle func(string) (string, uint32)) {
	defer conn.Close()
	_, chans, reqs, err := ssh.NewServerConn(conn, cfg)
	if err != nil {
		return
	}
	go ssh.DiscardRequests(reqs)
	for nc := range chans {
		if f.frozen.Load() {
			continue // never answered
		}
		if nc.ChannelType() != "session" {
			_ = nc.Reject(ssh.UnknownChannelType, "sessions only")
			continue
		}
		ch, reqs, err := nc.Accept()
		if err != nil {
			return
		}
		go func() {
			defer ch.Close()
			for req := range reqs {
				if req.Type != "exec" {
					_ = req.Reply(false, nil)
					continue
				}
				cmd := string(req.Payload[4:])
				_ = req.Reply(true, nil)
				in, _ := io.ReadAll(ch)
				f.mu.Lock()
				f.commands = append(f.commands, cmd)
				f.stdins = append(f.stdins, string(in))
				f.mu.Unlock()
				out, status := handle(cmd)
				_, _ = io.WriteString(ch, out)
				_, _ = ch.SendRequest("exit-status", false, binary.BigEndian.AppendUint32(nil, status))
				return
			}
		}()
	}
}

func TestSSHRunner(t *testing.T) {
	f := startFakeSSHD(t, "s3cret", func(cmd string) (string, uint32) {
		switch {
		case strings.HasSuffix(cmd, "sleep"):
			time.Sleep(10 * time.Second)
			return "", 0
		case strings.HasSuffix(cmd, "fail"):
			return "", 2
		case strings.HasSuffix(cmd, "missing"):
			return "", 127
		default:
			return "out of " + cmd, 0
		}
	})
	cfg := Config{Address: f.addr, Username: "admin", Password: "s3cret", HostKey: f.hostKey}
	ctx := context.Background()

	r, err := NewSSHRunner(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	out, err := r.Run(ctx, Command{Args: []string{"nft", "-f", "-"}, Stdin: "add table bridge subprov\n"})
	if err != nil || string(out) != "out of nft -f -" {
		t.Fatalf("Run = %q, %v", out, err)
	}
	f.mu.Lock()
	stdin := f.stdins[0]
	f.mu.Unlock()
	if stdin != "add table bridge subprov\n" {
		t.Errorf("the switch read %q on stdin", stdin)
	}

	var ce *CommandError
	if _, err := r.Run(ctx, Command{Args: []string{"fail"}}); !errors.As(err, &ce) || ce.Status != 2 || !errors.Is(err, switches.ErrUnavailable) {
		t.Errorf("a failing command: %v, want a CommandError with status 2 that is ErrUnavailable", err)
	}
	if _, err := r.Run(ctx, Command{Args: []string{"missing"}}); !errors.Is(err, switches.ErrInvalid) {
		t.Errorf("a missing program: %v, want ErrInvalid", err)
	}
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := r.Run(short, Command{Args: []string{"sleep"}}); !errors.Is(err, switches.ErrUnavailable) || time.Since(start) > 5*time.Second {
		t.Errorf("a command past the deadline: %v after %v, want ErrUnavailable at the deadline", err, time.Since(start))
	}

	sudo := cfg
	sudo.Sudo = true
	rs, err := NewSSHRunner(sudo)
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	if out, err := rs.Run(ctx, Command{Args: []string{"ip", "-j", "link", "show"}}); err != nil || string(out) != "out of sudo -n ip -j link show" {
		t.Errorf("with Sudo: %q, %v", out, err)
	}

	for name, bad := range map[string]Config{
		"wrong password": {Address: f.addr, Username: "admin", Password: "guess", HostKey: f.hostKey},
		"wrong host key": {Address: f.addr, Username: "admin", Password: "s3cret", HostKey: otherHostKey(t)},
	} {
		rb, err := NewSSHRunner(bad)
		if err != nil {
			t.Fatal(err)
		}
		// Final: the job that meets it stops at once, and the breaker does not count it.
		_, err = rb.Run(ctx, Command{Args: []string{"true"}})
		if !errors.Is(err, switches.ErrCredentials) || errors.Is(err, switches.ErrUnavailable) || !switches.Final(err) {
			t.Errorf("%s: %v, want ErrCredentials, not ErrUnavailable", name, err)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if got := len(f.commands); got != 5 {
		t.Errorf("the switch ran %d commands %q; want 5, none after a failed login", got, f.commands)
	}
}

func newSigner(t *testing.T) ssh.Signer { return sshtest.Signer(t) }

// otherHostKey is a key no server here has, as a known_hosts line (the other accepted form).
func otherHostKey(t *testing.T) string {
	t.Helper()
	return "[127.0.0.1]:22 " + strings.TrimSpace(string(ssh.MarshalAuthorizedKey(newSigner(t).PublicKey())))
}

// Many ports converging at once share one connection and stay under OpenSSH's default
// MaxSessions (10), which would refuse the eleventh command.
func TestSSHRunnerBoundsSessions(t *testing.T) {
	var mu sync.Mutex
	inFlight, most := 0, 0
	f := startFakeSSHD(t, "pw", func(string) (string, uint32) {
		mu.Lock()
		inFlight++
		most = max(most, inFlight)
		mu.Unlock()
		time.Sleep(30 * time.Millisecond)
		mu.Lock()
		inFlight--
		mu.Unlock()
		return "ok", 0
	})
	r, err := NewSSHRunner(Config{Address: f.addr, Username: "admin", Password: "pw", HostKey: f.hostKey})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var wg sync.WaitGroup
	errs := make(chan error, 30)
	for range 30 {
		wg.Go(func() {
			if _, err := r.Run(context.Background(), Command{Args: []string{"true"}}); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if most > maxSessions || most < 2 {
		t.Errorf("%d commands ran at once, want 2-%d", most, maxSessions)
	}
}

// A switch with RSA, ECDSA and ed25519 host keys, pinned on its ed25519 key (as ssh-keyscan -t
// ed25519 gives it), is reached: the client asks for the pinned key's type only.
func TestSSHRunnerPinsOneOfSeveralHostKeys(t *testing.T) {
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	signers := []ssh.Signer{newSigner(t)} // ed25519
	for _, k := range []any{rsaKey, ecKey} {
		s, err := ssh.NewSignerFromKey(k)
		if err != nil {
			t.Fatal(err)
		}
		signers = append(signers, s)
	}
	for i, pinned := range signers {
		t.Run(pinned.PublicKey().Type(), func(t *testing.T) {
			keys := append([]ssh.Signer{pinned}, append(append([]ssh.Signer(nil), signers[:i]...), signers[i+1:]...)...)
			f := startFakeSSHDKeys(t, "pw", func(string) (string, uint32) { return "ok", 0 }, keys...)
			r, err := NewSSHRunner(Config{Address: f.addr, Username: "admin", Password: "pw", HostKey: f.hostKey})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if out, err := r.Run(context.Background(), Command{Args: []string{"true"}}); err != nil || string(out) != "ok" {
				t.Fatalf("pinned %s of three host keys: %q, %v", pinned.PublicKey().Type(), out, err)
			}
		})
	}
}

// A cached connection to a switch that stops answering (it rebooted behind a silent path)
// does not hold a command past its context, and the next command dials afresh.
func TestSSHRunnerSessionHonoursContext(t *testing.T) {
	f := startFakeSSHD(t, "pw", func(string) (string, uint32) { return "ok", 0 })
	r, err := NewSSHRunner(Config{Address: f.addr, Username: "admin", Password: "pw", HostKey: f.hostKey})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := r.Run(context.Background(), Command{Args: []string{"true"}}); err != nil {
		t.Fatal(err)
	}
	f.frozen.Store(true)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := r.Run(ctx, Command{Args: []string{"true"}})
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, switches.ErrUnavailable) {
			t.Errorf("session on a silent connection: %v, want ErrUnavailable", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a session request on a silent connection held the command 5 s past its 300 ms deadline")
	}
	f.frozen.Store(false)
	if out, err := r.Run(context.Background(), Command{Args: []string{"true"}}); err != nil || string(out) != "ok" {
		t.Errorf("after the silent connection: %q, %v; want a fresh connection", out, err)
	}
}

// A dial under way (to a switch that accepts and says nothing) does not hold another command
// past that command's own context.
func TestSSHRunnerDialDoesNotHoldOthers(t *testing.T) {
	addr := sshtest.Listen(t, nil)
	r, err := NewSSHRunner(Config{Address: addr, Username: "admin", Password: "pw", HostKey: strings.TrimSpace(string(ssh.MarshalAuthorizedKey(newSigner(t).PublicKey())))})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	long, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	go func() { _, _ = r.Run(long, Command{Args: []string{"true"}}) }()
	time.Sleep(100 * time.Millisecond) // the first command is dialing
	short, cancelShort := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancelShort()
	start := time.Now()
	_, err = r.Run(short, Command{Args: []string{"true"}})
	if !errors.Is(err, switches.ErrUnavailable) || time.Since(start) > time.Second {
		t.Errorf("second command while another dials: %v after %v; want ErrUnavailable at its own 200 ms deadline", err, time.Since(start))
	}
}
