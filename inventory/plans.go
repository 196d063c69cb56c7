package inventory

import (
	"context"
	"fmt"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/store"
)

// PlanView is a plan with its versions, oldest first.
type PlanView struct {
	subprov.Plan
	Versions []store.PlanVersionRecord
}

// scopedProvider is the provider a list of op keeps: op's own for a provider's operator (ok
// false when the caller asked for another's, which it cannot see: an empty list), else the
// filter's.
func scopedProvider(op *subprov.Operator, asked string) (string, bool) {
	if op.Platform() {
		return asked, true
	}
	return op.ProviderID, asked == "" || asked == op.ProviderID
}

// Plans lists the plans in the operator's scope by name, each with its versions.
func (s *Service) Plans(ctx context.Context, op *subprov.Operator, f ListFilter, page subprov.Page) ([]*PlanView, string, error) {
	if err := op.Authorize(subprov.PermRead); err != nil {
		return nil, "", err
	}
	provider, ok := scopedProvider(op, f.ProviderID)
	if !ok {
		return []*PlanView{}, "", nil
	}
	pls, err := s.Store.PlansOf(ctx, provider, page)
	if err != nil {
		return nil, "", err
	}
	pls, next := subprov.Cut(page, pls, store.PlanKey)
	out, err := plansWithVersions(ctx, s.Store.R(), pls)
	return out, next, err
}

func plansWithVersions(ctx context.Context, q store.Querier, pls []subprov.Plan) ([]*PlanView, error) {
	ids := make([]string, len(pls))
	for i, p := range pls {
		ids[i] = p.ID
	}
	vs, err := store.VersionsOfPlans(ctx, q, ids)
	if err != nil {
		return nil, err
	}
	out := make([]*PlanView, len(pls))
	for i, p := range pls {
		out[i] = &PlanView{Plan: p, Versions: vs[p.ID]}
		if out[i].Versions == nil {
			out[i].Versions = []store.PlanVersionRecord{}
		}
	}
	return out, nil
}

// CreatePlan creates a plan with its versions from its row (the fixture's): ids are generated
// unless given, and a provider's operator creates its own provider's plans only. Its sellable
// versions are sold as soon as it is created.
func (s *Service) CreatePlan(ctx context.Context, op *subprov.Operator, pl Plan) (*PlanView, error) {
	if err := op.Authorize(subprov.PermAdminister); err != nil {
		return nil, err
	}
	var ps Problems
	ownProvider(op, &pl.ProviderID, &ps)
	ps = append(ps, pl.Check()...)
	pl.ID = newID(pl.ID)
	seen := map[string]bool{}
	for j := range pl.Versions {
		v := &pl.Versions[j]
		v.ID = newID(v.ID)
		if seen[v.ID] {
			ps.add(fmt.Sprintf("versions[%d].id", j), "duplicate plan_version id %q", v.ID)
		}
		seen[v.ID] = true
	}
	var out *PlanView
	err := s.Store.InTx(ctx, func(tx *store.Tx) error {
		ps := ps
		if pl.ProviderID != "" && op.Scope().Allows(pl.ProviderID) {
			refs, err := ProviderRef(ctx, tx, pl.ProviderID)
			if err != nil {
				return err
			}
			ps = append(ps, refs...)
		}
		if err := idFree(ctx, tx, &ps, "id", "plans", "a plan", pl.ID); err != nil {
			return err
		}
		for j, v := range pl.Versions {
			if err := idFree(ctx, tx, &ps, fmt.Sprintf("versions[%d].id", j), "plan_versions", "a plan version", v.ID); err != nil {
				return err
			}
		}
		if len(ps) > 0 {
			return invalid(ps, "body")
		}
		now := s.Clock.Now()
		if err := WritePlan(ctx, tx, pl, now); err != nil {
			return err
		}
		e := subprov.NewAudit(ctx, pl.ProviderID, "plan.created", "plan", pl.ID)
		created(&e, map[string]any{"provider_id": pl.ProviderID, "name": pl.Name, "versions": len(pl.Versions)})
		entries := []subprov.AuditEntry{e}
		for _, v := range pl.Versions {
			if err := WritePlanVersion(ctx, tx, pl, v, now); err != nil {
				return err
			}
			entries = append(entries, versionCreated(ctx, pl, v))
		}
		if err := tx.InsertAudits(ctx, entries, now); err != nil {
			return err
		}
		views, err := plansWithVersions(ctx, tx, []subprov.Plan{{ID: pl.ID, ProviderID: pl.ProviderID, Name: pl.Name}})
		if err != nil {
			return err
		}
		out = views[0]
		return nil
	})
	return out, err
}

