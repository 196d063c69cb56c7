// Package linuxbridge drives a Linux-based switch (Cumulus-style bridges, OpenWrt) over SSH:
// it reads the switch with iproute2's and nftables' JSON output and writes it with ip, bridge,
// tc and nft, so a port's state is computed from what the switch says, never from scraped text.
//
// Two bridge layouts are supported, told apart on the switch by the bridges' vlan_filtering:
//
//   - one bridge per VLAN (no bridge filters VLANs): the bridge of VLAN N is BridgePrefix+N
//     ("br100"), created when first needed, with the uplink's VLAN subinterface in it when an
//     Uplink is configured; a port is in VLAN N by being in that bridge;
//   - one VLAN-aware bridge (vlan_filtering 1): a port is in VLAN N by being in the bridge with
//     N as its untagged PVID and no other VLAN.
//
// What each mode is on the switch:
//
//   - service: the port is in its VLAN and up; the download limit is a tbf on the port's egress,
//     the upload limit a tbf on an ifb device its ingress is redirected to (a u32 match-all
//     filter with a mirred action); a bound MAC is an entry in the nftables table "bridge
//     subprov", whose prerouting rule drops frames from a bound port with any other source MAC;
//   - suspended: exactly the service configuration with the port administratively down, so no
//     traffic passes and the switch itself still says what Restore brings back;
//   - captive: the port is in CaptiveVLAN and up, with no limit and no binding;
//   - off: the port is in no bridge and has no limit and no binding; its link is left as found.
package linuxbridge

import (
	"context"
	"fmt"
	"hash/fnv"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/subprov/subprov/switches"
)

// Config is one Linux-based switch.
type Config struct {
	// Name is the switch's name in the inventory (Port.Switch); when set, a port of another
	// switch is refused.
	Name string
	// Address is host:port of the switch's sshd.
	Address string
	// Username and Password (or PrivateKey, a PEM private key) log in. The user runs ip,
	// bridge, tc and nft, so it is root or, with Sudo, may run them with `sudo -n`.
	Username, Password, PrivateKey string
	Sudo                           bool
	// HostKey is the switch's SSH host public key, as an authorized_keys line or a known_hosts
	// line; a switch presenting any other key is not talked to.
	HostKey string
	// Timeout bounds connecting (default 10s); each command is bounded by the caller's context.
	Timeout time.Duration
	// BridgePrefix names the per-VLAN bridges (default "br": VLAN 100 is bridge "br100").
	BridgePrefix string
	// Bridge is the VLAN-aware bridge; empty means the only bridge with VLAN filtering on.
	Bridge string
	// Uplink, when set, is the trunk towards the network: the driver puts each VLAN it uses on
	// it (a VLAN subinterface in the per-VLAN bridge, or a tagged member of the VLAN-aware one).
	Uplink string
}

// Switch is one Linux-based switch, the switches.Raw that switches.Confirmed wraps.
type Switch struct {
	cfg Config
	run Runner
	// writing serializes this process's writes to the switch: each is planned from a read
	// of shared objects (a VLAN's bridge, the binding table) that another port's write could
	// be creating at the same moment.
	writing sync.Mutex
}

var (
	_ switches.Raw           = (*Switch)(nil)
	_ switches.CounterReader = (*Switch)(nil)
)

// New returns the switch reached over SSH as cfg says; it connects on first use.
func New(cfg Config) (*Switch, error) {
	r, err := NewSSHRunner(cfg)
	if err != nil {
		return nil, err
	}
	return NewWithRunner(cfg, r), nil
}

// NewWithRunner returns the switch whose commands r runs (tests, recording).
func NewWithRunner(cfg Config, r Runner) *Switch {
	if cfg.BridgePrefix == "" {
		cfg.BridgePrefix = "br"
	}
	return &Switch{cfg: cfg, run: r}
}

func (s *Switch) Name() string { return "linuxbridge" }

// Read reconstructs the port's state from the switch alone. Whatever of this driver's
// configuration it finds is reported, also where the mode has none (an off port that still
// has a limit reads with that limit), so such a port never compares equal to the clean state
// and is written again. A port whose source MACs are all dropped (bound with no MAC) reads
// with MAC "drop-all" for the same reason.
func (s *Switch) Read(ctx context.Context, p switches.Port) (switches.State, error) {
	v, err := s.view(ctx, p)
	if err != nil {
		return switches.State{}, err
	}
	return v.state(), nil
}

