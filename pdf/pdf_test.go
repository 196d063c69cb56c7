package pdf

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/locale"
)

func sampleParty() Party {
	return Party{
		Name:         "Hélène Côté-Bérubé",
		Company:      "Boulangerie Ça va bien inc.",
		Email:        "helene@example.ca",
		Phone:        "+1 514 555 0199",
		AddressLines: []string{"1234, rue Saint-Denis, app. 5", "Montréal QC  H2X 3K2", "Canada"},
	}
}

func sampleInvoice() Invoice {
	return Invoice{
		ProviderName:   "Fibre Québec",
		ProviderColor:  "#0b5fff",
		Currency:       "CAD",
		Number:         "INV-2025-000123",
		CustomerNumber: "0042-517",
		InvoiceDate:    "2025-03-01",
		DueDate:        "2025-03-15",
		Period:         "2025-03",
		BillTo:         sampleParty(),
		Lines: []Line{
			{Description: "Internet 500 — forfait résidentiel", UnitPrice: 5000, Amount: 5000},
			{Description: "Location du modem (prorata à compter du 19 février)", UnitPrice: 1000, Days: 12, DaysInPeriod: 30, Amount: 400},
			{Description: "Frais d'activation", UnitPrice: 600, Amount: 600},
		},
		Net:            6000,
		Tax:            780,
		Total:          6780,
		TaxRateBP:      1300,
		Status:         "open",
		ServiceAddress: "1234, rue Saint-Denis, app. 5, Montréal QC",
	}
}

func sampleCreditNote() CreditNote {
	return CreditNote{
		ProviderName:   "Fibre Québec",
		ProviderColor:  "#0b5fff",
		Currency:       "CAD",
		Number:         "CN-2025-000007",
		CustomerNumber: "0042-517",
		IssueDate:      "2025-03-20",
		State:          "open",
		Reason:         "Panne de service prolongée à Montréal (crédit de courtoisie)",
		BillTo:         sampleParty(),
		Lines: []Line{
			{Description: "Crédit — Internet 500, 5 jours sans service", UnitPrice: 5000, Days: 5, DaysInPeriod: 31, Amount: 806},
		},
		Amount:        6780,
		InvoiceNumber: "INV-2025-000123",
	}
}

func manyLines(n int) []Line {
	ls := make([]Line, n)
	for i := range ls {
		ls[i] = Line{
			Description: fmt.Sprintf("Ligne n° %d : service à l'adresse « %s » — très longue description qui doit être coupée sur plusieurs lignes sans jamais déborder de la colonne %s",
				i+1, strings.Repeat("é", i%7), strings.Repeat("x", 60*(i%3))),
			UnitPrice:    subprov.Money(1000 + i),
			Days:         i % 31,
			DaysInPeriod: 31 * (i % 2),
			Amount:       subprov.Money(-50 * i),
		}
	}
	return ls
}

func checkPDF(t *testing.T, b []byte) {
	t.Helper()
	if !bytes.HasPrefix(b, []byte("%PDF-")) {
		t.Fatalf("output does not start with %%PDF-: %q", b[:min(len(b), 16)])
	}
	if !bytes.HasSuffix(bytes.TrimRight(b, "\r\n"), []byte("%%EOF")) {
		t.Fatalf("output does not end with %%%%EOF: %q", b[max(0, len(b)-16):])
	}
	if len(b) < 1000 {
		t.Fatalf("output suspiciously small: %d bytes", len(b))
	}
}

func TestRenderInvoice(t *testing.T) {
	paid := sampleInvoice()
	paid.Status, paid.PaidOn = "paid", "2025-03-10"

	many := sampleInvoice()
	many.Lines = manyLines(120)

	empty := sampleInvoice()
	empty.Lines = nil
	empty.Net, empty.Tax, empty.Total = 0, 0, 0

	void := sampleInvoice()
	void.Status = "void"

	odd := Invoice{
		ProviderName:  strings.Repeat("Très Long Nom De Fournisseur ", 10),
		ProviderColor: "not-a-colour",
		Number:        "INV\n(1)\\",
		BillTo: Party{
			Name:         "\x00\t\r\n" + strings.Repeat("W", 400),
			AddressLines: make([]string, 40),
		},
		Lines: []Line{
			{Description: "", DaysInPeriod: -1},
			{Description: strings.Repeat("mot ", 2000)},
			{Description: "emoji 🚀 and CJK 漢字 and \xff\xfe invalid UTF-8"},
		},
		TaxRateBP:      -5,
		Status:         "élevé",
		InvoiceDate:    "garbage",
		ServiceAddress: strings.Repeat("adresse ", 200),
	}

	white := sampleInvoice()
	white.ProviderColor = "#fff"
	white.Currency = "EUR"

	tests := []struct {
		name string
		inv  Invoice
	}{
		{"open with accents", sampleInvoice()},
		{"paid", paid},
		{"void", void},
		{"many lines", many},
		{"zero lines", empty},
		{"odd input", odd},
		{"light colour A4", white},
		{"zero value", Invoice{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := RenderInvoice(&buf, tt.inv); err != nil {
				t.Fatalf("RenderInvoice: %v", err)
			}
			checkPDF(t, buf.Bytes())
		})
	}
}

