// Package agent is the support agent's side of the HTTP surface: thin handlers over package
// agent (of the same name, one level up), which holds the rules (scoping, verification,
// confirmation). Errors answer in the agent envelope.
package agent

import "github.com/subprov/subprov/agent"

// Handler serves the agent routes.
type Handler struct {
	Agent *agent.Service
}
