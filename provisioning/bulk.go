package provisioning

import (
	"context"

	"github.com/subprov/subprov"
)

// BulkItem is one order's outcome in a bulk request; items are independent.
type BulkItem struct {
	Index  int
	Result *Result
	Err    error
}

// PlaceBulk places each order on its own, in order: one item's failure changes nothing for
// the others. More than 500 orders is refused whole.
func (s *Service) PlaceBulk(ctx context.Context, p *subprov.Provider, orders []*Order) ([]BulkItem, error) {
	if len(orders) == 0 {
		return nil, subprov.Invalid(map[string]string{"orders": "give at least one order"})
	}
	if len(orders) > subprov.MaxBulkOrders {
		return nil, subprov.Invalid(map[string]string{"orders": "at most 500 orders per request"})
	}
	out := make([]BulkItem, len(orders))
	for i, o := range orders {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		o.Source = "bulk"
		res, err := s.PlaceOrder(ctx, p, o)
		out[i] = BulkItem{Index: i, Result: res, Err: err}
	}
	return out, nil
}
