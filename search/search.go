// Package search is agent search's seam: the customer search index (its terms, the search card
// each result shows, the card's decoder), the index's maintenance inside the transaction that
// changed a customer, and the searches. It runs its statements through the narrow Querier and
// Tx the store hands it, written with ? placeholders, so the store keeps the engines and
// their pools and this package keeps what is searched and how.
package search

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"sort"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/internal/sqltext"
)

// Customer search index. Every value an agent may search a customer by (names, e-mails,
// phones, customer numbers current and retired, invoice address, service locations) becomes a
// handful of terms: the value folded to lower-case ASCII words, and the concatenation of its
// words from each word on ("Marie Tremblay" gives "marietremblay" and "tremblay"; a name is
// also indexed surname first), less any term that starts another of the customer's
// (Source.Terms). A query word, or a run of query words typed together, then matches by prefix.
// Phones also get their digit-only forms, so any formatting matches. Each subscriber row lists
// its terms (subscribers.search_terms), and the engine's own text index (Index) finds the
// provider's subscribers whose terms start with each of a query's prefixes, whatever the
// number of customers.

const (
	maxTermLen      = 40 // longer terms are cut; a prefix that long is already selective
	maxWordsPerTerm = 8  // values with more words only start terms at the first eight
	maxQueryWords   = 6  // an agent's query is cut to its first six words
)

// foldWords lower-cases s, strips accents and returns its runs of ASCII letters and digits.
func foldWords(s string) []string {
	var words []string
	var b strings.Builder
	flush := func() {
		if b.Len() > 0 {
			words = append(words, b.String())
			b.Reset()
		}
	}
	for _, r := range norm.NFD.String(s) {
		switch {
		case unicode.Is(unicode.Mn, r): // combining accent: dropped, the base letter stays
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		case r >= 'A' && r <= 'Z':
			b.WriteRune(unicode.ToLower(r))
		case r == 'ß':
			b.WriteString("ss")
		case r == 'æ' || r == 'Æ':
			b.WriteString("ae")
		case r == 'œ' || r == 'Œ':
			b.WriteString("oe")
		default:
			flush()
		}
	}
	flush()
	return words
}

func cut(t string) string {
	if len(t) > maxTermLen {
		return t[:maxTermLen]
	}
	return t
}

// valueTerms are the terms of one searchable value: its words joined from each word on.
func valueTerms(s string) []string {
	words := foldWords(s)
	var out []string
	for i := 0; i < len(words) && i < maxWordsPerTerm; i++ {
		out = append(out, cut(strings.Join(words[i:], "")))
	}
	return out
}

// phoneTerms adds the digit-only forms of a phone: all digits, without a North American
// country code, and the last seven and four digits.
func phoneTerms(s string) []string {
	d := DigitsOnly(s)
	out := valueTerms(s)
	if len(d) < 4 {
		return out
	}
	out = append(out, cut(d), d[len(d)-4:])
	if len(d) == 11 && d[0] == '1' {
		out = append(out, d[1:])
	}
	if len(d) >= 7 {
		out = append(out, d[len(d)-7:])
	}
	return out
}

// QueryTerms turns an agent's search text into its words, in the order typed (punctuation
// inside a word is dropped, so "0042-117" and "ABCD-1234" are whole), or into a single digit
// string when the text looks like a phone number in any formatting. Subscribers matches
// each word, or each run of words typed together, as a term prefix.
func QueryTerms(q string) []string {
	if isPhoneLike(q) {
		return []string{cut(DigitsOnly(q))}
	}
	var out []string
	for _, chunk := range strings.FieldsFunc(q, func(r rune) bool { return unicode.IsSpace(r) || r == ',' || r == ';' || r == '#' }) {
		if t := cut(strings.Join(foldWords(chunk), "")); t != "" {
			out = append(out, t)
		}
	}
	if len(out) > maxQueryWords {
		out = out[:maxQueryWords]
	}
	return out
}

func isPhoneLike(q string) bool {
	digits := 0
	for _, r := range q {
		switch {
		case r >= '0' && r <= '9':
			digits++
		case strings.ContainsRune(" ()+-.", r):
		default:
			return false
		}
	}
	return digits >= 7
}

