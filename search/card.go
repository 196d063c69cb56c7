package search

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/internal/sqltext"
)

// A search card is what an agent search result shows of a subscriber, kept on its row
// (subscribers.search_card) and rewritten with its search terms by Reindex, from the
// same rows: the holder's name, e-mail and phone, the current customer number and the service
// locations, newest line first. Reading a page of results is then one primary-key read per
// hit. Subscribers indexed before the card existed have none; Candidates reads theirs through
// the join the card replaces.
type searchCard struct {
	Number    string         `json:"n,omitempty"`
	First     string         `json:"f,omitempty"`
	Last      string         `json:"l,omitempty"`
	Email     string         `json:"e,omitempty"`
	Phone     string         `json:"p,omitempty"`
	Locations []cardLocation `json:"s,omitempty"`
}

type cardLocation struct {
	Subscription string `json:"i"`
	Building     string `json:"b"`
	Street       string `json:"st,omitempty"`
	City         string `json:"c,omitempty"`
	PostalCode   string `json:"z,omitempty"`
	Province     string `json:"pr,omitempty"`
	Country      string `json:"co,omitempty"`
	Unit         string `json:"u,omitempty"`
}

// Card returns the source's search card (JSON).
func (src Source) Card() string {
	c := searchCard{Number: src.CustomerNumber}
	for _, h := range src.Contacts {
		if h.Role == "holder" {
			c.First, c.Last, c.Email, c.Phone = h.FirstName, h.LastName, h.Email, h.Phone
			break
		}
	}
	for _, l := range src.Locations {
		c.Locations = append(c.Locations, cardLocation{Subscription: l.SubscriptionID, Building: l.BuildingID, Street: l.Street,
			City: l.City, PostalCode: l.PostalCode, Province: l.Province, Country: l.Country, Unit: l.Unit})
	}
	b, err := json.Marshal(c)
	if err != nil { // strings and slices of strings only: cannot fail
		panic(fmt.Sprintf("search card: %v", err))
	}
	return string(b)
}

// candidate turns a subscriber's card back into a SubscriberMatch.
func (c searchCard) candidate(subscriberID string) subprov.SubscriberMatch {
	out := subprov.SubscriberMatch{SubscriberID: subscriberID, CustomerNumber: c.Number,
		Holder: subprov.Contact{FirstName: c.First, LastName: c.Last, Email: c.Email, PhoneNumber: c.Phone}}
	for _, l := range c.Locations {
		out.Locations = append(out.Locations, subprov.ServiceLocation{SubscriberID: subscriberID, SubscriptionID: l.Subscription, BuildingID: l.Building,
			Street: l.Street, City: l.City, PostalCode: l.PostalCode, Province: l.Province, Country: l.Country, UnitNumber: l.Unit})
	}
	return out
}

