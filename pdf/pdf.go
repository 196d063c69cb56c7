// Package pdf renders invoice and credit-note PDFs with go-pdf/fpdf from plain values; it has no
// database access and no knowledge of the store. Callers map their records to Invoice or
// CreditNote and call RenderInvoice or RenderCreditNote.
//
// Text is set in the PDF core font Helvetica; UTF-8 input is translated to code page 1252 so
// French accents (é, è, à, ç, ô …) render. Runes outside cp1252 print as ".". Output is
// deterministic: the document dates are derived from the invoice or issue date and resource
// catalogs are sorted, so the same input yields the same bytes.
package pdf

import (
	"fmt"
	"io"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/subprov/subprov"
)

// Party is a bill-to block.
type Party struct {
	Name, Company, Email, Phone string
	AddressLines                []string
}

// Line is one row of the charges table. DaysInPeriod 0 means the line is not prorated; otherwise
// the Days column shows "Days / DaysInPeriod".
type Line struct {
	Description  string
	UnitPrice    subprov.Money
	Days         int
	DaysInPeriod int
	Amount       subprov.Money
}

// Invoice holds everything printed on an invoice.
type Invoice struct {
	ProviderName  string
	ProviderColor string // "#0b5fff" or "" for the default dark blue
	Currency      string // ISO code, e.g. "CAD"

	Number         string
	CustomerNumber string
	InvoiceDate    string // YYYY-MM-DD
	DueDate        string // YYYY-MM-DD
	Period         string // YYYY-MM

	BillTo Party
	Lines  []Line

	Net, Tax, Total subprov.Money
	TaxRateBP       int // basis points: 1300 = 13.00%

	Status string // open, paid, void …; "paid" prints a PAID stamp, "void" a VOID stamp
	PaidOn string // YYYY-MM-DD

	ServiceAddress string
}

// CreditNote holds everything printed on a credit note.
type CreditNote struct {
	ProviderName  string
	ProviderColor string
	Currency      string

	Number         string
	CustomerNumber string
	IssueDate      string // YYYY-MM-DD
	State          string // open, refunded, paid_out, applied
	Reason         string

	BillTo Party
	Lines  []Line

	Amount        subprov.Money // gross
	InvoiceNumber string        // the invoice it credits, "" if none
}

// RenderInvoice writes inv as a PDF document to w.
func RenderInvoice(w io.Writer, inv Invoice) error {
	return renderInvoice(w, inv, options{compress: true})
}

// RenderCreditNote writes cn as a PDF document to w.
func RenderCreditNote(w io.Writer, cn CreditNote) error {
	return renderCreditNote(w, cn, options{compress: true})
}

// options are internal rendering switches; tests turn compression off to inspect the text.
type options struct {
	compress bool
}

func renderInvoice(w io.Writer, inv Invoice, opt options) error {
	d := document{
		kind:     "Invoice",
		title:    "INVOICE",
		provider: inv.ProviderName,
		color:    inv.ProviderColor,
		currency: inv.Currency,
		number:   inv.Number,
		customer: inv.CustomerNumber,
		date:     inv.InvoiceDate,
		billTo:   inv.BillTo,
		lines:    inv.Lines,
	}
	d.info = []kv{
		{"Invoice no.", inv.Number},
		{"Invoice date", inv.InvoiceDate},
		{"Due date", inv.DueDate},
		{"Period", inv.Period},
		{"Status", statusLabel(inv.Status)},
	}
	if inv.ServiceAddress != "" {
		d.extra = append(d.extra, kv{"Service address", inv.ServiceAddress})
	}
	d.totals = []kv{
		{"Net", inv.Net.String()},
		{"Tax at " + formatBP(inv.TaxRateBP), inv.Tax.String()},
	}
	d.grand = kv{"Total " + currencyCode(inv.Currency), inv.Total.String()}

	switch strings.ToLower(strings.TrimSpace(inv.Status)) {
	case "paid":
		d.stamp = "PAID"
		d.stampRGB = rgb{0x1a, 0x7f, 0x37}
		if inv.PaidOn != "" {
			d.notes = append(d.notes, "PAID on "+inv.PaidOn+". Thank you!")
		} else {
			d.notes = append(d.notes, "PAID. Thank you!")
		}
	case "void":
		d.stamp = "VOID"
		d.stampRGB = rgb{0xb0, 0x20, 0x20}
		d.notes = append(d.notes, "This invoice has been voided; no payment is due.")
	default:
		if inv.DueDate != "" {
			d.notes = append(d.notes, fmt.Sprintf("Please pay %s %s by %s.",
				currencyCode(inv.Currency), inv.Total.String(), inv.DueDate))
		}
	}
	return d.render(w, opt)
}

