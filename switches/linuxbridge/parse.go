package linuxbridge

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"

	"github.com/subprov/subprov/switches"
)

// The structures below hold the fields this driver uses from iproute2's and nftables' JSON
// output; everything else in that output is ignored.

// link is one entry of `ip -j -d link show` (and of `ip -j -s link show`).
type link struct {
	Name      string   `json:"ifname"`
	Flags     []string `json:"flags"`
	Master    string   `json:"master"`
	OperState string   `json:"operstate"`
	Address   string   `json:"address"`
	LinkInfo  struct {
		Kind string `json:"info_kind"`
		Data struct {
			VLANFiltering *int `json:"vlan_filtering"`
			DefaultPVID   *int `json:"default_pvid"`
		} `json:"info_data"`
		SlaveKind string `json:"info_slave_kind"`
	} `json:"linkinfo"`
	Stats struct {
		RX linkStats `json:"rx"`
		TX linkStats `json:"tx"`
	} `json:"stats64"`
}

type linkStats struct {
	Bytes   uint64 `json:"bytes"`
	Packets uint64 `json:"packets"`
	Dropped uint64 `json:"dropped"`
	Errors  uint64 `json:"errors"`
}

func (l link) adminUp() bool { return slices.Contains(l.Flags, "UP") }

func (l link) isBridge() bool { return l.LinkInfo.Kind == "bridge" }

func (l link) vlanFiltering() bool {
	return l.isBridge() && l.LinkInfo.Data.VLANFiltering != nil && *l.LinkInfo.Data.VLANFiltering == 1
}

// defaultPVID is the PVID a port joining this bridge gets (1 unless the bridge says otherwise).
func (l link) defaultPVID() int {
	if p := l.LinkInfo.Data.DefaultPVID; p != nil {
		return *p
	}
	return 1
}

func parseLinks(out []byte) (map[string]link, error) {
	var ls []link
	if err := json.Unmarshal(out, &ls); err != nil {
		return nil, fmt.Errorf("%w: parse ip -j link: %w", switches.ErrInvalid, err)
	}
	m := make(map[string]link, len(ls))
	for _, l := range ls {
		m[l.Name] = l
	}
	return m, nil
}

// portVLANs is one entry of `bridge -j vlan show`.
type portVLANs struct {
	Name  string `json:"ifname"`
	VLANs []struct {
		VLAN    int      `json:"vlan"`
		VLANEnd int      `json:"vlanEnd"`
		Flags   []string `json:"flags"`
	} `json:"vlans"`
}

// vlanMembership is what a port of a VLAN-aware bridge carries: its untagged PVID (0 for
// none) and every VLAN it is a member of.
type vlanMembership struct {
	PVID    int
	Members []int
}

func parseBridgeVLANs(out []byte) (map[string]vlanMembership, error) {
	var ps []portVLANs
	if err := json.Unmarshal(out, &ps); err != nil {
		return nil, fmt.Errorf("%w: parse bridge -j vlan: %w", switches.ErrInvalid, err)
	}
	m := make(map[string]vlanMembership, len(ps))
	for _, p := range ps {
		var v vlanMembership
		for _, e := range p.VLANs {
			end := e.VLAN
			if e.VLANEnd > end {
				end = e.VLANEnd
			}
			for id := e.VLAN; id <= end; id++ {
				v.Members = append(v.Members, id)
			}
			if slices.Contains(e.Flags, "PVID") && slices.Contains(e.Flags, "Egress Untagged") {
				v.PVID = e.VLAN
			}
		}
		m[p.Name] = v
	}
	return m, nil
}

// qdisc is one entry of `tc -j qdisc show dev X`. Rate is in bytes per second.
type qdisc struct {
	Kind    string `json:"kind"`
	Handle  string `json:"handle"`
	Root    bool   `json:"root"`
	Options struct {
		Rate  uint64 `json:"rate"`
		Burst uint64 `json:"burst"`
	} `json:"options"`
}

// qdiscs is what a device's queueing says about this driver's limits.
type qdiscs struct {
	TBFMbps int  // rate of the root tbf in Mbit/s, 0 without one
	Ingress bool // an ingress qdisc is attached
}

func parseQdiscs(out []byte) (qdiscs, error) {
	var qs []qdisc
	if err := json.Unmarshal(out, &qs); err != nil {
		return qdiscs{}, fmt.Errorf("%w: parse tc -j qdisc: %w", switches.ErrInvalid, err)
	}
	var r qdiscs
	for _, q := range qs {
		switch {
		case q.Root && q.Kind == "tbf":
			r.TBFMbps = int(math.Round(float64(q.Options.Rate) * 8 / 1e6))
		case q.Kind == "ingress":
			r.Ingress = true
		}
	}
	return r, nil
}

// filter is one entry of `tc -j filter show dev X parent ffff:`.
type filter struct {
	Kind    string `json:"kind"`
	Options struct {
		Actions []struct {
			Kind      string `json:"kind"`
			Action    string `json:"mirred_action"`
			Direction string `json:"direction"`
			ToDev     string `json:"to_dev"`
		} `json:"actions"`
	} `json:"options"`
}

