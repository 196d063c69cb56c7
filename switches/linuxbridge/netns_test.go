package linuxbridge_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/sys/unix"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/clock"
	"github.com/subprov/subprov/counters"
	"github.com/subprov/subprov/internal/testdb"
	"github.com/subprov/subprov/store"
	"github.com/subprov/subprov/switches"
	"github.com/subprov/subprov/switches/linuxbridge"
)

// The acceptance test builds a switch out of network namespaces: a "switch" namespace running
// its own sshd, reached from the test through a veth pair, and three "host" namespaces whose
// veths are the switch's ports swp1-swp3. Everything goes through the driver over SSH; the
// hosts' traffic proves what the switch does with it.

const sshdPath = "/usr/sbin/sshd"

// requireNetns skips (or, under CI=true, fails) when namespaces cannot be made here.
func requireNetns(t *testing.T) {
	t.Helper()
	// The tools live in sbin, which a non-login shell's PATH may lack.
	t.Setenv("PATH", os.Getenv("PATH")+":/usr/sbin:/sbin")
	var missing []string
	if os.Geteuid() != 0 {
		missing = append(missing, "root")
	}
	for _, tool := range []string{"ip", "tc", "nft", "bridge"} {
		if _, err := exec.LookPath(tool); err != nil {
			missing = append(missing, tool)
		}
	}
	if _, err := os.Stat(sshdPath); err != nil {
		missing = append(missing, sshdPath)
	}
	if len(missing) == 0 {
		return
	}
	msg := fmt.Sprintf("the Linux-bridge acceptance test needs %s (network namespaces, iproute2, nftables, openssh-server); .ci/run runs it as root",
		strings.Join(missing, ", "))
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

func sh(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// inNS runs fn on an OS thread moved into network namespace ns: sockets fn opens live there.
// The thread is never unlocked, so it ends with the goroutine instead of carrying the
// namespace back into the runtime's pool.
func inNS(ns string, fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		f, err := os.Open("/run/netns/" + ns)
		if err != nil {
			errc <- err
			return
		}
		defer f.Close()
		if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
			errc <- fmt.Errorf("setns %s: %w", ns, err)
			return
		}
		errc <- fn()
	}()
	return <-errc
}

type host struct {
	ns, ip, mac, port string
}

type lab struct {
	t     *testing.T
	sw    string // the switch's namespace
	hosts []host
	drv   switches.Driver
	raw   *linuxbridge.Switch
	cfg   linuxbridge.Config
	count *countingRunner
}

// countingRunner counts the commands that change the switch.
type countingRunner struct {
	linuxbridge.Runner
	mu     sync.Mutex
	writes []string
}

func (c *countingRunner) Run(ctx context.Context, cmd linuxbridge.Command) ([]byte, error) {
	if !strings.Contains(cmd.String(), " -j ") {
		c.mu.Lock()
		c.writes = append(c.writes, cmd.String())
		c.mu.Unlock()
	}
	start := time.Now()
	out, err := c.Runner.Run(ctx, cmd)
	if os.Getenv("LBDEBUG") != "" {
		fmt.Fprintf(os.Stderr, "%v %s: %v\n", time.Since(start), cmd, err)
	}
	return out, err
}

func (c *countingRunner) take() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	w := c.writes
	c.writes = nil
	return w
}

func newKey(t *testing.T) (ed25519.PublicKey, []byte) {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatal(err)
	}
	return pub, pem.EncodeToMemory(block)
}

func authorizedLine(t *testing.T, pub ed25519.PublicKey) string {
	t.Helper()
	k, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(ssh.MarshalAuthorizedKey(k)))
}

