package console

import (
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/httpapi/api"
	"github.com/subprov/subprov/install"
	"github.com/subprov/subprov/inventory"
)

// The install queue (/console/installs), one job's page and the install windows: the same
// capabilities as GET /api/v1/install-jobs, /install-jobs/{id}, /install-jobs/{id}/slots,
// POST /install-jobs/{id}/assign|book|complete and /api/v1/install-windows.

// installFilter is the queue's filter form. status is the job's state, the name the home
// page's counts link with (/console/installs?status=open).
type installFilter struct {
	Status, Kind, Booking, Flag, AssignedTo, ProviderID string
}

// installsData is the queue page's.
type installsData struct {
	Filter                  installFilter
	Jobs                    []*subprov.InstallQueueEntry
	States, Kinds, Bookings []string
	// Full says the queue holds more jobs than the page shows (the oldest first): narrow it.
	Full  bool
	Limit int
}

// installs: GET /console/installs.
func (h *Handler) installs(w http.ResponseWriter, r *http.Request, v *View) error {
	q := r.URL.Query()
	f := installFilter{Status: q.Get("status"), Kind: q.Get("kind"), Booking: q.Get("booking"), Flag: q.Get("flag"),
		AssignedTo: q.Get("assigned_to"), ProviderID: q.Get("provider_id")}
	d := installsData{Filter: f, Limit: install.DefaultQueueLimit,
		States:   []string{install.StateOpen, install.StateBooked, install.StateHeld, install.StateDone, install.StateCancelled},
		Kinds:    []string{install.KindInstall, install.KindReinstall},
		Bookings: []string{install.BookingCustomer, install.BookingOperator}}
	// One more than shown tells whether the queue is longer than the page.
	jobs, err := h.Install.Queue(r.Context(), v.Operator.Scope(), install.QueueFilter{State: f.Status, Kind: f.Kind,
		Booking: f.Booking, Flag: f.Flag, AssignedTo: f.AssignedTo, ProviderID: f.ProviderID, Limit: d.Limit + 1})
	status := http.StatusOK
	if err != nil {
		if status, err = refuseQuery(v, r, err, map[string]string{"state": "status"}); err != nil {
			return err
		}
	}
	if len(jobs) > d.Limit {
		jobs, d.Full = jobs[:d.Limit], true
	}
	d.Jobs = jobs
	v.Title, v.Data = "Install queue", d
	h.render(w, r, v, status, "installs")
	return nil
}

// refuseQuery shows a list's refused filter: the capability's problems ("query:state") by the
// filter form's field names (renamed maps the capability's name to the form's where they
// differ).
func refuseQuery(v *View, r *http.Request, err error, renamed map[string]string) (int, error) {
	status, err := v.Refuse(r, err)
	if err != nil {
		return 0, err
	}
	errs := map[string]string{}
	for f, p := range v.Errors {
		f = strings.TrimPrefix(f, "query:")
		if n, ok := renamed[f]; ok {
			f = n
		}
		errs[f] = p
	}
	v.Errors, v.Form = errs, r.URL.Query()
	return status, nil
}

// installJobData is a job's page: the job as the queue shows it and the slots that can be
// booked for it, in its provider's time zone.
type installJobData struct {
	Job  *subprov.InstallQueueEntry
	Days []install.Day
	// SlotID is the job's booked slot, if any.
	SlotID string
	// Loc is the job's provider's time zone, for the slots and the appointment.
	Loc *time.Location
	// Actionable says the job can still be booked, assigned or completed.
	Actionable bool
}

// installJobPage: GET /console/installs/{job_id}.
func (h *Handler) installJobPage(w http.ResponseWriter, r *http.Request, v *View) error {
	return h.showInstallJob(w, r, v, http.StatusOK)
}

// showInstallJob renders a job's page with status (a refused action's, with its errors).
func (h *Handler) showInstallJob(w http.ResponseWriter, r *http.Request, v *View, status int) error {
	scope := v.Operator.Scope()
	jobs, err := h.Install.Queue(r.Context(), scope, install.QueueFilter{ID: r.PathValue("job_id"), Limit: 1})
	if err != nil {
		return err
	}
	if len(jobs) == 0 {
		return subprov.NotFound("Install job")
	}
	job := jobs[0]
	d := installJobData{Job: job, Loc: v.Loc,
		Actionable: job.State == install.StateOpen || job.State == install.StateBooked}
	if job.SlotWindowID != "" {
		d.SlotID = install.SlotID(job.SlotWindowID, job.SlotDate)
	}
	if d.Actionable {
		days, p, err := h.Install.Slots(r.Context(), scope, job.ID)
		if err != nil {
			return err
		}
		d.Days, d.Loc = days, p.Location()
	}
	v.Title, v.Data = "Install job", d
	h.render(w, r, v, status, "install_job")
	return nil
}

