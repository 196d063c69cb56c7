package provisioning_test

import (
	"context"
	"testing"
	"time"

	"github.com/subprov/subprov/internal/servicetest"
	"github.com/subprov/subprov/provisioning"
)

// TestPlanChangeEffectiveDate: a plan change takes effect on the provider's day, the day its
// money is prorated in, whichever calendar limits the caller to one change a day: at 20:30 in
// Toronto on 30 April (00:30 UTC on 1 May) both the agent and the partner endpoint quote 30
// April.
func TestPlanChangeEffectiveDate(t *testing.T) {
	servicetest.Each(t, func(t *testing.T, e *servicetest.Env) {
		p := e.Provider(t, servicetest.Northwind)
		for _, tt := range []struct {
			at   time.Time
			want string
		}{
			{time.Date(2027, 4, 30, 23, 30, 0, 0, time.UTC), "2027-04-30"}, // 19:30 in Toronto
			{time.Date(2027, 5, 1, 0, 30, 0, 0, time.UTC), "2027-04-30"},   // 20:30 in Toronto, 1 May in UTC
			{time.Date(2027, 5, 1, 4, 30, 0, 0, time.UTC), "2027-05-01"},   // 00:30 in Toronto
		} {
			e.Clock.Set(tt.at)
			for _, cal := range []provisioning.Calendar{provisioning.ProviderDay, provisioning.UTCDay} {
				q, err := e.Provisioning.PreviewPlanChange(context.Background(), p, lineMarie, servicetest.PlanFibre150, cal)
				if err != nil {
					t.Fatal(err)
				}
				if q.EffectiveDate != tt.want {
					t.Errorf("at %s, calendar %d: effective_date %s, want %s", tt.at.Format(time.RFC3339), cal, q.EffectiveDate, tt.want)
				}
			}
		}
	})
}
