package jobs

// DeliverMail sends one outbox message through the configured transport.
type DeliverMail struct {
	MailID string `json:"mail_id"`
}

// Kind names the job in the queue.
func (DeliverMail) Kind() string { return "mail.deliver" }

// ProvisionPort switches on the port of a line on the provision route (VLAN, bandwidth, MAC)
// and records provisioning.completed or, finally, provisioning.failed.
type ProvisionPort struct {
	SubscriptionID string `json:"subscription_id"`
}

// Kind names the job in the queue.
func (ProvisionPort) Kind() string { return "port.provision" }

// DeprovisionPort resets an ended line's port to the captive-portal VLAN.
type DeprovisionPort struct {
	SubscriptionID string `json:"subscription_id"`
}

// Kind names the job in the queue.
func (DeprovisionPort) Kind() string { return "port.deprovision" }

// FlushWebhooks delivers a provider's due webhook events in order.
type FlushWebhooks struct {
	ProviderID string `json:"provider_id"`
}

// Kind names the job in the queue.
func (FlushWebhooks) Kind() string { return "webhooks.flush" }