func newLab(t *testing.T) *lab {
	requireNetns(t)
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	id := hex.EncodeToString(b[:])
	l := &lab{t: t, sw: "subprov-lb-" + id + "-sw"}
	netnses := []string{l.sw}
	t.Cleanup(func() {
		for _, ns := range netnses {
			if out, err := exec.Command("ip", "netns", "del", ns).CombinedOutput(); err != nil {
				t.Logf("cleanup: ip netns del %s: %v %s", ns, err, out)
			}
		}
	})
	sh(t, "ip", "netns", "add", l.sw)
	sh(t, "ip", "-n", l.sw, "link", "set", "lo", "up")

	// The management link: IPv6 link-local addresses scoped to the veth, so nothing is routed
	// or allocated in the machine's own namespace and parallel runs never collide.
	mgmt := "lbm" + id
	sh(t, "ip", "link", "add", mgmt, "type", "veth", "peer", "name", "mgmt0", "netns", l.sw)
	t.Cleanup(func() { _ = exec.Command("ip", "link", "del", mgmt).Run() })
	sh(t, "ip", "addr", "add", "fe80::1/64", "dev", mgmt, "nodad")
	sh(t, "ip", "link", "set", mgmt, "up")
	sh(t, "ip", "-n", l.sw, "addr", "add", "fe80::2/64", "dev", "mgmt0", "nodad")
	sh(t, "ip", "-n", l.sw, "link", "set", "mgmt0", "up")

	for i := 1; i <= 3; i++ {
		h := host{
			ns:   fmt.Sprintf("subprov-lb-%s-h%d", id, i),
			ip:   fmt.Sprintf("10.9.0.%d", i),
			mac:  fmt.Sprintf("02:00:00:00:00:%02x", i),
			port: fmt.Sprintf("swp%d", i),
		}
		sh(t, "ip", "netns", "add", h.ns)
		netnses = append(netnses, h.ns)
		sh(t, "ip", "link", "add", h.port, "netns", l.sw, "type", "veth", "peer", "name", "eth0", "netns", h.ns)
		sh(t, "ip", "-n", h.ns, "link", "set", "eth0", "address", h.mac)
		sh(t, "ip", "-n", h.ns, "addr", "add", h.ip+"/24", "dev", "eth0")
		sh(t, "ip", "-n", h.ns, "link", "set", "eth0", "up")
		sh(t, "ip", "-n", h.ns, "link", "set", "lo", "up")
		l.hosts = append(l.hosts, h)
		l.serve(h)
	}

	l.startSSHD(mgmt)
	return l
}

// startSSHD runs the switch's own sshd (its own config and host key) and builds the driver.
// The driver logs in as root with a key: the commands need root in the namespace, and a
// password for root (or a sudoer) would mean changing this machine's accounts.
func (l *lab) startSSHD(mgmt string) {
	t := l.t
	dir := t.TempDir()
	hostPub, hostPEM := newKey(t)
	clientPub, clientPEM := newKey(t)
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	hostKey := write("host_ed25519", hostPEM)
	authorized := write("authorized_keys", []byte(authorizedLine(t, clientPub)+"\n"))
	conf := write("sshd_config", []byte(strings.Join([]string{
		"Port 22",
		"ListenAddress ::",
		"HostKey " + hostKey,
		"PidFile none",
		"AuthorizedKeysFile " + authorized,
		"PermitRootLogin prohibit-password",
		"PubkeyAuthentication yes",
		"PasswordAuthentication no",
		"KbdInteractiveAuthentication no",
		"UsePAM no",
		"StrictModes no",
		"PrintMotd no",
		"MaxSessions 50",
		"MaxStartups 50",
		"AllowUsers root",
		// bash sources ~/.bashrc for every command sshd starts unless it believes it is
		// nested; this machine's root .bashrc takes seconds, which is not the switch's cost.
		"SetEnv SHLVL=1",
		"",
	}, "\n")))
	if err := os.MkdirAll("/run/sshd", 0o755); err != nil { // sshd's privilege-separation directory
		t.Fatal(err)
	}
	sh(t, sshdPath, "-t", "-f", conf)
	var logs bytes.Buffer
	cmd := exec.Command("ip", "netns", "exec", l.sw, sshdPath, "-D", "-e", "-f", conf)
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("sshd log:\n%s", logs.String())
		}
	})

	addr := "[fe80::2%" + mgmt + "]:22"
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("sshd in %s not listening on %s: %v\n%s", l.sw, addr, err, logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}

	l.cfg = linuxbridge.Config{
		Name: "sw1", Address: addr, Username: "root", PrivateKey: string(clientPEM),
		HostKey: authorizedLine(t, hostPub), Timeout: 5 * time.Second,
	}
	r, err := linuxbridge.NewSSHRunner(l.cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	l.count = &countingRunner{Runner: r}
	l.raw = linuxbridge.NewWithRunner(l.cfg, l.count)
	l.drv = switches.Confirmed(l.raw)
}