// Write converges the port to want with the commands its current state calls for, and none
// when it is already there. Whether want may replace what the port serves is switches.Confirmed's
// rule, checked before the write.
func (s *Switch) Write(ctx context.Context, p switches.Port, want switches.State) error {
	s.writing.Lock()
	defer s.writing.Unlock()
	v, err := s.view(ctx, p)
	if err != nil {
		return err
	}
	for _, c := range s.plan(v, want) {
		if _, err := s.run.Run(ctx, c); err != nil {
			return fmt.Errorf("write %s: %w", p.Name, err)
		}
	}
	return nil
}

// Stats reads a port's interface counters and link state.
func (s *Switch) Stats(ctx context.Context, p switches.Port) (Stats, error) {
	if err := s.checkPort(p); err != nil {
		return Stats{}, err
	}
	out, err := s.run.Run(ctx, Command{Args: []string{"ip", "-j", "-s", "link", "show", "dev", p.Name}})
	if err != nil {
		return Stats{}, fmt.Errorf("counters %s: %w", p.Name, err)
	}
	c, err := parseStats(out, p.Name)
	if err != nil {
		return Stats{}, fmt.Errorf("counters %s: %w", p.Name, err)
	}
	return c, nil
}

// Counters is the switches.CounterReader of the port: its link state and octets, TX (sent to
// the subscriber) as out, RX as in.
func (s *Switch) Counters(ctx context.Context, p switches.Port) (switches.Counters, error) {
	st, err := s.Stats(ctx, p)
	if err != nil {
		return switches.Counters{}, err
	}
	return switches.Counters{LinkUp: st.LinkUp, InOctets: st.RXOctets, OutOctets: st.TXOctets}, nil
}

func (s *Switch) checkPort(p switches.Port) error {
	if s.cfg.Name != "" && p.Switch != s.cfg.Name {
		return fmt.Errorf("%w: port %s is not on switch %s", switches.ErrInvalid, p, s.cfg.Name)
	}
	if p.Name == "" || strings.ContainsAny(p.Name, " \t\n/\"'") || len(p.Name) > 15 {
		return fmt.Errorf("%w: %q is not an interface name", switches.ErrInvalid, p.Name)
	}
	return nil
}

// The nftables objects the MAC binding lives in.
const (
	nftTable    = "subprov"
	nftChain    = "prerouting"
	nftPorts    = "bound_ports"
	nftBindings = "bindings"
)

// nftScript creates the binding table, or repairs its rule, leaving the sets' elements alone:
// "add" of an existing table, set or chain changes nothing.
const nftScript = `add table bridge subprov
add set bridge subprov bound_ports { type ifname; }
add set bridge subprov bindings { type ifname . ether_addr; }
add chain bridge subprov prerouting { type filter hook prerouting priority -200; policy accept; }
flush chain bridge subprov prerouting
add rule bridge subprov prerouting iifname @bound_ports iifname . ether saddr != @bindings drop
`

type layout int

const (
	perVLAN layout = iota
	vlanAware
)

// portView is everything the driver reads about one port.
type portView struct {
	port   string
	layout layout
	bridge string // the VLAN-aware bridge
	links  map[string]link
	vlans  map[string]vlanMembership // VLAN-aware layout only

	master   string
	vlan     int
	adminUp  bool
	download int
	ingress  bool
	redirect string
	upload   int
	binding  binding
}

