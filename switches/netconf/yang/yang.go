// Package yang holds subprov's YANG module, subprov-access: the access-port configuration the
// netconf driver's "openconfig" model writes. A NETCONF server loads it to accept that
// configuration (the lab switch does, as do the driver's tests).
package yang

import _ "embed"

// Module is the text of subprov-access.yang.
//
//go:embed subprov-access.yang
var Module string

// ModuleFile is the module's file name, as a server loading it from disk expects it.
const ModuleFile = "subprov-access.yang"
