// Package netconftest runs a real NETCONF server for tests: Debian's netconfd (yuma123) loaded
// with subprov's YANG module, behind an OpenSSH sshd of its own on a free loopback port, with
// its own host key, config and socket in a temporary directory. sshd hands the "netconf"
// subsystem to yuma123's netconf-subsystem, which talks to netconfd on its socket through a
// relay of the harness's (so a test can kill netconfd the moment a commit reaches it).
// netconfd runs as package lab runs it for the demo's lab switch (lab.Netconfd); unlike the
// lab switch, the harness puts OpenSSH in front of it, the SSH server a switch runs.
//
// It needs root (to run sshd and to create the test user) and the netconfd and
// openssh-server packages. Without them a test is skipped with the reason, except under
// CI=true, where it fails: CI installs them.
package netconftest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/subprov/subprov/switches/netconf/lab"
)

// User and Password are the test account sshd authenticates (created if missing).
const (
	User     = "subprov-netconf"
	Password = "subprov-netconf-test"
)

// Server is one netconfd behind one sshd.
type Server struct {
	// Addr is sshd's host:port on loopback.
	Addr string
	// HostKey is sshd's public host key, authorized_keys form.
	HostKey string
	// Dir holds the configs, keys, socket, logs and netconfd's saved configuration.
	Dir string

	t        testing.TB
	port     int
	mu       sync.Mutex
	netconfd *exec.Cmd
	exited   chan struct{} // closed once netconfd has exited and been waited for
	// killOnCommit counts down the commits until the one netconfd dies on (0: disarmed).
	killOnCommit int
	// held, while HoldSessions is on, is closed by ReleaseSessions (nil: sessions end as
	// their clients' connections do).
	held chan struct{}
	sshd *exec.Cmd
}

var userOnce sync.Once
var userErr error

// need skips t (fails it under CI=true) with why.
func need(t testing.TB, why string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("netconftest: %s (CI=true: the NETCONF tests must run; .ci/run installs netconfd and openssh-server as root)", why)
	}
	t.Skipf("netconftest: %s; skipping the NETCONF server tests", why)
}

// Options change a server from the default.
type Options struct {
	// HostKeyType is sshd's host key type as ssh-keygen names it: "ed25519" (the default),
	// "rsa" or "ecdsa".
	HostKeyType string
}

// Start runs a fresh server for t and stops it when t ends.
func Start(t testing.TB) *Server {
	t.Helper()
	return StartWith(t, Options{})
}

// StartWith is Start with opts.
func StartWith(t testing.TB, opts Options) *Server {
	t.Helper()
	if opts.HostKeyType == "" {
		opts.HostKeyType = "ed25519"
	}
	if runtime.GOOS != "linux" {
		need(t, "needs Linux")
	}
	if os.Geteuid() != 0 {
		need(t, "needs root (to run sshd and create the test user)")
	}
	for _, bin := range []string{"/usr/sbin/netconfd", "/usr/sbin/netconf-subsystem", "/usr/sbin/sshd", "ssh-keygen", "useradd", "chpasswd"} {
		if _, err := exec.LookPath(bin); err != nil {
			need(t, fmt.Sprintf("%s not found (apt-get install netconfd openssh-server)", bin))
		}
	}
	userOnce.Do(func() { userErr = ensureUser() })
	if userErr != nil {
		t.Fatalf("netconftest: test user: %v", userErr)
	}
	dir, err := os.MkdirTemp("", "subprov-netconf-")
	if err != nil {
		t.Fatal(err)
	}
	// netconf-subsystem runs as the test user and must reach the socket in dir.
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	s := &Server{Dir: dir, t: t, port: freePort(t)}
	s.Addr = fmt.Sprintf("127.0.0.1:%d", s.port)
	t.Cleanup(func() {
		s.stop()
		if t.Failed() {
			s.dumpLogs()
		}
		os.RemoveAll(dir)
	})
	if err := os.MkdirAll("/run/sshd", 0o755); err != nil { // sshd's privilege separation directory
		t.Fatal(err)
	}
	key := filepath.Join(dir, "ssh_host_"+opts.HostKeyType+"_key")
	if out, err := exec.Command("ssh-keygen", "-q", "-t", opts.HostKeyType, "-N", "", "-C", "subprov-netconftest", "-f", key).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v: %s", err, out)
	}
	pub, err := os.ReadFile(key + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	s.HostKey = strings.TrimSpace(string(pub))
	s.StartNetconfd()
	s.proxy()
	s.startSSHD(key)
	return s
}

