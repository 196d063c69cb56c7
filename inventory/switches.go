package inventory

import (
	"context"
	"errors"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/identity"
	"github.com/subprov/subprov/store"
	"github.com/subprov/subprov/switches"
	"github.com/subprov/subprov/switches/sshclient"
)

// The switch inventory on the operations surface and in fixtures. A switch is platform
// infrastructure that may serve several providers' buildings: a provider's operator sees the
// switches carrying a port of a building its provider covers, and edits one only while no other
// provider's building is on it; only a platform operator creates one. The password is sealed
// before it is written and never read back out: a switch shows has_password only.

// Switch is a switch's row: the fixture's and the create request's. Password is in clear
// here only, on its way to being sealed.
type Switch struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	Driver   string `json:"driver"`
	Address  string `json:"address"`
	Username string `json:"username"`
	Password string `json:"password"`
	HostKey  string `json:"host_key"`
	Model    string `json:"model"`
}

// SwitchPatch is an edit of a switch: a field left out is unchanged; password null removes it.
type SwitchPatch struct {
	Name     Optional[string] `json:"name"`
	Driver   Optional[string] `json:"driver"`
	Address  Optional[string] `json:"address"`
	Username Optional[string] `json:"username"`
	Password Optional[string] `json:"password"`
	HostKey  Optional[string] `json:"host_key"`
	Model    Optional[string] `json:"model"`
}

// SwitchView is a switch as an operator sees it: the row (its password sealed), the providers
// whose buildings it serves, its ports and how many are unconverged, and its breaker as the
// serving process sees it.
type SwitchView struct {
	*subprov.Switch
	ProviderIDs        []string
	Ports, Unconverged int
	// Breaker is the switch's breaker as this process sees it; nil on a process that runs no
	// switch operations (no workers), which has none.
	Breaker *switches.BreakerState
}

// ErrSharedSwitch refuses a provider's operator a switch that serves another provider too.
var ErrSharedSwitch = subprov.Errorf(subprov.EFORBIDDEN, "shared_switch",
	"Only a platform administrator edits a switch that serves more than one provider")

// ErrPlatformSwitch refuses a provider's operator the creation of a switch.
var ErrPlatformSwitch = subprov.Errorf(subprov.EFORBIDDEN, "platform_switch", "Only a platform administrator adds a switch")

// Check reports the problems of the row alone.
func (w Switch) Check() Problems {
	var ps Problems
	checkSwitch(&ps, w)
	return ps
}

func checkSwitch(ps *Problems, w Switch) {
	ps.required("name", w.Name)
	if w.Name != "" {
		ps.name("name", w.Name, switchNamePunct, 100)
	}
	if w.Driver != "" && !slices.Contains(subprov.SwitchDrivers, w.Driver) {
		ps.add("driver", "want one of %v, or \"\" for the default driver", subprov.SwitchDrivers)
	}
	if w.Model != "" && !slices.Contains(subprov.SwitchModels, w.Model) {
		ps.add("model", "want one of %v, or \"\"", subprov.SwitchModels)
	}
	if strings.ContainsAny(w.Address, " \t\r\n") || len(w.Address) > 255 {
		ps.add("address", "a host:port, at most 255 characters")
	}
	if strings.ContainsAny(w.HostKey, "\r\n") {
		ps.add("host_key", "one known-hosts line")
	}
	if len(w.Username) > 100 || len(w.Password) > 1000 {
		ps.add("username", "at most 100 characters (and a password at most 1000)")
	}
	if w.Driver == "netconf" || w.Driver == "linuxbridge" {
		checkReachable(ps, w)
	}
}

// checkReachable checks what a driver that logs in over SSH needs before it can reach the
// switch: a host:port, a username and a password, the switch's host key (an unknown host key is
// never accepted), and for netconf the model it speaks. Without them every operation on the
// switch would fail later, port by port.
func checkReachable(ps *Problems, w Switch) {
	if host, port, err := net.SplitHostPort(w.Address); err != nil || host == "" || port == "" {
		ps.add("address", "want host:port of the switch's SSH server, like \"192.0.2.10:830\"")
	}
	ps.required("username", w.Username)
	if w.HostKey == "" {
		ps.add("host_key", "required: the switch's SSH host key (an authorized_keys or known_hosts line, e.g. from ssh-keyscan)")
	} else if _, err := sshclient.ParseHostKey(w.HostKey); err != nil {
		ps.add("host_key", "not an SSH public key: want an authorized_keys or known_hosts line")
	}
	if w.Driver == "netconf" && w.Model == "" {
		ps.add("model", "required for a netconf switch: one of %v", subprov.SwitchModels)
	}
}

