package httpapi_test

import (
	"html"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/subprov/subprov/internal/apptest"
	"github.com/subprov/subprov/internal/browsertest"
	"github.com/subprov/subprov/internal/testdb"
)

// docsOp is one operation's heading on the docs page: its method and path.
var docsOp = regexp.MustCompile(`<summary><span class="m [A-Z]+">([A-Z]+)</span> <code>([^<]+)</code>`)

// TestDocsPageListsEachRouteOnce: the docs page shows a /partner route once, with its /api/v1
// mirror noted on it, every other documented operation once, and the descriptions' Markdown as
// markup rather than as raw backticks.
func TestDocsPageListsEachRouteOnce(t *testing.T) {
	t.Parallel()
	doc, _ := oasLoad(t)
	documented := map[string]bool{}
	for _, op := range oasOps(doc) {
		documented[op.key()] = true
	}
	s := apptest.Start(t, testdb.MigratedURL(t, "sqlite", testdb.AppSchema))
	res := s.Do(apptest.Request{Method: "GET", Path: "/docs"})
	if res.Status != 200 {
		t.Fatalf("GET /docs: %d", res.Status)
	}
	page := string(res.Raw)

	shown := map[string]int{}
	for _, m := range docsOp.FindAllStringSubmatch(page, -1) {
		shown[m[1]+" "+html.UnescapeString(m[2])]++
	}
	mirrors := 0
	for key := range documented {
		method, path, _ := strings.Cut(key, " ")
		want := 1
		if rest, ok := strings.CutPrefix(path, "/api/v1/"); ok && documented[method+" /partner/"+rest] {
			want = 0 // shown with the /partner route it mirrors
			mirrors++
		}
		if shown[key] != want {
			t.Errorf("%s is listed %d times, want %d", key, shown[key], want)
		}
	}
	if mirrors == 0 {
		t.Fatal("the document has no /api/v1 mirror of a /partner route to check")
	}
	for key := range shown {
		if !documented[key] {
			t.Errorf("%s is listed but not documented", key)
		}
	}

	tests := []struct{ name, want string }{
		{"a partner route notes its mirror", `<code>/partner/subscriber/auth/login</code> — Subscriber login</summary>
<p class="mirror">Also at <code>/api/v1/subscriber/auth/login</code>`},
		{"a mirrored route with a path parameter notes its mirror", `Also at <code>/api/v1/agent/customers/{customerId}/notes</code>`},
		{"an /api/v1 route of its own stands alone", `<span class="m POST">POST</span> <code>/api/v1/auth/login</code>`},
		{"inline code is rendered", "Bearer JWT), an AI support agent (<code>/partner/agent</code>"},
		{"markup inside inline code is escaped", "<code>If-Match: &lt;version&gt;</code>"},
	}
	for _, tt := range tests {
		if !strings.Contains(page, tt.want) {
			t.Errorf("%s: the page has no %q", tt.name, tt.want)
		}
	}
	if strings.Contains(page, "`") {
		i := strings.Index(page, "`")
		t.Errorf("the page shows a raw backtick: …%s…", page[max(0, i-80):min(len(page), i+80)])
	}
}

// TestDocsPageInBrowser opens a mirrored route on the docs page as a person would: its mirror
// is named on it, and its description reads as text with code set apart, not as Markdown.
func TestDocsPageInBrowser(t *testing.T) {
	t.Parallel()
	s := apptest.Start(t, testdb.MigratedURL(t, "sqlite", testdb.AppSchema))
	ctx := browsertest.New(t, 60*time.Second)
	const login = `//summary[code="/partner/subscriber/auth/login"]`
	if err := chromedp.Do(ctx, chromedp.Navigate(s.URL+"/docs"), chromedp.Click(login)); err != nil {
		t.Fatal(err)
	}
	op, err := chromedp.Run(ctx, chromedp.Text(login+"/.."))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Also at /api/v1/subscriber/auth/login, with the same credential",
		"to send as Authorization: Bearer on /partner/subscriber/... routes"} {
		if !strings.Contains(op, want) {
			t.Errorf("the login operation lacks %q:\n%s", want, op)
		}
	}
	codes, err := chromedp.Run(ctx, chromedp.Nodes(login+"/../p/code", chromedp.AtLeast(4)))
	if err != nil || len(codes) < 4 {
		t.Errorf("the login operation sets %d pieces of code apart, want at least 4 (%v)", len(codes), err)
	}
	if page, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("body"))); err != nil || strings.Contains(page, "`") {
		t.Errorf("the page shows raw Markdown backticks (%v)", err)
	}
}