// ensureUser creates the test user if missing (idempotent) and sets its password.
func ensureUser() error {
	if err := exec.Command("id", "-u", User).Run(); err != nil {
		if out, err := exec.Command("useradd", "--system", "--no-create-home", "--home-dir", "/nonexistent", "--shell", "/bin/sh", User).CombinedOutput(); err != nil {
			// Another test binary may have created it meanwhile.
			if exec.Command("id", "-u", User).Run() != nil {
				return fmt.Errorf("useradd: %v: %s", err, out)
			}
		}
	}
	// A cheap hash: the password only guards a loopback test account, and every session logs in.
	cmd := exec.Command("chpasswd", "--crypt-method", "SHA512", "--sha-rounds", "1000")
	cmd.Stdin = strings.NewReader(User + ":" + Password + "\n")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("chpasswd: %v: %s", err, out)
	}
	return nil
}

func freePort(t testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// sock is netconfd's socket; proxySock is the one netconf-subsystem connects to (proxy).
func (s *Server) sock() string      { return filepath.Join(s.Dir, "ncxserver.sock") }
func (s *Server) proxySock() string { return filepath.Join(s.Dir, "proxy.sock") }

// KillOnCommit arms the server to die as the nth <commit> RPC from now reaches it (n = 1: the
// next one; with a confirmed commit, n = 2 is its confirmation): netconfd is killed with
// SIGKILL before the RPC is handed to it, mid-write for the client, with no help from the
// client. StartNetconfd brings it back.
func (s *Server) KillOnCommit(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.killOnCommit = n
}

// Armed reports whether the commit KillOnCommit armed the server to die on has yet to arrive.
func (s *Server) Armed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.killOnCommit > 0
}

// HoldSessions makes the server miss the end of its sessions from now on: when a client's
// connection ends, netconfd's side of it stays open, with its candidate lock and any confirmed
// commit pending on it, until ReleaseSessions, as on a switch that has not noticed a session
// died.
func (s *Server) HoldSessions() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.held == nil {
		s.held = make(chan struct{})
	}
}

// ReleaseSessions ends the sessions HoldSessions kept, as the switch noticing they are gone.
func (s *Server) ReleaseSessions() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.held != nil {
		close(s.held)
		s.held = nil
	}
}

func (s *Server) holding() chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.held
}

// proxy sits between netconf-subsystem and netconfd, on the plain NETCONF stream, so a test can
// kill the server the moment a commit arrives (KillOnCommit).
func (s *Server) proxy() {
	s.t.Helper()
	l, err := net.Listen("unix", s.proxySock())
	if err != nil {
		s.t.Fatalf("netconftest proxy: %v", err)
	}
	// netconf-subsystem runs as the test user.
	if err := os.Chmod(s.proxySock(), 0o666); err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go s.relay(c)
		}
	}()
}

func (s *Server) relay(client net.Conn) {
	defer client.Close()
	server, err := net.Dial("unix", s.sock())
	if err != nil {
		return
	}
	defer server.Close()
	go func() {
		_, _ = io.Copy(client, server)
		client.Close()
	}()
	buf := make([]byte, 64<<10)
	var tail []byte // the end of the previous read, so a split "<commit" is still seen
	for {
		n, err := client.Read(buf)
		if n > 0 {
			seen := append(tail, buf[:n]...)
			if bytes.Contains(seen, []byte("<commit")) && s.commitArrived() {
				s.KillNetconfd()
				return
			}
			tail = append([]byte(nil), seen[max(0, len(seen)-8):]...)
			if _, err := server.Write(buf[:n]); err != nil {
				return
			}
		}
		if err != nil {
			if held := s.holding(); held != nil {
				<-held
			}
			return
		}
	}
}