// Candidates reads the holder contact, number and service locations (newest line first) of
// each of a provider's subscribers in ids, in the order of ids (a repeated id answers once, at
// its first place): a page of search results, from the subscribers' search cards (and the
// join for any subscriber without one yet).
func Candidates(ctx context.Context, q Querier, providerID string, ids []string) ([]subprov.SubscriberMatch, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	rows, err := q.Query(ctx, candidateCards(len(ids)), sqltext.Args(providerID, ids)...)
	if err != nil {
		return nil, fmt.Errorf("search candidates: %w", err)
	}
	defer rows.Close()
	// out[at[id]] is id's candidate; one left without a SubscriberID was not found.
	at := make(map[string]int, len(ids))
	for i, id := range ids {
		if _, dup := at[id]; !dup {
			at[id] = i
		}
	}
	out := make([]subprov.SubscriberMatch, len(ids))
	var uncarded []string // no card (indexed before cards existed) or an unreadable one
	for rows.Next() {
		var id string
		var card sql.NullString
		if err := rows.Scan(&id, &card); err != nil {
			return nil, fmt.Errorf("search candidates: %w", err)
		}
		if !card.Valid {
			uncarded = append(uncarded, id)
			continue
		}
		c, err := readCard(card.String)
		if err != nil {
			uncarded = append(uncarded, id) // unreadable: its rows still answer
			continue
		}
		if i, ok := at[id]; ok {
			out[i] = c.candidate(id)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("search candidates: %w", err)
	}
	if err := joinedCandidates(ctx, q, providerID, uncarded, at, out); err != nil {
		return nil, err
	}
	return slices.DeleteFunc(out, func(c subprov.SubscriberMatch) bool { return c.SubscriberID == "" }), nil
}

// candidateCards reads the search cards of n of a provider's subscribers, named by id, through
// the primary key (unindexed). Arguments: the provider, then the ids.
func candidateCards(n int) string {
	return `SELECT id, search_card FROM subscribers WHERE ` + sqltext.ProvidersKeys("provider_id", "id", n)
}

// joinedCards reads what a search card shows of n of a provider's subscribers, named by id,
// from their rows, through the primary key (unindexed). Arguments: the provider, then the ids.
func joinedCards(n int) string {
	return `SELECT b.id, COALESCE(b.customer_number, ''), c.firstname, c.lastname, c.email, c.phonenumber,
			` + LocationColumns + `
		FROM subscribers b JOIN contacts c ON c.subscriber_id = b.id AND c.role = 'holder'
			LEFT JOIN subscriptions s ON s.subscriber_id = b.id AND ` + sqltext.Unindexed("s.provider_id") + ` = b.provider_id
			LEFT JOIN buildings g ON g.id = s.building_id LEFT JOIN units u ON u.id = s.unit_id
		WHERE ` + sqltext.ProvidersKeys("b.provider_id", "b.id", n) + `
		ORDER BY s.created_at DESC, s.id`
}

// joinedCandidates reads the candidates in ids from their rows (subscribers without a search
// card) into out, at their places in at.
func joinedCandidates(ctx context.Context, q Querier, providerID string, ids []string, at map[string]int, out []subprov.SubscriberMatch) error {
	if len(ids) == 0 {
		return nil
	}
	rows, err := q.Query(ctx, joinedCards(len(ids)), sqltext.Args(providerID, ids)...)
	if err != nil {
		return fmt.Errorf("search candidates: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var c subprov.SubscriberMatch
		var l subprov.ServiceLocation
		if err := rows.Scan(append([]any{&c.SubscriberID, &c.CustomerNumber, &c.Holder.FirstName, &c.Holder.LastName, &c.Holder.Email,
			&c.Holder.PhoneNumber}, LocationFields(&l)...)...); err != nil {
			return fmt.Errorf("search candidates: %w", err)
		}
		i, ok := at[c.SubscriberID]
		if !ok {
			continue
		}
		found := &out[i]
		if found.SubscriberID == "" {
			*found = c
		}
		if l.SubscriptionID != "" {
			l.SubscriberID = c.SubscriberID
			found.Locations = append(found.Locations, l)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("search candidates: %w", err)
	}
	return nil
}

// LocationColumns select a line's ServiceLocation fields (scanned by LocationFields) from
// subscriptions s, buildings g and units u; all empty when a left join found no line. A
// card's locations and the store's reads of where lines are select the same.
const LocationColumns = `COALESCE(s.id, ''), COALESCE(g.id, ''), COALESCE(g.street, ''), COALESCE(g.city, ''),
	COALESCE(g.postal_code, ''), COALESCE(g.province, ''), COALESCE(g.country, ''), COALESCE(u.unit_number, '')`

// LocationFields are the scan targets of LocationColumns.
func LocationFields(l *subprov.ServiceLocation) []any {
	return []any{&l.SubscriptionID, &l.BuildingID, &l.Street, &l.City, &l.PostalCode, &l.Province, &l.Country, &l.UnitNumber}
}
