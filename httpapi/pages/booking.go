package pages

import (
	"net/http"
	"strings"
	"time"

	"github.com/subprov/subprov/httpapi/api"
	"github.com/subprov/subprov/install"
	"github.com/subprov/subprov/web"
)

// The installation booking page the invitation mail links to.

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
		return api.Pages.Render(w, status, "booking", web.Page{Title: "Book your installation", Data: bookingView{Page: pg, Error: problem}})
	case install.PageBooked:
		return api.Pages.Render(w, http.StatusOK, "booking_done", web.Page{Title: "Your installation is booked", Data: bookingView{Page: pg}})
	case install.PagePaused:
		return api.Pages.Message(w, http.StatusConflict, "Booking paused",
			"Your installation booking is paused for now. "+pg.ProviderName+" will send you a new link when it can go ahead.")
	case install.PageReplaced:
		return api.Pages.Message(w, http.StatusGone, "This link was replaced",
			"A newer booking link was sent to you by e-mail. Please use the link in the most recent message.")
	}
	return api.Pages.Message(w, http.StatusGone, "This link has expired",
		"This installation no longer needs an appointment. Contact "+pg.ProviderName+" if you have a question.")
}

// BookingPage: GET /book?token=TOKEN.
func (h *Handler) BookingPage(w http.ResponseWriter, r *http.Request) error {
	pg, err := h.Install.BookingPage(r.Context(), r.URL.Query().Get("token"))
	if err != nil {
		return err
	}
	return renderBooking(w, http.StatusOK, pg, "")
}

// BookingConfirm: POST /book (form: token, slot). A refused slot shows the page again
// with the reason; anything else shows what the link now leads to.
func (h *Handler) BookingConfirm(w http.ResponseWriter, r *http.Request) error {
	if err := api.ReadForm(w, r, maxBookingForm); err != nil {
		return err
	}
	token := strings.TrimSpace(r.PostForm.Get("token"))
	pg, err := h.Install.Book(r.Context(), token, r.PostForm.Get("slot"))
	if e, ok := install.BookingError(err); ok {
		again, perr := h.Install.BookingPage(r.Context(), token)
		if perr != nil {
			return perr
		}
		return renderBooking(w, api.Status(e.Code), again, e.Message)
	}
	if err != nil {
		return err
	}
	return renderBooking(w, http.StatusOK, pg, "")
}
