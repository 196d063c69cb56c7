package subprov

import (
	"slices"
	"time"
)

// Operator is a person who runs the platform or a provider's office: a user of the operations
// surface (/api/v1) and the console. Its role says what it may do and its scope whose objects
// it sees: every provider's (ProviderID "") or one provider's.
type Operator struct {
	ID         string
	Email      string
	Role       Role
	ProviderID string // "" for a platform-wide operator
	// TOTPEnabled is set once the operator has confirmed a second factor: its login then needs
	// a code.
	TOTPEnabled bool
	DisabledAt  *time.Time
	// Version moves on with every edit (If-Match); TokenGeneration with every change that ends
	// the operator's tokens (disabling, a password change, a second-factor reset).
	Version         int64
	TokenGeneration int64
	CreatedAt       time.Time
}

// Role is what an operator may do; the permissions table below says which permissions each
// role holds.
type Role string

const (
	RoleAdmin     Role = "admin"
	RoleSupport   Role = "support"
	RoleBilling   Role = "billing"
	RoleInstaller Role = "installer"
	RoleViewer    Role = "viewer"
)

// Roles lists every role, most powerful first.
var Roles = []Role{RoleAdmin, RoleSupport, RoleBilling, RoleInstaller, RoleViewer}

// Valid reports whether r is one of Roles.
func (r Role) Valid() bool { return slices.Contains(Roles, r) }

// Permission is one kind of operation on the operations surface.
type Permission int

const (
	// PermNone is no permission: every operator has it (its own password and second factor).
	PermNone Permission = iota
	// PermRead reads everything in the operator's scope.
	PermRead
	// PermReadNetwork reads install jobs, buildings and ports: the installer's view.
	PermReadNetwork
	// PermAdminister manages providers, API keys, secrets, operators, inventory and plans.
	PermAdminister
	// PermLineActions suspends, restores, cancels, changes the plan of and reprovisions lines,
	// writes notes and approves privacy requests.
	PermLineActions
	// PermInvoices retries charges and issues credit notes.
	PermInvoices
	// PermInstall assigns, books and completes install jobs and edits install windows.
	PermInstall
	// PermSupport replays webhook events and works tickets.
	PermSupport
)

var permissionNames = [...]string{"none", "read", "read_network", "administer", "line_actions", "invoices", "install", "support"}

func (p Permission) String() string {
	if int(p) < len(permissionNames) {
		return permissionNames[p]
	}
	return "unknown"
}

// Permissions lists every permission but PermNone.
var Permissions = []Permission{PermRead, PermReadNetwork, PermAdminister, PermLineActions, PermInvoices, PermInstall, PermSupport}

// rolePermissions is the roles table: which permissions each role holds.
var rolePermissions = map[Role][]Permission{
	RoleAdmin:     {PermRead, PermReadNetwork, PermAdminister, PermLineActions, PermInvoices, PermInstall, PermSupport},
	RoleSupport:   {PermRead, PermReadNetwork, PermLineActions, PermInstall, PermSupport},
	RoleBilling:   {PermRead, PermReadNetwork, PermInvoices},
	RoleInstaller: {PermReadNetwork, PermInstall},
	RoleViewer:    {PermRead, PermReadNetwork},
}

// Can reports whether the role holds permission p.
func (r Role) Can(p Permission) bool {
	return p == PermNone || slices.Contains(rolePermissions[r], p)
}

// Platform reports whether the operator sees every provider.
func (o *Operator) Platform() bool { return o.ProviderID == "" }

// Scope is the set of providers whose objects the operator sees.
func (o *Operator) Scope() Scope { return Scope{ProviderID: o.ProviderID} }

// Authorize refuses, with 403 Forbidden, an operator whose role lacks permission p. It is the
// first check of every operation on the operations surface, before any object is read, so a
// role without the permission learns nothing about which ids exist.
func (o *Operator) Authorize(p Permission) error {
	if o == nil || !o.Role.Can(p) {
		return Forbidden()
	}
	return nil
}

// Forbidden is the operations surface's answer to a role without the permission.
func Forbidden() *Error { return Errorf(EFORBIDDEN, "forbidden", "Forbidden") }

// Scope is whose objects a caller of the operations surface sees: every provider's when
// ProviderID is "", else that provider's only. Every read and write of the surface takes one;
// an object outside it is not found, exactly as an unknown id.
type Scope struct{ ProviderID string }

// Everything is the platform-wide scope: the system's own work and platform operators.
var Everything = Scope{}

// Allows reports whether an object of providerID is in the scope.
func (s Scope) Allows(providerID string) bool {
	return s.ProviderID == "" || s.ProviderID == providerID
}

// Check answers not found (as what, e.g. "Subscription") for an object of providerID outside
// the scope.
func (s Scope) Check(providerID, what string) error {
	if !s.Allows(providerID) {
		return NotFound(what)
	}
	return nil
}

// Stale is the answer to an edit sent with If-Match naming a version the object has moved on
// from: someone changed it since the caller read it.
func Stale() *Error { return Errorf(ECONFLICT, "stale", "Changed since you read it") }

// CheckVersion refuses an edit whose expected version (0: the caller sent none) is not the
// object's current one.
func CheckVersion(expected, current int64) error {
	if expected != 0 && expected != current {
		return Stale()
	}
	return nil
}
