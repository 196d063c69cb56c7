package httpapi

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/install"
	"github.com/subprov/subprov/web"
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

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func instant(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := t.UTC().Format(time.RFC3339)
	return &s
}

func installJobOf(r *subprov.InstallQueueEntry) installJobJSON {
	j := installJobJSON{ID: r.ID, ProviderID: r.ProviderID, SubscriptionID: r.SubscriptionID, Kind: r.Kind, Booking: optional(r.Booking),
		State: r.State, Flags: install.Flags(r.Flags), AssignedTo: optional(r.AssignedTo), AppointmentAt: instant(r.AppointmentAt),
		InvitationDueOn: optional(r.InvitationDueOn), SubscriptionStatus: r.SubscriptionStatus, OnHold: r.OnHold,
		BookingLinkSent: r.BookingLinkSent, CreatedAt: r.CreatedAt.UTC().Format(time.RFC3339), UpdatedAt: r.UpdatedAt.UTC().Format(time.RFC3339),
		Address: installAddressJSON{Street: r.Street, City: r.City, PostalCode: r.PostalCode, UnitNumber: optional(r.UnitNumber)}}
	if r.SlotWindowID != "" {
		id := install.SlotID(r.SlotWindowID, r.SlotDate)
		j.SlotID = &id
	}
	return j
}

// handleInstallJobs: GET /api/v1/install-jobs — the operator's install queue, oldest first.
func (s *server) handleInstallJobs(w http.ResponseWriter, r *http.Request) error {
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
	rows, err := s.Install.Queue(r.Context(), f)
	if err != nil {
		return err
	}
	out := make([]installJobJSON, 0, len(rows))
	for _, row := range rows {
		out = append(out, installJobOf(row))
	}
	writeJSON(w, http.StatusOK, map[string]any{"install_jobs": out})
	return nil
}

// writeInstallJob answers one job as the queue shows it.
func (s *server) writeInstallJob(w http.ResponseWriter, r *http.Request, id string) error {
	rows, err := s.Install.Queue(r.Context(), install.QueueFilter{ID: id, Limit: 1})
	if err != nil {
		return err
	}
	if len(rows) == 0 {
		return subprov.NotFound("Install job")
	}
	writeJSON(w, http.StatusOK, installJobOf(rows[0]))
	return nil
}

// handleInstallJob: GET /api/v1/install-jobs/{job_id}.
func (s *server) handleInstallJob(w http.ResponseWriter, r *http.Request) error {
	return s.writeInstallJob(w, r, r.PathValue("job_id"))
}

type slotJSON struct {
	SlotID     string `json:"slot_id"`
	Date       string `json:"date"`
	StartsAt   string `json:"starts_at"`
	EndsAt     string `json:"ends_at"`
	Capacity   int    `json:"capacity"`
	PlacesLeft int    `json:"places_left"`
}

// handleInstallJobSlots: GET /api/v1/install-jobs/{job_id}/slots — what can be booked for it.
func (s *server) handleInstallJobSlots(w http.ResponseWriter, r *http.Request) error {
	days, _, err := s.Install.Slots(r.Context(), r.PathValue("job_id"))
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
	writeJSON(w, http.StatusOK, map[string]any{"slots": out})
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

// handleAssignInstallJob: POST /api/v1/install-jobs/{job_id}/assign {assigned_to}.
func (s *server) handleAssignInstallJob(w http.ResponseWriter, r *http.Request) error {
	q, err := decode[assignRequest](r)
	if err != nil {
		return err
	}
	job, err := s.Install.Assign(r.Context(), r.PathValue("job_id"), *q.AssignedTo, callerOf(r).Operator.Email)
	if err != nil {
		return err
	}
	return s.writeInstallJob(w, r, job.ID)
}

type bookRequest struct {
	SlotID string `json:"slot_id"`
}

func (q bookRequest) Valid() map[string]string {
	p := map[string]string{}
	required(p, map[string]string{"slot_id": q.SlotID})
	return p
}

// handleBookInstallJob: POST /api/v1/install-jobs/{job_id}/book {slot_id} — the operator books
// the visit on the customer's behalf (booking becomes operator).
func (s *server) handleBookInstallJob(w http.ResponseWriter, r *http.Request) error {
	q, err := decode[bookRequest](r)
	if err != nil {
		return err
	}
	job, err := s.Install.BookForCustomer(r.Context(), r.PathValue("job_id"), q.SlotID, callerOf(r).Operator.Email)
	if err != nil {
		return err
	}
	return s.writeInstallJob(w, r, job.ID)
}

// handleCompleteInstallJob: POST /api/v1/install-jobs/{job_id}/complete {mac_address?} — the
// technician is done: the same path as confirm-install (ACTIVE, billing starts).
func (s *server) handleCompleteInstallJob(w http.ResponseWriter, r *http.Request) error {
	q, err := decode[completeJobRequest](r)
	if err != nil {
		return err
	}
	sub, err := s.Install.Complete(r.Context(), r.PathValue("job_id"), q.MACAddress)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"subscription_id": sub.ID, "status": sub.Status, "install_job_id": r.PathValue("job_id")})
	return nil
}