func (s *Switch) view(ctx context.Context, p switches.Port) (portView, error) {
	if err := s.checkPort(p); err != nil {
		return portView{}, err
	}
	v := portView{port: p.Name}
	read := func(args ...string) ([]byte, error) {
		out, err := s.run.Run(ctx, Command{Args: args})
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", p.Name, err)
		}
		return out, nil
	}
	out, err := read("ip", "-j", "-d", "link", "show")
	if err != nil {
		return portView{}, err
	}
	if v.links, err = parseLinks(out); err != nil {
		return portView{}, err
	}
	l, ok := v.links[p.Name]
	if !ok {
		return portView{}, fmt.Errorf("%w: switch has no interface %q", switches.ErrInvalid, p.Name)
	}
	if k := l.LinkInfo.Kind; k == "bridge" || k == "ifb" || k == "vlan" || p.Name == s.cfg.Uplink {
		return portView{}, fmt.Errorf("%w: %q is not an access port (kind %q)", switches.ErrInvalid, p.Name, k)
	}
	v.adminUp = l.adminUp()
	if err := s.detectLayout(&v); err != nil {
		return portView{}, err
	}
	if v.layout == vlanAware {
		if out, err = read("bridge", "-j", "vlan", "show"); err != nil {
			return portView{}, err
		}
		if v.vlans, err = parseBridgeVLANs(out); err != nil {
			return portView{}, err
		}
	}
	if l.Master != "" {
		v.master = l.Master
		if v.vlan, err = s.vlanOf(v, l.Master); err != nil {
			return portView{}, err
		}
	}

	if out, err = read("tc", "-j", "qdisc", "show", "dev", p.Name); err != nil {
		return portView{}, err
	}
	q, err := parseQdiscs(out)
	if err != nil {
		return portView{}, err
	}
	v.download, v.ingress = q.TBFMbps, q.Ingress
	if v.ingress {
		if out, err = read("tc", "-j", "filter", "show", "dev", p.Name, "parent", "ffff:"); err != nil {
			return portView{}, err
		}
		if v.redirect, err = parseRedirect(out); err != nil {
			return portView{}, err
		}
	}
	if _, ok := v.links[v.redirect]; ok {
		if out, err = read("tc", "-j", "qdisc", "show", "dev", v.redirect); err != nil {
			return portView{}, err
		}
		q, err := parseQdiscs(out)
		if err != nil {
			return portView{}, err
		}
		v.upload = q.TBFMbps
	}

	if out, err = read("nft", "-j", "list", "ruleset", "bridge"); err != nil {
		return portView{}, err
	}
	if v.binding, err = parseBinding(out); err != nil {
		return portView{}, err
	}
	return v, nil
}

// detectLayout tells the layout from the switch: a VLAN-aware bridge (the configured one, or
// the only one) means that layout, none means one bridge per VLAN.
func (s *Switch) detectLayout(v *portView) error {
	if s.cfg.Bridge != "" {
		b, ok := v.links[s.cfg.Bridge]
		if !ok || !b.isBridge() {
			return fmt.Errorf("%w: switch has no bridge %q", switches.ErrInvalid, s.cfg.Bridge)
		}
		if !b.vlanFiltering() {
			return fmt.Errorf("%w: bridge %q does not filter VLANs", switches.ErrInvalid, s.cfg.Bridge)
		}
		v.layout, v.bridge = vlanAware, s.cfg.Bridge
		return nil
	}
	var aware []string
	for name, l := range v.links {
		if l.vlanFiltering() {
			aware = append(aware, name)
		}
	}
	switch len(aware) {
	case 0:
		v.layout = perVLAN
	case 1:
		v.layout, v.bridge = vlanAware, aware[0]
	default:
		slices.Sort(aware)
		return fmt.Errorf("%w: switch has several VLAN-aware bridges %v; configure which one", switches.ErrInvalid, aware)
	}
	return nil
}

// vlanOf is the VLAN a port in bridge master is in. A bridge this driver does not manage is
// refused, so a port in a management or uplink bridge is never moved.
func (s *Switch) vlanOf(v portView, master string) (int, error) {
	if v.layout == vlanAware {
		if master != v.bridge {
			return 0, fmt.Errorf("%w: %q is in bridge %q, not in the VLAN-aware bridge %q", switches.ErrInvalid, v.port, master, v.bridge)
		}
		return v.vlans[v.port].PVID, nil
	}
	if n, ok := strings.CutPrefix(master, s.cfg.BridgePrefix); ok {
		if id, err := strconv.Atoi(n); err == nil && id >= 1 && id <= 4094 && strconv.Itoa(id) == n {
			return id, nil
		}
	}
	return 0, fmt.Errorf("%w: %q is in %q, which is not a VLAN bridge (%sN)", switches.ErrInvalid, v.port, master, s.cfg.BridgePrefix)
}

