package partner

import (
	"net/http"
	"strconv"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/httpapi/api"
	"github.com/subprov/subprov/install"
)

// Operator install queue (internal surface, dashboard JWT) and the customer's booking page.

type installAddressJSON struct {
	Street     string  `json:"street"`
	City       string  `json:"city"`
	PostalCode string  `json:"postal_code"`
	UnitNumber *string `json:"unit_number"`
}

type installJobJSON struct {
	ID                 string             `json:"id"`
	ProviderID         string             `json:"provider_id"`
	SubscriptionID     string             `json:"subscription_id"`
	Kind               string             `json:"kind"`
	Booking            *string            `json:"booking"`
	State              string             `json:"state"`
	Flags              []string           `json:"flags"`
	AssignedTo         *string            `json:"assigned_to"`
	AppointmentAt      *string            `json:"appointment_at"`
	SlotID             *string            `json:"slot_id"`
	InvitationDueOn    *string            `json:"invitation_due_on"`
	SubscriptionStatus string             `json:"subscription_status"`
	OnHold             bool               `json:"on_hold"`
	BookingLinkSent    bool               `json:"booking_link_sent"`
	Address            installAddressJSON `json:"address"`
	CreatedAt          string             `json:"created_at"`
	UpdatedAt          string             `json:"updated_at"`
}

func installJobOf(r *subprov.InstallQueueEntry) installJobJSON {
	j := installJobJSON{ID: r.ID, ProviderID: r.ProviderID, SubscriptionID: r.SubscriptionID, Kind: r.Kind, Booking: api.Optional(r.Booking),
		State: r.State, Flags: install.Flags(r.Flags), AssignedTo: api.Optional(r.AssignedTo), AppointmentAt: api.Instant(r.AppointmentAt),
		InvitationDueOn: api.Optional(r.InvitationDueOn), SubscriptionStatus: r.SubscriptionStatus, OnHold: r.OnHold,
		BookingLinkSent: r.BookingLinkSent, CreatedAt: r.CreatedAt.UTC().Format(time.RFC3339), UpdatedAt: r.UpdatedAt.UTC().Format(time.RFC3339),
		Address: installAddressJSON{Street: r.Street, City: r.City, PostalCode: r.PostalCode, UnitNumber: api.Optional(r.UnitNumber)}}
	if r.SlotWindowID != "" {
		id := install.SlotID(r.SlotWindowID, r.SlotDate)
		j.SlotID = &id
	}
	return j
}

// InstallJobs: GET /api/v1/install-jobs — the operator's install queue, oldest first.
func (h *Handler) InstallJobs(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	f := install.QueueFilter{ProviderID: q.Get("provider_id"), State: q.Get("state"), Kind: q.Get("kind"), Booking: q.Get("booking"),
		Flag: q.Get("flag"), AssignedTo: q.Get("assigned_to")}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return subprov.Invalid(map[string]string{"query:limit": "want 1 to 500"})
		}
		f.Limit = n
	}
	rows, err := h.Install.Queue(r.Context(), api.CallerOf(r).Operator.Scope(), f)
	if err != nil {
		return err
	}
	out := make([]installJobJSON, 0, len(rows))
	for _, row := range rows {
		out = append(out, installJobOf(row))
	}
	api.JSON(w, http.StatusOK, installJobsJSON{InstallJobs: out})
	return nil
}

type installJobsJSON struct {
	InstallJobs []installJobJSON `json:"install_jobs"`
}

// writeInstallJob answers one job as the queue shows it.
func (h *Handler) writeInstallJob(w http.ResponseWriter, r *http.Request, id string) error {
	rows, err := h.Install.Queue(r.Context(), api.CallerOf(r).Operator.Scope(), install.QueueFilter{ID: id, Limit: 1})
	if err != nil {
		return err
	}
	if len(rows) == 0 {
		return subprov.NotFound("Install job")
	}
	api.JSON(w, http.StatusOK, installJobOf(rows[0]))
	return nil
}

// InstallJob: GET /api/v1/install-jobs/{job_id}.
func (h *Handler) InstallJob(w http.ResponseWriter, r *http.Request) error {
	return h.writeInstallJob(w, r, r.PathValue("job_id"))
}

