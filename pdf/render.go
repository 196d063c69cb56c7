package pdf

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/go-pdf/fpdf"

	"github.com/subprov/subprov/locale"
)

// document is the layout-level view shared by invoices and credit notes.
type document struct {
	kind     string // "Invoice", "Credit note" (metadata and continuation header)
	title    string // "INVOICE", "CREDIT NOTE"
	lang     locale.Lang
	provider string
	color    string
	currency string
	number   string
	customer string
	date     string // YYYY-MM-DD, drives the fixed document timestamp

	info   []kv // right-hand block under the customer number
	extra  []kv // left-hand block under the bill-to party (service address, reason)
	billTo Party
	lines  []Line

	totals []kv // rows above the grand total
	grand  kv

	stamp    string
	paid     bool // the first note is the paid stamp's thanks
	stampRGB rgb
	notes    []string
}

// Layout constants, in millimetres.
const (
	margin       = 15.0
	bottomMargin = 22.0
	lineH        = 5.0
	maxDescLines = 12
)

// renderer bundles the fpdf document with the cp1252 translator and colours.
type renderer struct {
	f      *fpdf.Fpdf
	tr     func(string) string
	accent rgb // table header fill, rules
	text   rgb // provider name: accent unless too light to read
	pageW  float64
	pageH  float64
}

// t cleans and translates UTF-8 text to cp1252 for the core font.
func (r *renderer) t(s string) string { return r.tr(clean(s)) }

// fit truncates already-translated text so it fits in width w (cell margins included),
// ending it with "..." when shortened.
func (r *renderer) fit(s string, w float64) string {
	avail := w - 2*r.f.GetCellMargin()
	if r.f.GetStringWidth(s) <= avail {
		return s
	}
	for len(s) > 0 && r.f.GetStringWidth(s+"...") > avail {
		s = s[:len(s)-1]
	}
	return strings.TrimRight(s, " ") + "..."
}

// wrap splits UTF-8 text into translated lines no wider than w, at most maxLines of them; the
// last kept line is marked with "..." when text was dropped. It always returns at least one line.
func (r *renderer) wrap(s string, w float64, maxLines int) []string {
	var out []string
	for _, para := range strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n") {
		para = strings.TrimSpace(r.t(para))
		if para == "" {
			continue
		}
		for _, b := range r.f.SplitLines([]byte(para), w) {
			out = append(out, strings.TrimSpace(string(b)))
		}
	}
	if len(out) == 0 {
		return []string{""}
	}
	if maxLines > 0 && len(out) > maxLines {
		out = out[:maxLines]
		out[maxLines-1] = r.fit(out[maxLines-1]+" ...", w)
		if !strings.HasSuffix(out[maxLines-1], "...") {
			out[maxLines-1] += "..."
		}
	}
	return out
}

func (r *renderer) fill(c rgb)    { r.f.SetFillColor(c.r, c.g, c.b) }
func (r *renderer) draw(c rgb)    { r.f.SetDrawColor(c.r, c.g, c.b) }
func (r *renderer) textRGB(c rgb) { r.f.SetTextColor(c.r, c.g, c.b) }
func (r *renderer) font(style string, size float64) {
	r.f.SetFont("Helvetica", style, size)
}

var (
	black = rgb{0x1c, 0x1c, 0x1c}
	grey  = rgb{0x6b, 0x6b, 0x6b}
	rule  = rgb{0xc8, 0xc8, 0xc8}
	zebra = rgb{0xf4, 0xf5, 0xf7}
	white = rgb{0xff, 0xff, 0xff}
)