// parseRedirect returns the device the port's ingress traffic is redirected to ("" for none).
func parseRedirect(out []byte) (string, error) {
	var fs []filter
	if err := json.Unmarshal(out, &fs); err != nil {
		return "", fmt.Errorf("%w: parse tc -j filter: %w", switches.ErrInvalid, err)
	}
	for _, f := range fs {
		for _, a := range f.Options.Actions {
			if a.Kind == "mirred" && a.Action == "redirect" && a.Direction == "egress" && a.ToDev != "" {
				return a.ToDev, nil
			}
		}
	}
	return "", nil
}

// binding is the driver's nftables table as read from `nft -j list ruleset bridge`.
type binding struct {
	Table    bool              // the table exists
	Enforced bool              // its chain drops what the sets do not allow
	Ports    map[string]bool   // ports whose source MAC is checked
	MACs     map[string]string // port -> the MAC it may send from
}

func parseBinding(out []byte) (binding, error) {
	var doc struct {
		Nftables []map[string]json.RawMessage `json:"nftables"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		return binding{}, fmt.Errorf("%w: parse nft -j: %w", switches.ErrInvalid, err)
	}
	b := binding{Ports: map[string]bool{}, MACs: map[string]string{}}
	for _, obj := range doc.Nftables {
		switch {
		case obj["table"] != nil:
			var t struct{ Family, Name string }
			if err := json.Unmarshal(obj["table"], &t); err != nil {
				return binding{}, fmt.Errorf("%w: parse nft -j table: %w", switches.ErrInvalid, err)
			}
			if t.Family == "bridge" && t.Name == nftTable {
				b.Table = true
			}
		case obj["set"] != nil:
			var s struct {
				Family, Table, Name string
				Elem                []json.RawMessage
			}
			if err := json.Unmarshal(obj["set"], &s); err != nil {
				return binding{}, fmt.Errorf("%w: parse nft -j set: %w", switches.ErrInvalid, err)
			}
			if s.Family != "bridge" || s.Table != nftTable {
				continue
			}
			for _, e := range s.Elem {
				switch s.Name {
				case nftPorts:
					var port string
					if err := json.Unmarshal(e, &port); err != nil {
						return binding{}, fmt.Errorf("%w: parse nft -j %s element %s: %w", switches.ErrInvalid, nftPorts, e, err)
					}
					b.Ports[port] = true
				case nftBindings:
					var c struct{ Concat []string }
					if err := json.Unmarshal(e, &c); err != nil || len(c.Concat) != 2 {
						return binding{}, fmt.Errorf("%w: parse nft -j %s element %s: want port . mac", switches.ErrInvalid, nftBindings, e)
					}
					b.MACs[c.Concat[0]] = c.Concat[1]
				}
			}
		case obj["rule"] != nil:
			var r struct {
				Family, Table, Chain string
				Expr                 []json.RawMessage
			}
			if err := json.Unmarshal(obj["rule"], &r); err != nil {
				return binding{}, fmt.Errorf("%w: parse nft -j rule: %w", switches.ErrInvalid, err)
			}
			if r.Family == "bridge" && r.Table == nftTable && r.Chain == nftChain && isBindingRule(r.Expr) {
				b.Enforced = true
			}
		}
	}
	return b, nil
}

// isBindingRule recognises the one rule this driver writes: a frame from a port in the port
// set whose (port, source MAC) is not in the bindings set is dropped.
func isBindingRule(exprs []json.RawMessage) bool {
	var ports, pairs, drop bool
	for _, raw := range exprs {
		var e map[string]json.RawMessage
		if json.Unmarshal(raw, &e) != nil {
			return false
		}
		if _, ok := e["drop"]; ok {
			drop = true
			continue
		}
		var m struct {
			Op    string          `json:"op"`
			Right json.RawMessage `json:"right"`
		}
		if e["match"] == nil || json.Unmarshal(e["match"], &m) != nil {
			continue
		}
		var right string
		_ = json.Unmarshal(m.Right, &right)
		switch {
		case m.Op == "==" && right == "@"+nftPorts:
			ports = true
		case m.Op == "!=" && right == "@"+nftBindings:
			pairs = true
		}
	}
	return ports && pairs && drop
}

// Stats are a port's interface counters as the switch reports them: octets and packets the
// port received from the subscriber (RX, the subscriber's upload) and sent to it (TX, the
// download), and its link state.
type Stats struct {
	RXOctets, TXOctets   uint64
	RXPackets, TXPackets uint64
	// AdminUp is the port's administrative state (down while suspended); OperState is the
	// kernel's operational state ("UP", "DOWN", "LOWERLAYERDOWN", …), LinkUp whether it is "UP".
	AdminUp   bool
	LinkUp    bool
	OperState string
}

func parseStats(out []byte, port string) (Stats, error) {
	links, err := parseLinks(out)
	if err != nil {
		return Stats{}, err
	}
	l, ok := links[port]
	if !ok {
		return Stats{}, fmt.Errorf("%w: no interface %q in ip -j -s link", switches.ErrInvalid, port)
	}
	return Stats{
		RXOctets: l.Stats.RX.Bytes, TXOctets: l.Stats.TX.Bytes,
		RXPackets: l.Stats.RX.Packets, TXPackets: l.Stats.TX.Packets,
		AdminUp: l.adminUp(), LinkUp: l.OperState == "UP", OperState: l.OperState,
	}, nil
}
