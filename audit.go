package subprov

// AuditEntry is one entry of the audit log: who did what to which subject.
type AuditEntry struct {
	ProviderID, Actor, Action, SubjectID, Details string
}
