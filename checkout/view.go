package checkout

import (
	"context"
	"errors"

	"github.com/subprov/subprov"
)

// View is a session with what the checkout page shows: the plan, the suite and building (the
// only way a partner learns the building's address), and the provider.
type View struct {
	Session  *subprov.CheckoutSession
	Plan     *subprov.PlanVersion
	Unit     *subprov.Unit // nil when the session names no suite and its port has none
	Building *subprov.Building
	Provider *subprov.Provider
}

func (s *Service) view(ctx context.Context, p *subprov.Provider, sess *subprov.CheckoutSession) (*View, error) {
	v := &View{Session: sess, Provider: p}
	var err error
	if v.Plan, err = s.Store.PlanVersion(ctx, p.ID, sess.PlanVersionID); err != nil {
		return nil, err
	}
	if v.Building, err = s.Store.Building(ctx, sess.BuildingID); err != nil {
		return nil, err
	}
	unitID := sess.UnitID
	if unitID == "" && sess.LocationHash != "" {
		if loc, err := s.Store.LocationByPort(ctx, sess.LocationHash, ""); err == nil {
			unitID = loc.Port.UnitID
		} else if !errors.Is(err, subprov.ErrNotFound) {
			return nil, err
		}
	}
	if unitID != "" {
		if v.Unit, err = s.Store.Unit(ctx, unitID); err != nil && !errors.Is(err, subprov.ErrNotFound) {
			return nil, err
		}
	}
	return v, nil
}

// Plan returns a plan version for the marketplace to display (any provider's; 404 when unknown).
func (s *Service) Plan(ctx context.Context, id string) (*subprov.PlanVersion, *subprov.Provider, error) {
	v, err := s.Store.PlanVersionByID(ctx, id)
	if err != nil {
		if errors.Is(err, subprov.ErrNotFound) {
			return nil, nil, subprov.NotFound("Plan version")
		}
		return nil, nil, err
	}
	p, err := s.Store.Provider(ctx, v.ProviderID)
	if err != nil {
		return nil, nil, err
	}
	return v, p, nil
}