func (d *document) render(w io.Writer, opt options) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("pdf: rendering %s %q: %v", strings.ToLower(d.kind), d.number, p)
		}
	}()

	f := fpdf.New("P", "mm", pageSize(d.currency), "")
	f.SetCompression(opt.compress)
	ts := docTime(d.date)
	f.SetCreationDate(ts)
	f.SetModificationDate(ts)
	f.SetCatalogSort(true)
	f.SetCreator("subprov", false)
	f.SetTitle(strings.TrimSpace(d.kind+" "+clean(d.number)), true)
	if d.provider != "" {
		f.SetAuthor(clean(d.provider), true)
	}
	f.SetMargins(margin, margin, margin)
	f.SetAutoPageBreak(true, bottomMargin)
	f.AliasNbPages("")

	accent := parseColor(d.color)
	r := &renderer{f: f, tr: f.UnicodeTranslatorFromDescriptor(""), accent: accent, text: accent}
	if accent.light() {
		r.text = defaultColor
	}
	r.pageW, r.pageH = f.GetPageSize()

	f.SetHeaderFunc(func() {
		if f.PageNo() > 1 {
			d.continuationHeader(r)
		}
	})
	f.SetFooterFunc(func() { d.footer(r) })

	f.AddPage()
	d.header(r)
	d.parties(r)
	d.table(r)
	d.totalsBlock(r)

	if err := f.Error(); err != nil {
		return fmt.Errorf("pdf: rendering %s %q: %w", strings.ToLower(d.kind), d.number, err)
	}
	if err := f.Output(w); err != nil {
		return fmt.Errorf("pdf: writing %s %q: %w", strings.ToLower(d.kind), d.number, err)
	}
	return nil
}

// header prints the provider name, the document title and number, and an accent rule.
func (d *document) header(r *renderer) {
	f := r.f
	contentW := r.pageW - 2*margin
	titleW := 75.0

	f.SetXY(margin, margin)
	r.font("B", 20)
	r.textRGB(r.text)
	f.CellFormat(contentW-titleW, 10, r.fit(r.t(d.provider), contentW-titleW), "", 0, "L", false, 0, "")

	r.font("B", 18)
	r.textRGB(black)
	f.CellFormat(titleW, 10, r.t(d.title), "", 1, "R", false, 0, "")

	if d.number != "" {
		f.SetX(r.pageW - margin - titleW)
		r.font("", 11)
		r.textRGB(grey)
		f.CellFormat(titleW, 6, r.fit(r.t(d.lang.T("pdf.no", d.number)), titleW), "", 1, "R", false, 0, "")
	}

	y := f.GetY() + 3
	r.draw(r.accent)
	f.SetLineWidth(0.8)
	f.Line(margin, y, r.pageW-margin, y)
	f.SetLineWidth(0.2)
	f.SetY(y + 6)
}

// continuationHeader is printed at the top of pages after the first.
func (d *document) continuationHeader(r *renderer) {
	f := r.f
	contentW := r.pageW - 2*margin
	r.font("B", 10)
	r.textRGB(r.text)
	f.CellFormat(contentW/2, 6, r.fit(r.t(d.provider), contentW/2), "", 0, "L", false, 0, "")
	r.font("", 9)
	r.textRGB(grey)
	right := d.kind + " " + d.number
	if d.customer != "" {
		right += " \u00b7 Customer " + d.customer
	}
	f.CellFormat(contentW/2, 6, r.fit(r.t(d.lang.T("pdf.continued", right)), contentW/2), "", 1, "R", false, 0, "")
	y := f.GetY() + 1
	r.draw(r.accent)
	f.SetLineWidth(0.4)
	f.Line(margin, y, r.pageW-margin, y)
	f.SetLineWidth(0.2)
	f.SetY(y + 4)
}

// footer prints the support line and page numbers on every page.
func (d *document) footer(r *renderer) {
	f := r.f
	contentW := r.pageW - 2*margin
	f.SetY(-15)
	r.draw(rule)
	f.Line(margin, f.GetY()-1, r.pageW-margin, f.GetY()-1)
	r.font("", 8)
	r.textRGB(grey)
	msg := d.lang.T("pdf.questions")
	if p := strings.TrimSpace(d.provider); p != "" {
		msg = d.lang.T("pdf.questions_provider", p)
	}
	pageW := 30.0
	f.SetX(margin)
	f.CellFormat(contentW-pageW, 5, r.fit(r.t(msg), contentW-pageW), "", 0, "L", false, 0, "")
	f.CellFormat(pageW, 5, r.t(d.lang.T("pdf.page", strconv.Itoa(f.PageNo()), "{nb}")), "", 0, "R", false, 0, "")
}