// versionCreated is the audit entry of a plan version's creation.
func versionCreated(ctx context.Context, pl Plan, v PlanVersion) subprov.AuditEntry {
	e := subprov.NewAudit(ctx, pl.ProviderID, "plan_version.created", "plan_version", v.ID)
	created(&e, map[string]any{"plan_id": pl.ID, "monthly_price": v.MonthlyPrice, "setup_fee": v.SetupFee,
		"download_mbps": v.DownloadMbps, "upload_mbps": v.UploadMbps, "store_product_id": v.StoreProductID,
		"sellable": v.Sellable == nil || *v.Sellable, "promo_price": v.PromoPrice, "promo_ends_on": v.PromoEndsOn})
	return e
}

// readPlan reads a plan in op's scope inside tx.
func readPlan(ctx context.Context, tx *store.Tx, op *subprov.Operator, id string) (subprov.Plan, error) {
	p, err := store.PlanOf(ctx, tx, id)
	if err != nil {
		return p, notFound(err, "Plan")
	}
	return p, op.Scope().Check(p.ProviderID, "Plan")
}

// CreatePlanVersion adds a version to a plan from its row (the fixture's; the id is generated
// unless given). A sellable version is sold as soon as it is created.
func (s *Service) CreatePlanVersion(ctx context.Context, op *subprov.Operator, planID string, v PlanVersion) (*store.PlanVersionRecord, error) {
	if err := op.Authorize(subprov.PermAdminister); err != nil {
		return nil, err
	}
	v.ID = newID(v.ID)
	var out store.PlanVersionRecord
	err := s.Store.InTx(ctx, func(tx *store.Tx) error {
		p, err := readPlan(ctx, tx, op, planID)
		if err != nil {
			return err
		}
		ps := v.Check()
		if err := idFree(ctx, tx, &ps, "id", "plan_versions", "a plan version", v.ID); err != nil {
			return err
		}
		if len(ps) > 0 {
			return invalid(ps, "body")
		}
		pl := Plan{ID: p.ID, ProviderID: p.ProviderID, Name: p.Name}
		now := s.Clock.Now()
		if err := WritePlanVersion(ctx, tx, pl, v, now); err != nil {
			return err
		}
		if err := tx.RecordAudit(ctx, versionCreated(ctx, pl, v), now); err != nil {
			return err
		}
		out, err = store.PlanVersionRecordOf(ctx, tx, tx.Dialect(), v.ID, false)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// PlanVersionPatch is an edit of a plan version: whether it is sold.
type PlanVersionPatch struct {
	Sellable *bool `json:"sellable"`
}

// Valid requires sellable.
func (p PlanVersionPatch) Valid() map[string]string {
	if p.Sellable == nil {
		return map[string]string{"sellable": "required"}
	}
	return nil
}

// EditPlanVersion starts or stops selling a plan version, under the version the operator read
// (ifMatch, 0 for none: a stale one is 409). Lines on it keep it; new orders, checkouts and
// plan changes offer it from the moment the edit commits, or no longer.
func (s *Service) EditPlanVersion(ctx context.Context, op *subprov.Operator, id string, ifMatch int64, p PlanVersionPatch) (*store.PlanVersionRecord, error) {
	if err := op.Authorize(subprov.PermAdminister); err != nil {
		return nil, err
	}
	if p.Sellable == nil {
		return nil, subprov.Invalid(p.Valid())
	}
	var out store.PlanVersionRecord
	err := s.Store.InTx(ctx, func(tx *store.Tx) error {
		v, err := tx.PlanVersionRecord(ctx, id)
		if err != nil {
			return notFound(err, "Plan version")
		}
		if err := op.Scope().Check(v.ProviderID, "Plan version"); err != nil {
			return err
		}
		if err := subprov.CheckVersion(ifMatch, v.Version); err != nil {
			return err
		}
		if v.Sellable != *p.Sellable {
			now := s.Clock.Now()
			if err := tx.SetPlanVersionSellable(ctx, id, *p.Sellable); err != nil {
				return err
			}
			e := subprov.NewAudit(ctx, v.ProviderID, "plan_version.updated", "plan_version", id)
			e.Changes.Set("sellable", v.Sellable, *p.Sellable)
			if err := tx.RecordAudit(ctx, e, now); err != nil {
				return err
			}
		}
		out, err = store.PlanVersionRecordOf(ctx, tx, tx.Dialect(), id, false)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}
