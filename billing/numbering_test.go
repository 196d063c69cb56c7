package billing

import "testing"

func TestDocumentNumber(t *testing.T) {
	tests := []struct {
		name   string
		prefix string
		seq    int64
		want   string
	}{
		{"an invoice is INV and its sequence value", InvoicePrefix, 42, "INV-0000042"},
		{"a credit note is CN on the same sequence", CreditNotePrefix, 43, "CN-0000043"},
		{"seven digits, zero-padded", InvoicePrefix, 1, "INV-0000001"},
		{"the last seven-digit number", InvoicePrefix, 9_999_999, "INV-9999999"},
		{"past it the number grows a digit", InvoicePrefix, 10_000_000, "INV-10000000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := DocumentNumber(tt.prefix, tt.seq); got != tt.want {
				t.Fatalf("DocumentNumber(%q, %d) = %q, want %q", tt.prefix, tt.seq, got, tt.want)
			}
		})
	}
}
