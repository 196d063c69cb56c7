package pages

import (
	"net/http"
	"strings"
	"time"

	"github.com/subprov/subprov/httpapi/api"
	"github.com/subprov/subprov/install"
	"github.com/subprov/subprov/locale"
	"github.com/subprov/subprov/web"
)

// The installation booking page the invitation mail links to.

// maxBookingForm bounds the booking form body.
const maxBookingForm = 8 << 10

// bookingView is what booking.html and booking_done.html receive.
type bookingView struct {
	*install.Page
	Lang  locale.Lang
	Error string
}

// SlotLabel is a slot's time range in the provider's time zone.
func (v bookingView) SlotLabel(sl install.Slot) string {
	return v.Lang.Clock(sl.Start.In(v.Location)) + "–" + v.Lang.Clock(sl.End.In(v.Location))
}

// DayLabel is a date the way a person reads it.
func (v bookingView) DayLabel(d install.Day) string {
	t, err := time.Parse(time.DateOnly, d.Date)
	if err != nil {
		return d.Date
	}
	return v.Lang.Day(t)
}

// When is the booked appointment in words.
func (v bookingView) When() string {
	if v.Appointment == nil {
		return ""
	}
	return install.SlotText(*v.Appointment, v.Location).In(v.Lang)
}

// renderBooking shows the page a link leads to, in the browser's language or else the
// provider's (the page is opened without a login).
func renderBooking(w http.ResponseWriter, r *http.Request, status int, pg *install.Page, problem string) error {
	l := locale.Choose("", r.Header.Get("Accept-Language"), pg.Language)
	switch pg.State {
	case install.PageOpen:
		return api.Pages.Render(w, status, "booking", web.Page{Title: l.T("page.booking.title"), Lang: l, Data: bookingView{Page: pg, Lang: l, Error: problem}})
	case install.PageBooked:
		return api.Pages.Render(w, http.StatusOK, "booking_done", web.Page{Title: l.T("page.booked.title"), Lang: l, Data: bookingView{Page: pg, Lang: l}})
	case install.PagePaused:
		return api.Pages.Message(w, http.StatusConflict, l, l.T("page.paused.title"), l.T("page.paused.text", pg.ProviderName))
	case install.PageReplaced:
		return api.Pages.Message(w, http.StatusGone, l, l.T("page.replaced.title"), l.T("page.replaced.text"))
	}
	return api.Pages.Message(w, http.StatusGone, l, l.T("page.expired.title"), l.T("page.booking_over.text", pg.ProviderName))
}

// BookingPage: GET /book?token=TOKEN.
func (h *Handler) BookingPage(w http.ResponseWriter, r *http.Request) error {
	pg, err := h.Install.BookingPage(r.Context(), r.URL.Query().Get("token"))
	if err != nil {
		return err
	}
	return renderBooking(w, r, http.StatusOK, pg, "")
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
		return renderBooking(w, r, api.Status(e.Code), again, e.Message)
	}
	if err != nil {
		return err
	}
	return renderBooking(w, r, http.StatusOK, pg, "")
}