// IDPrefix reads an agent's query as the start of a customer id: a whole UUID, or at least its
// first 8 hex digits, in any case, with or without the dashes (a dash only where a UUID has
// one, so a phone number typed with dashes is not taken for one); or, for an id a fixture
// chose (a fixture keeps the ids its author gave, e.g. "s1000000-0000-…"), at least its first 8
// characters when they mix letters and digits. It returns the prefix as ids are written
// (lower case; a UUID dashed) for SubscribersByIDPrefix.
func IDPrefix(q string) (string, bool) {
	q = strings.ToLower(strings.TrimSpace(q))
	if p, ok := uuidPrefix(q); ok {
		return p, true
	}
	return chosenIDPrefix(q)
}

// chosenIDPrefix accepts a word of 8 to 64 letters, digits and inner dashes with both a letter
// and a digit in it: an id like "s1000000-0000-4000-8000-000000000001" or "cust-00017", not a
// name, a phone number or a postal code (shorter, or without a letter or a digit).
func chosenIDPrefix(q string) (string, bool) {
	if len(q) < 8 || len(q) > 64 || q[0] == '-' {
		return "", false
	}
	letter, digit := false, false
	for i := 0; i < len(q); i++ {
		switch c := q[i]; {
		case c >= 'a' && c <= 'z':
			letter = true
		case c >= '0' && c <= '9':
			digit = true
		case c == '-':
		default:
			return "", false
		}
	}
	if !letter || !digit {
		return "", false
	}
	return q, true
}

// uuidPrefix is IDPrefix for a UUID (q already lower case).
func uuidPrefix(q string) (string, bool) {
	dashAfter := func(n int) bool { return n == 8 || n == 12 || n == 16 || n == 20 }
	hex := make([]byte, 0, 32)
	for i := 0; i < len(q); i++ {
		switch c := q[i]; {
		case c >= '0' && c <= '9', c >= 'a' && c <= 'f':
			hex = append(hex, c)
		case c == '-' && dashAfter(len(hex)) && q[i-1] != '-':
		default:
			return "", false
		}
	}
	if len(hex) < 8 || len(hex) > 32 {
		return "", false
	}
	var b strings.Builder
	for i, c := range hex {
		if dashAfter(i) {
			b.WriteByte('-')
		}
		b.WriteByte(c)
	}
	return b.String(), true
}