// commitArrived counts a commit against KillOnCommit and reports whether it is the one to die on.
func (s *Server) commitArrived() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.killOnCommit == 0 {
		return false
	}
	s.killOnCommit--
	return s.killOnCommit == 0
}

// StartNetconfd starts netconfd (again, after KillNetconfd). Its configuration is saved in Dir
// on every commit and loaded at start, as a switch keeps its configuration across a reboot.
func (s *Server) StartNetconfd() {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	os.Remove(s.sock()) // a socket left by a killed netconfd makes the next one fail
	// The port is the one netconf-subsystem reports; others are refused.
	cmd, err := lab.Netconfd(s.Dir, s.sock(), s.port, User)
	if err != nil {
		s.t.Fatal(err)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		s.t.Fatalf("netconfd: %v", err)
	}
	s.netconfd = cmd
	exited := make(chan struct{})
	s.exited = exited
	go func() { cmd.Wait(); close(exited) }()
	if err := lab.WaitForSocket(context.Background(), s.sock(), exited, 15*time.Second); err != nil {
		s.t.Fatalf("%v: %s\nlog:\n%s", err, out.String(), s.readLog("netconfd.log"))
	}
}

// KillNetconfd kills netconfd with SIGKILL, as a crash would, and waits for it to be gone.
func (s *Server) KillNetconfd() {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.netconfd == nil {
		return
	}
	_ = s.netconfd.Process.Kill()
	select {
	case <-s.exited:
	case <-time.After(10 * time.Second):
		s.t.Errorf("netconfd did not exit after SIGKILL") // may run on the proxy's goroutine: no Fatal
	}
	s.netconfd = nil
}

func (s *Server) startSSHD(hostKey string) {
	s.t.Helper()
	cfg := filepath.Join(s.Dir, "sshd_config")
	conf := fmt.Sprintf(`Port %d
ListenAddress 127.0.0.1
HostKey %s
PidFile %s
AuthorizedKeysFile none
PasswordAuthentication yes
KbdInteractiveAuthentication no
PubkeyAuthentication no
PermitRootLogin no
AllowUsers %s
UsePAM no
StrictModes no
MaxStartups 100
LogLevel VERBOSE
Subsystem netconf "/usr/sbin/netconf-subsystem --ncxserver-sockname=%d@%s"
`, s.port, hostKey, filepath.Join(s.Dir, "sshd.pid"), User, s.port, s.proxySock())
	if err := os.WriteFile(cfg, []byte(conf), 0o600); err != nil {
		s.t.Fatal(err)
	}
	cmd := exec.Command("/usr/sbin/sshd", "-D", "-f", cfg, "-E", filepath.Join(s.Dir, "sshd.log"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if out, err := exec.Command("/usr/sbin/sshd", "-t", "-f", cfg).CombinedOutput(); err != nil {
		s.t.Fatalf("sshd -t: %v: %s", err, out)
	}
	if err := cmd.Start(); err != nil {
		s.t.Fatalf("sshd: %v", err)
	}
	s.sshd = cmd
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if c, err := net.Dial("tcp", s.Addr); err == nil {
			c.Close()
			return
		}
	}
	s.t.Fatalf("sshd did not listen on %s in 10 s; log:\n%s", s.Addr, s.readLog("sshd.log"))
}

func (s *Server) stop() {
	s.ReleaseSessions()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range []*exec.Cmd{s.sshd, s.netconfd} {
		if c != nil && c.Process != nil {
			// The whole process group: sshd's per-connection children and their subsystems.
			_ = syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
		}
	}
}

func (s *Server) readLog(name string) string {
	b, _ := os.ReadFile(filepath.Join(s.Dir, name))
	return string(b)
}

func (s *Server) dumpLogs() {
	for _, name := range []string{"netconfd.log", "sshd.log"} {
		s.t.Logf("%s:\n%s", name, s.readLog(name))
	}
}