type completeJobRequest struct {
	MACAddress string `json:"mac_address"`
}

func (q completeJobRequest) Valid() map[string]string { return map[string]string{} }

// The booking page (surfacePage: errors render as HTML).

// maxBookingForm bounds the booking form body.
const maxBookingForm = 8 << 10

// bookingView is what booking.html and booking_done.html receive.
type bookingView struct {
	*install.Page
	Error string
}

// SlotLabel is a slot's time range in the provider's time zone.
func (v bookingView) SlotLabel(sl install.Slot) string {
	return sl.Start.In(v.Location).Format("15:04") + "–" + sl.End.In(v.Location).Format("15:04")
}

// DayLabel is a date the way a person reads it.
func (v bookingView) DayLabel(d install.Day) string {
	t, err := time.Parse(time.DateOnly, d.Date)
	if err != nil {
		return d.Date
	}
	return t.Format("Monday 2 January 2006")
}

// When is the booked appointment in words.
func (v bookingView) When() string {
	if v.Appointment == nil {
		return ""
	}
	return install.FormatSlot(*v.Appointment, v.Location)
}

// renderBooking shows the page a link leads to.
func renderBooking(w http.ResponseWriter, status int, pg *install.Page, problem string) error {
	switch pg.State {
	case install.PageOpen:
		return pages.Render(w, status, "booking", web.Page{Title: "Book your installation", Data: bookingView{Page: pg, Error: problem}})
	case install.PageBooked:
		return pages.Render(w, http.StatusOK, "booking_done", web.Page{Title: "Your installation is booked", Data: bookingView{Page: pg}})
	case install.PagePaused:
		return pages.Message(w, http.StatusConflict, "Booking paused",
			"Your installation booking is paused for now. "+pg.ProviderName+" will send you a new link when it can go ahead.")
	case install.PageReplaced:
		return pages.Message(w, http.StatusGone, "This link was replaced",
			"A newer booking link was sent to you by e-mail. Please use the link in the most recent message.")
	}
	return pages.Message(w, http.StatusGone, "This link has expired",
		"This installation no longer needs an appointment. Contact "+pg.ProviderName+" if you have a question.")
}

// handleBookingPage: GET /book?token=TOKEN.
func (s *server) handleBookingPage(w http.ResponseWriter, r *http.Request) error {
	pg, err := s.Install.BookingPage(r.Context(), r.URL.Query().Get("token"))
	if err != nil {
		return err
	}
	return renderBooking(w, http.StatusOK, pg, "")
}

// handleBookingConfirm: POST /book (form: token, slot). A refused slot shows the page again
// with the reason; anything else shows what the link now leads to.
func (s *server) handleBookingConfirm(w http.ResponseWriter, r *http.Request) error {
	if err := readForm(w, r, maxBookingForm); err != nil {
		return err
	}
	token := strings.TrimSpace(r.PostForm.Get("token"))
	pg, err := s.Install.Book(r.Context(), token, r.PostForm.Get("slot"))
	if e, ok := install.BookingError(err); ok {
		again, perr := s.Install.BookingPage(r.Context(), token)
		if perr != nil {
			return perr
		}
		return renderBooking(w, statusOf[e.Code], again, e.Message)
	}
	if err != nil {
		return err
	}
	return renderBooking(w, http.StatusOK, pg, "")
}
