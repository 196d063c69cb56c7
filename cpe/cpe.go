// Package cpe reads modem (CPE) status from the provider's CPE management server through the
// GenieACS NBI API: GET /devices?query=<MongoDB-style JSON>&projection=… A device belongs to a
// line when it carries the subscription id as a tag, or reports the line's MAC address. The
// client only reads; it never reboots or reconfigures a device.
package cpe

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Modem states.
const (
	Online   = "online"    // the device informed the ACS recently
	Offline  = "offline"   // known to the ACS, silent for longer than the inform window
	NotFound = "not_found" // no device for this line on the ACS
	Unknown  = "unknown"   // the ACS is not configured or did not answer
)

// ErrUnavailable wraps every failure to get an answer from the ACS.
var ErrUnavailable = errors.New("cpe management server unavailable")

// Status is what the ACS knows about a line's modem.
type Status struct {
	State      string
	LastInform *time.Time
}

// Reader looks up the modem of a line.
type Reader interface {
	Lookup(ctx context.Context, subscriptionID, mac string, now time.Time) (Status, error)
}

// GenieACS is a client of the GenieACS NBI (port 7557 by default).
type GenieACS struct {
	BaseURL string
	// OnlineWithin is how recent the last inform must be for the modem to count as online.
	OnlineWithin time.Duration
	HTTP         *http.Client
}

// NewGenieACS returns a client of the NBI at baseURL; nil when baseURL is empty (unconfigured).
func NewGenieACS(baseURL string) *GenieACS {
	if baseURL == "" {
		return nil
	}
	return &GenieACS{BaseURL: strings.TrimRight(baseURL, "/"), OnlineWithin: 10 * time.Minute, HTTP: &http.Client{Timeout: 3 * time.Second}}
}

type device struct {
	ID         string `json:"_id"`
	LastInform string `json:"_lastInform"`
}

// Lookup queries the devices of a line and reports the most recently seen one.
func (g *GenieACS) Lookup(ctx context.Context, subscriptionID, mac string, now time.Time) (Status, error) {
	or := []map[string]any{{"_tags": subscriptionID}}
	if mac != "" {
		or = append(or, map[string]any{"VirtualParameters.MACAddress": strings.ToUpper(mac)},
			map[string]any{"InternetGatewayDevice.WANDevice.1.WANConnectionDevice.1.WANIPConnection.1.MACAddress": strings.ToUpper(mac)})
	}
	query, _ := json.Marshal(map[string]any{"$or": or})
	u := g.BaseURL + "/devices?" + url.Values{"query": {string(query)}, "projection": {"_id,_lastInform"}}.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return Status{State: Unknown}, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	res, err := g.HTTP.Do(req)
	if err != nil {
		return Status{State: Unknown}, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return Status{State: Unknown}, fmt.Errorf("%w: NBI answered %d", ErrUnavailable, res.StatusCode)
	}
	var devices []device
	if err := json.NewDecoder(io.LimitReader(res.Body, 1<<20)).Decode(&devices); err != nil {
		return Status{State: Unknown}, fmt.Errorf("%w: decode devices: %v", ErrUnavailable, err)
	}
	if len(devices) == 0 {
		return Status{State: NotFound}, nil
	}
	var latest *time.Time
	for _, d := range devices {
		if t, err := time.Parse(time.RFC3339, d.LastInform); err == nil && (latest == nil || t.After(*latest)) {
			latest = &t
		}
	}
	if latest == nil || now.Sub(*latest) > g.OnlineWithin {
		return Status{State: Offline, LastInform: latest}, nil
	}
	return Status{State: Online, LastInform: latest}, nil
}
