package inventory

import (
	"context"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/store"
)

// InstallWindows lists the install windows in the operator's scope by provider, weekday and
// start. Installers read them (the read-network permission).
func (s *Service) InstallWindows(ctx context.Context, op *subprov.Operator, f ListFilter, page subprov.Page) ([]subprov.InstallWindow, string, error) {
	if err := op.Authorize(subprov.PermReadNetwork); err != nil {
		return nil, "", err
	}
	provider, ok := scopedProvider(op, f.ProviderID)
	if !ok {
		return []subprov.InstallWindow{}, "", nil
	}
	ws, err := s.Store.InstallWindowList(ctx, provider, page)
	if err != nil {
		return nil, "", err
	}
	ws, next := subprov.Cut(page, ws, store.InstallWindowKey)
	if ws == nil {
		ws = []subprov.InstallWindow{}
	}
	return ws, next, nil
}

// CreateInstallWindow creates an install window from its row (the fixture's; the id is
// generated unless given, a provider's operator creates its own provider's only). Its slots
// are offered for booking as soon as it is created.
func (s *Service) CreateInstallWindow(ctx context.Context, op *subprov.Operator, w InstallWindow) (*subprov.InstallWindow, error) {
	if err := op.Authorize(subprov.PermInstall); err != nil {
		return nil, err
	}
	var ps Problems
	ownProvider(op, &w.ProviderID, &ps)
	ps = append(ps, w.Check()...)
	w.ID = newID(w.ID)
	var out subprov.InstallWindow
	err := s.Store.InTx(ctx, func(tx *store.Tx) error {
		ps := ps
		if w.ProviderID != "" && op.Scope().Allows(w.ProviderID) {
			refs, err := ProviderRef(ctx, tx, w.ProviderID)
			if err != nil {
				return err
			}
			ps = append(ps, refs...)
		}
		if err := idFree(ctx, tx, &ps, "id", "install_windows", "an install window", w.ID); err != nil {
			return err
		}
		if len(ps) > 0 {
			return invalid(ps, "body")
		}
		now := s.Clock.Now()
		if err := WriteInstallWindow(ctx, tx, w, now); err != nil {
			return err
		}
		e := subprov.NewAudit(ctx, w.ProviderID, "install_window.created", "install_window", w.ID)
		created(&e, map[string]any{"provider_id": w.ProviderID, "weekday": w.Weekday, "starts": w.Starts, "ends": w.Ends,
			"technicians": w.Technicians})
		if err := tx.RecordAudit(ctx, e, now); err != nil {
			return err
		}
		var err error
		out, err = tx.InstallWindow(ctx, w.ID)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// DeleteInstallWindow removes an install window: no slot is offered or booked in it from now
// on; visits already booked in it keep their slot.
func (s *Service) DeleteInstallWindow(ctx context.Context, op *subprov.Operator, id string) error {
	if err := op.Authorize(subprov.PermInstall); err != nil {
		return err
	}
	return s.Store.InTx(ctx, func(tx *store.Tx) error {
		w, err := tx.InstallWindow(ctx, id)
		if err != nil {
			return notFound(err, "Install window")
		}
		if err := op.Scope().Check(w.ProviderID, "Install window"); err != nil {
			return err
		}
		now := s.Clock.Now()
		if err := tx.DeleteInstallWindow(ctx, id, now); err != nil {
			return err
		}
		e := subprov.NewAudit(ctx, w.ProviderID, "install_window.deleted", "install_window", id)
		e.Changes.Set("deleted", false, true)
		return tx.RecordAudit(ctx, e, now)
	})
}