// A switch's name is what its ports name it by and a port's name what the switch calls the
// interface: both go into logs, metrics and the switches' own configuration, so they keep to
// ASCII letters, digits and the punctuation network equipment names interfaces with.
const (
	switchNamePunct = "._-"
	portNamePunct   = "._-:/"
)

// name checks an inventory name: at most max bytes of ASCII letters, digits and punct.
func (ps *Problems) name(field, s, punct string, max int) {
	ok := len(s) <= max
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune(punct, r)) {
			ok = false
		}
	}
	if !ok {
		ps.add(field, "at most %d characters: letters, digits and %s", max, strings.Join(strings.Split(punct, ""), " "))
	}
}

// SealSwitch turns a row into the switch to store, its password sealed for the switch's id.
func SealSwitch(sealer *identity.Sealer, w Switch) (*subprov.Switch, error) {
	sw := &subprov.Switch{ID: w.ID, Name: w.Name, Driver: w.Driver, Address: w.Address, Username: w.Username, HostKey: w.HostKey, Model: w.Model}
	if w.Password == "" {
		return sw, nil
	}
	if sealer == nil {
		return nil, errors.New("switch password: no key to seal it with")
	}
	sealed, err := sealer.Seal(switches.PasswordPurpose(w.ID), []byte(w.Password))
	if err != nil {
		return nil, err
	}
	sw.Secret = sealed
	return sw, nil
}

// switchFields are what an audit entry records of a switch: never the password, only whether
// there is one.
func switchFields(s *subprov.Switch) map[string]any {
	return map[string]any{"name": s.Name, "driver": s.Driver, "address": s.Address, "username": s.Username,
		"host_key": s.HostKey, "model": s.Model, "has_password": s.HasPassword()}
}

// switchAudit is the provider a switch's entries are recorded under: the one provider it
// serves, else none (a platform entry).
func switchAudit(providers []string) string {
	if len(providers) == 1 {
		return providers[0]
	}
	return ""
}

func (s *Service) switchView(ctx context.Context, q store.Querier, op *subprov.Operator, sw *subprov.Switch) (*SwitchView, bool, error) {
	providers, err := store.SwitchProviders(ctx, q, sw.Name)
	if err != nil {
		return nil, false, err
	}
	if !op.Platform() {
		if !slices.Contains(providers, op.ProviderID) {
			return nil, false, nil
		}
		providers = []string{op.ProviderID}
	}
	v := &SwitchView{Switch: sw, ProviderIDs: providers}
	if s.Router != nil {
		b := s.Router.Breaker(sw.Name)
		v.Breaker = &b
	}
	return v, true, nil
}

// switchOpenTo refuses a provider's operator a port on a switch that serves another
// provider's building: the port would make the switch shared, taking it out of the other
// provider's hands, and show its row to this one.
func switchOpenTo(ctx context.Context, q store.Querier, op *subprov.Operator, name string) error {
	if op.Platform() {
		return nil
	}
	providers, err := store.SwitchProviders(ctx, q, name)
	if err != nil {
		return err
	}
	for _, id := range providers {
		if id != op.ProviderID {
			return ErrSharedSwitch
		}
	}
	return nil
}

// Switches lists the switches in the operator's scope by name, with their ports' state.
func (s *Service) Switches(ctx context.Context, op *subprov.Operator) ([]*SwitchView, error) {
	if err := op.Authorize(subprov.PermReadNetwork); err != nil {
		return nil, err
	}
	all, err := store.Switches(ctx, s.Store.R())
	if err != nil {
		return nil, err
	}
	counts, err := store.SwitchPortStates(ctx, s.Store.R(), op.ProviderID)
	if err != nil {
		return nil, err
	}
	out := []*SwitchView{}
	for _, sw := range all {
		v, ok, err := s.switchView(ctx, s.Store.R(), op, sw)
		if err != nil {
			return nil, err
		}
		if ok {
			v.Ports, v.Unconverged = counts[sw.Name][0], counts[sw.Name][1]
			out = append(out, v)
		}
	}
	return out, nil
}

