// Package lab runs a NETCONF lab switch on this machine: Debian's netconfd (yuma123) loaded
// with subprov's YANG module, reached through an SSH server of the package's own on a free
// loopback port, which logs in one account with a random password and hands the "netconf"
// subsystem to yuma123's netconf-subsystem. netconfd's socket, configuration, log and work
// directory live in a temporary directory; Close stops the processes and removes it. Nothing
// else on the machine is touched: no system account, no sshd, no address but 127.0.0.1.
//
// It needs Linux and the netconfd package (netconfd and netconf-subsystem in /usr/sbin), and
// netconfd must be able to set up its work directory as the running user. The demo uses it
// to give one switch a real driver; the netconf driver's tests run Netconfd behind OpenSSH
// (package netconftest).
package lab

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/subprov/subprov/switches/netconf/yang"
)

// Where the netconfd package installs its programs.
const (
	NetconfdPath  = "/usr/sbin/netconfd"
	SubsystemPath = "/usr/sbin/netconf-subsystem"
)

// Username is the account the lab switch's SSH server logs in.
const Username = "subprov"

// Available reports why this machine cannot run a lab switch, or nil when it can.
func Available() error {
	if runtime.GOOS != "linux" {
		return fmt.Errorf("the NETCONF lab switch needs Linux (this is %s)", runtime.GOOS)
	}
	for _, bin := range []string{NetconfdPath, SubsystemPath} {
		if _, err := os.Stat(bin); err != nil {
			return fmt.Errorf("%s not installed: apt-get install netconfd", filepath.Base(bin))
		}
	}
	return nil
}

// Netconfd is the command that runs netconfd in dir on the unix socket sock: subprov's YANG
// module (written into dir), the candidate datastore, sessions accepted only from
// netconf-subsystem reporting port, superuser the account whose sessions NACM does not
// restrict, its log in dir/netconfd.log. Its configuration is saved in dir/startup-cfg.xml on
// every commit and loaded at start, as a switch keeps its configuration across a reboot; its
// work directory is dir/.yuma (HOME is dir).
func Netconfd(dir, sock string, port int, superuser string) (*exec.Cmd, error) {
	module := filepath.Join(dir, yang.ModuleFile)
	if err := os.WriteFile(module, []byte(yang.Module), 0o644); err != nil {
		return nil, fmt.Errorf("netconfd: write the YANG module: %w", err)
	}
	startup := filepath.Join(dir, "startup-cfg.xml")
	if _, err := os.Stat(startup); err != nil {
		empty := "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<config xmlns=\"urn:ietf:params:xml:ns:netconf:base:1.0\"/>\n"
		if err := os.WriteFile(startup, []byte(empty), 0o644); err != nil {
			return nil, fmt.Errorf("netconfd: write the startup configuration: %w", err)
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, ".yuma"), 0o755); err != nil {
		return nil, fmt.Errorf("netconfd: work directory: %w", err)
	}
	cmd := exec.Command(NetconfdPath,
		"--module="+module,
		"--ncxserver-sockname="+sock,
		fmt.Sprintf("--port=%d", port),
		"--superuser="+superuser,
		"--target=candidate",
		"--startup="+startup,
		"--log="+filepath.Join(dir, "netconfd.log"), "--log-append", "--log-level=info",
	)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+dir)
	// Its own process group, killed with the process that started it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	return cmd, nil
}

// WaitForSocket waits until sock accepts a connection, or exited is closed (netconfd gave
// up), or timeout passes.
func WaitForSocket(ctx context.Context, sock string, exited <-chan struct{}, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		if c, err := net.Dial("unix", sock); err == nil {
			c.Close()
			return nil
		}
		select {
		case <-exited:
			return errors.New("netconfd exited at start")
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("netconfd did not open its socket in %s", timeout)
		}
	}
}

// Switch is one running lab switch.
type Switch struct {
	// Addr is the SSH server's 127.0.0.1:port.
	Addr string
	// HostKey is the SSH server's public host key, authorized_keys form.
	HostKey string
	// Username and Password log in (Password is random, new for each switch).
	Username, Password string

	dir, sock, osUser string
	port              int
	ln                net.Listener
	netconfd          *exec.Cmd
	exited            chan struct{}
	mu                sync.Mutex
	conns             map[net.Conn]struct{}
	closed            bool
	wg                sync.WaitGroup
}