// parties prints the bill-to block on the left and the customer number and dates on the right.
func (d *document) parties(r *renderer) {
	f := r.f
	top := f.GetY()
	rightW := 78.0
	rightX := r.pageW - margin - rightW
	leftW := rightX - margin - 8

	// Left: bill to.
	f.SetXY(margin, top)
	label := func(s string, x, w float64) {
		f.SetX(x)
		r.font("B", 8)
		r.textRGB(grey)
		f.CellFormat(w, 5, s, "", 1, "L", false, 0, "")
	}
	lines := func(s string, x, w float64, style string, size float64, max int) {
		if strings.TrimSpace(s) == "" {
			return
		}
		r.font(style, size)
		r.textRGB(black)
		for _, l := range r.wrap(s, w, max) {
			f.SetX(x)
			f.CellFormat(w, lineH, l, "", 1, "L", false, 0, "")
		}
	}
	label(r.t(d.lang.T("pdf.bill_to")), margin, leftW)
	p := d.billTo
	lines(p.Name, margin, leftW, "B", 11, 2)
	lines(p.Company, margin, leftW, "", 10, 2)
	addr := p.AddressLines
	if len(addr) > 8 {
		addr = addr[:8]
	}
	for _, a := range addr {
		lines(a, margin, leftW, "", 10, 2)
	}
	lines(p.Email, margin, leftW, "", 10, 1)
	lines(p.Phone, margin, leftW, "", 10, 1)
	for _, e := range d.extra {
		if strings.TrimSpace(e.v) == "" {
			continue
		}
		f.SetY(f.GetY() + 3)
		label(strings.ToUpper(e.k), margin, leftW)
		lines(e.v, margin, leftW, "", 10, 4)
	}
	leftBottom := f.GetY()

	// Right: customer number box, then the info rows.
	boxH := 17.0
	r.draw(r.accent)
	f.SetLineWidth(0.5)
	f.Rect(rightX, top, rightW, boxH, "D")
	f.SetLineWidth(0.2)
	f.SetXY(rightX+2, top+1.5)
	r.font("B", 8)
	r.textRGB(grey)
	f.CellFormat(rightW-4, 5, r.t(d.lang.T("pdf.customer_number")), "", 2, "L", false, 0, "")
	f.SetX(rightX + 2)
	r.font("B", 16)
	r.textRGB(black)
	cust := d.customer
	if strings.TrimSpace(cust) == "" {
		cust = "-"
	}
	f.CellFormat(rightW-4, 8, r.fit(r.t(cust), rightW-4), "", 1, "L", false, 0, "")

	f.SetY(top + boxH + 3)
	labelW := 32.0
	for _, row := range d.info {
		if strings.TrimSpace(row.v) == "" {
			continue
		}
		f.SetX(rightX)
		r.font("", 9)
		r.textRGB(grey)
		f.CellFormat(labelW, lineH+0.5, r.t(row.k), "", 0, "L", false, 0, "")
		r.font("B", 10)
		r.textRGB(black)
		f.CellFormat(rightW-labelW, lineH+0.5, r.fit(r.t(row.v), rightW-labelW), "", 1, "R", false, 0, "")
	}
	rightBottom := f.GetY()

	f.SetY(max(leftBottom, rightBottom) + 8)
}

// columns returns the widths of Description | Unit price | Days | Amount.
func (r *renderer) columns() [4]float64 {
	contentW := r.pageW - 2*margin
	return [4]float64{contentW - 28 - 22 - 30, 28, 22, 30}
}

func (d *document) tableHeader(r *renderer) {
	f := r.f
	cols := r.columns()
	r.fill(r.accent)
	if r.accent.light() {
		r.textRGB(black)
	} else {
		r.textRGB(white)
	}
	r.font("B", 9)
	f.SetX(margin)
	heads := [4]string{r.t(d.lang.T("pdf.col.description")), r.t(d.lang.T("pdf.col.unit_price")), r.t(d.lang.T("pdf.col.days")), r.t(d.lang.T("pdf.col.amount"))}
	aligns := [4]string{"L", "R", "C", "R"}
	for i, h := range heads {
		ln := 0
		if i == 3 {
			ln = 1
		}
		f.CellFormat(cols[i], 7, h, "", ln, aligns[i], true, 0, "")
	}
}