// SwitchByID reads one switch in the operator's scope.
func (s *Service) SwitchByID(ctx context.Context, op *subprov.Operator, id string) (*SwitchView, error) {
	if err := op.Authorize(subprov.PermReadNetwork); err != nil {
		return nil, err
	}
	return s.readSwitch(ctx, s.Store.R(), op, id)
}

func (s *Service) readSwitch(ctx context.Context, q store.Querier, op *subprov.Operator, id string) (*SwitchView, error) {
	sw, err := store.SwitchByID(ctx, q, id)
	if err != nil {
		return nil, notFound(err, "Switch")
	}
	v, ok, err := s.switchView(ctx, q, op, sw)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, subprov.NotFound("Switch")
	}
	counts, err := store.SwitchPortStates(ctx, q, op.ProviderID)
	if err != nil {
		return nil, err
	}
	v.Ports, v.Unconverged = counts[sw.Name][0], counts[sw.Name][1]
	return v, nil
}

// CreateSwitch adds a switch from its row (the id is generated unless given); its ports'
// operations use its driver from the moment it commits.
func (s *Service) CreateSwitch(ctx context.Context, op *subprov.Operator, w Switch) (*SwitchView, error) {
	if err := op.Authorize(subprov.PermAdminister); err != nil {
		return nil, err
	}
	if !op.Platform() {
		return nil, ErrPlatformSwitch
	}
	var out *SwitchView
	err := s.Store.InTx(ctx, func(tx *store.Tx) error {
		ps := w.Check()
		if w.ID != "" {
			if err := idFree(ctx, tx, &ps, "id", "switches", "a switch", w.ID); err != nil {
				return err
			}
		}
		if len(ps) > 0 {
			return invalid(ps, "body")
		}
		w.ID = newID(w.ID)
		now := s.Clock.Now()
		refused, err := WriteSwitch(ctx, tx, s.Sealer, w, now)
		if err != nil {
			return err
		}
		if refused != nil {
			return invalid(refused, "name")
		}
		sw, err := store.SwitchByID(ctx, tx, w.ID)
		if err != nil {
			return err
		}
		e := subprov.NewAudit(ctx, "", "switch.created", "switch", sw.ID)
		created(&e, switchFields(sw))
		if err := tx.RecordAudit(ctx, e, now); err != nil {
			return err
		}
		out, err = s.readSwitch(ctx, tx, op, sw.ID)
		return err
	})
	return out, err
}

// WriteSwitch creates a switch from its row, its password sealed; a name another switch has
// is a problem of the row, and nothing is written. A fixture load and the operations surface
// both write switches with it.
func WriteSwitch(ctx context.Context, tx *store.Tx, sealer *identity.Sealer, w Switch, now time.Time) (Problems, error) {
	sw, err := SealSwitch(sealer, w)
	if err != nil {
		return nil, err
	}
	refused, err := tx.UnlessDuplicate(ctx, func() error { return tx.InsertSwitch(ctx, sw, now) })
	if err != nil || !refused {
		return nil, err
	}
	return Problems{{Field: "name", Msg: "another switch has this name"}}, nil
}