func (v portView) state() switches.State {
	st := switches.State{Mode: switches.ModeOff}
	if v.master != "" {
		st.VLAN = v.vlan
		switch {
		case !v.adminUp:
			st.Mode = switches.ModeSuspended
		case v.vlan == switches.CaptiveVLAN:
			st.Mode = switches.ModeCaptive
		default:
			st.Mode = switches.ModeService
		}
	}
	st.DownloadMbps, st.UploadMbps = v.download, v.upload
	if v.binding.Enforced && v.binding.Ports[v.port] {
		st.MAC = v.binding.MACs[v.port]
		if st.MAC == "" {
			st.MAC = "drop-all"
		}
	}
	return st
}

// ifbName is the ifb device that carries a port's upload limit: "ifb"+port, or a hash of the
// port when that would exceed the 15 characters of an interface name.
func ifbName(port string) string {
	if len(port) <= 12 {
		return "ifb" + port
	}
	h := fnv.New32a()
	h.Write([]byte(port))
	return fmt.Sprintf("ifb%08x", h.Sum32())
}

func cmd(args ...string) Command { return Command{Args: args} }

// tbf is a token bucket of mbps with a burst of 10 ms of traffic (at least 16 KiB, enough for
// a full frame at the kernel's timer resolution) and 50 ms of queue.
func tbf(dev string, mbps int) Command {
	burst := max(mbps*1250, 16384)
	return cmd("tc", "qdisc", "replace", "dev", dev, "root", "tbf", "rate", strconv.Itoa(mbps)+"mbit",
		"burst", strconv.Itoa(burst), "latency", "50ms")
}

// plan is the commands that take the port from v to want, in an order that never lets the
// port carry traffic it should not: a port leaving service leaves its VLAN before its limits
// go, a port entering service gets its limits and binding before it joins the VLAN, and a port
// being suspended goes down first.
func (s *Switch) plan(v portView, want switches.State) []Command {
	var cmds []Command
	p := v.port
	if want.Mode == switches.ModeSuspended && v.adminUp {
		cmds = append(cmds, cmd("ip", "link", "set", p, "down"))
	}
	membership := s.planMembership(v, want)
	limits := append(s.planLimits(v, want), planBinding(v, want)...)
	if want.Mode == switches.ModeOff || want.Mode == switches.ModeCaptive {
		cmds = append(append(cmds, membership...), limits...)
	} else {
		cmds = append(append(cmds, limits...), membership...)
	}
	if (want.Mode == switches.ModeService || want.Mode == switches.ModeCaptive) && !v.adminUp {
		cmds = append(cmds, cmd("ip", "link", "set", p, "up"))
	}
	return cmds
}

// carries reports what want puts on the port: limits and binding in service and suspension,
// none otherwise.
func carries(want switches.State) (down, up int, mac string) {
	if want.Mode == switches.ModeService || want.Mode == switches.ModeSuspended {
		return want.DownloadMbps, want.UploadMbps, want.MAC
	}
	return 0, 0, ""
}

func (s *Switch) planLimits(v portView, want switches.State) []Command {
	var cmds []Command
	p := v.port
	down, up, _ := carries(want)
	switch {
	case down > 0 && v.download != down:
		cmds = append(cmds, tbf(p, down))
	case down == 0 && v.download > 0:
		cmds = append(cmds, cmd("tc", "qdisc", "del", "dev", p, "root"))
	}
	ifb := v.redirect
	if ifb == "" {
		ifb = ifbName(p)
	}
	dev, exists := v.links[ifb]
	if up > 0 {
		if !exists {
			cmds = append(cmds, cmd("ip", "link", "add", ifb, "type", "ifb"))
		}
		if !dev.adminUp() {
			cmds = append(cmds, cmd("ip", "link", "set", ifb, "up"))
		}
		if v.upload != up {
			cmds = append(cmds, tbf(ifb, up))
		}
		if !v.ingress {
			cmds = append(cmds, cmd("tc", "qdisc", "add", "dev", p, "handle", "ffff:", "ingress"))
		}
		if v.redirect == "" {
			cmds = append(cmds, cmd("tc", "filter", "add", "dev", p, "parent", "ffff:", "protocol", "all", "prio", "1",
				"u32", "match", "u32", "0", "0", "action", "mirred", "egress", "redirect", "dev", ifb))
		}
		return cmds
	}
	if v.ingress {
		cmds = append(cmds, cmd("tc", "qdisc", "del", "dev", p, "ingress"))
	}
	if exists {
		cmds = append(cmds, cmd("ip", "link", "del", ifb))
	}
	return cmds
}

