package locale

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/subprov/subprov"
)

// nbsp is the no-break space Canadian French puts between groups of digits and before the
// currency sign, so "1 234,56 $" never breaks across lines.
const nbsp = "\u00a0"

// Number writes a whole number with the language's digit grouping: 1,234 or 1 234.
func (l Lang) Number(n int64) string {
	sign := ""
	if n < 0 {
		sign, n = "-", -n
	}
	digits := strconv.FormatInt(n, 10)
	sep := ","
	if l == FR {
		sep = nbsp
	}
	var b strings.Builder
	for i, c := range digits {
		if i > 0 && (len(digits)-i)%3 == 0 {
			b.WriteString(sep)
		}
		b.WriteRune(c)
	}
	return sign + b.String()
}

// symbols are the signs of the currencies a provider bills in; any other is written by its code.
var symbols = map[string]string{"CAD": "$", "USD": "$", "EUR": "€", "GBP": "£"}

// Money writes an amount of currency: English "$1,234.56", "-$5.00"; Canadian French
// "1 234,56 $", "-5,00 $" (no-break spaces). A currency without a sign is written by its code
// after the number in both: "12.50 CHF", "12,50 CHF".
func (l Lang) Money(m subprov.Money, currency string) string {
	v := int64(m)
	sign := ""
	if v < 0 {
		sign, v = "-", -v
	}
	whole, cents := l.Number(v/100), fmt.Sprintf("%02d", v%100)
	sym, known := symbols[strings.ToUpper(currency)]
	if l == FR {
		if !known {
			sym = strings.ToUpper(currency)
		}
		return sign + whole + "," + cents + nbsp + sym
	}
	if !known {
		return sign + whole + "." + cents + " " + strings.ToUpper(currency)
	}
	return sign + sym + whole + "." + cents
}

var monthsFR = [...]string{"janvier", "février", "mars", "avril", "mai", "juin", "juillet", "août", "septembre", "octobre", "novembre", "décembre"}
var weekdaysFR = [...]string{"dimanche", "lundi", "mardi", "mercredi", "jeudi", "vendredi", "samedi"}

// Date writes a calendar day: "November 29, 2026" or "29 novembre 2026" ("1er" for the first).
func (l Lang) Date(t time.Time) string {
	if l == FR {
		day := strconv.Itoa(t.Day())
		if t.Day() == 1 {
			day = "1er"
		}
		return day + " " + monthsFR[t.Month()-1] + " " + strconv.Itoa(t.Year())
	}
	return t.Format("January 2, 2006")
}

// Day writes a day with its weekday: "Monday, November 30, 2026" or "lundi 30 novembre 2026".
func (l Lang) Day(t time.Time) string {
	if l == FR {
		return weekdaysFR[t.Weekday()] + " " + l.Date(t)
	}
	return t.Format("Monday, ") + l.Date(t)
}

// Clock writes a time of day: "2:30 p.m." is avoided on purpose; both languages of Canada read
// the 24-hour "14:30" (French "14 h 30").
func (l Lang) Clock(t time.Time) string {
	if l == FR {
		return fmt.Sprintf("%d h %02d", t.Hour(), t.Minute())
	}
	return t.Format("15:04")
}

// Moment writes an instant as its day, time and zone, as t's location reads it: "November 20,
// 2026 at 10:00 EST" or "20 novembre 2026 à 10 h 00 EST".
func (l Lang) Moment(t time.Time) string {
	at := " at "
	if l == FR {
		at = " à "
	}
	return l.Date(t) + at + l.Clock(t) + " " + t.Format("MST")
}

// ISODate writes a "2006-01-02" date in l, or the text itself when it is not one.
func (l Lang) ISODate(s string) string {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return s
	}
	return l.Date(t)
}

// Amount is money to write in the reader's language.
type Amount struct {
	Money    subprov.Money
	Currency string
}

// In writes the amount in l.
func (a Amount) In(l Lang) string { return l.Money(a.Money, a.Currency) }

// DateOf is a calendar day ("2006-01-02") to write in the reader's language.
type DateOf string

// In writes the day in l.
func (d DateOf) In(l Lang) string { return l.ISODate(string(d)) }