// table prints the charges; rows never split across pages and the column header repeats.
func (d *document) table(r *renderer) {
	f := r.f
	cols := r.columns()
	contentW := r.pageW - 2*margin
	limit := r.pageH - bottomMargin

	if f.GetY()+7+2*lineH+2 > limit {
		f.AddPage()
	}
	d.tableHeader(r)

	if len(d.lines) == 0 {
		r.font("I", 10)
		r.textRGB(grey)
		f.SetX(margin)
		f.CellFormat(contentW, 9, r.t(d.lang.T("pdf.no_charges")), "B", 1, "C", false, 0, "")
		return
	}

	for i, l := range d.lines {
		r.font("", 9.5)
		desc := r.wrap(l.Description, cols[0], maxDescLines)
		rowH := float64(len(desc))*lineH + 2
		if f.GetY()+rowH > limit {
			f.AddPage()
			d.tableHeader(r)
			r.font("", 9.5)
		}
		y := f.GetY()
		if i%2 == 1 {
			r.fill(zebra)
			f.Rect(margin, y, contentW, rowH, "F")
		}
		r.textRGB(black)
		for j, s := range desc {
			f.SetXY(margin, y+1+float64(j)*lineH)
			f.CellFormat(cols[0], lineH, s, "", 0, "L", false, 0, "")
		}
		f.SetXY(margin+cols[0], y+1)
		f.CellFormat(cols[1], lineH, r.t(d.lang.Money(l.UnitPrice, d.currency)), "", 0, "R", false, 0, "")
		f.CellFormat(cols[2], lineH, days(l), "", 0, "C", false, 0, "")
		f.CellFormat(cols[3], lineH, r.t(d.lang.Money(l.Amount, d.currency)), "", 0, "R", false, 0, "")
		f.SetXY(margin, y+rowH)
	}
	r.draw(rule)
	f.Line(margin, f.GetY(), r.pageW-margin, f.GetY())
}

// days renders the Days column: "12 / 30" for prorated lines, blank otherwise.
func days(l Line) string {
	if l.DaysInPeriod <= 0 {
		return ""
	}
	return strconv.Itoa(l.Days) + " / " + strconv.Itoa(l.DaysInPeriod)
}

// totalsBlock prints the totals, the stamp and the closing notes.
func (d *document) totalsBlock(r *renderer) {
	f := r.f
	blockW := 95.0
	valueW := 32.0
	labelW := blockW - valueW
	x := r.pageW - margin - blockW
	need := 6 + float64(len(d.totals))*6 + 10 + float64(len(d.notes))*lineH + 6
	if d.stamp != "" && need < 28 {
		need = 28
	}
	if f.GetY()+need > r.pageH-bottomMargin {
		f.AddPage()
	}
	f.SetY(f.GetY() + 4)
	top := f.GetY()

	r.textRGB(black)
	for _, t := range d.totals {
		f.SetX(x)
		r.font("", 10)
		f.CellFormat(labelW, 6, r.fit(r.t(t.k), labelW), "", 0, "R", false, 0, "")
		f.CellFormat(valueW, 6, r.t(t.v), "", 1, "R", false, 0, "")
	}
	y := f.GetY() + 1
	r.draw(r.accent)
	f.SetLineWidth(0.5)
	f.Line(x+labelW/3, y, r.pageW-margin, y)
	f.SetLineWidth(0.2)
	f.SetXY(x, y+1)
	r.font("B", 12)
	f.CellFormat(labelW, 8, r.fit(r.t(d.grand.k), labelW), "", 0, "R", false, 0, "")
	f.CellFormat(valueW, 8, r.t(d.grand.v), "", 1, "R", false, 0, "")
	bottom := f.GetY()

	if d.stamp != "" {
		d.drawStamp(r, margin+25, top+(bottom-top)/2)
		if bottom < top+22 {
			bottom = top + 22
		}
	}

	f.SetY(bottom + 6)
	for i, n := range d.notes {
		f.SetX(margin)
		if i == 0 && d.paid {
			r.font("B", 10)
			r.textRGB(d.stampRGB)
		} else {
			r.font("", 10)
			r.textRGB(black)
		}
		f.MultiCell(0, lineH, r.t(n), "", "L", false)
	}
}

// drawStamp prints a rotated, framed word (PAID, VOID) centred on (cx, cy).
func (d *document) drawStamp(r *renderer, cx, cy float64) {
	f := r.f
	r.font("B", 26)
	w := f.GetStringWidth(r.t(d.stamp)) + 10
	h := 14.0
	f.TransformBegin()
	f.TransformRotate(12, cx, cy)
	r.draw(d.stampRGB)
	r.textRGB(d.stampRGB)
	f.SetLineWidth(1.2)
	f.Rect(cx-w/2, cy-h/2, w, h, "D")
	f.SetLineWidth(0.2)
	f.SetXY(cx-w/2, cy-h/2)
	f.CellFormat(w, h, r.t(d.stamp), "", 0, "C", false, 0, "")
	f.TransformEnd()
	r.textRGB(black)
}
