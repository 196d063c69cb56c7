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
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/locale"
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
	ProviderColor string      // "#0b5fff" or "" for the default dark blue
	Currency      string      // ISO code, e.g. "CAD"
	Lang          locale.Lang // the language it is written in ("" is English)

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
	Lang          locale.Lang

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
	l := inv.Lang
	d := document{
		kind:     l.T("pdf.invoice"),
		title:    l.T("pdf.invoice.title"),
		lang:     l,
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
		{l.T("pdf.invoice.number"), inv.Number},
		{l.T("pdf.invoice.date"), l.ISODate(inv.InvoiceDate)},
		{l.T("pdf.due_date"), l.ISODate(inv.DueDate)},
		{l.T("pdf.period"), inv.Period},
		{l.T("pdf.status"), statusLabel(l, inv.Status)},
	}
	if inv.ServiceAddress != "" {
		d.extra = append(d.extra, kv{l.T("pdf.service_address"), inv.ServiceAddress})
	}
	money := func(m subprov.Money) string { return l.Money(m, currencyCode(inv.Currency)) }
	d.totals = []kv{
		{l.T("pdf.net"), money(inv.Net)},
		{l.T("pdf.tax_at", formatBP(l, inv.TaxRateBP)), money(inv.Tax)},
	}
	d.grand = kv{l.T("pdf.total", currencyCode(inv.Currency)), money(inv.Total)}

	switch strings.ToLower(strings.TrimSpace(inv.Status)) {
	case "paid":
		d.stamp, d.paid = l.T("pdf.stamp.paid"), true
		d.stampRGB = rgb{0x1a, 0x7f, 0x37}
		if inv.PaidOn != "" {
			d.notes = append(d.notes, l.T("pdf.paid_on", l.ISODate(inv.PaidOn)))
		} else {
			d.notes = append(d.notes, l.T("pdf.paid"))
		}
	case "void":
		d.stamp = l.T("pdf.stamp.void")
		d.stampRGB = rgb{0xb0, 0x20, 0x20}
		d.notes = append(d.notes, l.T("pdf.voided"))
	default:
		if inv.DueDate != "" {
			d.notes = append(d.notes, l.T("pdf.please_pay", money(inv.Total), l.ISODate(inv.DueDate)))
		}
	}
	return d.render(w, opt)
}

func renderCreditNote(w io.Writer, cn CreditNote, opt options) error {
	l := cn.Lang
	d := document{
		kind:     l.T("pdf.credit"),
		title:    l.T("pdf.credit.title"),
		lang:     l,
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
		{l.T("pdf.credit.number"), cn.Number},
		{l.T("pdf.issue_date"), l.ISODate(cn.IssueDate)},
	}
	if cn.InvoiceNumber != "" {
		d.info = append(d.info, kv{l.T("pdf.credits_invoice"), cn.InvoiceNumber})
	}
	d.info = append(d.info, kv{l.T("pdf.state"), creditStateLabel(l, cn.State)})
	if cn.Reason != "" {
		d.extra = append(d.extra, kv{l.T("pdf.reason"), cn.Reason})
	}
	d.grand = kv{l.T("pdf.total_credit", currencyCode(cn.Currency)), l.Money(cn.Amount, currencyCode(cn.Currency))}
	d.notes = append(d.notes, l.T("pdf.taxes_included"))
	if state := strings.ToLower(strings.TrimSpace(cn.State)); slices.Contains(creditStates, state) {
		d.notes = append(d.notes, l.T("pdf.credit."+state))
	}
	return d.render(w, opt)
}

// creditStates are the credit note states with a sentence of their own.
var creditStates = []string{"refunded", "paid_out", "applied", "open"}

// invoiceStates are the invoice states the catalogue names.
var invoiceStates = []string{"open", "paid", "void", "overdue", "failed"}

func statusLabel(l locale.Lang, s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	if k := strings.ToLower(s); slices.Contains(invoiceStates, k) {
		return l.T("status." + k)
	}
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + strings.ReplaceAll(s[n:], "_", " ")
}

func creditStateLabel(l locale.Lang, s string) string {
	if k := strings.ToLower(strings.TrimSpace(s)); slices.Contains(creditStates, k) {
		return l.T("credit." + k)
	}
	return statusLabel(l, s)
}

// formatBP renders basis points as a percentage with two decimals: 1300 -> "13.00%", in
// French "13,00 %".
func formatBP(l locale.Lang, bp int) string {
	sign := ""
	v := int64(bp)
	if v < 0 {
		sign, v = "-", -v
	}
	if l == locale.FR {
		return fmt.Sprintf("%s%d,%02d\u00a0%%", sign, v/100, v%100)
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
