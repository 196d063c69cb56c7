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

// Unwrap classifies the failure: a missing program (status 127) will not appear on a retry, so
// it is final; any other failure may be a switch busy with something else, so it is retried.
func (e *CommandError) Unwrap() error {
	if e.Status == 127 {
		return switches.ErrInvalid
	}
	return switches.ErrUnavailable
}

// SSHRunner runs commands over one SSH connection to the switch, opened on first use and
// opened again after it breaks. Each command is a session of its own.
type SSHRunner struct {
	addr   string
	config *ssh.ClientConfig
	sudo   bool
	// sessions bounds the commands in flight on the connection below OpenSSH's default
	// MaxSessions (10), so many ports converging at once wait their turn instead of failing.
	sessions chan struct{}

	mu     sync.Mutex
	client *ssh.Client
}

const maxSessions = 8

// NewSSHRunner checks the credentials and the host key of cfg; it does not connect yet.
func NewSSHRunner(cfg Config) (*SSHRunner, error) {
	if cfg.Address == "" || cfg.Username == "" {
		return nil, fmt.Errorf("%w: a Linux-bridge switch needs an address and a username", switches.ErrInvalid)
	}
	if _, _, err := net.SplitHostPort(cfg.Address); err != nil {
		return nil, fmt.Errorf("%w: switch address %q: %v", switches.ErrInvalid, cfg.Address, err)
	}
	hostKey, err := parseHostKey(cfg.HostKey)
	if err != nil {
		return nil, err
	}
	var auth []ssh.AuthMethod
	if cfg.PrivateKey != "" {
		signer, err := ssh.ParsePrivateKey([]byte(cfg.PrivateKey))
		if err != nil {
			return nil, fmt.Errorf("%w: switch private key: %v", switches.ErrInvalid, err)
		}
		auth = append(auth, ssh.PublicKeys(signer))
	}
	if cfg.Password != "" {
		pw := cfg.Password
		auth = append(auth, ssh.Password(pw), ssh.KeyboardInteractive(func(_, _ string, qs []string, _ []bool) ([]string, error) {
			answers := make([]string, len(qs))
			for i := range answers {
				answers[i] = pw
			}
			return answers, nil
		}))
	}
	if len(auth) == 0 {
		return nil, fmt.Errorf("%w: a Linux-bridge switch needs a password or a private key", switches.ErrInvalid)
	}
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	return &SSHRunner{
		addr:     cfg.Address,
		sudo:     cfg.Sudo,
		sessions: make(chan struct{}, maxSessions),
		config: &ssh.ClientConfig{
			User:            cfg.Username,
			Auth:            auth,
			HostKeyCallback: ssh.FixedHostKey(hostKey),
			Timeout:         timeout,
		},
	}, nil
}

// parseHostKey reads a public key in authorized_keys form ("ssh-ed25519 AAAA…") or as a
// known_hosts line ("host ssh-ed25519 AAAA…"). There is no trust on first use: a switch
// whose key is not given cannot be reached.
func parseHostKey(s string) (ssh.PublicKey, error) {
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("%w: a Linux-bridge switch needs its SSH host key", switches.ErrInvalid)
	}
	if k, _, _, _, err := ssh.ParseAuthorizedKey([]byte(s)); err == nil {
		return k, nil
	}
	if _, _, k, _, _, err := ssh.ParseKnownHosts([]byte(s)); err == nil {
		return k, nil
	}
	return nil, fmt.Errorf("%w: switch host key %q is neither an authorized_keys nor a known_hosts line", switches.ErrInvalid, s)
}

func (r *SSHRunner) connect(ctx context.Context) (*ssh.Client, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.client != nil {
		return r.client, nil
	}
	d := net.Dialer{Timeout: r.config.Timeout}
	conn, err := d.DialContext(ctx, "tcp", r.addr)
	if err != nil {
		return nil, fmt.Errorf("%w: dial %s: %v", switches.ErrUnavailable, r.addr, err)
	}
	// The handshake honours the context too: a switch that accepts and then says nothing
	// does not hold the caller past its deadline.
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	c, chans, reqs, err := ssh.NewClientConn(conn, r.addr, r.config)
	if !stop() {
		if err == nil {
			c.Close()
		}
		return nil, fmt.Errorf("%w: ssh %s: %v", switches.ErrUnavailable, r.addr, ctx.Err())
	}
	if err != nil {
		conn.Close()
		// A wrong host key or refused credentials is a fault of the configuration, not of
		// the moment; it still reads as unavailable so the port waits for the operator's fix
		// rather than being rejected for good.
		return nil, fmt.Errorf("%w: ssh %s: %v", switches.ErrUnavailable, r.addr, err)
	}
	r.client = ssh.NewClient(c, chans, reqs)
	return r.client, nil
}

// drop forgets a broken connection so the next command dials again.
func (r *SSHRunner) drop(c *ssh.Client) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.client == c {
		r.client.Close()
		r.client = nil
	}
}

// Close closes the connection, if one is open.
func (r *SSHRunner) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.client == nil {
		return nil
	}
	err := r.client.Close()
	r.client = nil
	return err
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
		sess, err = client.NewSession()
		if err == nil {
			break
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
