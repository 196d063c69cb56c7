package subprov

import "strings"

// NormalizeEmail is the form an e-mail address is stored and compared in: trimmed and
// lower-cased. One person types their address in many ways, and a login, a subscriber's
// holder address and a ticket's contact are each found by it, so "Marie@Example.ca " and
// "marie@example.ca" must name the same person.
func NormalizeEmail(s string) string { return strings.ToLower(strings.TrimSpace(s)) }