func renderCreditNote(w io.Writer, cn CreditNote, opt options) error {
	d := document{
		kind:     "Credit note",
		title:    "CREDIT NOTE",
		provider: cn.ProviderName,
		color:    cn.ProviderColor,
		currency: cn.Currency,
		number:   cn.Number,
		customer: cn.CustomerNumber,
		date:     cn.IssueDate,
		billTo:   cn.BillTo,
		lines:    cn.Lines,
	}
	d.info = []kv{
		{"Credit note no.", cn.Number},
		{"Issue date", cn.IssueDate},
	}
	if cn.InvoiceNumber != "" {
		d.info = append(d.info, kv{"Credits invoice", cn.InvoiceNumber})
	}
	d.info = append(d.info, kv{"State", creditStateLabel(cn.State)})
	if cn.Reason != "" {
		d.extra = append(d.extra, kv{"Reason", cn.Reason})
	}
	d.grand = kv{"Total credit " + currencyCode(cn.Currency), cn.Amount.String()}
	d.notes = append(d.notes, "Amounts include applicable taxes.")
	switch strings.ToLower(strings.TrimSpace(cn.State)) {
	case "refunded":
		d.notes = append(d.notes, "This credit has been refunded to your original payment method.")
	case "paid_out":
		d.notes = append(d.notes, "This credit has been paid out to you.")
	case "applied":
		d.notes = append(d.notes, "This credit has been applied to your account.")
	case "open":
		d.notes = append(d.notes, "This credit will be applied to your next invoice.")
	}
	return d.render(w, opt)
}

func statusLabel(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + strings.ReplaceAll(s[n:], "_", " ")
}

func creditStateLabel(s string) string {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "open":
		return "Open"
	case "refunded":
		return "Refunded"
	case "paid_out":
		return "Paid out"
	case "applied":
		return "Applied to account"
	}
	return statusLabel(s)
}

// formatBP renders basis points as a percentage with two decimals: 1300 -> "13.00%".
func formatBP(bp int) string {
	sign := ""
	v := int64(bp)
	if v < 0 {
		sign, v = "-", -v
	}
	return fmt.Sprintf("%s%d.%02d%%", sign, v/100, v%100)
}

func currencyCode(c string) string {
	c = strings.ToUpper(strings.TrimSpace(c))
	if c == "" {
		return "CAD"
	}
	return c
}

// pageSize picks Letter for North American currencies (the service bills Canadian ISPs) and A4
// otherwise.
func pageSize(currency string) string {
	switch currencyCode(currency) {
	case "CAD", "USD":
		return "Letter"
	}
	return "A4"
}

// docTime derives a fixed document timestamp from a YYYY-MM-DD date so output is reproducible.
func docTime(date string) time.Time {
	if t, err := time.Parse("2006-01-02", strings.TrimSpace(date)); err == nil {
		return t.Add(12 * time.Hour)
	}
	return time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
}

type kv struct{ k, v string }

type rgb struct{ r, g, b int }

var defaultColor = rgb{0x12, 0x2b, 0x5c} // dark blue

// parseColor accepts "#rrggbb", "rrggbb", "#rgb" or "rgb"; anything else yields the default.
func parseColor(s string) rgb {
	s = strings.TrimPrefix(strings.TrimSpace(s), "#")
	hex := func(c byte) (int, bool) {
		switch {
		case c >= '0' && c <= '9':
			return int(c - '0'), true
		case c >= 'a' && c <= 'f':
			return int(c-'a') + 10, true
		case c >= 'A' && c <= 'F':
			return int(c-'A') + 10, true
		}
		return 0, false
	}
	var v [6]int
	switch len(s) {
	case 3:
		for i := 0; i < 3; i++ {
			h, ok := hex(s[i])
			if !ok {
				return defaultColor
			}
			v[2*i], v[2*i+1] = h, h
		}
	case 6:
		for i := 0; i < 6; i++ {
			h, ok := hex(s[i])
			if !ok {
				return defaultColor
			}
			v[i] = h
		}
	default:
		return defaultColor
	}
	return rgb{v[0]<<4 | v[1], v[2]<<4 | v[3], v[4]<<4 | v[5]}
}

// light reports whether white text on c would be hard to read.
func (c rgb) light() bool {
	// Rec. 601 luma in 0..255000.
	return 299*c.r+587*c.g+114*c.b > 160000
}

// clean makes one line of text safe for a cell: control characters and line breaks become
// spaces, typographic spaces outside cp1252 become plain spaces.
func clean(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r < 0x20, r == 0x7f:
			return ' '
		case r == '\u202f', r == '\u2009', r == '\u2007', r == '\u2002', r == '\u2003':
			return ' '
		case r == '\u2011': // non-breaking hyphen
			return '-'
		}
		return r
	}, s)
}