// Querier runs reads written with ? placeholders: the store's search reader or a transaction.
// Its Index is the engine's text index of the subscribers' terms.
type Querier interface {
	Query(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRow(ctx context.Context, query string, args ...any) Row
	Index() Index
}

// Index is an engine's text index of the terms each subscriber row lists, behind which the
// store keeps what differs between engines (PostgreSQL's GIN index of the row, SQLite's FTS5
// table).
type Index interface {
	// Write makes the index hold terms for the subscriber, none to take it out, inside tx,
	// after its row's search_terms were set to them.
	Write(ctx context.Context, tx Tx, providerID, subscriberID string, terms []string) error
	// Match returns up to max ids of the providers' subscribers carrying, for each of
	// prefixes, a term that starts with it, in the index's own order: one statement however
	// many providers are named.
	Match(ctx context.Context, q Querier, providerIDs []string, prefixes []string, max int) ([]string, error)
}

// Row is one row of QueryRow. The store's Scan returns engine errors translated: no row is
// subprov.ErrNotFound.
type Row interface {
	Scan(dest ...any) error
}

// Tx is the transaction the index is maintained in.
type Tx interface {
	Querier
	Exec(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// subscribersByIDPrefix is a range of the subscribers primary key: ids are lower-case letters,
// digits and dashes, which all sort before '{', as the term search's ranges assume too. The
// providers are checked per row (unindexed), so no engine reads a provider's whole range of an
// index led by provider_id instead. Arguments: the prefix, the prefix + "{", n providers, the
// limit.
func subscribersByIDPrefix(n int) string {
	return `SELECT id FROM subscribers WHERE id >= ? AND id < ? AND ` + sqltext.Unindexed("provider_id") + ` IN (` + sqltext.Placeholders(n) + `) ORDER BY id LIMIT ?`
}

// SubscribersByIDPrefix returns up to max ids of the providers' subscribers that start with
// prefix (IDPrefix): one range read of the subscribers primary key. Ids stay out of the search
// index (customer_search_terms): every order would write another row there for a query agents
// seldom type. No providers, no match.
func SubscribersByIDPrefix(ctx context.Context, q Querier, providerIDs []string, prefix string, max int) ([]string, error) {
	if len(providerIDs) == 0 {
		return nil, nil
	}
	args := append([]any{prefix}, sqltext.Args(prefix+"{", providerIDs)...)
	ids, err := sqltext.Strings(ctx, q, "search subscribers by id", subscribersByIDPrefix(len(providerIDs)), append(args, max)...)
	if err != nil {
		return nil, err
	}
	// A database whose collation is not bytewise could order ids otherwise; keep true prefixes.
	return slices.DeleteFunc(ids, func(id string) bool { return !strings.HasPrefix(id, prefix) }), nil
}

// Contact is one contact's searchable values; the holder's (role "holder") are also on
// the search card.
type Contact struct {
	Role                                                                 string
	FirstName, LastName, Email, Phone, Company, Street, City, PostalCode string
}

// nameTerms are the terms of a person's name in the orders people say it: "Marie-Claire
// Tremblay", "Tremblay Marie-Claire" and, for a compound or middle name, "Marie Tremblay".
func nameTerms(first, last string) []string {
	out := valueTerms(first + " " + last)
	out = append(out, valueTerms(last+" "+first)...)
	if words := foldWords(first); len(words) > 1 {
		out = append(out, valueTerms(words[0]+" "+last)...)
	}
	return out
}

// Location is one service location's searchable values, and what the search card
// shows of it.
type Location struct {
	Street, City, PostalCode, Unit, PostalUnit    string
	SubscriptionID, BuildingID, Province, Country string // on the card only
}

// Source is everything agent search finds a subscriber by and shows of it.
// Reindex reads it from the subscriber's rows; bulk loaders (subprov gen) build it
// from the rows they write, so both index exactly the same terms and write the same card.
type Source struct {
	CustomerNumber  string   // current, shown on the card
	CustomerNumbers []string // current and retired
	Contacts        []Contact
	Locations       []Location // newest line first
}

// Terms returns the source's search terms, sorted, without a term that starts another of
// them: every query matches by prefix, so "tremblay" finds its subscriber through
// "tremblaymarie" as surely as through itself, and the index stores one row instead of two:
// fewer index rows for an order to write and for subprov gen to load. Results list in term
// order, so such a subscriber sorts by its longer term, not first as an exact match. A
// subscriber indexed by an earlier build keeps its extra terms, which still match the same
// queries, until its next write re-indexes it.
func (src Source) Terms() []string {
	var terms []string
	add := func(ts []string) { terms = append(terms, ts...) }
	for _, n := range src.CustomerNumbers {
		add(valueTerms(n))
	}
	for _, c := range src.Contacts {
		add(nameTerms(c.FirstName, c.LastName))
		for _, v := range []string{c.Email, c.Company, c.Street, c.City, c.PostalCode} {
			add(valueTerms(v))
		}
		add(phoneTerms(c.Phone))
	}
	for _, l := range src.Locations {
		for _, v := range []string{l.Street, l.City, l.PostalCode, l.Unit, l.PostalUnit, l.Street + " " + l.Unit, l.Unit + " " + l.Street} {
			add(valueTerms(v))
		}
	}
	sort.Strings(terms)
	return withoutPrefixes(terms)
}

// withoutPrefixes drops from sorted terms each one that is a prefix of another, a repeat
// included, so what is left is distinct. In sorted order a term that starts any later term
// starts the very next one, so one pass decides.
func withoutPrefixes(sorted []string) []string {
	out := sorted[:0]
	for i, t := range sorted {
		if i+1 < len(sorted) && strings.HasPrefix(sorted[i+1], t) {
			continue
		}
		out = append(out, t)
	}
	return out
}

// readSource reads every searchable value of a subscriber, and the terms and card its row
// holds (subscribers.search_terms, search_card), in one round trip: each row of the query is
// the subscriber itself (part 0), one of its contacts (1) or one of its lines with the line's
// building and suite (2, newest first). The lines' part is written first so that PostgreSQL
// types the last column, their creation instant, from it rather than from a NULL.
func readSource(ctx context.Context, tx Tx, subscriberID string) (providerID, listed, card string, src Source, err error) {
	rows, err := tx.Query(ctx, `
		SELECT 2, s.id, b.id, b.street, b.city, b.postal_code, b.province, b.country,
			COALESCE(u.unit_number, ''), COALESCE(u.postal_unit, ''), s.created_at
		FROM subscriptions s JOIN subscribers r ON r.id = s.subscriber_id AND r.provider_id = s.provider_id
			JOIN buildings b ON b.id = s.building_id LEFT JOIN units u ON u.id = s.unit_id
		WHERE s.subscriber_id = ?
		UNION ALL
		SELECT 0, provider_id, customer_number, legacy_customer_number, COALESCE(search_terms, ''), COALESCE(search_card, ''),
			NULL, NULL, NULL, NULL, NULL
		FROM subscribers WHERE id = ?
		UNION ALL
		SELECT 1, role, firstname, lastname, email, phonenumber, company, street, city, postal_code, NULL
		FROM contacts WHERE subscriber_id = ?
		ORDER BY 1, 11 DESC, 2`, subscriberID, subscriberID, subscriberID)
	if err != nil {
		return "", "", "", src, fmt.Errorf("search values of %s: %w", subscriberID, err)
	}
	defer rows.Close()
	found := false
	for rows.Next() {
		var part int
		var v [9]sql.NullString
		var created any // the lines' order only
		if err := rows.Scan(&part, &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &created); err != nil {
			return "", "", "", src, fmt.Errorf("search values of %s: %w", subscriberID, err)
		}
		switch part {
		case 0:
			found = true
			providerID, listed, card = v[0].String, v[3].String, v[4].String
			src.CustomerNumber = v[1].String
			for _, n := range v[1:3] {
				if n.Valid {
					src.CustomerNumbers = append(src.CustomerNumbers, n.String)
				}
			}
		case 1:
			src.Contacts = append(src.Contacts, Contact{Role: v[0].String, FirstName: v[1].String, LastName: v[2].String,
				Email: v[3].String, Phone: v[4].String, Company: v[5].String, Street: v[6].String, City: v[7].String, PostalCode: v[8].String})
		case 2:
			src.Locations = append(src.Locations, Location{SubscriptionID: v[0].String, BuildingID: v[1].String, Street: v[2].String,
				City: v[3].String, PostalCode: v[4].String, Province: v[5].String, Country: v[6].String, Unit: v[7].String, PostalUnit: v[8].String})
		}
	}
	if err := rows.Err(); err != nil {
		return "", "", "", src, fmt.Errorf("search values of %s: %w", subscriberID, err)
	}
	if !found {
		return "", "", "", src, fmt.Errorf("search values of %s: %w", subscriberID, subprov.ErrNotFound)
	}
	return providerID, listed, card, src, nil
}

// Reindex rewrites a subscriber's search terms and card from its current rows, inside the
// transaction that changed them: its row's list of terms and card, and the engine's index of
// the list (Index.Write), only when either changed.
func Reindex(ctx context.Context, tx Tx, subscriberID string) error {
	if subscriberID == "" {
		return nil
	}
	providerID, listed, card, src, err := readSource(ctx, tx, subscriberID)
	if err != nil {
		return err
	}
	terms := src.Terms()
	list, newCard := strings.Join(terms, " "), src.Card()
	if list == listed && newCard == card {
		return nil
	}
	if _, err := tx.Exec(ctx, `UPDATE subscribers SET search_terms = ?, search_card = ? WHERE id = ?`, list, newCard, subscriberID); err != nil {
		return fmt.Errorf("list search terms: %w", err)
	}
	if list == listed {
		return nil
	}
	if err := tx.Index().Write(ctx, tx, providerID, subscriberID, terms); err != nil {
		return fmt.Errorf("index search terms of %s: %w", subscriberID, err)
	}
	return nil
}

// hasTermWithPrefix reports whether any of the providers' customers carries a term starting
// with p.
func hasTermWithPrefix(ctx context.Context, q Querier, providerIDs []string, p string) (bool, error) {
	ids, err := q.Index().Match(ctx, q, providerIDs, []string{p}, 1)
	if err != nil {
		return false, fmt.Errorf("probe %q: %w", p, err)
	}
	return len(ids) > 0, nil
}

// phrases groups a query's words into the longest runs that some customer's value holds as
// a phrase, left to right: "marie tremblay 1204" becomes "marietremblay" and "1204" when a
// customer is named Marie Tremblay. A run is one prefix of one term (terms are a value's
// words joined from each word on), so a common first name and a common surname typed together
// are one short index range instead of the intersection of two long ones.
// The caller has found no customer with the whole query as a phrase, so runs start shorter.
func phrases(ctx context.Context, q Querier, providerIDs []string, words []string) ([]string, error) {
	var out []string
	for i := 0; i < len(words); {
		j := len(words)
		if i == 0 {
			j-- // the whole query: known absent
		}
		for ; j > i+1; j-- {
			ok, err := hasTermWithPrefix(ctx, q, providerIDs, cut(strings.Join(words[i:j], "")))
			if err != nil {
				return nil, err
			}
			if ok {
				break
			}
		}
		out = append(out, cut(strings.Join(words[i:j], "")))
		i = j
	}
	return dedupe(out), nil
}

func dedupe(ss []string) []string {
	seen := make(map[string]bool, len(ss))
	out := ss[:0]
	for _, s := range ss {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// Subscribers returns the ids of the providers' subscribers matching every word of an
// agent's query (QueryTerms), at most max. Words typed together that stand together in some
// customer's value are matched as that phrase (see phrases); each phrase or remaining word
// must then start one of the subscriber's terms. The providers' customers are one set: a
// phrase one provider's customer holds is matched as a phrase in every provider's. Results
// come in the index's order (Index). No providers or no words, no match.
func Subscribers(ctx context.Context, q Querier, providerIDs []string, words []string, max int) ([]string, error) {
	if len(words) == 0 || len(providerIDs) == 0 {
		return nil, nil
	}
	// The whole query as one phrase first: the usual query (a name, an e-mail, an address, a
	// unit and its street) is then a single prefix.
	ids, err := q.Index().Match(ctx, q, providerIDs, []string{cut(strings.Join(words, ""))}, max)
	if err != nil || len(ids) > 0 || len(words) == 1 {
		return ids, err
	}
	prefixes, err := phrases(ctx, q, providerIDs, words)
	if err != nil {
		return nil, err
	}
	return q.Index().Match(ctx, q, providerIDs, prefixes, max)
}

// DigitsOnly is a phone number's digits: the digit-only forms of phone terms, and the
// subscribers.phone_digits column.
func DigitsOnly(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Match returns the ids of the providers' subscribers that an agent's query text matches, at
// most max in all: a customer id, or its first 8 or more characters (IDPrefix), first, through
// the subscribers' primary key; then every subscriber carrying each word of the text
// (QueryTerms, Subscribers). It is the one matcher of customer search, for the agent surface
// (its provider) and the operations surface (one provider, or every provider for a platform
// operator) alike; each of its statements reads every provider named at once.
func Match(ctx context.Context, q Querier, providerIDs []string, text string, max int) ([]string, error) {
	terms := QueryTerms(text)
	if len(terms) == 0 {
		return nil, nil
	}
	ids, err := Subscribers(ctx, q, providerIDs, terms, max)
	if err != nil {
		return nil, err
	}
	// A customer id, or its first 8 or more hex digits, matches through the subscribers'
	// primary key (one more indexed read, only for a query of that shape), listed first.
	prefix, ok := IDPrefix(text)
	if !ok {
		return ids, nil
	}
	byID, err := SubscribersByIDPrefix(ctx, q, providerIDs, prefix, max)
	if err != nil {
		return nil, err
	}
	for _, id := range ids {
		if !slices.Contains(byID, id) {
			byID = append(byID, id)
		}
	}
	return byID[:min(len(byID), max)], nil
}
