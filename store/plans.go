package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/internal/sqltext"
)

// UpsertPlan writes a plan by id.
func (tx *Tx) UpsertPlan(ctx context.Context, p *subprov.Plan, now time.Time) error {
	_, err := tx.Exec(ctx, `INSERT INTO plans (id, provider_id, name, created_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET provider_id = excluded.provider_id, name = excluded.name`, p.ID, p.ProviderID, p.Name, now.UTC())
	if err != nil {
		return fmt.Errorf("upsert plan %s: %w", p.ID, err)
	}
	return nil
}

// UpsertPlanVersion writes a plan version by id.
func (tx *Tx) UpsertPlanVersion(ctx context.Context, v *subprov.PlanVersion, now time.Time) error {
	var promo any
	if v.PromoPrice != nil {
		promo = int64(*v.PromoPrice)
	}
	_, err := tx.Exec(ctx, `INSERT INTO plan_versions (id, plan_id, provider_id, monthly_price_minor, setup_fee_minor, download_mbps,
			upload_mbps, store_product_id, sellable, promo_price_minor, promo_ends_on, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET plan_id = excluded.plan_id, provider_id = excluded.provider_id,
			monthly_price_minor = excluded.monthly_price_minor, setup_fee_minor = excluded.setup_fee_minor,
			download_mbps = excluded.download_mbps, upload_mbps = excluded.upload_mbps,
			store_product_id = excluded.store_product_id, sellable = excluded.sellable,
			promo_price_minor = excluded.promo_price_minor, promo_ends_on = excluded.promo_ends_on`,
		v.ID, v.PlanID, v.ProviderID, int64(v.MonthlyPrice), int64(v.SetupFee), v.DownloadMbps, v.UploadMbps,
		v.StoreProductID, v.Sellable, promo, nullStr(v.PromoEndsOn), now.UTC())
	if err != nil {
		return fmt.Errorf("upsert plan version %s: %w", v.ID, err)
	}
	return nil
}

const planVersionColumns = `v.id, v.plan_id, v.provider_id, p.name, v.monthly_price_minor, v.setup_fee_minor, v.download_mbps,
	v.upload_mbps, v.store_product_id, v.sellable, v.promo_price_minor, v.promo_ends_on`

func scanPlanVersion(row interface{ Scan(...any) error }) (*subprov.PlanVersion, error) {
	var r planVersionRow
	if err := row.Scan(r.dest()...); err != nil {
		return nil, err
	}
	return r.value(), nil
}

// planVersionRow receives planVersionColumns, alone or beside other tables' columns.
type planVersionRow struct {
	v            subprov.PlanVersion
	price, setup int64
	promo        sql.NullInt64
	promoEnds    sql.NullString
}

func (r *planVersionRow) dest() []any {
	v := &r.v
	return []any{&v.ID, &v.PlanID, &v.ProviderID, &v.PlanName, &r.price, &r.setup, &v.DownloadMbps, &v.UploadMbps,
		&v.StoreProductID, &v.Sellable, &r.promo, &r.promoEnds}
}

func (r *planVersionRow) value() *subprov.PlanVersion {
	v := r.v
	v.MonthlyPrice, v.SetupFee = subprov.Money(r.price), subprov.Money(r.setup)
	if r.promo.Valid {
		m := subprov.Money(r.promo.Int64)
		v.PromoPrice = &m
	}
	v.PromoEndsOn = r.promoEnds.String
	return &v
}

// PlanVersion returns one of a provider's plan versions.
func (s *Store) PlanVersion(ctx context.Context, providerID, id string) (*subprov.PlanVersion, error) {
	v, err := scanPlanVersion(s.R().QueryRow(ctx, `SELECT `+planVersionColumns+` FROM plan_versions v JOIN plans p ON p.id = v.plan_id
		WHERE v.provider_id = ? AND v.id = ?`, providerID, id))
	if err != nil {
		return nil, fmt.Errorf("plan version %s: %w", id, err)
	}
	return v, nil
}

// SellablePlanVersions lists a provider's sellable plan versions, cheapest first.
func (s *Store) SellablePlanVersions(ctx context.Context, providerID string) ([]*subprov.PlanVersion, error) {
	return sqltext.QueryAll(ctx, s.R(), "sellable plans", scanPlanVersion, `SELECT `+planVersionColumns+` FROM plan_versions v JOIN plans p ON p.id = v.plan_id
		WHERE v.provider_id = ? AND v.sellable = TRUE ORDER BY v.monthly_price_minor, p.name, v.id`, providerID)
}

// PlanVersionByID returns a plan version whichever provider sells it (the marketplace's plan
// read, which shows any provider's plan for display).
func (s *Store) PlanVersionByID(ctx context.Context, id string) (*subprov.PlanVersion, error) {
	v, err := scanPlanVersion(s.R().QueryRow(ctx, `SELECT `+planVersionColumns+` FROM plan_versions v JOIN plans p ON p.id = v.plan_id
		WHERE v.id = ?`, id))
	if err != nil {
		return nil, fmt.Errorf("plan version %s: %w", id, err)
	}
	return v, nil
}