func TestRenderCreditNote(t *testing.T) {
	refunded := sampleCreditNote()
	refunded.State = "refunded"

	many := sampleCreditNote()
	many.Lines = manyLines(80)

	empty := sampleCreditNote()
	empty.Lines = nil
	empty.InvoiceNumber = ""

	tests := []struct {
		name string
		cn   CreditNote
	}{
		{"open with accents", sampleCreditNote()},
		{"refunded", refunded},
		{"applied", func() CreditNote { c := sampleCreditNote(); c.State = "applied"; return c }()},
		{"paid out", func() CreditNote { c := sampleCreditNote(); c.State = "paid_out"; return c }()},
		{"many lines", many},
		{"zero lines", empty},
		{"zero value", CreditNote{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := RenderCreditNote(&buf, tt.cn); err != nil {
				t.Fatalf("RenderCreditNote: %v", err)
			}
			checkPDF(t, buf.Bytes())
		})
	}
}

// TestTextLandsInPDF renders without compression so the content streams are readable and
// checks the key values (and cp1252-encoded accents) are really in the document.
func TestTextLandsInPDF(t *testing.T) {
	paid := sampleInvoice()
	paid.Status, paid.PaidOn = "paid", "2025-03-10"

	tests := []struct {
		name   string
		render func(*bytes.Buffer) error
		want   []string
	}{
		{
			name:   "invoice",
			render: func(b *bytes.Buffer) error { return renderInvoice(b, sampleInvoice(), options{}) },
			want: []string{"0042-517", "INV-2025-000123", "67.80", "Total CAD", "13.00%", "12 / 30",
				"Montr\xe9al", "INVOICE", "Questions? Contact Fibre Qu\xe9bec support.", "Description", "Unit price"},
		},
		{
			name:   "paid invoice",
			render: func(b *bytes.Buffer) error { return renderInvoice(b, paid, options{}) },
			want:   []string{"0042-517", "INV-2025-000123", "$67.80", "PAID", "March 10, 2025"},
		},
		{
			name: "French invoice",
			render: func(b *bytes.Buffer) error {
				inv := sampleInvoice()
				inv.Lang = locale.FR
				return renderInvoice(b, inv, options{})
			},
			// cp1252: \xe0 à, \xc9 É, \xe9 é, \xa0 no-break space.
			want: []string{"FACTURE", "NUM\xc9RO DE CLIENT", "67,80\xa0$", "Taxes \xe0 13,00\xa0%", "1er mars 2025",
				"Veuillez payer 67,80\xa0$ d\x92ici le 15 mars 2025.", "Date d\x92\xe9ch\xe9ance", "Prix unitaire", "FACTURER \xc0",
				"Des questions? Communiquez avec le soutien de Fibre Qu\xe9bec.", "Montr\xe9al"},
		},
		{
			name: "French paid invoice",
			render: func(b *bytes.Buffer) error {
				inv := paid
				inv.Lang = locale.FR
				return renderInvoice(b, inv, options{})
			},
			want: []string{"PAY\xc9E le 10 mars 2025. Merci!", "Pay\xe9e"},
		},
		{
			name: "French credit note",
			render: func(b *bytes.Buffer) error {
				cn := sampleCreditNote()
				cn.Lang = locale.FR
				return renderCreditNote(b, cn, options{})
			},
			want: []string{"NOTE DE CR\xc9DIT", "Cr\xe9dit total CAD", "Les montants comprennent les taxes applicables."},
		},
		{
			name: "empty invoice",
			render: func(b *bytes.Buffer) error {
				inv := sampleInvoice()
				inv.Lines = nil
				return renderInvoice(b, inv, options{})
			},
			want: []string{"No charges", "0042-517"},
		},
		{
			name:   "credit note",
			render: func(b *bytes.Buffer) error { return renderCreditNote(b, sampleCreditNote(), options{}) },
			want: []string{"0042-517", "CN-2025-000007", "INV-2025-000123", "67.80", "CREDIT NOTE",
				"5 / 31", "Montr\xe9al", "Pann"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := tt.render(&buf); err != nil {
				t.Fatal(err)
			}
			b := buf.Bytes()
			checkPDF(t, b)
			for _, w := range tt.want {
				if !bytes.Contains(b, []byte(w)) {
					t.Errorf("uncompressed PDF lacks %q", w)
				}
			}
		})
	}
}