// serve runs the host's two servers: port 7000 answers "ok", port 7001 swallows a transfer
// and answers with the number of bytes it got.
func (l *lab) serve(h host) {
	t := l.t
	var echo, sink net.Listener
	err := inNS(h.ns, func() (err error) {
		if echo, err = net.Listen("tcp", h.ip+":7000"); err != nil {
			return err
		}
		sink, err = net.Listen("tcp", h.ip+":7001")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { echo.Close(); sink.Close() })
	accept := func(ln net.Listener, handle func(net.Conn)) {
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				go func() {
					defer c.Close()
					_ = c.SetDeadline(time.Now().Add(30 * time.Second))
					handle(c)
				}()
			}
		}()
	}
	accept(echo, func(c net.Conn) { _, _ = c.Write([]byte("ok")) })
	accept(sink, func(c net.Conn) {
		n, _ := io.Copy(io.Discard, c)
		_ = binary.Write(c, binary.BigEndian, n)
	})
}

func (l *lab) dial(from host, to host, port int, timeout time.Duration) (net.Conn, error) {
	var c net.Conn
	err := inNS(from.ns, func() (err error) {
		c, err = net.DialTimeout("tcp", fmt.Sprintf("%s:%d", to.ip, port), timeout)
		return err
	})
	return c, err
}

// reaches tries once, within timeout, to get "ok" from to's echo server.
func (l *lab) reaches(from, to host, timeout time.Duration) bool {
	c, err := l.dial(from, to, 7000, timeout)
	if err != nil {
		return false
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(timeout))
	buf := make([]byte, 2)
	_, err = io.ReadFull(c, buf)
	return err == nil && string(buf) == "ok"
}

func (l *lab) mustReach(from, to host) {
	l.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !l.reaches(from, to, time.Second) {
		if time.Now().After(deadline) {
			l.t.Fatalf("%s (%s) does not reach %s (%s)", from.port, from.ip, to.port, to.ip)
		}
	}
}

func (l *lab) mustNotReach(from, to host) {
	l.t.Helper()
	if l.reaches(from, to, 1500*time.Millisecond) {
		l.t.Fatalf("%s (%s) reaches %s (%s), and must not", from.port, from.ip, to.port, to.ip)
	}
}

