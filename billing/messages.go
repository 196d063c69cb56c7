package billing

import (
	"fmt"

	"github.com/subprov/subprov"
)

// The subscriber-facing wording of the holder's payments: each mail's subject and body in one
// function, so they move into a message catalogue together.

// receiptMail is the receipt of an invoice the holder paid (pay now or the pay link).
func receiptMail(inv *subprov.Invoice) (subject, body string) {
	return "Receipt — invoice " + inv.Number + " paid",
		fmt.Sprintf("Hello,\n\nThank you: invoice %s (%s %s) is paid with the card on file.\n", inv.Number, inv.Total, inv.Currency)
}

// payLinkMail sends an invoice of a line with AutoPay off, with the link that pays it.
func payLinkMail(inv *subprov.Invoice, link string) (subject, body string) {
	return "Invoice " + inv.Number + " — " + inv.Total.String() + " " + inv.Currency,
		fmt.Sprintf("Hello,\n\nYour invoice %s of %s %s is ready. AutoPay is off for this line, so nothing is charged until you pay it.\n\n"+
			"Pay it with the card on file here:\n\n%s\n", inv.Number, inv.Total, inv.Currency, link)
}
