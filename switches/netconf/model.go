package netconf

import (
	"bytes"
	"context"
	"embed"
	"encoding/xml"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"text/template"

	"github.com/subprov/subprov/switches"
)

// model is one payload vocabulary: the templates that write a port and the parsers that read
// it back.
type model interface {
	// edit is the <config> of an edit-config that puts port in state want, whole.
	edit(port string, want switches.State) (string, error)
	// configFilter is the subtree filter of the get-config that reads port back.
	configFilter(port string) string
	// parseConfig reads the port's state from a get-config reply.
	parseConfig(reply []byte, port string) (switches.State, error)
	// status asks the switch for the port's link state and counters (read by parseStatus).
	status(ctx context.Context, s *session, port string) ([]byte, error)
}

var models = map[string]model{ModelOpenConfig: openConfig{}, ModelJunos: junos{}}

//go:embed templates/*.tmpl
var templateFS embed.FS

var templates = template.Must(template.New("").Funcs(template.FuncMap{"x": xmlEscape}).ParseFS(templateFS, "templates/*.tmpl"))

func xmlEscape(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}

// payload is what the templates are filled from.
type payload struct {
	Port string
	Mode switches.Mode
	switches.Config
	Off, Enabled, Rate  bool
	InFilter, OutFilter string
	// UploadBurst and DownloadBurst are Junos policer bursts: about 10 ms at the rate, at
	// least a few full frames.
	UploadBurst, DownloadBurst int
}

func newPayload(port string, want switches.State) payload {
	p := payload{Port: port, Mode: want.Mode, Config: want.Config, Off: want.Mode == switches.ModeOff,
		Enabled: want.Mode != switches.ModeSuspended, Rate: want.DownloadMbps != 0 || want.UploadMbps != 0,
		InFilter: junosFilter(port, "in"), OutFilter: junosFilter(port, "out"),
		UploadBurst: burst(want.UploadMbps), DownloadBurst: burst(want.DownloadMbps)}
	return p
}

func burst(mbps int) int { return max(mbps*1250, 15000) }

// junosFilter names a port's own firewall filter: "ge-0/0/12" gets "subprov-ge-0-0-12-in".
func junosFilter(port, dir string) string {
	r := strings.NewReplacer("/", "-", ":", "-", ".", "-")
	return "subprov-" + r.Replace(port) + "-" + dir
}

func render(name string, p payload) (string, error) {
	var b bytes.Buffer
	if err := templates.ExecuteTemplate(&b, name, p); err != nil {
		return "", fmt.Errorf("template %s: %w", name, err)
	}
	return b.String(), nil
}

func mustRender(name string, p payload) string {
	s, err := render(name, p)
	if err != nil {
		panic(err) // the filter templates take only the port, which always renders
	}
	return s
}

// modeOf tells a present port's mode from its config: shut down is suspended, the captive VLAN
// with no rate and no binding is captive, anything else is in service.
func modeOf(enabled bool, c switches.Config) switches.Mode {
	switch {
	case !enabled:
		return switches.ModeSuspended
	case c.VLAN == switches.CaptiveVLAN && c.DownloadMbps == 0 && c.UploadMbps == 0 && c.MAC == "":
		return switches.ModeCaptive
	default:
		return switches.ModeService
	}
}

// openConfig is the OpenConfig-shaped subprov-access module.
type openConfig struct{}

func (openConfig) edit(port string, want switches.State) (string, error) {
	return render("openconfig-edit.xml.tmpl", newPayload(port, want))
}

func (openConfig) configFilter(port string) string {
	return mustRender("openconfig-filter.xml.tmpl", payload{Port: port})
}

func (openConfig) parseConfig(reply []byte, port string) (switches.State, error) {
	var r struct {
		Interfaces []struct {
			Name    string `xml:"name"`
			Enabled string `xml:"config>enabled"`
			VLAN    int    `xml:"ethernet>switched-vlan>config>access-vlan"`
			Down    int    `xml:"rate-limit>config>download-mbps"`
			Up      int    `xml:"rate-limit>config>upload-mbps"`
			MAC     string `xml:"mac-binding>config>mac-address"`
		} `xml:"data>interfaces>interface"`
	}
	if err := xml.Unmarshal(reply, &r); err != nil {
		return switches.State{}, err
	}
	for _, i := range r.Interfaces {
		if i.Name != port {
			continue
		}
		c := switches.Config{VLAN: i.VLAN, DownloadMbps: i.Down, UploadMbps: i.Up, MAC: strings.ToLower(strings.TrimSpace(i.MAC))}
		return switches.State{Mode: modeOf(strings.TrimSpace(i.Enabled) != "false", c), Config: c}, nil
	}
	return switches.State{Mode: switches.ModeOff}, nil
}

func (openConfig) status(ctx context.Context, s *session, port string) ([]byte, error) {
	return s.get(ctx, mustRender("openconfig-status.xml.tmpl", payload{Port: port}))
}

// parseStatus reads port's link state and counters from a status reply of either model.
func parseStatus(reply []byte, port string) (Status, error) {
	var r struct {
		OpenConfig []statusRow `xml:"data>interfaces>interface"`
		Junos      []statusRow `xml:"interface-information>physical-interface"`
	}
	if err := xml.Unmarshal(reply, &r); err != nil {
		return Status{}, err
	}
	return statusOf(append(r.OpenConfig, r.Junos...), port)
}