func TestDeterministic(t *testing.T) {
	var a, b bytes.Buffer
	if err := RenderInvoice(&a, sampleInvoice()); err != nil {
		t.Fatal(err)
	}
	if err := RenderInvoice(&b, sampleInvoice()); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatal("two renders of the same invoice differ")
	}
	if !bytes.Contains(a.Bytes(), []byte("D:20250301")) {
		t.Error("creation date not derived from the invoice date")
	}
}

// TestPdftotext extracts the text with poppler's pdftotext when it is installed.
func TestPdftotext(t *testing.T) {
	bin, err := exec.LookPath("pdftotext")
	if err != nil {
		t.Skip("pdftotext not installed")
	}
	dir := t.TempDir()
	tests := []struct {
		name   string
		render func(*bytes.Buffer) error
		want   []string
	}{
		{"invoice", func(b *bytes.Buffer) error { return RenderInvoice(b, sampleInvoice()) },
			[]string{"Montréal", "Hélène Côté-Bérubé", "Ça va bien", "0042-517", "INV-2025-000123", "67.80", "12 / 30", "Fibre Québec"}},
		{"credit note", func(b *bytes.Buffer) error { return RenderCreditNote(b, sampleCreditNote()) },
			[]string{"Montréal", "CREDIT NOTE", "CN-2025-000007", "67.80"}},
		{"many lines", func(b *bytes.Buffer) error {
			inv := sampleInvoice()
			inv.Lines = manyLines(120)
			return RenderInvoice(b, inv)
		}, []string{"Ligne n° 120", "(continued)", "Page 1 of"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := tt.render(&buf); err != nil {
				t.Fatal(err)
			}
			in := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "_")+".pdf")
			if err := os.WriteFile(in, buf.Bytes(), 0o600); err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command(bin, "-enc", "UTF-8", in, "-").CombinedOutput()
			if err != nil {
				t.Fatalf("pdftotext: %v\n%s", err, out)
			}
			for _, w := range tt.want {
				if !strings.Contains(string(out), w) {
					t.Errorf("extracted text lacks %q:\n%s", w, out)
				}
			}
		})
	}
}

func TestHelpers(t *testing.T) {
	colours := []struct {
		in   string
		want rgb
	}{
		{"#0b5fff", rgb{0x0b, 0x5f, 0xff}},
		{"0B5FFF", rgb{0x0b, 0x5f, 0xff}},
		{"#abc", rgb{0xaa, 0xbb, 0xcc}},
		{"", defaultColor},
		{"#12345", defaultColor},
		{"#gggggg", defaultColor},
	}
	for _, c := range colours {
		if got := parseColor(c.in); got != c.want {
			t.Errorf("parseColor(%q) = %v, want %v", c.in, got, c.want)
		}
	}
	bps := []struct {
		in   int
		want string
	}{{1300, "13.00%"}, {975, "9.75%"}, {14975, "149.75%"}, {0, "0.00%"}, {-5, "-0.05%"}}
	for _, c := range bps {
		if got := formatBP(locale.EN, c.in); got != c.want {
			t.Errorf("formatBP(locale.EN, %d) = %q, want %q", c.in, got, c.want)
		}
	}
	lines := []struct {
		in   Line
		want string
	}{{Line{Days: 12, DaysInPeriod: 30}, "12 / 30"}, {Line{Days: 3}, ""}, {Line{DaysInPeriod: -1}, ""}}
	for _, c := range lines {
		if got := days(c.in); got != c.want {
			t.Errorf("days(%+v) = %q, want %q", c.in, got, c.want)
		}
	}
	if got := pageSize("cad"); got != "Letter" {
		t.Errorf("pageSize(cad) = %q", got)
	}
	if got := pageSize("EUR"); got != "A4" {
		t.Errorf("pageSize(EUR) = %q", got)
	}
	if got := creditStateLabel(locale.EN, "paid_out"); got != "Paid out" {
		t.Errorf("creditStateLabel(locale.EN, paid_out) = %q", got)
	}
	if got := statusLabel(locale.EN, "élevé"); got != "Élevé" {
		t.Errorf("statusLabel(locale.EN, élevé) = %q", got)
	}
}
