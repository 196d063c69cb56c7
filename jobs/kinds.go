package jobs

// DeliverMail sends one outbox message through the configured transport.
type DeliverMail struct {
	MailID string `json:"mail_id"`
}

// Kind names the job in the queue.
func (DeliverMail) Kind() string { return "mail.deliver" }
