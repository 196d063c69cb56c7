package linuxbridge

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/subprov/subprov/switches"
	"github.com/subprov/subprov/switches/sshclient"
)

// Command is one program run on the switch: its arguments (the program first) and what it
// reads on standard input ("" for nothing).
type Command struct {
	Args  []string
	Stdin string
}

// String is the command as a POSIX shell line, which is also what the SSH runner sends.
func (c Command) String() string {
	q := make([]string, len(c.Args))
	for i, a := range c.Args {
		q[i] = shellQuote(a)
	}
	return strings.Join(q, " ")
}

// shellQuote leaves words made of safe characters alone, so logs and golden files stay
// readable, and single-quotes everything else.
func shellQuote(s string) string {
	if s == "" {
		return "''"
	}
	safe := true
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_.,:/@=+%", r)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Runner runs a command on the switch and returns its standard output. A command that ran and
// failed is a *CommandError; a switch that cannot be reached is switches.ErrUnavailable.
type Runner interface {
	Run(ctx context.Context, c Command) ([]byte, error)
}

// CommandError is a command that ran on the switch and exited non-zero.
type CommandError struct {
	Command string
	Status  int
	Stderr  string
}

func (e *CommandError) Error() string {
	return fmt.Sprintf("%s: exit status %d: %s", e.Command, e.Status, strings.TrimSpace(e.Stderr))
}

// Unwrap classifies the failure. What a retry will meet again is final: a missing program
// (status 127) or interface is switches.ErrInvalid, an account not allowed to run the command
// (sudo asking for a password, or the kernel refusing it) switches.ErrAuth. Any other failure
// may be a switch busy with something else, so it is switches.ErrUnavailable and retried.
func (e *CommandError) Unwrap() error {
	if e.Status == 127 {
		return switches.ErrInvalid
	}
	for _, p := range permanent {
		if strings.Contains(e.Stderr, p.says) {
			return p.is
		}
	}
	return switches.ErrUnavailable
}

// permanent are the known complaints on standard error that no retry mends.
var permanent = []struct {
	says string
	is   error
}{
	{"sudo: a password is required", switches.ErrAuth},
	{"sudo: a terminal is required", switches.ErrAuth},
	{"is not in the sudoers file", switches.ErrAuth},
	{"Operation not permitted", switches.ErrAuth},
	{"Cannot find device", switches.ErrInvalid},
}

// SSHRunner runs commands over one SSH connection to the switch, opened on first use and
// opened again after it breaks. Each command is a session of its own. Keepalives notice a
// connection the switch no longer answers on (it rebooted, or the path went away), and every
// wait, for the connection or a session on it, ends with the caller's context.
type SSHRunner struct {
	addr   string
	config sshclient.Config
	sudo   bool
	// sessions bounds the commands in flight on the connection below OpenSSH's default
	// MaxSessions (10), so many ports converging at once wait their turn instead of failing.
	sessions chan struct{}

	mu      sync.Mutex
	client  *ssh.Client
	dialing chan struct{} // closed when the dial under way ends (nil: none)
	closed  bool
}

const (
	maxSessions = 8
	// keepAliveEvery is how often an idle connection is checked; one unanswered check drops it.
	keepAliveEvery = 15 * time.Second
)

// errClosed is a command on a runner already closed.
var errClosed = errors.New("runner closed")

// NewSSHRunner checks the credentials and the host key of cfg; it does not connect yet.
func NewSSHRunner(cfg Config) (*SSHRunner, error) {
	if cfg.Address == "" || cfg.Username == "" {
		return nil, fmt.Errorf("%w: a Linux-bridge switch needs an address and a username", switches.ErrInvalid)
	}
	if _, _, err := net.SplitHostPort(cfg.Address); err != nil {
		return nil, fmt.Errorf("%w: switch address %q: %v", switches.ErrInvalid, cfg.Address, err)
	}
	hostKey, err := sshclient.ParseHostKey(cfg.HostKey)
	if err != nil {
		return nil, fmt.Errorf("linuxbridge %s: %w", cfg.Address, err)
	}
	var auth []ssh.AuthMethod
	if cfg.PrivateKey != "" {
		signer, err := ssh.ParsePrivateKey([]byte(cfg.PrivateKey))
		if err != nil {
			return nil, fmt.Errorf("%w: switch private key: %v", switches.ErrCredentials, err)
		}
		auth = append(auth, ssh.PublicKeys(signer))
	}
	if cfg.Password != "" {
		auth = append(auth, sshclient.PasswordAuth(cfg.Password)...)
	}
	if len(auth) == 0 {
		return nil, fmt.Errorf("%w: a Linux-bridge switch needs a password or a private key", switches.ErrCredentials)
	}
	return &SSHRunner{
		addr:     cfg.Address,
		sudo:     cfg.Sudo,
		sessions: make(chan struct{}, maxSessions),
		config:   sshclient.Config{User: cfg.Username, Auth: auth, HostKey: hostKey, Timeout: cfg.Timeout},
	}, nil
}

// connect returns the open connection, or dials one. The lock is not held across the dial: one
// caller dials while the others wait for it, each no longer than its own context.
func (r *SSHRunner) connect(ctx context.Context) (*ssh.Client, error) {
	for {
		r.mu.Lock()
		switch {
		case r.closed:
			r.mu.Unlock()
			return nil, fmt.Errorf("%w: ssh %s: %w", switches.ErrUnavailable, r.addr, errClosed)
		case r.client != nil:
			c := r.client
			r.mu.Unlock()
			return c, nil
		case r.dialing != nil:
			wait := r.dialing
			r.mu.Unlock()
			select {
			case <-wait:
				continue
			case <-ctx.Done():
				return nil, fmt.Errorf("%w: ssh %s: waiting for the connection: %w", switches.ErrUnavailable, r.addr, ctx.Err())
			}
		}
		done := make(chan struct{})
		r.dialing = done
		r.mu.Unlock()
		c, _, err := sshclient.Dial(ctx, r.addr, r.config)
		r.mu.Lock()
		r.dialing = nil
		close(done)
		if err == nil && r.closed {
			c.Close()
			err = fmt.Errorf("%w: ssh %s: %w", switches.ErrUnavailable, r.addr, errClosed)
		}
		if err != nil {
			r.mu.Unlock()
			// A wrong host key or refused credentials is final (switches.ErrCredentials); the
			// operator corrects the switch's row, which builds a new runner.
			return nil, err
		}
		r.client = c
		r.mu.Unlock()
		sshclient.KeepAlive(c, keepAliveEvery)
		return c, nil
	}
}

// drop forgets a broken connection so the next command dials again.
func (r *SSHRunner) drop(c *ssh.Client) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.client == c {
		r.client = nil
	}
	c.Close()
}

