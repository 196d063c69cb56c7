// Package faults holds the dev-mode fault switches at each external seam (dev mode, docs/http.md). Each
// adapter asks its switch before acting, so a test or demo can make the billing system, the
// processor, the switch, SMTP or the CPE server misbehave and see the documented outcome.
package faults

import (
	"fmt"
	"sort"
	"strings"
	"sync"
)

// Seams and the values each accepts; the first value is the healthy one.
var seams = map[string][]string{
	"billing_system": {"up", "down"},
	"processor":      {"up", "down"},
	"switch":         {"ok", "fail", "unconfirmed", "port_in_use"},
	"smtp":           {"up", "down"},
	"sms":            {"up", "down"},
	"cpe":            {"up", "down"},
}

// Switches is the set of fault switches, safe for concurrent use. The zero value is healthy.
type Switches struct {
	mu  sync.RWMutex
	cur map[string]string
}

// ForSwitch is the seam of one switch's own fault ("switch@sw-a"): the simulated switch obeys
// it for that switch's ports before the "switch" seam, which applies to every switch. It takes
// the "switch" seam's values; set to "ok", the switch is healthy whatever "switch" says.
func ForSwitch(name string) string { return "switch@" + name }

// base is the seam a per-switch seam ("switch@sw-a") is one of; any other seam is its own.
func base(seam string) string {
	if b, name, ok := strings.Cut(seam, "@"); ok && b == "switch" && name != "" {
		return b
	}
	return seam
}

// Get returns a seam's current value.
func (s *Switches) Get(seam string) string {
	v, _ := s.lookup(seam)
	return v
}

// lookup returns a seam's value and whether it was set.
func (s *Switches) lookup(seam string) (string, bool) {
	if s == nil {
		return seams[base(seam)][0], false
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if v, ok := s.cur[seam]; ok {
		return v, true
	}
	return seams[base(seam)][0], false
}

// Switch returns the fault of one switch: its own seam when set, else the "switch" seam.
func (s *Switches) Switch(name string) string {
	if v, ok := s.lookup(ForSwitch(name)); ok {
		return v
	}
	return s.Get("switch")
}

// Is reports whether seam currently has value v.
func (s *Switches) Is(seam, v string) bool { return s.Get(seam) == v }

// Validate checks a whole change before any of it applies, returning field -> problem.
func Validate(change map[string]string) map[string]string {
	problems := map[string]string{}
	for seam, v := range change {
		allowed, ok := seams[base(seam)]
		if !ok {
			problems[seam] = "unknown seam; want one of " + fmt.Sprint(Names())
			continue
		}
		found := false
		for _, a := range allowed {
			found = found || a == v
		}
		if !found {
			problems[seam] = fmt.Sprintf("want one of %v", allowed)
		}
	}
	return problems
}

// Apply sets every seam named in change; call Validate first.
func (s *Switches) Apply(change map[string]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur == nil {
		s.cur = map[string]string{}
	}
	for k, v := range change {
		s.cur[k] = v
	}
}

// All returns every seam's current value.
func (s *Switches) All() map[string]string {
	out := map[string]string{}
	if s != nil {
		s.mu.RLock()
		for name, v := range s.cur {
			if base(name) != name {
				out[name] = v // a switch's own fault is listed once set
			}
		}
		s.mu.RUnlock()
	}
	for name := range seams {
		out[name] = s.Get(name)
	}
	return out
}

// Names lists the seams in order.
func Names() []string {
	var out []string
	for k := range seams {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