// installJobDone answers an action on a job: back to its page with flash, or, refused, its
// page again with the error.
func (h *Handler) installJobDone(w http.ResponseWriter, r *http.Request, v *View, err error, flash string) error {
	if err != nil {
		status, err := v.Refuse(r, err)
		if err != nil {
			return err
		}
		return h.showInstallJob(w, r, v, status)
	}
	h.redirect(w, r, Prefix+"installs/"+url.PathEscape(r.PathValue("job_id")), flash)
	return nil
}

// assignInstallJob: POST /console/installs/{job_id}/assign.
func (h *Handler) assignInstallJob(w http.ResponseWriter, r *http.Request, v *View) error {
	to := strings.TrimSpace(r.PostForm.Get("assigned_to"))
	_, err := h.Install.Assign(r.Context(), v.Operator, r.PathValue("job_id"), to)
	flash := "Assigned to " + to + "."
	if to == "" {
		flash = "Unassigned."
	}
	return h.installJobDone(w, r, v, err, flash)
}

// bookInstallJob: POST /console/installs/{job_id}/book.
func (h *Handler) bookInstallJob(w http.ResponseWriter, r *http.Request, v *View) error {
	slot := r.PostForm.Get("slot_id")
	var err error
	if slot == "" {
		err = subprov.Invalid(map[string]string{"slot_id": "Choose a slot."})
	} else {
		_, err = h.Install.BookForCustomer(r.Context(), v.Operator, r.PathValue("job_id"), slot)
	}
	return h.installJobDone(w, r, v, err, "Visit booked.")
}

// completeInstallJob: POST /console/installs/{job_id}/complete.
func (h *Handler) completeInstallJob(w http.ResponseWriter, r *http.Request, v *View) error {
	sub, err := h.Install.Complete(r.Context(), v.Operator, r.PathValue("job_id"), strings.TrimSpace(r.PostForm.Get("mac_address")))
	flash := ""
	if err == nil {
		flash = "Install completed: the line is " + string(sub.Status) + "."
	}
	return h.installJobDone(w, r, v, err, flash)
}

// installWindowsData is the install windows page's.
type installWindowsData struct {
	Windows  []windowRow
	Next     string
	Weekdays []string
}

// windowRow is an install window with its weekday's name.
type windowRow struct {
	subprov.InstallWindow
	Day string
}

// installWindows: GET /console/install-windows.
func (h *Handler) installWindows(w http.ResponseWriter, r *http.Request, v *View) error {
	return h.showInstallWindows(w, r, v, http.StatusOK)
}

func (h *Handler) showInstallWindows(w http.ResponseWriter, r *http.Request, v *View, status int) error {
	page, err := api.PageOf(r)
	if err != nil {
		return err
	}
	ws, next, err := h.Ops.Inventory.InstallWindows(r.Context(), v.Operator,
		inventory.ListFilter{ProviderID: r.URL.Query().Get("provider_id")}, page)
	if err != nil {
		return err
	}
	d := installWindowsData{Next: nextPage(r, next)}
	for _, iw := range ws {
		d.Windows = append(d.Windows, windowRow{InstallWindow: iw, Day: inventory.WeekdayName(iw.Weekday)})
	}
	for n := 1; n <= 7; n++ { // Monday first
		d.Weekdays = append(d.Weekdays, inventory.WeekdayName(n%7))
	}
	v.Title, v.Data = "Install windows", d
	h.render(w, r, v, status, "install_windows")
	return nil
}

// createInstallWindow: POST /console/install-windows.
func (h *Handler) createInstallWindow(w http.ResponseWriter, r *http.Request, v *View) error {
	f := r.PostForm
	row := inventory.InstallWindow{ProviderID: strings.TrimSpace(f.Get("provider_id")), Weekday: f.Get("weekday"),
		Starts: strings.TrimSpace(f.Get("starts")), Ends: strings.TrimSpace(f.Get("ends"))}
	problems := map[string]string{}
	row.Technicians = subprov.Deref(formInt(f, "technicians", problems))
	var err error
	if len(problems) > 0 {
		err = subprov.Invalid(problems)
	} else {
		_, err = h.Ops.Inventory.CreateInstallWindow(r.Context(), v.Operator, row)
	}
	if err != nil {
		status, err := v.Refuse(r, err)
		if err != nil {
			return err
		}
		return h.showInstallWindows(w, r, v, status)
	}
	h.redirect(w, r, Prefix+"install-windows", "Install window added: "+row.Weekday+" "+row.Starts+"–"+row.Ends+".")
	return nil
}

// deleteInstallWindow: POST /console/install-windows/{window_id}/delete.
func (h *Handler) deleteInstallWindow(w http.ResponseWriter, r *http.Request, v *View) error {
	if err := h.Ops.Inventory.DeleteInstallWindow(r.Context(), v.Operator, r.PathValue("window_id")); err != nil {
		return err
	}
	h.redirect(w, r, Prefix+"install-windows", "Install window deleted. Visits already booked in it keep their slot.")
	return nil
}

// nextPage is the address of a list's next page, the filters kept, "" when there is none.
func nextPage(r *http.Request, cursor string) string {
	if cursor == "" {
		return ""
	}
	q := r.URL.Query()
	q.Set("cursor", cursor)
	return r.URL.Path + "?" + q.Encode()
}