// transfer sends n bytes from one host to another and returns how long it took until the
// receiver confirmed it had them all.
func (l *lab) transfer(from, to host, n int64) time.Duration {
	l.t.Helper()
	start := time.Now()
	c, err := l.dial(from, to, 7001, 5*time.Second)
	if err != nil {
		l.t.Fatalf("transfer %s -> %s: %v", from.port, to.port, err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.CopyN(c, zeros{}, n); err != nil {
		l.t.Fatalf("transfer %s -> %s: %v", from.port, to.port, err)
	}
	if err := c.(*net.TCPConn).CloseWrite(); err != nil {
		l.t.Fatal(err)
	}
	var got int64
	if err := binary.Read(c, binary.BigEndian, &got); err != nil || got != n {
		l.t.Fatalf("transfer %s -> %s: receiver got %d of %d bytes (%v)", from.port, to.port, got, n, err)
	}
	return time.Since(start)
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

func (l *lab) converge(h host, want switches.State) {
	l.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := l.drv.Converge(ctx, switches.Port{Switch: "sw1", Name: h.port}, want); err != nil {
		l.t.Fatalf("converge %s to %v: %v", h.port, want, err)
	}
}

func (l *lab) read(h host) switches.State {
	l.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := l.drv.Read(ctx, switches.Port{Switch: "sw1", Name: h.port})
	if err != nil {
		l.t.Fatalf("read %s: %v", h.port, err)
	}
	return s
}

func service(vlan, down, up int, mac string) switches.State {
	return switches.State{Mode: switches.ModeService, Config: switches.Config{VLAN: vlan, DownloadMbps: down, UploadMbps: up, MAC: mac}}
}

// TestSwitchInNamespaces is the acceptance test of the driver on a real kernel, per-VLAN
// bridge layout (this kernel filters no VLANs), through a real sshd.
func TestSwitchInNamespaces(t *testing.T) {
	if testing.Short() {
		t.Skip("the namespace acceptance test moves real traffic for several seconds")
	}
	l := newLab(t)
	h1, h2, h3 := l.hosts[0], l.hosts[1], l.hosts[2]
	ctx := context.Background()

	// A host key other than the switch's is refused before anything runs.
	bad := l.cfg
	otherPub, _ := newKey(t)
	bad.HostKey = authorizedLine(t, otherPub)
	if sw, err := linuxbridge.New(bad); err != nil {
		t.Fatal(err)
	} else if _, err := sw.Read(ctx, switches.Port{Switch: "sw1", Name: "swp1"}); !errors.Is(err, switches.ErrHostKey) || errors.Is(err, switches.ErrUnavailable) {
		t.Fatalf("read with the wrong host key: %v, want a host key mismatch", err)
	}

	if got := l.read(h1); got != (switches.State{Mode: switches.ModeOff}) {
		t.Fatalf("a new port reads %v, want off", got)
	}

	t.Log("VLANs: swp1 and swp2 in 100, swp3 in 200, all three in 10.9.0.0/24")
	// swp1 and swp2 at once: both need VLAN 100's bridge, which neither finds.
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, h := range []host{h1, h2} {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			errs[i] = l.drv.Converge(ctx, switches.Port{Switch: "sw1", Name: h.port}, service(100, 1000, 1000, ""))
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("two ports converging into one new VLAN at once: %v", err)
	}
	l.converge(h3, service(200, 1000, 1000, ""))
	l.mustReach(h1, h2)
	l.mustReach(h2, h1)
	l.mustNotReach(h1, h3)
	l.mustNotReach(h3, h2)

	l.count.take()
	l.converge(h1, service(100, 1000, 1000, ""))
	if w := l.count.take(); len(w) != 0 {
		t.Fatalf("converging a port already in its state wrote %v", w)
	}

	t.Log("captive: swp3 on VLAN 999 reaches nobody in service")
	l.converge(h3, switches.CaptiveState)
	l.mustNotReach(h3, h1)
	l.mustNotReach(h1, h3)
	l.mustReach(h1, h2)

	t.Log("download: 3 MiB to swp1 through 10 Mbit/s")
	const size = 3 << 20
	implied := time.Duration(float64(size*8) / 10e6 * float64(time.Second))
	fast := l.transfer(h2, h1, size)
	l.converge(h1, service(100, 10, 1000, ""))
	if got := l.read(h1); got != service(100, 10, 1000, "") {
		t.Fatalf("swp1 reads %v", got)
	}
	before, err := l.raw.Stats(ctx, switches.Port{Switch: "sw1", Name: "swp1"})
	if err != nil {
		t.Fatal(err)
	}
	down := l.transfer(h2, h1, size)
	t.Logf("3 MiB download: %v limited (%v implied), %v unlimited", down, implied, fast)
	if down < implied*9/10 {
		t.Errorf("download took %v, under 90%% of the %v a 10 Mbit/s limit implies", down, implied)
	}
	after, err := l.raw.Stats(ctx, switches.Port{Switch: "sw1", Name: "swp1"})
	if err != nil {
		t.Fatal(err)
	}
	if sent := after.TXOctets - before.TXOctets; sent < size {
		t.Errorf("swp1 sent %d octets during a %d-byte download", sent, size)
	}
	if !after.AdminUp || !after.LinkUp {
		t.Errorf("swp1 link state %+v, want up", after)
	}

	t.Log("upload: 3 MiB from swp1 through 10 Mbit/s (ifb)")
	l.converge(h1, service(100, 1000, 10, ""))
	up := l.transfer(h1, h2, size)
	t.Logf("3 MiB upload: %v limited (%v implied)", up, implied)
	if up < implied*9/10 {
		t.Errorf("upload took %v, under 90%% of the %v a 10 Mbit/s limit implies", up, implied)
	}

	t.Log("MAC binding: a spoofed source MAC passes unbound and is dropped bound")
	l.converge(h1, service(100, 1000, 1000, ""))
	sh(t, "ip", "-n", h1.ns, "link", "set", "eth0", "address", "02:00:00:00:00:99")
	l.mustReach(h1, h2)
	l.converge(h1, service(100, 1000, 1000, h1.mac))
	sh(t, "ip", "-n", h2.ns, "neigh", "flush", "all")
	l.mustNotReach(h1, h2)
	sh(t, "ip", "-n", h1.ns, "link", "set", "eth0", "address", h1.mac)
	sh(t, "ip", "-n", h2.ns, "neigh", "flush", "all")
	l.mustReach(h1, h2)

	t.Log("suspend stops traffic and keeps the config; restore brings it back")
	suspended := service(100, 1000, 1000, h1.mac)
	suspended.Mode = switches.ModeSuspended
	l.converge(h1, suspended)
	l.mustNotReach(h1, h2)
	l.mustNotReach(h2, h1)
	l.converge(h1, service(100, 1000, 1000, h1.mac))
	l.mustReach(h1, h2)
	l.mustReach(h2, h1)

	t.Log("off: out of every bridge, no limits, no binding")
	l.converge(h1, switches.State{Mode: switches.ModeOff})
	l.mustNotReach(h2, h1)
	out := sh(t, "ip", "-n", l.sw, "-j", "link", "show")
	if strings.Contains(out, `"ifbswp1"`) {
		t.Errorf("swp1's ifb device is left after off")
	}
}

// hostBytes reads the host side of a port (its eth0, in its own namespace): what it received
// is what the switch sent out of the port, what it sent is what the port received.
func (l *lab) hostBytes(h host) (rx, tx uint64) {
	l.t.Helper()
	read := func(name string) uint64 {
		out := strings.TrimSpace(sh(l.t, "ip", "netns", "exec", h.ns, "cat", "/sys/class/net/eth0/statistics/"+name))
		n, err := strconv.ParseUint(out, 10, 64)
		if err != nil {
			l.t.Fatalf("%s of %s: %q: %v", name, h.ns, out, err)
		}
		return n
	}
	return read("rx_bytes"), read("tx_bytes")
}

// TestCountersInNamespaces: what the sampling records for a port, through the driver over
// SSH, is what actually went through it. Bounded transfers to and from swp1's host between two
// samples; the download and upload recorded in the store match the bytes the host's own
// interface received and sent within 1%.
func TestCountersInNamespaces(t *testing.T) {
	if testing.Short() {
		t.Skip("the namespace acceptance test moves real traffic")
	}
	l := newLab(t)
	h1, h2 := l.hosts[0], l.hosts[1]
	l.converge(h1, service(100, 1000, 1000, ""))
	l.converge(h2, service(100, 1000, 1000, ""))
	l.mustReach(h1, h2)
	l.mustReach(h2, h1)
	// One engine after the other: the engines share the lab's port, so their transfers must
	// not overlap.
	for _, engine := range testdb.Engines() {
		t.Run(engine, func(t *testing.T) {
			countersThroughThePort(t, l, testdb.Open(t, testdb.MigratedURL(t, engine, testdb.StoreSchema)))
		})
	}
}

// countersThroughThePort samples swp1 into st around transfers to and from its host.
func countersThroughThePort(t *testing.T, l *lab, st *store.Store) {
	h1, h2 := l.hosts[0], l.hosts[1]
	ctx := context.Background()
	testdb.SeedProvider(t, st, "p1", time.Now())
	port := &subprov.Port{ID: "port-swp1", BuildingID: "b1", Switch: "sw1", Name: h1.port}
	err := st.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.UpsertBuilding(ctx, &subprov.Building{ID: "b1", Street: "1 Rue", City: "Montréal", Country: "CA"}, "", time.Now()); err != nil {
			return err
		}
		return tx.UpsertPort(ctx, port, time.Now())
	})
	if err != nil {
		t.Fatal(err)
	}
	svc := &counters.Service{Store: st, Clock: clock.Real{}, Switches: l.drv.(switches.CounterReader)}
	ports := []store.SampledPort{{PortID: port.ID, Name: port.Name, InService: true, DownloadMbps: 1000, UploadMbps: 1000}}
	sample := func(linkUp bool) {
		t.Helper()
		got, err := svc.SamplePorts(ctx, "sw1", ports)
		if err != nil || len(got) != 1 || got[0].Stale || got[0].Reading.LinkUp != linkUp {
			t.Fatalf("sample: %+v, %v; want link up %t", got, err, linkUp)
		}
	}
	start := time.Now().UTC().Truncate(time.Hour)
	sample(true) // the baseline
	rx0, tx0 := l.hostBytes(h1)
	const down, up = 6 << 20, 2 << 20
	l.transfer(h2, h1, down)
	l.transfer(h1, h2, up)
	rx1, tx1 := l.hostBytes(h1)
	sample(true)
	recDown, recUp, err := st.PortTraffic(ctx, "sw1", h1.port, start.Add(-time.Hour), time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	received, sent := rx1-rx0, tx1-tx0
	t.Logf("download: %d bytes of payload, host received %d, recorded %d; upload: %d of payload, host sent %d, recorded %d",
		down, received, recDown, up, sent, recUp)
	within := func(what string, recorded int64, actual uint64) {
		if d := float64(recorded) - float64(actual); d > 0.01*float64(actual) || -d > 0.01*float64(actual) {
			t.Errorf("%s recorded %d bytes, the host's interface counted %d: off by %.2f%%", what, recorded, actual, 100*d/float64(actual))
		}
	}
	within("download", recDown, received)
	within("upload", recUp, sent)
	if received < down || sent < up {
		t.Errorf("the host's interface counted %d received and %d sent for %d down and %d up", received, sent, down, up)
	}

	// The subscriber's side goes down (the modem unplugged): the next sample opens an outage,
	// the one after it comes back ends it.
	sh(t, "ip", "-n", h1.ns, "link", "set", "eth0", "down")
	sample(false)
	outs, err := st.PortOutages(ctx, "sw1", h1.port, start.Add(-time.Hour), time.Now().Add(time.Hour))
	if err != nil || len(outs) != 1 || outs[0].ResolvedAt != nil {
		t.Fatalf("outages with the host's link down: %+v, %v; want one ongoing", outs, err)
	}
	sh(t, "ip", "-n", h1.ns, "link", "set", "eth0", "up")
	sample(true)
	outs, err = st.PortOutages(ctx, "sw1", h1.port, start.Add(-time.Hour), time.Now().Add(time.Hour))
	if err != nil || len(outs) != 1 || outs[0].ResolvedAt == nil || !outs[0].ResolvedAt.After(outs[0].StartedAt) {
		t.Fatalf("outages with the host's link back: %+v, %v; want one resolved", outs, err)
	}
}
