package billing

import (
	"context"
	"fmt"

	"github.com/subprov/subprov/store"
)

// The prefixes of a provider's document numbers. Invoices and credit notes draw from one
// sequence per provider, so a number names one document of the provider whatever its kind.
const (
	InvoicePrefix    = "INV"
	CreditNotePrefix = "CN"
)

// DocumentNumber is the number printed on the document with sequence value seq: its prefix
// and at least seven digits, zero-padded so numbers sort as they were issued until the ten
// millionth.
func DocumentNumber(prefix string, seq int64) string { return fmt.Sprintf("%s-%07d", prefix, seq) }

// documentNumber takes the provider's next document number inside tx.
func documentNumber(ctx context.Context, tx *store.Tx, providerID, prefix string) (string, error) {
	numbers, err := documentNumbers(ctx, tx, providerID, prefix, 1)
	if err != nil {
		return "", err
	}
	return numbers[0], nil
}

// documentNumbers takes n consecutive document numbers of the provider inside tx (a bill
// run's batch), in one statement.
func documentNumbers(ctx context.Context, tx *store.Tx, providerID, prefix string, n int) ([]string, error) {
	if n == 0 {
		return nil, nil
	}
	first, err := tx.TakeDocumentSeq(ctx, providerID, n)
	if err != nil {
		return nil, err
	}
	out := make([]string, n)
	for i := range out {
		out[i] = DocumentNumber(prefix, first+int64(i))
	}
	return out, nil
}