// EditSwitch edits a switch under its version (If-Match). A switch that carries ports keeps
// its name: the ports name it.
func (s *Service) EditSwitch(ctx context.Context, op *subprov.Operator, id string, ifMatch int64, p SwitchPatch) (*SwitchView, error) {
	if err := op.Authorize(subprov.PermAdminister); err != nil {
		return nil, err
	}
	var out *SwitchView
	err := s.Store.InTx(ctx, func(tx *store.Tx) error {
		before, err := tx.LockSwitch(ctx, id)
		if err != nil {
			return notFound(err, "Switch")
		}
		providers, err := store.SwitchProviders(ctx, tx, before.Name)
		if err != nil {
			return err
		}
		if !op.Platform() {
			if !slices.Contains(providers, op.ProviderID) {
				return subprov.NotFound("Switch")
			}
			if len(providers) != 1 {
				return ErrSharedSwitch
			}
		}
		if err := subprov.CheckVersion(ifMatch, before.Version); err != nil {
			return err
		}
		row := Switch{ID: id, Name: before.Name, Driver: before.Driver, Address: before.Address, Username: before.Username,
			HostKey: before.HostKey, Model: before.Model}
		for _, f := range []struct {
			o *Optional[string]
			v *string
		}{{&p.Name, &row.Name}, {&p.Driver, &row.Driver}, {&p.Address, &row.Address}, {&p.Username, &row.Username},
			{&p.Password, &row.Password}, {&p.HostKey, &row.HostKey}, {&p.Model, &row.Model}} {
			if f.o.Set {
				*f.v = f.o.V // null: ""
			}
		}
		ps := row.Check()
		if before.HasPassword() && !p.Password.Set && redirects(before, row) {
			// The kept password would be sent, at the next login, to wherever the row now
			// points: whoever points it elsewhere gives the password again (or null).
			ps.add("password", "give the password again (or null) when the driver, address, username or host key changes")
		}
		if row.Name != before.Name {
			counts, err := store.SwitchPortStates(ctx, tx, "")
			if err != nil {
				return err
			}
			if counts[before.Name][0] > 0 {
				ps.add("name", "switch %q carries %d ports, which name it: it keeps its name", before.Name, counts[before.Name][0])
			}
		}
		if len(ps) > 0 {
			return invalid(ps, "body")
		}
		after, err := SealSwitch(s.Sealer, row)
		if err != nil {
			return err
		}
		if !p.Password.Set {
			after.Secret = before.Secret
		}
		e := subprov.NewAudit(ctx, switchAudit(providers), "switch.updated", "switch", id)
		was, now := switchFields(before), switchFields(after)
		for k, v := range now {
			e.Changes.Set(k, was[k], v)
		}
		if p.Password.Set && !p.Password.Null && row.Password != "" {
			e.Changes.SetRedacted("password")
		}
		if len(e.Changes) > 0 {
			at := s.Clock.Now()
			after.ID = id
			refused, err := tx.UnlessDuplicate(ctx, func() error { return tx.UpdateSwitch(ctx, after, at) })
			if err != nil {
				return err
			}
			if refused {
				return invalid(Problems{{Field: "name", Msg: "another switch has this name"}}, "name")
			}
			if err := tx.RecordAudit(ctx, e, at); err != nil {
				return err
			}
		}
		out, err = s.readSwitch(ctx, tx, op, id)
		return err
	})
	return out, err
}

// redirects reports whether an edit changes where, or as whom, the switch's driver logs in.
func redirects(before *subprov.Switch, after Switch) bool {
	return before.Driver != after.Driver || before.Address != after.Address || before.Username != after.Username ||
		before.HostKey != after.HostKey
}

// ResealSwitches seals every switch password anew under the sealer's current key (after the
// service secret changed: the sealer opens with the previous secret too). A password that
// opens under none of its keys is left as it is and named in unopened; resealed counts the
// others.
func ResealSwitches(ctx context.Context, st *store.Store, sealer *identity.Sealer) (resealed int, unopened []string, err error) {
	all, err := store.Switches(ctx, st.R())
	if err != nil {
		return 0, nil, err
	}
	for _, sw := range all {
		if sw.Secret == "" {
			continue
		}
		purpose := switches.PasswordPurpose(sw.ID)
		pw, err := sealer.Open(purpose, sw.Secret)
		if err != nil {
			unopened = append(unopened, sw.Name)
			continue
		}
		sealed, err := sealer.Seal(purpose, pw)
		if err != nil {
			return resealed, unopened, err
		}
		var done bool
		if err := st.InTx(ctx, func(tx *store.Tx) (err error) {
			done, err = tx.ResealSwitchSecret(ctx, sw.ID, sw.Secret, sealed)
			return err
		}); err != nil {
			return resealed, unopened, err
		}
		if done {
			resealed++
		}
	}
	return resealed, unopened, nil
}