// statusRow is one interface's status in a reply; the models' replies name its parts
// differently, so each model's elements are listed (only one set is present in a reply).
type statusRow struct {
	Name string `xml:"name"`
	// OpenConfig
	OperStatus string `xml:"state>oper-status"`
	InOctets   string `xml:"state>counters>in-octets"`
	OutOctets  string `xml:"state>counters>out-octets"`
	// Junos
	JunosOperStatus string `xml:"oper-status"`
	InputBytes      string `xml:"traffic-statistics>input-bytes"`
	OutputBytes     string `xml:"traffic-statistics>output-bytes"`
}

// statusOf is port's status among rows.
func statusOf(rows []statusRow, port string) (Status, error) {
	for _, i := range rows {
		if strings.TrimSpace(i.Name) == port {
			return newStatus(i.OperStatus+i.JunosOperStatus, i.InOctets+i.InputBytes, i.OutOctets+i.OutputBytes)
		}
	}
	return Status{}, fmt.Errorf("%w: interface %s", errNoStatus, port)
}

// errNoStatus is a reply without the interface's operational state: a switch (or a model)
// that serves none, such as netconfd without instrumentation. Asking again gets none either.
var errNoStatus = errors.New("no operational state in the reply")

func newStatus(oper, in, out string) (Status, error) {
	st := Status{OperStatus: strings.ToLower(strings.TrimSpace(oper))}
	var err error
	if st.InOctets, err = counter(in); err != nil {
		return Status{}, fmt.Errorf("in-octets: %w", err)
	}
	if st.OutOctets, err = counter(out); err != nil {
		return Status{}, fmt.Errorf("out-octets: %w", err)
	}
	return st, nil
}

func counter(s string) (uint64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, nil
	}
	return strconv.ParseUint(s, 10, 64)
}

// junos is Junos OS on an ELS switch (EX2300/EX3400/EX4300 and the like): the port's unit 0 in
// ethernet-switching access mode on the VLAN by ID, the rates as policers applied by a filter
// of the port's own in each direction, and the MAC binding as the input filter's only
// accepting term.
type junos struct{}

func (junos) edit(port string, want switches.State) (string, error) {
	return render("junos-edit.xml.tmpl", newPayload(port, want))
}

func (junos) configFilter(port string) string {
	return mustRender("junos-filter.xml.tmpl", newPayload(port, switches.State{}))
}

type junosTerm struct {
	Name    string   `xml:"name"`
	Sources []string `xml:"from>source-mac-address>name"`
	Policer string   `xml:"then>policer"`
}

type junosFilterConf struct {
	Name  string      `xml:"name"`
	Terms []junosTerm `xml:"term"`
}

func (junos) parseConfig(reply []byte, port string) (switches.State, error) {
	var r struct {
		Interfaces []struct {
			Name    string    `xml:"name"`
			Disable *struct{} `xml:"disable"`
			Units   []struct {
				Name    string `xml:"name"`
				Members []int  `xml:"family>ethernet-switching>vlan>members"`
				Input   string `xml:"family>ethernet-switching>filter>input"`
				Output  string `xml:"family>ethernet-switching>filter>output"`
			} `xml:"unit"`
		} `xml:"data>configuration>interfaces>interface"`
		Filters []junosFilterConf `xml:"data>configuration>firewall>family>ethernet-switching>filter"`
	}
	if err := xml.Unmarshal(reply, &r); err != nil {
		return switches.State{}, err
	}
	filters := map[string]junosFilterConf{}
	for _, f := range r.Filters {
		filters[f.Name] = f
	}
	for _, i := range r.Interfaces {
		if i.Name != port {
			continue
		}
		var c switches.Config
		for _, u := range i.Units {
			if u.Name != "0" {
				continue
			}
			if len(u.Members) == 1 {
				c.VLAN = u.Members[0]
			}
			var err error
			if c.UploadMbps, c.MAC, err = junosFilterRead(filters, u.Input, true); err != nil {
				return switches.State{}, err
			}
			if c.DownloadMbps, _, err = junosFilterRead(filters, u.Output, false); err != nil {
				return switches.State{}, err
			}
		}
		return switches.State{Mode: modeOf(i.Disable == nil, c), Config: c}, nil
	}
	return switches.State{Mode: switches.ModeOff}, nil
}

// junosFilterRead reads a rate (from the policer's name, "subprov-100m") and, on the input
// side, the bound MAC from a port filter.
func junosFilterRead(filters map[string]junosFilterConf, name string, input bool) (mbps int, mac string, err error) {
	if name == "" {
		return 0, "", nil
	}
	f, ok := filters[name]
	if !ok {
		return 0, "", fmt.Errorf("filter %s is applied but not in the reply", name)
	}
	for _, t := range f.Terms {
		if t.Policer != "" {
			v := strings.TrimSuffix(strings.TrimPrefix(t.Policer, "subprov-"), "m")
			if mbps, err = strconv.Atoi(v); err != nil {
				return 0, "", fmt.Errorf("filter %s: policer %q is not one of ours", name, t.Policer)
			}
		}
		if input && len(t.Sources) == 1 {
			mac = strings.ToLower(strings.TrimSuffix(t.Sources[0], "/48"))
		}
	}
	return mbps, mac, nil
}

func (junos) status(ctx context.Context, s *session, port string) ([]byte, error) {
	return s.rpc(ctx, "get-interface-information", mustRender("junos-status.xml.tmpl", payload{Port: port}))
}