// Start runs a lab switch; Close stops it. ctx bounds the start only.
func Start(ctx context.Context) (*Switch, error) {
	if err := Available(); err != nil {
		return nil, err
	}
	me, err := user.Current()
	if err != nil {
		return nil, fmt.Errorf("lab switch: the running user: %w", err)
	}
	dir, err := os.MkdirTemp("", "subprov-lab-switch-")
	if err != nil {
		return nil, fmt.Errorf("lab switch: %w", err)
	}
	s := &Switch{Username: Username, Password: randomHex(16), dir: dir, sock: filepath.Join(dir, "ncxserver.sock"),
		osUser: me.Username, conns: map[net.Conn]struct{}{}}
	if err := s.start(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

func (s *Switch) start(ctx context.Context) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("lab switch: listen on loopback: %w", err)
	}
	s.ln = ln
	s.Addr = ln.Addr().String()
	s.port = ln.Addr().(*net.TCPAddr).Port
	cmd, err := Netconfd(s.dir, s.sock, s.port, s.osUser)
	if err != nil {
		return fmt.Errorf("lab switch: %w", err)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("lab switch: start netconfd: %w", err)
	}
	s.netconfd = cmd
	s.exited = make(chan struct{})
	go func() { _ = cmd.Wait(); close(s.exited) }()
	if err := WaitForSocket(ctx, s.sock, s.exited, 10*time.Second); err != nil {
		return fmt.Errorf("lab switch: %w%s", err, s.netconfdError())
	}
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return fmt.Errorf("lab switch: host key: %w", err)
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		return fmt.Errorf("lab switch: host key: %w", err)
	}
	s.HostKey = strings.TrimSpace(string(ssh.MarshalAuthorizedKey(signer.PublicKey())))
	cfg := &ssh.ServerConfig{PasswordCallback: s.checkPassword}
	cfg.AddHostKey(signer)
	s.wg.Add(1)
	go s.accept(cfg)
	return nil
}

// netconfdError is the first error netconfd logged, as ": why", or "".
func (s *Switch) netconfdError() string {
	b, _ := os.ReadFile(filepath.Join(s.dir, "netconfd.log"))
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "Error:") {
			return ": netconfd: " + strings.TrimSpace(strings.TrimPrefix(line, "Error:"))
		}
	}
	return ""
}

func (s *Switch) checkPassword(c ssh.ConnMetadata, password []byte) (*ssh.Permissions, error) {
	if c.User() == s.Username && subtle.ConstantTimeCompare(password, []byte(s.Password)) == 1 {
		return nil, nil
	}
	return nil, errors.New("wrong username or password")
}

func (s *Switch) accept(cfg *ssh.ServerConfig) {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			c.Close()
			return
		}
		s.conns[c] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go func() {
			defer s.wg.Done()
			s.serve(c, cfg)
			s.mu.Lock()
			delete(s.conns, c)
			s.mu.Unlock()
		}()
	}
}

// serve is one SSH connection: session channels whose "netconf" subsystem request runs
// netconf-subsystem; anything else is refused.
func (s *Switch) serve(c net.Conn, cfg *ssh.ServerConfig) {
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second)) // the handshake
	sc, chans, reqs, err := ssh.NewServerConn(c, cfg)
	if err != nil {
		return
	}
	_ = c.SetDeadline(time.Time{})
	defer sc.Close()
	go ssh.DiscardRequests(reqs)
	var sessions sync.WaitGroup
	defer sessions.Wait()
	for nc := range chans {
		if nc.ChannelType() != "session" {
			_ = nc.Reject(ssh.UnknownChannelType, "only session channels")
			continue
		}
		ch, creqs, err := nc.Accept()
		if err != nil {
			continue
		}
		sessions.Add(1)
		go func() {
			defer sessions.Done()
			s.session(ch, creqs, c.RemoteAddr())
		}()
	}
}

func (s *Switch) session(ch ssh.Channel, reqs <-chan *ssh.Request, remote net.Addr) {
	defer ch.Close()
	for req := range reqs {
		var sub struct{ Name string }
		if req.Type != "subsystem" || ssh.Unmarshal(req.Payload, &sub) != nil || sub.Name != "netconf" {
			_ = req.Reply(false, nil)
			continue
		}
		_ = req.Reply(true, nil)
		go ssh.DiscardRequests(reqs)
		status := s.subsystem(ch, remote)
		_, _ = ch.SendRequest("exit-status", false, ssh.Marshal(struct{ Status uint32 }{status}))
		return
	}
}

// subsystem runs netconf-subsystem on the channel until either side ends; it reports the
// session to netconfd as the running user's, from remote, on the lab switch's port.
func (s *Switch) subsystem(ch ssh.Channel, remote net.Addr) uint32 {
	rhost, rport, _ := net.SplitHostPort(remote.String())
	cmd := exec.Command(SubsystemPath, fmt.Sprintf("--ncxserver-sockname=%d@%s", s.port, s.sock))
	cmd.Env = append(os.Environ(), "USER="+s.osUser, fmt.Sprintf("SSH_CONNECTION=%s %s 127.0.0.1 %d", rhost, rport, s.port))
	cmd.Stdout, cmd.Stderr = ch, ch.Stderr()
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return 1
	}
	if err := cmd.Start(); err != nil {
		return 1
	}
	go func() {
		_, _ = io.Copy(stdin, ch)
		stdin.Close()
	}()
	if err := cmd.Wait(); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) && exit.ExitCode() > 0 {
			return uint32(exit.ExitCode())
		}
		return 1
	}
	return 0
}

// Close stops the SSH server, its sessions and netconfd, and removes the temporary directory.
func (s *Switch) Close() error {
	s.mu.Lock()
	s.closed = true
	if s.ln != nil {
		s.ln.Close()
	}
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	if s.netconfd != nil && s.netconfd.Process != nil {
		_ = syscall.Kill(-s.netconfd.Process.Pid, syscall.SIGKILL)
		select {
		case <-s.exited:
		case <-time.After(5 * time.Second):
		}
	}
	s.wg.Wait()
	return os.RemoveAll(s.dir)
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Dir is the temporary directory the switch lives in (removed by Close).
func (s *Switch) Dir() string { return s.dir }