func nftElement(set, elem string) []string {
	return []string{"bridge", nftTable, set, "{ " + elem + " }"}
}

func planBinding(v portView, want switches.State) []Command {
	var cmds []Command
	p := v.port
	b := v.binding
	_, _, mac := carries(want)
	pair := func(m string) string { return strconv.Quote(p) + " . " + m }
	if mac != "" {
		if !b.Table || !b.Enforced {
			cmds = append(cmds, Command{Args: []string{"nft", "-f", "-"}, Stdin: nftScript})
		}
		if old := b.MACs[p]; old != mac {
			if old != "" {
				cmds = append(cmds, cmd(append([]string{"nft", "delete", "element"}, nftElement(nftBindings, pair(old))...)...))
			}
			cmds = append(cmds, cmd(append([]string{"nft", "add", "element"}, nftElement(nftBindings, pair(mac))...)...))
		}
		if !b.Ports[p] {
			cmds = append(cmds, cmd(append([]string{"nft", "add", "element"}, nftElement(nftPorts, strconv.Quote(p))...)...))
		}
		return cmds
	}
	// The port leaves the checked set before its MAC goes, so it is never checked against
	// no MAC at all (which drops everything).
	if b.Ports[p] {
		cmds = append(cmds, cmd(append([]string{"nft", "delete", "element"}, nftElement(nftPorts, strconv.Quote(p))...)...))
	}
	if old := b.MACs[p]; old != "" {
		cmds = append(cmds, cmd(append([]string{"nft", "delete", "element"}, nftElement(nftBindings, pair(old))...)...))
	}
	return cmds
}

func (s *Switch) planMembership(v portView, want switches.State) []Command {
	var cmds []Command
	p := v.port
	if want.Mode == switches.ModeOff {
		if v.master != "" {
			cmds = append(cmds, cmd("ip", "link", "set", p, "nomaster"))
		}
		return cmds
	}
	n := strconv.Itoa(want.VLAN)
	if v.layout == vlanAware {
		member := v.vlans[p]
		if v.master != v.bridge {
			cmds = append(cmds, cmd("ip", "link", "set", p, "master", v.bridge))
			// A port joining the bridge gets the bridge's default PVID.
			member = vlanMembership{PVID: v.links[v.bridge].defaultPVID(), Members: []int{v.links[v.bridge].defaultPVID()}}
		}
		if member.PVID != want.VLAN {
			cmds = append(cmds, cmd("bridge", "vlan", "add", "dev", p, "vid", n, "pvid", "untagged"))
		}
		for _, id := range member.Members {
			if id != want.VLAN && id != 0 {
				cmds = append(cmds, cmd("bridge", "vlan", "del", "dev", p, "vid", strconv.Itoa(id)))
			}
		}
		if up := s.cfg.Uplink; up != "" && !slices.Contains(v.vlans[up].Members, want.VLAN) {
			cmds = append(cmds, cmd("bridge", "vlan", "add", "dev", up, "vid", n))
		}
		return cmds
	}
	br := s.cfg.BridgePrefix + n
	b, ok := v.links[br]
	if !ok {
		cmds = append(cmds, cmd("ip", "link", "add", br, "type", "bridge"))
	}
	if !b.adminUp() {
		cmds = append(cmds, cmd("ip", "link", "set", br, "up"))
	}
	if up := s.cfg.Uplink; up != "" {
		sub := up + "." + n
		l, ok := v.links[sub]
		if !ok {
			cmds = append(cmds, cmd("ip", "link", "add", "link", up, "name", sub, "type", "vlan", "id", n))
		}
		if l.Master != br {
			cmds = append(cmds, cmd("ip", "link", "set", sub, "master", br))
		}
		if !l.adminUp() {
			cmds = append(cmds, cmd("ip", "link", "set", sub, "up"))
		}
	}
	if v.master != br {
		cmds = append(cmds, cmd("ip", "link", "set", p, "master", br))
	}
	return cmds
}

// Close closes the switch's connection (its runner's, when the runner holds one).
func (s *Switch) Close() error {
	if c, ok := s.run.(io.Closer); ok {
		return c.Close()
	}
	return nil
}
