package preferences

import "testing"

// TestReceives: the mails always sent go whatever the person chose; billing notices follow
// notifications.billing and the service notices notifications.service.
func TestReceives(t *testing.T) {
	t.Parallel()
	none := Preferences{}
	onlyBilling := Preferences{Notifications: Notifications{Billing: true}}
	onlyService := Preferences{Notifications: Notifications{Service: true}}
	for _, tt := range []struct {
		kind                           MailKind
		none, onlyBilling, onlyService bool
	}{
		{MailLink, true, true, true},
		{MailBookingInvitation, true, true, true},
		{MailBooking, true, true, true},
		{MailInvoice, true, true, true},
		{MailReceipt, true, true, true},
		{MailDunning, true, true, true},
		{MailCutOff, true, true, true},
		{MailCancellation, true, true, true},
		{MailBillingNotice, false, true, false},
		{MailPlanChange, false, false, true},
		{MailServiceNotice, false, false, true},
		{MailMarketing, false, false, true},
	} {
		for _, c := range []struct {
			name string
			p    Preferences
			want bool
		}{{"nothing", none, tt.none}, {"billing only", onlyBilling, tt.onlyBilling}, {"service only", onlyService, tt.onlyService}} {
			if got := c.p.Receives(tt.kind); got != c.want {
				t.Errorf("%s with %s: %v, want %v", tt.kind, c.name, got, c.want)
			}
		}
		if !Defaults.Receives(tt.kind) {
			t.Errorf("%s: the defaults hold it back", tt.kind)
		}
	}
}