// Close closes the connection, if one is open; the runner runs nothing after.
func (r *SSHRunner) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	if r.client == nil {
		return nil
	}
	err := r.client.Close()
	r.client = nil
	return err
}

// newSession opens a session on client, giving up when ctx ends: a connection to a switch that
// went away without a word can block the request far longer than any deadline. A session
// that opens after the caller gave up is closed.
func newSession(ctx context.Context, client *ssh.Client) (*ssh.Session, error) {
	type opened struct {
		s   *ssh.Session
		err error
	}
	ch := make(chan opened, 1)
	go func() {
		s, err := client.NewSession()
		ch <- opened{s, err}
	}()
	select {
	case o := <-ch:
		return o.s, o.err
	case <-ctx.Done():
		go func() {
			if o := <-ch; o.s != nil {
				o.s.Close()
			}
		}()
		return nil, ctx.Err()
	}
}

func (r *SSHRunner) Run(ctx context.Context, c Command) ([]byte, error) {
	select {
	case r.sessions <- struct{}{}:
		defer func() { <-r.sessions }()
	case <-ctx.Done():
		return nil, fmt.Errorf("%w: ssh %s: %s: waiting for a session: %v", switches.ErrUnavailable, r.addr, c, ctx.Err())
	}
	line := c.String()
	if r.sudo {
		line = "sudo -n " + line
	}
	var sess *ssh.Session
	for attempt := 0; ; attempt++ {
		client, err := r.connect(ctx)
		if err != nil {
			return nil, err
		}
		sess, err = newSession(ctx, client)
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			// No answer to the session request within the caller's time: the connection is
			// dropped, so the next command dials afresh instead of waiting on it too.
			r.drop(client)
			return nil, fmt.Errorf("%w: ssh %s: session: %w", switches.ErrUnavailable, r.addr, ctx.Err())
		}
		var refused *ssh.OpenChannelError
		if errors.As(err, &refused) {
			// The switch refused one more session (its sshd's MaxSessions); the connection
			// is fine and carries other commands, so it is kept.
			return nil, fmt.Errorf("%w: ssh %s: session refused: %v", switches.ErrUnavailable, r.addr, err)
		}
		// A connection the switch closed while idle fails here; one fresh connection is
		// worth a try before the switch counts as unavailable.
		r.drop(client)
		if attempt == 1 {
			return nil, fmt.Errorf("%w: ssh %s: session: %v", switches.ErrUnavailable, r.addr, err)
		}
	}
	defer sess.Close()
	var stdout, stderr bytes.Buffer
	sess.Stdout, sess.Stderr = &stdout, &stderr
	if c.Stdin != "" {
		sess.Stdin = strings.NewReader(c.Stdin)
	}
	done := make(chan error, 1)
	go func() { done <- sess.Run(line) }()
	select {
	case err := <-done:
		var exit *ssh.ExitError
		if errors.As(err, &exit) {
			return nil, &CommandError{Command: c.String(), Status: exit.ExitStatus(), Stderr: stderr.String()}
		}
		if err != nil {
			return nil, fmt.Errorf("%w: ssh %s: %s: %v", switches.ErrUnavailable, r.addr, c, err)
		}
		return stdout.Bytes(), nil
	case <-ctx.Done():
		_ = sess.Signal(ssh.SIGKILL)
		sess.Close()
		return nil, fmt.Errorf("%w: ssh %s: %s: %v", switches.ErrUnavailable, r.addr, c, ctx.Err())
	}
}

// LocalRunner runs commands on this machine, each behind Prefix (for example "ip", "netns",
// "exec", "sw1" to run inside a network namespace). It is for recording a switch's answers
// and for tests; switches in service are reached over SSH.
type LocalRunner struct {
	Prefix []string
}

func (r LocalRunner) Run(ctx context.Context, c Command) ([]byte, error) {
	args := append(append([]string(nil), r.Prefix...), c.Args...)
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if c.Stdin != "" {
		cmd.Stdin = strings.NewReader(c.Stdin)
	}
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return nil, &CommandError{Command: c.String(), Status: exit.ExitCode(), Stderr: stderr.String()}
	}
	if err != nil {
		return nil, &CommandError{Command: c.String(), Status: 127, Stderr: err.Error()}
	}
	return stdout.Bytes(), nil
}