type slotJSON struct {
	SlotID     string `json:"slot_id"`
	Date       string `json:"date"`
	StartsAt   string `json:"starts_at"`
	EndsAt     string `json:"ends_at"`
	Capacity   int    `json:"capacity"`
	PlacesLeft int    `json:"places_left"`
}

type slotsJSON struct {
	Slots []slotJSON `json:"slots"`
}

// InstallJobSlots: GET /api/v1/install-jobs/{job_id}/slots — what can be booked for it.
func (h *Handler) InstallJobSlots(w http.ResponseWriter, r *http.Request) error {
	days, _, err := h.Install.Slots(r.Context(), api.CallerOf(r).Operator.Scope(), r.PathValue("job_id"))
	if err != nil {
		return err
	}
	out := []slotJSON{}
	for _, d := range days {
		for _, sl := range d.Slots {
			out = append(out, slotJSON{SlotID: sl.ID, Date: sl.Date, StartsAt: sl.Start.Format(time.RFC3339), EndsAt: sl.End.Format(time.RFC3339),
				Capacity: sl.Capacity, PlacesLeft: sl.PlacesLeft()})
		}
	}
	api.JSON(w, http.StatusOK, slotsJSON{Slots: out})
	return nil
}

type assignRequest struct {
	AssignedTo *string `json:"assigned_to"`
}

func (q assignRequest) Valid() map[string]string {
	p := map[string]string{}
	if q.AssignedTo == nil {
		p["assigned_to"] = "required (an empty string unassigns)"
	}
	return p
}

// AssignInstallJob: POST /api/v1/install-jobs/{job_id}/assign {assigned_to}.
func (h *Handler) AssignInstallJob(w http.ResponseWriter, r *http.Request) error {
	q, err := api.Decode[assignRequest](r)
	if err != nil {
		return err
	}
	job, err := h.Install.Assign(r.Context(), api.CallerOf(r).Operator, r.PathValue("job_id"), *q.AssignedTo)
	if err != nil {
		return err
	}
	return h.writeInstallJob(w, r, job.ID)
}

type bookRequest struct {
	SlotID string `json:"slot_id"`
}

func (q bookRequest) Valid() map[string]string {
	p := map[string]string{}
	api.Required(p, map[string]string{"slot_id": q.SlotID})
	return p
}

// BookInstallJob: POST /api/v1/install-jobs/{job_id}/book {slot_id} — the operator books
// the visit on the customer's behalf (booking becomes operator).
func (h *Handler) BookInstallJob(w http.ResponseWriter, r *http.Request) error {
	q, err := api.Decode[bookRequest](r)
	if err != nil {
		return err
	}
	job, err := h.Install.BookForCustomer(r.Context(), api.CallerOf(r).Operator, r.PathValue("job_id"), q.SlotID)
	if err != nil {
		return err
	}
	return h.writeInstallJob(w, r, job.ID)
}

// CompleteInstallJob: POST /api/v1/install-jobs/{job_id}/complete {mac_address?} — the
// technician is done: the same path as confirm-install (ACTIVE, billing starts).
func (h *Handler) CompleteInstallJob(w http.ResponseWriter, r *http.Request) error {
	q, err := api.Decode[completeJobRequest](r)
	if err != nil {
		return err
	}
	sub, err := h.Install.Complete(r.Context(), api.CallerOf(r).Operator, r.PathValue("job_id"), q.MACAddress)
	if err != nil {
		return err
	}
	api.JSON(w, http.StatusOK, installCompletedJSON{SubscriptionID: sub.ID, Status: sub.Status, InstallJobID: r.PathValue("job_id")})
	return nil
}

type installCompletedJSON struct {
	InstallJobID   string         `json:"install_job_id"`
	Status         subprov.Status `json:"status"`
	SubscriptionID string         `json:"subscription_id"`
}

type completeJobRequest struct {
	MACAddress string `json:"mac_address"`
}

func (q completeJobRequest) Valid() map[string]string { return map[string]string{} }
