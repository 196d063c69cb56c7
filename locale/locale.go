// Package locale owns the languages subprov speaks to subscribers: English and Canadian French.
// It holds the message catalogue (golang.org/x/text/message), the one rule that chooses a
// person's language, and the formatting of money, numbers and dates as each language writes
// them. Addresses are not translated: they are written as the building's own record spells them.
package locale

import (
	"strings"

	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// Lang is a language subprov writes in: "en" or "fr" (Canadian French).
type Lang string

// The supported languages. English is the fallback of every choice.
const (
	EN Lang = "en"
	FR Lang = "fr"
)

// Supported are the languages a person or a provider may choose, in the order the matcher
// prefers them.
var Supported = []Lang{EN, FR}

// tags are the BCP 47 tags of Supported, index for index.
var tags = []language.Tag{language.English, language.CanadianFrench}

var matcher = language.NewMatcher(tags)

// Parse is the supported language s names ("en", "fr", any case), or false.
func Parse(s string) (Lang, bool) {
	l := Lang(strings.ToLower(strings.TrimSpace(s)))
	for _, x := range Supported {
		if l == x {
			return l, true
		}
	}
	return "", false
}

// Problem says what is wrong with a language setting, or "" when s is a supported language.
func Problem(s string) string {
	if _, ok := Parse(s); !ok {
		return "want en or fr"
	}
	return ""
}

// Tag is the BCP 47 tag of l: en, or fr-CA.
func (l Lang) Tag() language.Tag {
	if l == FR {
		return language.CanadianFrench
	}
	return language.English
}

// String is the HTML lang attribute of l.
func (l Lang) String() string { return l.Tag().String() }

// Choose is the one rule for the language a subscriber is written to: the person's own
// preference; else, for a page opened without a login (acceptLanguage is then the request's
// Accept-Language header, "" otherwise), the browser's best supported language; else the
// provider's default_language; else English. Unknown values at any step fall through.
func Choose(person, acceptLanguage, providerDefault string) Lang {
	if l, ok := Parse(person); ok {
		return l
	}
	if acceptLanguage != "" {
		if prefs, _, err := language.ParseAcceptLanguage(acceptLanguage); err == nil && len(prefs) > 0 {
			if _, i, conf := matcher.Match(prefs...); conf != language.No {
				return Supported[i]
			}
		}
	}
	if l, ok := Parse(providerDefault); ok {
		return l
	}
	return EN
}

// T is the catalogue's text for key in l, with args formatted in l (see Localized).
func (l Lang) T(key string, args ...any) string {
	for i, a := range args {
		if v, ok := a.(Localized); ok {
			args[i] = v.In(l)
		}
	}
	p, ok := printers[l]
	if !ok {
		p = printers[EN]
	}
	return p.Sprintf(key, args...)
}

// printers are the catalogue's printers by language, built once.
var printers = map[Lang]*message.Printer{}

func init() {
	for _, l := range Supported {
		printers[l] = message.NewPrinter(l.Tag(), message.Catalog(messages))
	}
}

// Localized is a value written differently in each language: money, a date, a nested text.
type Localized interface {
	In(Lang) string
}

// Text is a catalogue message not yet written in a language: what a mail carries until the
// recipient's language is known.
type Text struct {
	Key  string
	Args []any
}

// Msg is the message key with args, to write later in the reader's language.
func Msg(key string, args ...any) Text { return Text{Key: key, Args: args} }

// In writes t in l.
func (t Text) In(l Lang) string { return l.T(t.Key, append([]any(nil), t.Args...)...) }

// Texts are paragraphs written one after another, separated by a blank line.
type Texts []Localized

// In writes every paragraph in l.
func (ts Texts) In(l Lang) string {
	parts := make([]string, 0, len(ts))
	for _, t := range ts {
		parts = append(parts, t.In(l))
	}
	return strings.Join(parts, "\n\n")
}

// Verbatim is text written the same in every language: a link, a code, a name, an address.
type Verbatim string

// In is the text itself.
func (v Verbatim) In(Lang) string { return string(v) }

// Mail is a message to a subscriber before its language is chosen.
type Mail struct {
	Subject Localized
	Body    Localized
	Links   []string
	// Account is the subscriber id the mail is about, when the sender knows it: a recipient who
	// is none of the provider's logins is written in the account holder's language.
	Account string
}

// Refusal is the message of a refusal with the stable code reason, written in l. In English it
// is the refusal's own message, which may name a value (a date, a status); in French it is the
// catalogue's error.<reason>, which says the same without the value. A code the catalogue lacks
// keeps its English message (a test keeps that from happening).
func (l Lang) Refusal(reason, english string) string {
	if l == EN || !refusals[reason] {
		return english
	}
	return l.T("error." + reason)
}

// refusals are the codes the catalogue has a message for.
var refusals = func() map[string]bool {
	m := map[string]bool{}
	for _, msg := range Messages {
		if r, ok := strings.CutPrefix(msg.Key, "error."); ok {
			m[r] = true
		}
	}
	return m
}()
